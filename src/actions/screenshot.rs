//! `screenshot`: look at the page as an image.
//!
//! The screenshot is attached to the next request, for models that can see: useful when the
//! element list cannot tell (a chart, a layout, a canvas, coordinates to click).

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs, NoParams};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;

pub struct TakeScreenshot;

impl ActionDef for TakeScreenshot {
    type Params = NoParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "screenshot",
        description: "Take a screenshot of the visible part of the page; it is attached to your next step as an image.",
        domains: &[],
        page_filter: Some(|page, _| !crate::web::is_blank_page(page.url())),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::DEBUGGER,
    };

    fn describe(_params: &NoParams, _page: &PageState) -> crate::message::Said {
        crate::message::Said::new::<&str>("do_screenshot", "take a screenshot".into(), [])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        _params: NoParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let shot = ctx.browser.screenshot().await?;
        let message = format!(
            "Took a screenshot of the viewport ({}×{} pixels); it is attached to the next step",
            shot.width, shot.height
        );
        Ok(ActionResult { screenshot: Some(shot), ..ActionResult::ok(message) })
    }
}
