//! `scroll`: move the page, or one scrolling container, by screens.

use super::{element_label, observed_element, ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollParams {
    /// True to scroll down, false to scroll up.
    pub down: bool,
    /// How many screens to scroll (0.5 = half a screen); null for one.
    pub pages: Option<f64>,
    /// The index of a scrollable container (or an element inside one) to scroll instead of
    /// the page.
    pub index: Option<u32>,
}

pub struct Scroll;

impl ActionDef for Scroll {
    type Params = ScrollParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "scroll",
        description: "Scroll the page, or the container holding element `index`, up or down by screens to see more.",
        domains: &[],
        page_filter: Some(|page, _| page.can_scroll()),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn check(params: &ScrollParams, _schema: &serde_json::Value) -> Result<(), String> {
        match params.pages {
            Some(p) if !(p.is_finite() && (0.1..=10.0).contains(&p)) => {
                Err(format!("field `pages`: must be between 0.1 and 10 screens, not {p}"))
            }
            _ => Ok(()),
        }
    }

    fn describe(params: &ScrollParams, page: &PageState) -> crate::message::Said {
        let pages = params.pages.unwrap_or(1.0).to_string();
        match (params.index, params.down) {
            (Some(index), down) => {
                let label = element_label(page, index);
                let (key, way) = if down { ("do_scroll_element_down", "down") } else { ("do_scroll_element_up", "up") };
                crate::message::Said::new(key, format!("scroll {label} {way} {pages} screen(s)"), [label, pages])
            }
            (None, true) => {
                crate::message::Said::new("do_scroll_down", format!("scroll down {pages} screen(s)"), [pages])
            }
            (None, false) => crate::message::Said::new("do_scroll_up", format!("scroll up {pages} screen(s)"), [pages]),
        }
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: ScrollParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let what = match params.index {
            Some(index) => match observed_element(ctx.page, index) {
                Ok(line) => format!("the container of {line}"),
                Err(result) => return Ok(result),
            },
            None => "the page".into(),
        };
        let pages = params.pages.unwrap_or(1.0);
        let outcome = ctx.browser.scroll(params.down, pages, params.index).await?;
        let way = if params.down { "down" } else { "up" };
        if outcome.moved.abs() < 1.0 {
            let edge = if params.down { "bottom" } else { "top" };
            let at_edge = if params.down { outcome.at_end } else { outcome.at_start };
            return Ok(ActionResult::ok(if at_edge {
                format!("Did not scroll {what}: it is already at the {edge}. Nothing more to see that way.")
            } else {
                format!(
                    "Did not scroll {what}: it does not scroll (a dialog may be open over the page; close it first)."
                )
            }));
        }
        let target = if outcome.target == "container" && params.index.is_none() {
            "the page's main scrolling area".to_string()
        } else {
            what
        };
        let edge = match (params.down, outcome.at_end, outcome.at_start) {
            (true, true, _) => "; it is now at the bottom",
            (false, _, true) => "; it is now at the top",
            _ => "",
        };
        Ok(ActionResult::ok(format!("Scrolled {target} {way} by {:.0} pixels{edge}", outcome.moved.abs())))
    }
}
