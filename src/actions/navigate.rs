//! `navigate`: load a URL in the task's tab, or in a new tab.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use crate::web::is_web_url;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateParams {
    /// The absolute http(s) URL to open.
    pub url: String,
    /// Open it in a new tab (which becomes the current tab) instead of the current one.
    pub new_tab: Option<bool>,
}

pub struct Navigate;

impl ActionDef for Navigate {
    type Params = NavigateParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "navigate",
        description: "Open a URL in the current tab, or in a new tab with new_tab.",
        domains: &[],
        page_filter: None,
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn check(params: &NavigateParams, _schema: &serde_json::Value) -> Result<(), String> {
        if is_web_url(&params.url) {
            Ok(())
        } else {
            Err(format!("field `url`: {:?} is not an absolute http:// or https:// URL", params.url))
        }
    }

    fn describe(params: &NavigateParams, _page: &PageState) -> crate::message::Said {
        let url = &params.url;
        if params.new_tab == Some(true) {
            crate::message::Said::new("do_open_tab", format!("open {url} in a new tab"), [url])
        } else {
            crate::message::Said::new("do_navigate", format!("open {url}"), [url])
        }
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: NavigateParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        if params.new_tab == Some(true) {
            return super::tabs::open_in_new_tab(ctx, &params.url).await;
        }
        let effect = ctx.browser.navigate(&params.url).await?;
        let landed = effect.navigated_to.unwrap_or_else(|| params.url.clone());
        Ok(ActionResult {
            navigated_to: Some(landed.clone()),
            ..ActionResult::ok(format!("Navigated to {}", crate::dom::untrusted(&landed, 300)))
        })
    }
}
