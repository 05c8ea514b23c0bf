//! Skills: a task that worked, saved under a name for the model to call again.
//!
//! A person saves a finished conversation as a skill: its steps (as a replay takes them), the
//! site it began on, and the texts it typed, each made a named parameter. On a page of that
//! site the skill is one more branch of the action union (`skill_<name>`, its parameters a
//! string each), so the model can only call a skill that belongs here, with every parameter.
//! When it does, the skill's steps stand in for the model's answers — the replay machinery
//! ([`super::replay::Script`]) with each `{{parameter}}` replaced by the value given — and the
//! model takes over again afterwards, told how the skill went.
//!
//! What a skill keeps is what its steps need: parameters are whole typed texts (an `input`'s
//! `text`, a `search`'s `query`), since a part of a text rarely means the same on another run.
//! Secrets stay placeholders (`<secret>name</secret>`), filled per site when a step runs; a
//! password typed as itself was never kept, so a task that typed one cannot become a skill.
//!
//! # Skills, in detail
//!
//! **Skills** (`src/agent/skill.rs`, `src/actions/skill.rs`, requests `draft_skill` and
//! `save_skill`). The panel hands over an opened conversation's steps (as for a replay) and the
//! page it began on; `draft_skill` answers with the site the skill would belong to and the texts
//! the steps typed (an `input`'s `text`, a `search`'s `query`; never a secret placeholder), each
//! with a name from the field it went into — or, before anything is typed, why they cannot make a
//! skill. `save_skill` takes
//! the person's name and chosen parameters and makes a `Skill`: the site is the host of the page the
//! conversation began on, the action name `skill_` and the name as an identifier, each chosen text
//! replaced by `{{parameter}}` in the steps (and in goals that named it); the final `done`, questions
//! to the person and calls of other skills are left out; a masked password or a name already used on
//! that site is refused. Skills are kept in `chrome.storage.local` (`skills`) and read at the start of
//! every task (not a replay): each is a `RegisteredAction` of its own (`actions::skill_action`, the
//! `UseSkill` definition) with its own name, description and parameter schema, offered only on its
//! host, so the model can call only a skill of this site, with every parameter. The loop does not
//! execute the call in the page: `Agent::start_skill` makes a `replay::Script` of the skill's steps
//! with the values filled in (first opening the skill's page when the tab is elsewhere), and the
//! next steps take their answers from it, exactly as a replay — recorded, shown live, held to the
//! firewall, secrets filled in per site as each step runs. When the steps are done, or one cannot
//! be (an element not found, an action failed), the script is dropped and the model is asked again
//! with a note saying how the skill went. A worker restarted in the middle of a skill gives the task
//! back to the model at once.

use super::replay::{ReplayAction, ReplayStep, Script, MASKED};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The prefix of every skill's branch in the action union.
pub const ACTION_PREFIX: &str = crate::actions::SKILL_ACTION_PREFIX;
/// A skill's name: at most this many characters.
const MAX_NAME_CHARS: usize = 60;
/// A parameter's name: at most this many characters.
const MAX_PARAM_CHARS: usize = 32;
/// A parameter's text shorter than this is not looked for in goals (a "1" is everywhere).
const MIN_GOAL_EXAMPLE_CHARS: usize = 3;

/// Where a parameter's value goes: `{{name}}`.
fn placeholder(name: &str) -> String {
    format!("{{{{{name}}}}}")
}

/// The actions that type a text, and the parameter that holds it.
const TYPED_FIELDS: &[(&str, &str)] = &[("input", "text"), ("search", "query")];

/// The parameter of `action` that holds a text it typed, if it types one.
fn typed_field(action: &ReplayAction) -> Option<&'static str> {
    TYPED_FIELDS.iter().find(|(name, _)| *name == action.name).map(|(_, field)| *field)
}

/// A saved skill (kept in chrome.storage.local under `skills`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// As the person named it, e.g. "Order the usual".
    pub name: String,
    /// Its branch in the action union: `skill_` and the name made an identifier.
    pub action: String,
    /// What it does, for the model: the task it was saved from.
    pub description: String,
    /// The host it is offered on (the host of `start_url`).
    pub domain: String,
    /// The page its first step was taken on.
    pub start_url: String,
    pub params: Vec<SkillParam>,
    /// Its steps, typed texts replaced by `{{parameter}}`.
    pub steps: Vec<ReplayStep>,
}

/// One parameter: its name, and the text typed when the skill was saved (an example for the
/// model and a default for the person).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkillParam {
    pub name: String,
    pub example: String,
}

/// What the panel sends to save a skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkillDraft {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub start_url: String,
    pub steps: Vec<ReplayStep>,
    /// The typed texts to make parameters, each under the name the person chose.
    #[serde(default)]
    pub params: Vec<SkillParam>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    #[error("Give the skill a name.")]
    NoName,
    #[error("The name is longer than {MAX_NAME_CHARS} characters; choose a shorter one.")]
    NameTooLong,
    #[error("The task has no actions a skill could repeat (only its final answer, or actions that failed).")]
    NoSteps,
    #[error("The task did not begin on a web page (it began on \"{0}\"), so there is no site to offer the skill on.")]
    NoSite(String),
    #[error("Step {0} of the task typed a password, which Tabwright does not keep. Save it as a secret in Tabwright's settings, run the task again with <secret>name</secret>, and save that.")]
    TypedPassword(usize),
    #[error("\"{0}\" cannot name a parameter: use lowercase letters, digits and _, beginning with a letter, at most {MAX_PARAM_CHARS} characters.")]
    BadParamName(String),
    #[error("Two parameters are named \"{0}\"; give each its own name.")]
    SameParamName(String),
    #[error("The task never typed \"{0}\", so it cannot be a parameter.")]
    NotTyped(String),
    #[error("A skill named \"{name}\" already exists for {domain}. Choose another name, or delete the old one in Tabwright's settings.")]
    NameTaken { name: String, domain: String },
}

impl crate::message::Localize for SkillError {
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        use crate::message::LocaleText as L;
        Some(match self {
            SkillError::NoName => L::plain("skill_no_name"),
            SkillError::NameTooLong => L::new("skill_name_too_long", [MAX_NAME_CHARS]),
            SkillError::NoSteps => L::plain("skill_no_steps"),
            SkillError::NoSite(url) => L::new("skill_no_site", [url]),
            SkillError::TypedPassword(step) => L::new("skill_typed_password", [step]),
            SkillError::BadParamName(name) => {
                L::new("skill_bad_param_name", [name.clone(), MAX_PARAM_CHARS.to_string()])
            }
            SkillError::SameParamName(name) => L::new("skill_same_param_name", [name]),
            SkillError::NotTyped(text) => L::new("skill_not_typed", [text]),
            SkillError::NameTaken { name, domain } => L::new("skill_name_taken", [name, domain]),
        })
    }
}

/// A typed text with a name suggested for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Suggested {
    pub name: String,
    pub example: String,
    /// The step (from 1) that first typed it.
    pub step: usize,
}

/// The branch name of a skill called `name`: `skill_` and the name in lowercase ASCII words
/// joined by `_`; a name with no such letters (written in Chinese, say) is told apart by a
/// short hash of it instead.
pub fn action_name(name: &str) -> String {
    let slug = slug(name, usize::MAX, 40);
    if slug.is_empty() {
        // FNV-1a: stable across builds and machines, unlike the standard hasher.
        let hash =
            name.trim().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        return format!("{ACTION_PREFIX}{:08x}", hash as u32);
    }
    format!("{ACTION_PREFIX}{slug}")
}

fn valid_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= MAX_PARAM_CHARS
}

/// The typed texts of `steps` that could be parameters, in the order typed, each once, with a
/// name from the field it went into (its placeholder, label or name) or `text_N`. Secret
/// placeholders are not among them.
pub fn suggest_params(steps: &[ReplayStep]) -> Vec<Suggested> {
    let mut out: Vec<Suggested> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        for action in &step.actions {
            let Some(field) = typed_field(action) else { continue };
            let Some(text) = action.params.get(field).and_then(Value::as_str) else { continue };
            if text.trim().is_empty() || text == MASKED || text.to_ascii_lowercase().contains("<secret>") {
                continue;
            }
            if out.iter().any(|s| s.example == text) {
                continue;
            }
            let label = action.target.as_ref().and_then(|t| {
                ["placeholder", "aria-label", "name", "id", "title"].iter().find_map(|a| t.attributes.get(*a))
            });
            let mut name = label.map(|l| identifier(l)).filter(|n| !n.is_empty()).unwrap_or_else(|| field.to_string());
            if out.iter().any(|s| s.name == name) {
                name = (2..).map(|n| format!("{name}_{n}")).find(|c| !out.iter().any(|s| &s.name == c)).unwrap_or(name);
            }
            out.push(Suggested { name, example: text.to_string(), step: i + 1 });
        }
    }
    out
}

/// The site a skill made of `steps` (begun on `start_url`) would belong to, and the parameters
/// it could take; or why the steps cannot make one.
pub fn draft(start_url: &str, steps: Vec<ReplayStep>) -> Result<(String, Vec<Suggested>), SkillError> {
    let site = site_of(start_url)?;
    Ok((site, suggest_params(&repeatable(steps)?)))
}

/// What of `steps` a skill repeats: not the final answer, not a question to the person, and
/// not the call of another skill (the steps it ran are among the task's own). Refused when
/// nothing is left, or a step typed a password history never kept.
fn repeatable(steps: Vec<ReplayStep>) -> Result<Vec<ReplayStep>, SkillError> {
    let steps: Vec<ReplayStep> = steps
        .into_iter()
        .map(|mut step| {
            step.actions
                .retain(|a| !matches!(a.name.as_str(), "done" | "ask_human") && !a.name.starts_with(ACTION_PREFIX));
            step
        })
        .filter(|step| !step.actions.is_empty())
        .collect();
    if steps.is_empty() {
        return Err(SkillError::NoSteps);
    }
    for (i, step) in steps.iter().enumerate() {
        if step.actions.iter().any(|a| a.params.get("text").and_then(Value::as_str) == Some(MASKED)) {
            return Err(SkillError::TypedPassword(i + 1));
        }
    }
    Ok(steps)
}

/// `label` as a parameter name: lowercase ASCII words joined by `_`, cut to fit.
fn identifier(label: &str) -> String {
    let name = slug(label, 4, MAX_PARAM_CHARS);
    if name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name
    } else {
        String::new()
    }
}

/// The first `max_words` words of `text` made of ASCII letters and digits, lowercased and
/// joined by `_`, cut to `max_chars`.
fn slug(text: &str, max_words: usize, max_chars: usize) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(max_words)
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let mut slug = words.join("_");
    slug.truncate(max_chars);
    slug.trim_end_matches('_').to_string()
}

/// The site a skill that began on `start_url` belongs to: its host, if it is a web page.
fn site_of(start_url: &str) -> Result<String, SkillError> {
    crate::web::host_of(start_url)
        .filter(|_| crate::web::is_web_url(start_url))
        .ok_or_else(|| SkillError::NoSite(start_url.to_string()))
}

impl Skill {
    /// Its branch of the action union.
    pub fn registered(&self) -> crate::actions::RegisteredAction {
        crate::actions::skill_action(&self.action, self.action_description(), &self.domain, self.params_schema())
    }

    /// Makes a skill of a draft, checking it against the skills already saved.
    pub fn from_draft(draft: SkillDraft, existing: &[Skill]) -> Result<Skill, SkillError> {
        let name = draft.name.split_whitespace().collect::<Vec<_>>().join(" ");
        if name.is_empty() {
            return Err(SkillError::NoName);
        }
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(SkillError::NameTooLong);
        }
        let domain = site_of(&draft.start_url)?;
        let action = action_name(&name);
        if existing.iter().any(|s| s.domain == domain && (s.action == action || s.name == name)) {
            return Err(SkillError::NameTaken { name, domain });
        }
        let mut steps = repeatable(draft.steps)?;
        let mut params: Vec<SkillParam> = Vec::new();
        for param in draft.params {
            if !valid_param_name(&param.name) {
                return Err(SkillError::BadParamName(param.name));
            }
            if params.iter().any(|p| p.name == param.name) {
                return Err(SkillError::SameParamName(param.name));
            }
            let mut typed = false;
            for action in steps.iter_mut().flat_map(|s| s.actions.iter_mut()) {
                let Some(field) = typed_field(action) else { continue };
                if action.params.get(field).and_then(Value::as_str) == Some(param.example.as_str()) {
                    action.params[field] = Value::String(placeholder(&param.name));
                    typed = true;
                }
            }
            if !typed {
                return Err(SkillError::NotTyped(param.example));
            }
            // A goal that names the text ("Ask for Lisbon") names the new value when run.
            if param.example.chars().count() >= MIN_GOAL_EXAMPLE_CHARS {
                for step in &mut steps {
                    step.goal = step.goal.replace(&param.example, &placeholder(&param.name));
                }
            }
            params.push(param);
        }
        let description = draft.description.split_whitespace().collect::<Vec<_>>().join(" ");
        Ok(Skill { name, action, description, domain, start_url: draft.start_url, params, steps })
    }

    /// The schema of the skill's parameters: each a required string.
    pub fn params_schema(&self) -> Value {
        let mut properties = Map::new();
        for p in &self.params {
            let example: String = p.example.chars().take(80).collect();
            properties.insert(
                p.name.clone(),
                json!({"type": "string", "description": format!("Typed where the saved task typed \"{example}\".")}),
            );
        }
        let required: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
    }

    /// What the model reads about the skill in its branch of the union.
    pub fn action_description(&self) -> String {
        let what = if self.description.is_empty() { self.name.clone() } else { self.description.clone() };
        let what: String = what.chars().take(300).collect();
        format!(
            "A skill the user saved (\"{}\"): repeats {} saved step(s) of an earlier task that did this: {what}. Prefer it when it does what the task needs; the steps run without you, then you go on.",
            self.name.chars().take(MAX_NAME_CHARS).collect::<String>(),
            self.steps.len()
        )
    }

    /// The skill's steps with the given values in place of its parameters; when the tab is not
    /// on the page the skill began on, a first step opens it.
    pub fn script(&self, values: &BTreeMap<String, String>, current_url: &str) -> Script {
        let mut steps: Vec<ReplayStep> = self.steps.iter().map(|s| self.filled(s, values)).collect();
        if !same_page(current_url, &self.start_url) {
            steps.insert(
                0,
                ReplayStep {
                    goal: format!("Open the page the skill \"{}\" begins on", self.name),
                    actions: vec![super::replay::ReplayAction {
                        name: "navigate".into(),
                        params: json!({"url": self.start_url}),
                        target: None,
                    }],
                },
            );
        }
        Script::skill(self.name.clone(), steps)
    }

    /// The skill's steps with the given values in place of its parameters, as they run from
    /// its own start page (a schedule replays them so, without the model).
    pub fn steps_with(&self, values: &BTreeMap<String, String>) -> Vec<ReplayStep> {
        self.steps.iter().map(|s| self.filled(s, values)).collect()
    }

    fn filled(&self, step: &ReplayStep, values: &BTreeMap<String, String>) -> ReplayStep {
        let fill = |text: &str| {
            self.params.iter().fold(text.to_string(), |text, p| {
                text.replace(&placeholder(&p.name), values.get(&p.name).map_or("", String::as_str))
            })
        };
        let mut step = step.clone();
        step.goal = fill(&step.goal);
        for action in &mut step.actions {
            let Some(field) = typed_field(action) else { continue };
            let Some(text) = action.params.get(field).and_then(Value::as_str) else { continue };
            action.params[field] = Value::String(fill(text));
        }
        step
    }
}

/// Whether two URLs name the same page (their fragments aside).
fn same_page(a: &str, b: &str) -> bool {
    let page = |u: &str| u.split('#').next().unwrap_or("").trim_end_matches('/').to_string();
    page(a) == page(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::ElementFingerprint;

    fn typed(name: &str, params: Value, placeholder: Option<&str>) -> ReplayAction {
        let target = placeholder.map(|p| ElementFingerprint {
            tag: "input".into(),
            text: String::new(),
            attributes: [("placeholder".to_string(), p.to_string())].into(),
            ancestors: vec![],
            rank: 0,
        });
        ReplayAction { name: name.into(), params, target }
    }

    fn search_steps() -> Vec<ReplayStep> {
        vec![
            ReplayStep {
                goal: "Search the catalogue for blue kettle".into(),
                actions: vec![
                    typed("input", json!({"index": 3, "text": "blue kettle"}), Some("Search products")),
                    typed("input", json!({"index": 4, "text": "<secret>card</secret>"}), Some("Card")),
                ],
            },
            ReplayStep { goal: "Open it".into(), actions: vec![typed("click", json!({"index": 9}), None)] },
            ReplayStep {
                goal: "Answer".into(),
                actions: vec![typed("done", json!({"text": "Found it", "success": true}), None)],
            },
        ]
    }

    fn draft(params: Vec<(&str, &str)>) -> SkillDraft {
        SkillDraft {
            name: "  Find a  product ".into(),
            description: "Find a blue kettle on the shop".into(),
            start_url: "https://shop.example/home".into(),
            steps: search_steps(),
            params: params.into_iter().map(|(n, e)| SkillParam { name: n.into(), example: e.into() }).collect(),
        }
    }

    #[test]
    fn typed_texts_are_suggested_as_parameters_named_by_their_field() {
        let suggested = suggest_params(&search_steps());
        assert_eq!(
            suggested,
            vec![Suggested { name: "search_products".into(), example: "blue kettle".into(), step: 1 }],
            "the secret placeholder is not a parameter, nor the final answer's text"
        );
        let (site, params) = super::draft("https://shop.example/home", search_steps()).unwrap();
        assert_eq!((site.as_str(), params), ("shop.example", suggested));
        assert!(matches!(super::draft("file:///tmp/x.html", search_steps()), Err(SkillError::NoSite(_))));
    }

    #[test]
    fn a_draft_becomes_a_skill_for_its_site_with_placeholders_for_its_parameters() {
        let skill = Skill::from_draft(draft(vec![("product", "blue kettle")]), &[]).unwrap();
        assert_eq!(skill.name, "Find a product");
        assert_eq!(skill.action, "skill_find_a_product");
        assert_eq!(skill.domain, "shop.example");
        assert_eq!(skill.steps.len(), 2, "the step that only answered is left out");
        assert_eq!(skill.steps[0].actions[0].params["text"], "{{product}}");
        assert_eq!(skill.steps[0].goal, "Search the catalogue for {{product}}");
        assert_eq!(skill.steps[0].actions[1].params["text"], "<secret>card</secret>");
        let schema = skill.params_schema();
        assert_eq!(schema["required"], json!(["product"]));
        assert_eq!(schema["properties"]["product"]["type"], "string");
        assert!(skill.action_description().contains("Find a blue kettle"));
    }

    #[test]
    fn a_skill_runs_with_the_values_given_and_opens_its_page_first_when_elsewhere() {
        let skill = Skill::from_draft(draft(vec![("product", "blue kettle")]), &[]).unwrap();
        let values = [("product".to_string(), "red teapot".to_string())].into();
        let mut script = skill.script(&values, "https://shop.example/home#top");
        assert_eq!(script.len(), 2, "already on its page");
        let page = crate::dom::Snapshot::with_elements("https://shop.example/home", "", vec![]);
        let first = script.next(&page).unwrap();
        // The input's element is not on this empty page: the step says so rather than guess.
        assert!(first.is_err());
        let mut script = skill.script(&values, "https://shop.example/cart");
        assert_eq!(script.len(), 3);
        let opening = script.next(&page).unwrap().unwrap();
        assert_eq!(opening.answer["action"][0]["navigate"]["url"], "https://shop.example/home");
        let filled = skill.filled(&skill.steps[0], &values);
        assert_eq!(filled.actions[0].params["text"], "red teapot");
        assert_eq!(filled.goal, "Search the catalogue for red teapot");
    }

    #[test]
    fn bad_drafts_are_refused_with_what_to_do() {
        let taken = Skill::from_draft(draft(vec![]), &[]).unwrap();
        assert!(matches!(
            Skill::from_draft(draft(vec![]), std::slice::from_ref(&taken)),
            Err(SkillError::NameTaken { .. })
        ));
        let mut elsewhere = taken.clone();
        elsewhere.domain = "other.example".into();
        assert!(Skill::from_draft(draft(vec![]), &[elsewhere]).is_ok(), "the same name on another site");
        assert_eq!(Skill::from_draft(SkillDraft { name: " ".into(), ..draft(vec![]) }, &[]), Err(SkillError::NoName));
        assert_eq!(
            Skill::from_draft(draft(vec![("Product", "blue kettle")]), &[]),
            Err(SkillError::BadParamName("Product".into()))
        );
        assert_eq!(
            Skill::from_draft(draft(vec![("a", "blue kettle"), ("a", "x")]), &[]),
            Err(SkillError::SameParamName("a".into()))
        );
        assert_eq!(Skill::from_draft(draft(vec![("a", "green")]), &[]), Err(SkillError::NotTyped("green".into())));
        let only_done = SkillDraft { steps: vec![search_steps().remove(2)], ..draft(vec![]) };
        assert_eq!(Skill::from_draft(only_done, &[]), Err(SkillError::NoSteps));
        let local = SkillDraft { start_url: "file:///tmp/x.html".into(), ..draft(vec![]) };
        assert!(matches!(Skill::from_draft(local, &[]), Err(SkillError::NoSite(_))));
        let mut password = search_steps();
        password[1].actions[0] = typed("input", json!({"index": 2, "text": MASKED}), None);
        let with_password = SkillDraft { steps: password, ..draft(vec![]) };
        assert_eq!(Skill::from_draft(with_password, &[]), Err(SkillError::TypedPassword(2)));
    }

    #[test]
    fn names_in_any_script_make_a_stable_action_name() {
        assert_eq!(action_name("Order the usual!"), "skill_order_the_usual");
        let chinese = action_name("查询天气");
        assert!(chinese.starts_with("skill_") && chinese.len() == 14, "{chinese}");
        assert_eq!(chinese, action_name(" 查询天气 "));
        assert_ne!(chinese, action_name("查询新闻"));
    }
}
