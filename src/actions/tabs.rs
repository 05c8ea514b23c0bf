//! `switch_tab`, `open_tab`, `close_tab`: the task's tabs.
//!
//! The task works with the tab it started on and the tabs it opened (or that pages opened from
//! them); the browser state lists them with their ids. Other tabs of the user are not shown and
//! cannot be touched.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::dom::untrusted;
use crate::llm::LlmTransport;
use crate::web::is_web_url;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabParams {
    /// The tab's id, as listed under "Tabs" in the browser state.
    pub tab_id: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenTabParams {
    /// The absolute http(s) URL to open.
    pub url: String,
}

fn several_tabs(page: &PageState, _: &super::ActionOptions) -> bool {
    page.tabs.len() > 1
}

fn tab_title(page: &PageState, tab_id: i32) -> String {
    page.tabs
        .iter()
        .find(|t| t.id == tab_id)
        .map(|t| format!("{tab_id} ({})", t.title.chars().take(40).collect::<String>()))
        .unwrap_or_else(|| tab_id.to_string())
}

fn known_tab(page: &PageState, tab_id: i32) -> Result<(), ActionResult> {
    if page.tabs.iter().any(|t| t.id == tab_id) {
        Ok(())
    } else {
        let ids: Vec<String> = page.tabs.iter().map(|t| t.id.to_string()).collect();
        Err(ActionResult::error(format!(
            "There is no tab {tab_id} among the task's tabs; their ids are: {}.",
            ids.join(", ")
        )))
    }
}

pub struct SwitchTab;

impl ActionDef for SwitchTab {
    type Params = TabParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "switch_tab",
        description: "Make another of the task's tabs the current one (the next actions work in it).",
        domains: &[],
        page_filter: Some(several_tabs),
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn describe(params: &TabParams, page: &PageState) -> crate::message::Said {
        let tab = tab_title(page, params.tab_id);
        crate::message::Said::new("do_switch_tab", format!("switch to tab {tab}"), [tab])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: TabParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        if let Err(result) = known_tab(ctx.page, params.tab_id) {
            return Ok(result);
        }
        let tab = ctx.browser.switch_tab(params.tab_id).await?;
        Ok(ActionResult {
            navigated_to: Some(tab.url.clone()),
            ..ActionResult::ok(format!("Switched to tab {} at {}", tab.id, untrusted(&tab.url, 300)))
        })
    }
}

pub struct OpenTab;

impl ActionDef for OpenTab {
    type Params = OpenTabParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "open_tab",
        description: "Open a URL in a new tab, which becomes the current tab.",
        domains: &[],
        page_filter: None,
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn check(params: &OpenTabParams, _schema: &serde_json::Value) -> Result<(), String> {
        if is_web_url(&params.url) {
            Ok(())
        } else {
            Err(format!("field `url`: {:?} is not an absolute http:// or https:// URL", params.url))
        }
    }

    fn describe(params: &OpenTabParams, _page: &PageState) -> crate::message::Said {
        let url = &params.url;
        crate::message::Said::new("do_open_tab", format!("open {url} in a new tab"), [url])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: OpenTabParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        open_in_new_tab(ctx, &params.url).await
    }
}

/// Opens `url` in a new tab that becomes current (`open_tab`, `navigate` with `new_tab`).
pub(super) async fn open_in_new_tab<B: Browser, T: LlmTransport>(
    ctx: &mut ActionContext<'_, B, T>,
    url: &str,
) -> Result<ActionResult, BrowserError> {
    let effect = ctx.browser.open_tab(url).await?;
    let (id, landed) = match &effect.opened_tab {
        Some(tab) => (tab.id.to_string(), tab.url.clone()),
        None => ("?".into(), effect.navigated_to.clone().unwrap_or_else(|| url.to_string())),
    };
    Ok(ActionResult {
        navigated_to: Some(landed.clone()),
        ..ActionResult::ok(format!("Opened tab {id} at {}; it is now the current tab", untrusted(&landed, 300)))
    })
}

pub struct CloseTab;

impl ActionDef for CloseTab {
    type Params = TabParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "close_tab",
        description:
            "Close one of the task's tabs. If it is the current tab, another of the task's tabs becomes current.",
        domains: &[],
        page_filter: Some(several_tabs),
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn describe(params: &TabParams, page: &PageState) -> crate::message::Said {
        let tab = tab_title(page, params.tab_id);
        crate::message::Said::new("do_close_tab", format!("close tab {tab}"), [tab])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: TabParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        if let Err(result) = known_tab(ctx.page, params.tab_id) {
            return Ok(result);
        }
        match ctx.browser.close_tab(params.tab_id).await? {
            Some(now) => Ok(ActionResult {
                navigated_to: Some(now.url.clone()),
                ..ActionResult::ok(format!(
                    "Closed tab {}; the current tab is now tab {} at {}",
                    params.tab_id,
                    now.id,
                    untrusted(&now.url, 300)
                ))
            }),
            None => Ok(ActionResult::ok(format!("Closed tab {}", params.tab_id))),
        }
    }
}
