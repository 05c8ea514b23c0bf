//! `wait`: give a slow page time (a search that updates, a job that finishes).

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const MAX_WAIT_SECONDS: f64 = 30.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitParams {
    /// Seconds to wait, at most 30.
    #[schemars(range(min = 0, max = 30))]
    pub seconds: f64,
}

pub struct Wait;

impl ActionDef for Wait {
    type Params = WaitParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "wait",
        description: "Wait a number of seconds (at most 30) for the page to change.",
        domains: &[],
        page_filter: None,
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::NOTHING,
    };

    fn check(params: &WaitParams, _schema: &serde_json::Value) -> Result<(), String> {
        if !(params.seconds.is_finite() && (0.0..=MAX_WAIT_SECONDS).contains(&params.seconds)) {
            return Err(format!("field `seconds`: must be between 0 and 30, not {}", params.seconds));
        }
        Ok(())
    }

    fn describe(params: &WaitParams, _page: &PageState) -> crate::message::Said {
        let seconds = params.seconds.to_string();
        crate::message::Said::new("do_wait", format!("wait {seconds} s"), [seconds])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: WaitParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        ctx.browser.wait((params.seconds * 1000.0).round() as u32).await;
        Ok(ActionResult::ok(format!("Waited {} s", params.seconds)))
    }
}
