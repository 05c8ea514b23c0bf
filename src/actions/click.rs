//! `click`: click an element by its index, or a point of the viewport.
//!
//! By index is the normal way: the content script scrolls the element into view and replays a
//! person's pointer and mouse events; if the page shows no reaction (some pages ignore events
//! that are not `isTrusted`), the browser repeats it as a trusted debugger click. A page can
//! also answer a script's click with a change ("please use a real click") and do nothing else,
//! which looks like a click that worked; the model then clicks the same element again. So an
//! element clicked in one of the last few steps is clicked with trusted input at once, and the
//! result says so. A point is for what has no index (a canvas, a map) and is always a trusted
//! click.

use super::{element_label, observed_element, ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickParams {
    /// The index of the element, as shown in `[index]` in the browser state. Give either this
    /// or both `x` and `y`.
    pub index: Option<u32>,
    /// Horizontal position in CSS pixels from the left edge of the viewport.
    pub x: Option<f64>,
    /// Vertical position in CSS pixels from the top edge of the viewport.
    pub y: Option<f64>,
}

impl ClickParams {
    pub fn index(index: u32) -> Self {
        ClickParams { index: Some(index), x: None, y: None }
    }
}

pub struct Click;

/// How many steps back a click on the same element counts as clicking it again (indices stay
/// with their elements for a whole task, so the same index is the same element).
pub const CLICK_REPEAT_STEPS: usize = 3;

/// The elements clicked by index among `recent` actions (each its name and its recorded
/// parameters, from the last [`CLICK_REPEAT_STEPS`] steps): what `click` finds in its
/// context's `clicked_lately`.
pub fn clicked_indices<'a>(recent: impl IntoIterator<Item = (&'a str, &'a serde_json::Value)>) -> Vec<u32> {
    recent
        .into_iter()
        .filter(|(name, _)| *name == "click")
        .filter_map(|(_, params)| params.get("index")?.as_u64().and_then(|i| u32::try_from(i).ok()))
        .collect()
}

impl ActionDef for Click {
    type Params = ClickParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "click",
        description: "Click an interactive element by its index (preferred), or a point of the viewport by x and y.",
        domains: &[],
        page_filter: Some(|page, _| page.snapshot.has_elements() || page.notice.is_none()),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn check(params: &ClickParams, _schema: &serde_json::Value) -> Result<(), String> {
        match (params.index, params.x, params.y) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => {}
            (Some(_), _, _) => return Err("give either `index` or `x` and `y`, not both".into()),
            (None, None, None) => return Err("give `index` (or `x` and `y`)".into()),
            (None, _, _) => return Err("a point needs both `x` and `y`".into()),
        }
        for (name, v) in [("x", params.x), ("y", params.y)] {
            if v.is_some_and(|v| !v.is_finite() || v < 0.0) {
                return Err(format!("field `{name}`: must be a non-negative number of pixels"));
            }
        }
        Ok(())
    }

    fn describe(params: &ClickParams, page: &PageState) -> crate::message::Said {
        match (params.index, params.x, params.y) {
            (Some(index), _, _) => {
                let label = element_label(page, index);
                crate::message::Said::new("do_click", format!("click {label}"), [label])
            }
            (None, Some(x), Some(y)) => {
                let (x, y) = (format!("{x:.0}"), format!("{y:.0}"));
                crate::message::Said::new("do_click_at", format!("click at ({x}, {y})"), [x, y])
            }
            _ => crate::message::Said::new::<&str>("do_click_nothing", "click".into(), []),
        }
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: ClickParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        match (params.index, params.x, params.y) {
            (Some(index), _, _) => {
                let line = match observed_element(ctx.page, index) {
                    Ok(line) => line,
                    Err(result) => return Ok(result),
                };
                let effect = if ctx.clicked_lately.contains(&index) && ctx.page.debugger_available {
                    match ctx.browser.click_trusted(index).await {
                        // No debugger here after all (another one is attached, the page refuses
                        // it): the script's click is the one there is.
                        Err(BrowserError::Unsupported(_) | BrowserError::Debugger { .. }) => {
                            ctx.browser.click(index).await?
                        }
                        other => other?,
                    }
                } else {
                    ctx.browser.click(index).await?
                };
                Ok(ActionResult::ok(format!("Clicked {line}")).with_effect(effect))
            }
            (None, Some(x), Some(y)) => {
                let effect = ctx.browser.click_at(x, y).await?;
                Ok(ActionResult::ok(format!("Clicked at ({x:.0}, {y:.0})")).with_effect(effect))
            }
            _ => Ok(ActionResult::error("click needs `index`, or `x` and `y`")),
        }
    }
}
