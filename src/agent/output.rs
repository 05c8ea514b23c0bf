//! AgentOutput: the shape of every LLM answer, its schema and its parsing.

use crate::actions::{Action, ActionUnion, ValidationError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

pub use crate::record::ModelThoughts;

/// The whole answer as the schema describes it. Field order matters: models write keys in
/// schema order, so the reasoning comes before the actions it justifies.
/// Unknown top-level keys (some providers add their own) are ignored.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct AgentOutputShape {
    /// Think the situation through before answering: what the page shows, what went wrong,
    /// what could work.
    #[serde(default)]
    thinking: Option<String>,
    /// Did the previous step achieve its goal? Judged from the current page, not hope.
    evaluation_previous_goal: String,
    /// What to remember to finish the task: progress, values found, what is left.
    memory: String,
    /// What this step's actions should achieve, in one sentence.
    next_goal: String,
    /// For a task of several parts: a checklist of them in order, each ticked off (`done`)
    /// once done. Give it whole when you write or change it; null keeps it as it is; [] drops it.
    #[serde(default)]
    plan: Option<Vec<crate::record::PlanItem>>,
    /// The actions to run in order (at least one).
    action: Vec<Value>,
}

/// A validated answer.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOutput {
    pub thoughts: ModelThoughts,
    pub actions: Vec<Action>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error("Your answer was not valid JSON of the required shape ({0}). Answer with one JSON object that follows the schema.")]
    Shape(String),
    #[error("{0}")]
    Actions(#[from] ValidationError),
}

/// The answer's shape as schemars derives it (see `actions::constant_schema`).
#[cfg(test)]
pub fn derived_shape_schema() -> Value {
    crate::actions::schema_of::<AgentOutputShape>()
}

impl AgentOutput {
    /// The JSON Schema of an answer on this page: the reasoning fields, then `action`, a list
    /// of the page's action union.
    pub fn schema(union: &ActionUnion, thinking: bool, max_actions: usize) -> Value {
        // The answer's own shape never changes: generated once, copied each step.
        static SHAPE: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        let mut schema = SHAPE.get_or_init(|| crate::actions::constant_schema("AgentOutputShape")).clone();
        if let Some(obj) = schema.as_object_mut() {
            obj.insert("additionalProperties".into(), Value::Bool(false));
        }
        if !thinking {
            if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                props.remove("thinking");
            }
        }
        if let Some(action) = schema.pointer_mut("/properties/action").and_then(Value::as_object_mut) {
            action.insert("minItems".into(), 1.into());
            action.insert("maxItems".into(), max_actions.max(1).into());
        }
        if let Some(items) = schema.pointer_mut("/properties/action/items") {
            *items = union.schema();
        }
        schema
    }

    /// Parses the model's JSON text and validates its actions against the union.
    pub fn parse(content: &str, union: &ActionUnion, max_actions: usize) -> Result<AgentOutput, OutputError> {
        let text = strip_code_fence(content);
        let shape: AgentOutputShape = crate::json::from_text(text).map_err(|e| OutputError::Shape(e.to_string()))?;
        let mut items = shape.action;
        // More actions than allowed: keep the first ones, as the prompt promises order.
        items.truncate(max_actions);
        let actions = union.validate(&items)?;
        let thoughts = ModelThoughts {
            thinking: shape.thinking.filter(|t| !t.trim().is_empty()),
            evaluation_previous_goal: shape.evaluation_previous_goal,
            memory: shape.memory,
            next_goal: shape.next_goal,
            plan: shape.plan.map(|p| {
                p.into_iter().filter(|i| !i.text.is_empty()).take(crate::record::PLAN_MAX_ITEMS).collect::<Vec<_>>()
            }),
        };
        Ok(AgentOutput { thoughts, actions })
    }
}

/// Some models wrap JSON in a markdown code fence even when asked not to.
fn strip_code_fence(content: &str) -> &str {
    let t = content.trim();
    t.strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .map(str::trim)
        .unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::registered;
    use crate::browser::PageState;
    use crate::dom::{Element, Snapshot};
    use serde_json::json;

    fn union() -> ActionUnion {
        let page =
            PageState::new(1, Snapshot::with_elements("https://example.com", "", vec![Element::new(1, "a", &[], "x")]));
        ActionUnion::for_page(&registered(), &page, &Default::default(), false)
    }

    #[test]
    fn schema_puts_reasoning_before_actions_and_embeds_the_union() {
        let schema = AgentOutput::schema(&union(), true, 5);
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["thinking", "evaluation_previous_goal", "memory", "next_goal", "plan", "action"]);
        assert_eq!(schema["properties"]["action"]["maxItems"], 5);
        let without = AgentOutput::schema(&union(), false, 5);
        assert!(without["properties"].get("thinking").is_none(), "thinking is optional by setting");
        assert_eq!(schema["properties"]["action"]["type"], "array");
        assert_eq!(
            schema["properties"]["action"]["items"]["anyOf"].as_array().unwrap().len(),
            union().offered_names().len()
        );
        assert_eq!(schema["additionalProperties"], false);
        assert!(schema.get("$defs").is_none());
    }

    #[test]
    fn a_good_answer_parses_even_inside_a_code_fence() {
        let text = "```json\n{\"evaluation_previous_goal\":\"ok\",\"memory\":\"m\",\"next_goal\":\"g\",\"action\":[{\"click\":{\"index\":1}}]}\n```";
        let out = AgentOutput::parse(text, &union(), 5).unwrap();
        assert_eq!(out.thoughts.next_goal, "g");
        assert_eq!(out.actions.len(), 1);
    }

    #[test]
    fn a_plan_is_read_as_models_write_it_and_kept_short() {
        let plan = |parts: Value| {
            let text = json!({"evaluation_previous_goal": "", "memory": "", "next_goal": "", "plan": parts,
                "action": [{"click": {"index": 1}}]})
            .to_string();
            AgentOutput::parse(&text, &union(), 5).unwrap().thoughts.plan
        };
        let read = plan(json!([
            {"text": "Open the cart", "done": true},
            {"text": "Pay", "done": null},
            {"text": "Check", "why": "ignored"},
            "[X] Log in",
            "  ",
            {"text": " "}
        ]))
        .unwrap();
        let parts: Vec<(&str, bool)> = read.iter().map(|p| (p.text.as_str(), p.done)).collect();
        assert_eq!(parts, [("Open the cart", true), ("Pay", false), ("Check", false), ("Log in", true)]);
        assert_eq!(plan(json!(null)), None, "null leaves the plan as it is");
        assert_eq!(plan(json!([])), Some(vec![]), "[] drops it");
        let many: Vec<String> = (0..30).map(|i| format!("part {i} {}", "x".repeat(300))).collect();
        let read = plan(json!(many)).unwrap();
        assert_eq!(read.len(), crate::record::PLAN_MAX_ITEMS);
        assert!(read.iter().all(|p| p.text.chars().count() == crate::record::PLAN_ITEM_MAX_CHARS + 1));
        let text = json!({"evaluation_previous_goal": "", "memory": "", "next_goal": "", "plan": [{"done": true}],
            "action": [{"click": {"index": 1}}]})
        .to_string();
        let err = AgentOutput::parse(&text, &union(), 5).unwrap_err();
        assert!(err.to_string().contains("text"), "a part without its text says so: {err}");
    }

    #[test]
    fn extra_actions_beyond_the_limit_are_dropped() {
        let actions: Vec<Value> = (0..8).map(|_| json!({"click": {"index": 1}})).collect();
        let text =
            json!({"evaluation_previous_goal": "", "memory": "", "next_goal": "", "action": actions}).to_string();
        assert_eq!(AgentOutput::parse(&text, &union(), 5).unwrap().actions.len(), 5);
    }

    #[test]
    fn bad_answers_say_what_to_fix() {
        let err = AgentOutput::parse("I will click the button", &union(), 5).unwrap_err();
        assert!(matches!(err, OutputError::Shape(_)));
        let err = AgentOutput::parse(r#"{"memory":"","next_goal":"","action":[]}"#, &union(), 5).unwrap_err();
        assert!(err.to_string().contains("evaluation_previous_goal"), "{err}");
        let text = json!({"evaluation_previous_goal": "", "memory": "", "next_goal": "", "action": []}).to_string();
        assert_eq!(AgentOutput::parse(&text, &union(), 5).unwrap_err(), OutputError::Actions(ValidationError::Empty));
    }
}
