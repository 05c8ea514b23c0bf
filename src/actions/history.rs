//! `go_back` and `go_forward`: the tab's history, as the browser's buttons would.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs, NoParams};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;

pub struct GoBack;

impl ActionDef for GoBack {
    type Params = NoParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "go_back",
        description: "Go back to the previous page in this tab's history.",
        domains: &[],
        page_filter: Some(|page, _| page.can_go_back),
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn describe(_params: &NoParams, _page: &PageState) -> crate::message::Said {
        crate::message::Said::new::<&str>("do_go_back", "go back".into(), [])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        _params: NoParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let effect = ctx.browser.go_back().await?;
        Ok(moved("back", effect.navigated_to))
    }
}

pub struct GoForward;

impl ActionDef for GoForward {
    type Params = NoParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "go_forward",
        description: "Go forward to the next page in this tab's history (after going back).",
        domains: &[],
        page_filter: Some(|page, _| page.can_go_forward),
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn describe(_params: &NoParams, _page: &PageState) -> crate::message::Said {
        crate::message::Said::new::<&str>("do_go_forward", "go forward".into(), [])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        _params: NoParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let effect = ctx.browser.go_forward().await?;
        Ok(moved("forward", effect.navigated_to))
    }
}

fn moved(direction: &str, to: Option<String>) -> ActionResult {
    match to {
        Some(url) => ActionResult {
            navigated_to: Some(url.clone()),
            ..ActionResult::ok(format!("Went {direction} to {}", crate::dom::untrusted(&url, 300)))
        },
        None => ActionResult::ok(format!(
            "Tried to go {direction}, but the URL did not change: there may be no page that way (use navigate), or the page changed in place"
        )),
    }
}
