//! The per-page action union: the actions allowed on this page, as a schema and a validator.
//!
//! Each allowed action is one branch of an `anyOf`: an object with exactly one key, the action's
//! name, whose value is the action's parameters. The LLM can therefore name only an action that
//! is allowed here, with parameters of the right shape; what it answers is checked again by
//! [`ActionUnion::validate`], whose errors are written for the LLM to correct itself.

use super::{url::host_matches, url::host_of, Action, RegisteredAction};
use crate::browser::PageState;
use serde_json::{json, Map, Value};

pub struct ActionUnion {
    allowed: Vec<RegisteredAction>,
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
    /// The actions allowed on `page`. On the last step only `done` is offered, so the task ends
    /// with an answer rather than by running out of steps.
    pub fn for_page(registered: &[RegisteredAction], page: &PageState, last_step: bool) -> Self {
        let host = host_of(page.url());
        let allowed = registered
            .iter()
            .filter(|a| !last_step || a.spec.name == "done")
            .filter(|a| {
                a.spec.domains.is_empty()
                    || host.as_deref().is_some_and(|h| a.spec.domains.iter().any(|g| host_matches(h, g)))
            })
            .filter(|a| a.spec.page_filter.is_none_or(|f| f(page)))
            .copied()
            .collect();
        ActionUnion { allowed }
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.allowed.iter().map(|a| a.spec.name).collect()
    }

    /// The union as JSON Schema: `{"anyOf": [{"type": "object", "properties": {name: params}, …}]}`.
    pub fn schema(&self) -> Value {
        let branches: Vec<Value> = self
            .allowed
            .iter()
            .map(|a| {
                let mut params = (a.params_schema)();
                if let Some(obj) = params.as_object_mut() {
                    obj.insert("description".into(), Value::String(a.spec.description.into()));
                }
                let mut properties = Map::new();
                properties.insert(a.spec.name.into(), params);
                json!({
                    "type": "object",
                    "properties": properties,
                    "required": [a.spec.name],
                    "additionalProperties": false,
                })
            })
            .collect();
        json!({ "anyOf": branches })
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
            let Some(registered) = self.allowed.iter().find(|a| a.spec.name == name) else {
                return Err(ValidationError::NotAllowed {
                    position,
                    name: name.clone(),
                    allowed: self.names().join(", "),
                });
            };
            match Action::parse(name, params.clone()) {
                Some(Ok(action)) => actions.push(action),
                Some(Err(detail)) => {
                    return Err(ValidationError::BadParams {
                        position,
                        name: name.clone(),
                        detail,
                        expected: expected_params(&(registered.params_schema)()),
                    })
                }
                None => {
                    return Err(ValidationError::NotAllowed {
                        position,
                        name: name.clone(),
                        allowed: self.names().join(", "),
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
    use crate::actions::{registered, ClickParams, InputParams};
    use crate::dom::{Element, Snapshot};

    fn page(url: &str, elements: usize) -> PageState {
        let elements = (1..=elements as u32).map(|i| Element::new(i, "button", &[], "b")).collect();
        PageState::new(1, Snapshot::with_elements(url, "", elements))
    }

    fn branch_names(schema: &Value) -> Vec<String> {
        schema["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["properties"].as_object().unwrap().keys().next().unwrap().clone())
            .collect()
    }

    #[test]
    fn union_offers_one_single_key_branch_per_allowed_action() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 2), false);
        let schema = union.schema();
        assert_eq!(branch_names(&schema), ["navigate", "click", "input", "done"]);
        for branch in schema["anyOf"].as_array().unwrap() {
            assert_eq!(branch["additionalProperties"], false);
            assert_eq!(branch["required"].as_array().unwrap().len(), 1);
        }
        let click = &schema["anyOf"][1]["properties"]["click"];
        assert_eq!(click["properties"]["index"]["type"], "integer");
        assert_eq!(click["description"], "Click an interactive element by its index.");
    }

    #[test]
    fn element_actions_are_withheld_from_a_page_without_elements() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 0), false);
        assert_eq!(union.names(), ["navigate", "done"]);
    }

    #[test]
    fn a_domain_restricted_action_is_offered_only_on_matching_hosts() {
        static SITE_ONLY: crate::actions::ActionSpec = crate::actions::ActionSpec {
            name: "site_only",
            description: "Only on example.com.",
            domains: &["*.example.com"],
            page_filter: None,
            terminates_sequence: false,
        };
        let mut actions = registered();
        actions
            .push(RegisteredAction { spec: &SITE_ONLY, params_schema: || json!({"type": "object", "properties": {}}) });
        let on_site = ActionUnion::for_page(&actions, &page("https://shop.example.com/cart", 1), false);
        assert!(on_site.names().contains(&"site_only"));
        assert!(branch_names(&on_site.schema()).contains(&"site_only".to_string()));
        let elsewhere = ActionUnion::for_page(&actions, &page("https://example.org/", 1), false);
        assert!(!elsewhere.names().contains(&"site_only"));
        let not_a_web_page = ActionUnion::for_page(&actions, &page("about:blank", 1), false);
        assert!(!not_a_web_page.names().contains(&"site_only"));
    }

    #[test]
    fn the_last_step_offers_only_done() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), true);
        assert_eq!(union.names(), ["done"]);
    }

    #[test]
    fn valid_actions_become_typed_actions() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), false);
        let actions = union
            .validate(&[json!({"input": {"index": 2, "text": "alice", "clear": null}}), json!({"click": {"index": 3}})])
            .unwrap();
        assert_eq!(actions[0], Action::Input(InputParams { index: 2, text: "alice".into(), clear: None }));
        assert_eq!(actions[1], Action::Click(ClickParams { index: 3 }));
    }

    #[test]
    fn an_invented_action_is_refused_with_the_allowed_list() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), false);
        let err = union.validate(&[json!({"teleport": {"to": "moon"}})]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Action 1: `teleport` is not available on this page. Allowed actions: navigate, click, input, done."
        );
    }

    #[test]
    fn an_action_withheld_on_this_page_is_refused() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 0), false);
        let err = union.validate(&[json!({"click": {"index": 1}})]).unwrap_err();
        assert!(matches!(err, ValidationError::NotAllowed { ref name, .. } if name == "click"));
    }

    #[test]
    fn wrong_parameters_name_the_action_and_field_and_what_was_expected() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), false);
        let err = union.validate(&[json!({"click": {"index": "the blue button"}})]).unwrap_err().to_string();
        assert!(err.contains("`click`"), "{err}");
        assert!(err.contains("field `index`"), "{err}");
        assert!(err.contains("{index: integer}"), "{err}");
        let err = union.validate(&[json!({"input": {"index": 1}})]).unwrap_err().to_string();
        assert!(err.contains("missing field `text`"), "{err}");
        assert!(err.contains("clear?: boolean"), "{err}");
        let err = union.validate(&[json!({"click": {"index": 1, "force": true}})]).unwrap_err().to_string();
        assert!(err.contains("unknown field `force`"), "{err}");
    }

    #[test]
    fn malformed_items_and_empty_lists_are_refused() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), false);
        assert_eq!(union.validate(&[]), Err(ValidationError::Empty));
        assert!(matches!(union.validate(&[json!("click 3")]), Err(ValidationError::NotSingleKey { position: 1, .. })));
        assert!(matches!(
            union.validate(&[json!({"click": {"index": 1}, "done": {"text": "", "success": true}})]),
            Err(ValidationError::NotSingleKey { .. })
        ));
    }

    #[test]
    fn done_must_be_alone() {
        let union = ActionUnion::for_page(&registered(), &page("https://example.com/", 3), false);
        let err = union
            .validate(&[json!({"click": {"index": 1}}), json!({"done": {"text": "ok", "success": true}})])
            .unwrap_err();
        assert_eq!(err, ValidationError::DoneNotAlone);
    }
}
