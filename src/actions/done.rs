//! `done`: end the task with the answer for the user.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, DoneOutcome};
use crate::browser::{Browser, BrowserError, PageState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneParams {
    /// The final answer for the user: what was done and what was found.
    pub text: String,
    /// Whether the whole task was completed as asked.
    pub success: bool,
}

pub struct Done;

impl ActionDef for Done {
    type Params = DoneParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "done",
        description: "Finish the task: give the final answer and say whether the task succeeded. Must be the only action in its step.",
        domains: &[],
        page_filter: None,
        terminates_sequence: true,
    };

    fn describe(params: &DoneParams, _page: &PageState) -> String {
        if params.success {
            "finish: task done".into()
        } else {
            "finish: task not done".into()
        }
    }

    async fn execute<B: Browser>(
        params: DoneParams,
        _ctx: &mut ActionContext<'_, B>,
    ) -> Result<ActionResult, BrowserError> {
        Ok(ActionResult {
            done: Some(DoneOutcome { text: params.text.clone(), success: params.success }),
            ..ActionResult::ok(if params.success { "Task completed" } else { "Task ended without success" })
        })
    }
}
