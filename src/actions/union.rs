//! The per-page action union: the actions allowed on this page, as a schema and a validator.
//!
//! Each allowed action is one branch of an `anyOf`: an object with exactly one key, the action's
//! name, whose value is the action's parameters. The LLM can therefore name only an action that
//! is allowed here, with parameters of the right shape; what it answers is checked again by
//! [`ActionUnion::validate`], whose errors are written for the LLM to correct itself.

use super::ActionOptions;
use super::{Action, RegisteredAction};
use crate::browser::PageState;
use crate::web::{host_matches, host_of};
use serde_json::{json, Map, Value};

pub struct ActionUnion {
    /// The actions offered at this URL, in registry order: the schema's branches.
    offered: Vec<RegisteredAction>,
    /// Which of them the page's state allows (positions in `offered`): the validator's.
    allowed: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    #[error("The action list is empty: give at least one action.")]
    Empty,
    #[error("Action {position} is not an object with exactly one key (the action's name): {found}")]
    NotSingleKey { position: usize, found: String },
    #[error("Action {position}: `{name}` is not available on this page. Allowed actions: {allowed}.")]
    NotAllowed { position: usize, name: String, allowed: String },
    #[error("Action {position} `{name}` has invalid parameters — {detail}. Expected parameters: {expected}.")]
    BadParams { position: usize, name: String, detail: String, expected: String },
    #[error("`done` must be the only action in its step; send it alone once everything else is finished.")]
    DoneNotAlone,
}

impl ActionUnion {
    /// The actions for `page`. Offered (the schema): those whose domains and URL filter match
    /// the URL's host, minus what the user's include/exclude lists leave out. Allowed (the
    /// validator, and the state's list of available actions): of those, the ones whose page
    /// filter accepts the page's state and whose needs it meets (the debugger). `done` is always
    /// offered, and on the last step it is the only action, so the task ends with an answer
    /// rather than by running out of steps.
    ///
    /// The schema follows the URL alone so that it stays the same from step to step while the
    /// task stays on a site: it is the start of every request (OpenAI and Anthropic put it
    /// before the system prompt), and a prefix that does not change is what the providers'
    /// prompt caches bill at a fraction of the price. An action the page's state rules out is
    /// still refused, with the list of those allowed, and never reaches the browser.
    pub fn for_page(
        registered: &[RegisteredAction],
        page: &PageState,
        options: &ActionOptions,
        last_step: bool,
    ) -> Self {
        let host = host_of(page.url());
        let offered: Vec<RegisteredAction> = registered
            .iter()
            .filter(|a| {
                let name = a.name.as_ref();
                if name == "done" {
                    return true;
                }
                // A saved skill is the person's own choice: a list of the actions to include
                // does not leave it out (excluding it by name does).
                let skill = a.def == "UseSkill";
                !last_step
                    && (skill || options.include.is_empty() || options.include.iter().any(|n| n == name))
                    && !options.exclude.iter().any(|n| n == name)
                    && (a.domains.is_empty()
                        || host.as_deref().is_some_and(|h| a.domains.iter().any(|g| host_matches(h, g))))
                    && a.spec.url_filter.is_none_or(|f| f(host.as_deref(), options))
            })
            .cloned()
            .collect();
        let allowed = offered
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                (!a.spec.needs.debugger || page.debugger_available)
                    && a.spec.page_filter.is_none_or(|f| f(page, options))
            })
            .map(|(i, _)| i)
            .collect();
        ActionUnion { offered, allowed }
    }

    /// Every action of `registered`, all allowed: the schema of what some page may offer (an
    /// MCP client's `act`), which each page's own union then narrows.
    pub fn every(registered: &[RegisteredAction]) -> Self {
        ActionUnion { offered: registered.to_vec(), allowed: (0..registered.len()).collect() }
    }

    fn allowed(&self) -> impl Iterator<Item = &RegisteredAction> {
        self.allowed.iter().map(|&i| &self.offered[i])
    }

    /// The names of the actions the page allows now, in registry order.
    pub fn names(&self) -> Vec<&str> {
        self.allowed().map(|a| a.name.as_ref()).collect()
    }

    /// The names of the schema's branches, in order: what makes two schemas the same.
    pub fn offered_names(&self) -> Vec<&str> {
        self.offered.iter().map(|a| a.name.as_ref()).collect()
    }

    /// The union as JSON Schema: `{"anyOf": [{"type": "object", "properties": {name: params}, …}]}`.
    pub fn schema(&self) -> Value {
        let branches: Vec<Value> = self
            .offered
            .iter()
            .map(|a| {
                let mut params = a.params_schema.clone();
                if let Some(obj) = params.as_object_mut() {
                    obj.insert("description".into(), Value::String(a.description.to_string()));
                }
                let mut properties = Map::new();
                properties.insert(a.name.to_string(), params);
                json!({
                    "type": "object",
                    "properties": properties,
                    "required": [a.name],
                    "additionalProperties": false,
                })
            })
            .collect();
        json!({ "anyOf": branches })
    }

    /// Parses parameters for an action of this union by its name (used again once secrets are
    /// filled in).
    pub fn parse_action(&self, name: &str, params: Value) -> Result<Action, String> {
        let registered =
            self.allowed().find(|a| a.name == name).ok_or_else(|| format!("`{name}` is not available on this page"))?;
        registered.parse(params)
    }

    /// Turns the LLM's action list into typed actions, or says exactly what is wrong.
    pub fn validate(&self, items: &[Value]) -> Result<Vec<Action>, ValidationError> {
        if items.is_empty() {
            return Err(ValidationError::Empty);
        }
        let mut actions = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let position = i + 1;
            let (name, params) = match item.as_object() {
                Some(obj) if obj.len() == 1 => obj.iter().next().expect("one entry"),
                _ => {
                    let mut found = item.to_string();
                    if found.len() > 200 {
                        found = found.chars().take(200).collect::<String>() + "…";
                    }
                    return Err(ValidationError::NotSingleKey { position, found });
                }
            };
            let Some(registered) = self.allowed().find(|a| a.name == name.as_str()) else {
                return Err(ValidationError::NotAllowed {
                    position,
                    name: name.clone(),
                    allowed: self.names().join(", "),
                });
            };
            match registered.parse(params.clone()) {
                Ok(action) => actions.push(action),
                Err(detail) => {
                    return Err(ValidationError::BadParams {
                        position,
                        name: name.clone(),
                        detail,
                        expected: expected_params(&registered.params_schema),
                    })
                }
            }
        }
        if actions.len() > 1 && actions.iter().any(|a| a.name() == "done") {
            return Err(ValidationError::DoneNotAlone);
        }
        Ok(actions)
    }
}

/// A one-line summary of a parameter schema: `{index: integer, text: string, clear?: boolean}`.
fn expected_params(schema: &Value) -> String {
    let required: Vec<&str> =
        schema["required"].as_array().map(|r| r.iter().filter_map(|v| v.as_str()).collect()).unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else { return "{}".into() };
    let fields: Vec<String> = props
        .iter()
        .map(|(k, v)| {
            let ty = match &v["type"] {
                Value::String(s) => s.clone(),
                Value::Array(types) => {
                    types.iter().filter_map(|t| t.as_str()).filter(|t| *t != "null").collect::<Vec<_>>().join("|")
                }
                _ => "value".into(),
            };
            let opt = if required.contains(&k.as_str()) { "" } else { "?" };
            format!("{k}{opt}: {ty}")
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{registered, registered_for, ClickParams, InputParams};
    use crate::browser::TabInfo;
    use crate::dom::{Element, ScrollInfo, Snapshot};

    fn page(url: &str, elements: usize) -> PageState {
        let elements = (1..=elements as u32).map(|i| Element::new(i, "button", &[], "b")).collect();
        PageState::new(1, Snapshot::with_elements(url, "", elements))
    }

    fn names(page: &PageState, options: &ActionOptions) -> Vec<&'static str> {
        // Built-in actions only: their branch names are their specs' names.
        ActionUnion::for_page(&registered(), page, options, false).allowed().map(|a| a.spec.name).collect()
    }

    fn branch_names(schema: &Value) -> Vec<String> {
        schema["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["properties"].as_object().unwrap().keys().next().unwrap().clone())
            .collect()
    }

    /// What every ordinary page offers: no dropdown, one tab, no history, nothing scrolls.
    const BASE: [&str; 11] = [
        "search",
        "navigate",
        "click",
        "input",
        "drag_and_drop",
        "send_keys",
        "find_text",
        "open_tab",
        "extract",
        "search_page",
        "screenshot",
    ];

    fn with_rest(extra: &[&'static str]) -> Vec<&'static str> {
        let mut all: Vec<&str> = BASE.to_vec();
        all.extend_from_slice(extra);
        all.extend_from_slice(&["wait", "ask_human", "done"]);
        all
    }

    #[test]
    fn union_offers_one_single_key_branch_per_action_offered_at_the_url() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 2), &Default::default(), false);
        let schema = union.schema();
        // Every built-in action but `evaluate` (scripts only where the user allowed them) and
        // `upload_file` (only with attached files), whatever the page's state allows.
        let every: Vec<&str> =
            registered().iter().map(|a| a.spec.name).filter(|n| !["evaluate", "upload_file"].contains(n)).collect();
        assert_eq!(branch_names(&schema), every);
        assert_eq!(union.offered_names(), every);
        assert_eq!(union.names(), with_rest(&[]));
        for branch in schema["anyOf"].as_array().unwrap() {
            assert_eq!(branch["additionalProperties"], false);
            assert_eq!(branch["required"].as_array().unwrap().len(), 1);
        }
        let click = schema["anyOf"].as_array().unwrap().iter().find_map(|b| b["properties"].get("click")).unwrap();
        assert_eq!(click["properties"]["index"]["type"], serde_json::json!(["integer", "null"]));
        assert!(click["description"].as_str().unwrap().starts_with("Click an interactive element by its index"));
    }

    #[test]
    fn the_schema_changes_with_the_url_not_with_the_page_state_and_the_state_still_decides() {
        let options = ActionOptions { evaluate_domains: vec!["example.com".into()], ..Default::default() };
        let mut before = page("https://example.com/a", 1);
        before.notice = Some("The page failed to load".into());
        let mut after = page("https://example.com/b", 40);
        after.can_go_back = true;
        after.tabs.push(TabInfo { id: 9, url: "https://example.org/".into(), title: "Other".into() });
        after.snapshot.scroll = ScrollInfo { above_px: 0, below_px: 900 };
        let (one, two) = (
            ActionUnion::for_page(&registered(), &before, &options, false),
            ActionUnion::for_page(&registered(), &after, &options, false),
        );
        assert_eq!(one.schema().to_string(), two.schema().to_string(), "same site, same schema, byte for byte");
        assert_ne!(one.names(), two.names());
        let other_site = ActionUnion::for_page(&registered(), &page("https://example.org/", 1), &options, false);
        assert!(!other_site.offered_names().contains(&"evaluate"), "scripts stay out of the schema off their hosts");
        assert!(one.offered_names().contains(&"evaluate"));
        // What the state rules out is refused, naming what is allowed, though the schema offers it.
        let err = one.validate(&[serde_json::json!({"go_back": {}})]).unwrap_err();
        assert!(
            matches!(&err, ValidationError::NotAllowed { name, allowed, .. } if name == "go_back" && !allowed.contains("go_back") && allowed.contains("navigate")),
            "{err}"
        );
        assert!(two.validate(&[serde_json::json!({"go_back": {}})]).is_ok());
    }

    #[test]
    fn element_actions_are_withheld_from_a_page_without_elements() {
        let mut blank = page("about:blank", 0);
        blank.snapshot.title = "New tab".into();
        assert_eq!(
            names(&blank, &Default::default()),
            ["search", "navigate", "click", "send_keys", "open_tab", "wait", "ask_human", "done"]
        );
        let mut broken = page("https://example.com/", 0);
        broken.notice = Some("The page failed to load".into());
        assert_eq!(
            names(&broken, &Default::default()),
            ["search", "navigate", "open_tab", "screenshot", "wait", "ask_human", "done"]
        );
    }

    #[test]
    fn dropdown_actions_are_offered_only_when_the_page_has_a_select_or_listbox() {
        let mut p = page("https://example.com/", 1);
        assert!(!names(&p, &Default::default()).contains(&"dropdown_options"));
        p.snapshot.nodes.push(crate::dom::Node::Element(Element::new(7, "select", &[("name", "size")], "")));
        let offered = names(&p, &Default::default());
        assert!(offered.contains(&"dropdown_options") && offered.contains(&"select_dropdown"), "{offered:?}");
        let mut aria = page("https://example.com/", 1);
        aria.snapshot.nodes.push(crate::dom::Node::Element(Element::new(8, "div", &[("role", "combobox")], "Size")));
        assert!(names(&aria, &Default::default()).contains(&"select_dropdown"));
    }

    #[test]
    fn tab_switch_and_close_are_offered_only_with_more_than_one_tab() {
        let mut p = page("https://example.com/", 1);
        assert!(!names(&p, &Default::default()).contains(&"switch_tab"));
        p.tabs.push(TabInfo { id: 9, url: "https://example.org/".into(), title: "Other".into() });
        let offered = names(&p, &Default::default());
        assert!(offered.contains(&"switch_tab") && offered.contains(&"close_tab"), "{offered:?}");
    }

    #[test]
    fn history_actions_follow_the_tab_history() {
        let mut p = page("https://example.com/", 1);
        assert!(!names(&p, &Default::default()).iter().any(|n| n.starts_with("go_")));
        p.can_go_back = true;
        assert_eq!(
            names(&p, &Default::default()),
            with_rest(&[])
                .into_iter()
                .take(2)
                .chain(["go_back"])
                .chain(with_rest(&[]).into_iter().skip(2))
                .collect::<Vec<_>>()
        );
        p.can_go_forward = true;
        assert!(names(&p, &Default::default()).contains(&"go_forward"));
    }

    #[test]
    fn scroll_is_offered_only_when_the_page_or_a_container_scrolls() {
        let mut p = page("https://example.com/", 1);
        assert!(!names(&p, &Default::default()).contains(&"scroll"));
        p.snapshot.scroll = ScrollInfo { above_px: 0, below_px: 900 };
        assert!(names(&p, &Default::default()).contains(&"scroll"));
        let mut inner = page("https://example.com/", 0);
        let mut list = Element::new(3, "div", &[], "");
        list.scroll = Some(ScrollInfo { above_px: 40, below_px: 0 });
        inner.snapshot.nodes.push(crate::dom::Node::Element(list));
        assert!(names(&inner, &Default::default()).contains(&"scroll"));
    }

    #[test]
    fn debugger_actions_are_withheld_once_the_user_declined_the_debugger() {
        let mut p = page("https://example.com/", 1);
        p.debugger_available = false;
        let options = ActionOptions { evaluate_domains: vec!["example.com".into()], ..Default::default() };
        let offered = names(&p, &options);
        for name in ["send_keys", "screenshot", "evaluate"] {
            assert!(!offered.contains(&name), "{name} in {offered:?}");
        }
        assert!(offered.contains(&"click"), "clicks by index work without the debugger");
    }

    #[test]
    fn evaluate_is_offered_only_on_hosts_the_user_allowed() {
        let options = ActionOptions { evaluate_domains: vec!["*.example.com".into()], ..Default::default() };
        assert!(!names(&page("https://example.com/", 1), &Default::default()).contains(&"evaluate"));
        assert!(names(&page("https://app.example.com/", 1), &options).contains(&"evaluate"));
        assert!(!names(&page("https://example.org/", 1), &options).contains(&"evaluate"));
    }

    #[test]
    fn include_and_exclude_lists_narrow_the_union_but_never_drop_done() {
        let p = page("https://example.com/", 1);
        let include = ActionOptions { include: vec!["click".into(), "input".into()], ..Default::default() };
        assert_eq!(names(&p, &include), ["click", "input", "done"]);
        let exclude = ActionOptions { exclude: vec!["search".into(), "done".into()], ..Default::default() };
        let offered = names(&p, &exclude);
        assert!(!offered.contains(&"search") && offered.contains(&"done"), "{offered:?}");
    }

    #[test]
    fn a_domain_restricted_action_is_offered_only_on_matching_hosts() {
        let mut actions = registered();
        actions.iter_mut().find(|a| a.name == "wait").unwrap().domains = vec!["*.example.com".into()];
        let union = |url| ActionUnion::for_page(&actions, &page(url, 1), &Default::default(), false);
        let on_site = union("https://shop.example.com/cart");
        assert!(on_site.names().contains(&"wait"));
        assert!(branch_names(&on_site.schema()).contains(&"wait".to_string()));
        assert!(!union("https://example.org/").names().contains(&"wait"));
        assert!(!union("about:blank").names().contains(&"wait"));
    }

    #[test]
    fn the_last_step_offers_only_done() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), &Default::default(), true);
        assert_eq!(union.names(), ["done"]);
    }

    #[test]
    fn a_task_with_an_output_schema_gets_a_done_that_takes_data_of_that_shape() {
        let shape = json!({"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]});
        let actions = registered_for(Some(&shape));
        let union = ActionUnion::for_page(&actions, &page("https://example.com/", 1), &Default::default(), false);
        let schema = union.schema();
        let done = schema["anyOf"].as_array().unwrap().iter().find_map(|b| b["properties"].get("done")).unwrap();
        assert_eq!(done["properties"]["data"]["properties"]["price"]["type"], "number");
        assert!(union.validate(&[json!({"done": {"data": {"price": 4.5}, "success": true}})]).is_ok());
        let err = union.validate(&[json!({"done": {"data": {"price": "cheap"}, "success": true}})]).unwrap_err();
        assert!(err.to_string().contains("`data.price` must be number, not a string"), "{err}");
        let err = union.validate(&[json!({"done": {"text": "4.5", "success": true}})]).unwrap_err();
        assert!(err.to_string().contains("unknown field `text`"), "{err}");
    }

    #[test]
    fn valid_actions_become_typed_actions() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), &Default::default(), false);
        let actions = union
            .validate(&[json!({"input": {"index": 2, "text": "alice", "clear": null}}), json!({"click": {"index": 3}})])
            .unwrap();
        assert_eq!(actions[0], Action::Input(InputParams { index: 2, text: "alice".into(), clear: None }));
        assert_eq!(actions[1], Action::Click(ClickParams::index(3)));
    }

    #[test]
    fn an_invented_action_is_refused_with_the_allowed_list() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), &Default::default(), false);
        let err = union.validate(&[json!({"teleport": {"to": "moon"}})]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Action 1: `teleport` is not available on this page. Allowed actions: {}.",
                with_rest(&[]).join(", ")
            )
        );
    }

    #[test]
    fn an_action_withheld_on_this_page_is_refused() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), &Default::default(), false);
        let err = union.validate(&[json!({"select_dropdown": {"index": 1, "text": "M"}})]).unwrap_err();
        assert!(matches!(err, ValidationError::NotAllowed { ref name, .. } if name == "select_dropdown"));
    }

    #[test]
    fn wrong_parameters_name_the_action_and_field_and_what_was_expected() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), &Default::default(), false);
        let err = union.validate(&[json!({"click": {"index": "the blue button"}})]).unwrap_err().to_string();
        assert!(err.contains("`click`"), "{err}");
        assert!(err.contains("field `index`"), "{err}");
        assert!(err.contains("{index?: integer, x?: number, y?: number}"), "{err}");
        let err = union.validate(&[json!({"input": {"index": 1}})]).unwrap_err().to_string();
        assert!(err.contains("missing field `text`"), "{err}");
        assert!(err.contains("clear?: boolean"), "{err}");
        let err = union.validate(&[json!({"click": {"index": 1, "force": true}})]).unwrap_err().to_string();
        assert!(err.contains("unknown field `force`"), "{err}");
        // Checks beyond the schema's types: ranges, one of two forms, key names.
        let err = union.validate(&[json!({"click": {"index": 1, "x": 5, "y": 5}})]).unwrap_err().to_string();
        assert!(err.contains("either `index` or `x` and `y`"), "{err}");
        let err = union.validate(&[json!({"wait": {"seconds": 90}})]).unwrap_err().to_string();
        assert!(err.contains("field `seconds`: must be between 0 and 30"), "{err}");
        let err = union.validate(&[json!({"send_keys": {"keys": "Control+Submit"}})]).unwrap_err().to_string();
        assert!(err.contains("unknown key \"Submit\""), "{err}");
        let err = union
            .validate(&[json!({"navigate": {"url": "javascript:alert(1)", "new_tab": null}})])
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an absolute http:// or https:// URL"), "{err}");
    }

    #[test]
    fn empty_parameter_actions_accept_a_placeholder_field() {
        let mut p = page("https://example.com/", 1);
        p.can_go_back = true;
        let union = ActionUnion::for_page(&registered(), &p, &Default::default(), false);
        assert!(union.validate(&[json!({"go_back": {"_": null}})]).is_ok());
        assert!(union.validate(&[json!({"screenshot": {}})]).is_ok());
    }

    #[test]
    fn malformed_items_and_empty_lists_are_refused() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), &Default::default(), false);
        assert_eq!(union.validate(&[]), Err(ValidationError::Empty));
        assert!(matches!(union.validate(&[json!("click 3")]), Err(ValidationError::NotSingleKey { position: 1, .. })));
        assert!(matches!(
            union.validate(&[json!({"click": {"index": 1}, "done": {"text": "", "success": true}})]),
            Err(ValidationError::NotSingleKey { .. })
        ));
    }

    #[test]
    fn done_must_be_alone() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), &Default::default(), false);
        let err = union
            .validate(&[json!({"click": {"index": 1}}), json!({"done": {"text": "ok", "success": true}})])
            .unwrap_err();
        assert_eq!(err, ValidationError::DoneNotAlone);
    }
}
