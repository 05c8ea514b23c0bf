//! `done`: end the task with the answer for the user — as free text, or, when the task gives
//! an output schema, as data of that shape.

use super::{schema_check::check_value, ActionContext, ActionDef, ActionResult, ActionSpec, DoneOutcome, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneParams {
    /// The final answer for the user: what was done and what was found.
    pub text: String,
    /// Whether the whole task was completed as asked.
    pub success: bool,
}

pub struct Done;

const DONE_DESCRIPTION: &str =
    "Finish the task: give the final answer and say whether the task succeeded. Must be the only action in its step.";

impl ActionDef for Done {
    type Params = DoneParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "done",
        description: DONE_DESCRIPTION,
        domains: &[],
        page_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn describe(params: &DoneParams, _page: &PageState) -> String {
        finish_description(params.success)
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: DoneParams,
        _ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        Ok(finished(params.text, params.success, None))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StructuredDoneParams {
    /// The task's result, in the shape the task asked for.
    pub data: Value,
    /// Whether the whole task was completed as asked.
    pub success: bool,
}

/// `done` for a task that gave an output schema. Its parameter schema is built per task by
/// [`structured_schema`], and `data` is checked against it.
pub struct StructuredDone;

impl ActionDef for StructuredDone {
    type Params = StructuredDoneParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "done",
        description: "Finish the task: give the result as `data` in the requested shape and say whether the task succeeded. Must be the only action in its step.",
        domains: &[],
        page_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn check(params: &StructuredDoneParams, schema: &Value) -> Result<(), String> {
        match schema.pointer("/properties/data") {
            Some(data_schema) => check_value(&params.data, data_schema, "data"),
            None => Ok(()),
        }
    }

    fn describe(params: &StructuredDoneParams, _page: &PageState) -> String {
        finish_description(params.success)
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: StructuredDoneParams,
        _ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let text = serde_json::to_string_pretty(&params.data).unwrap_or_default();
        Ok(finished(text, params.success, Some(params.data)))
    }
}

/// The parameters of the structured `done`: `data` of the task's output schema, and `success`.
pub fn structured_schema(output_schema: &Value) -> Value {
    let mut data = output_schema.clone();
    if let Some(obj) = data.as_object_mut() {
        obj.remove("$schema");
        obj.remove("$id");
        obj.entry("description").or_insert_with(|| json!("The task's result, in the shape the task asked for."));
    }
    json!({
        "type": "object",
        "properties": {
            "data": data,
            "success": {"type": "boolean", "description": "Whether the whole task was completed as asked."},
        },
        "required": ["data", "success"],
        "additionalProperties": false,
    })
}

fn finish_description(success: bool) -> String {
    if success {
        "finish: task done".into()
    } else {
        "finish: task not done".into()
    }
}

fn finished(text: String, success: bool, data: Option<Value>) -> ActionResult {
    ActionResult {
        done: Some(DoneOutcome { text, success, data }),
        ..ActionResult::ok(if success { "Task completed" } else { "Task ended without success" })
    }
}
