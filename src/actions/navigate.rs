//! `navigate`: load a URL in the task's tab.

use super::{url::is_web_url, ActionContext, ActionDef, ActionResult, ActionSpec};
use crate::browser::{Browser, BrowserError, PageState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateParams {
    /// The absolute http(s) URL to open.
    pub url: String,
}

pub struct Navigate;

impl ActionDef for Navigate {
    type Params = NavigateParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "navigate",
        description: "Open a URL in the current tab.",
        domains: &[],
        page_filter: None,
        terminates_sequence: true,
    };

    fn describe(params: &NavigateParams, _page: &PageState) -> String {
        format!("open {}", params.url)
    }

    async fn execute<B: Browser>(
        params: NavigateParams,
        ctx: &mut ActionContext<'_, B>,
    ) -> Result<ActionResult, BrowserError> {
        if !is_web_url(&params.url) {
            return Ok(ActionResult::error(format!(
                "Cannot navigate to \"{}\": only absolute http:// or https:// URLs are allowed.",
                params.url
            )));
        }
        let effect = ctx.browser.navigate(&params.url).await?;
        let landed = effect.navigated_to.unwrap_or_else(|| params.url.clone());
        Ok(ActionResult { navigated_to: Some(landed.clone()), ..ActionResult::ok(format!("Navigated to {landed}")) })
    }
}
