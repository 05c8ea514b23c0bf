//! `drag_and_drop`: drag an element onto another, or to a point of the viewport.
//!
//! Lists reordered by dragging, sliders, kanban boards, maps: a person presses on an element,
//! moves, and lets go somewhere else. The content script replays that as the page's libraries
//! hear it: pointer and mouse events along the way (what pointer-driven libraries such as
//! dnd-kit follow) and, when the element is draggable, the HTML5 drag events with a
//! `dataTransfer` (what SortableJS and native drop areas follow). The result says whether the
//! page changed.

use super::{element_label, observed_element, ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, DropPoint, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragAndDropParams {
    /// The index of the element to drag.
    pub index: u32,
    /// The index of the element to drop it on. Give either this or both `x` and `y`.
    pub target: Option<u32>,
    /// Where to drop it: CSS pixels from the left edge of the viewport.
    pub x: Option<f64>,
    /// Where to drop it: CSS pixels from the top edge of the viewport.
    pub y: Option<f64>,
}

impl DragAndDropParams {
    fn drop_point(&self) -> Option<DropPoint> {
        match (self.target, self.x, self.y) {
            (Some(target), None, None) => Some(DropPoint::Element(target)),
            (None, Some(x), Some(y)) => Some(DropPoint::Point(x, y)),
            _ => None,
        }
    }
}

pub struct DragAndDrop;

impl ActionDef for DragAndDrop {
    type Params = DragAndDropParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "drag_and_drop",
        description: "Drag an element by its index and drop it on another element (target) or at a point of the viewport (x and y): reorder a list, move a card, set a slider.",
        domains: &[],
        page_filter: Some(|page, _| page.snapshot.has_elements()),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn check(params: &DragAndDropParams, _schema: &serde_json::Value) -> Result<(), String> {
        if params.drop_point().is_none() {
            return Err("give either `target` (an element's index) or both `x` and `y`, not both".into());
        }
        if params.target == Some(params.index) {
            return Err("field `target`: an element cannot be dropped on itself".into());
        }
        for (name, v) in [("x", params.x), ("y", params.y)] {
            if v.is_some_and(|v| !v.is_finite() || v < 0.0) {
                return Err(format!("field `{name}`: must be a non-negative number of pixels"));
            }
        }
        Ok(())
    }

    fn element_index(params: &DragAndDropParams) -> Option<u32> {
        Some(params.index)
    }

    fn describe(params: &DragAndDropParams, page: &PageState) -> crate::message::Said {
        let label = element_label(page, params.index);
        match params.drop_point() {
            Some(DropPoint::Element(target)) => {
                let onto = element_label(page, target);
                crate::message::Said::new("do_drag_onto", format!("drag {label} onto {onto}"), [label, onto])
            }
            Some(DropPoint::Point(x, y)) => {
                let (x, y) = (format!("{x:.0}"), format!("{y:.0}"));
                crate::message::Said::new("do_drag_to", format!("drag {label} to ({x}, {y})"), [label, x, y])
            }
            None => crate::message::Said::new("do_drag", format!("drag {label}"), [label]),
        }
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: DragAndDropParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let Some(to) = params.drop_point() else {
            return Ok(ActionResult::error("drag_and_drop needs `target`, or `x` and `y`"));
        };
        let line = match observed_element(ctx.page, params.index) {
            Ok(line) => line,
            Err(result) => return Ok(result),
        };
        let whereto = match to {
            DropPoint::Element(target) => match observed_element(ctx.page, target) {
                Ok(target_line) => format!("onto {target_line}"),
                Err(result) => return Ok(result),
            },
            DropPoint::Point(x, y) => format!("to ({x:.0}, {y:.0})"),
        };
        let dragged = ctx.browser.drag_and_drop(params.index, to).await?;
        if !dragged.changed {
            return Ok(ActionResult::error(format!(
                "Dragged {line} {whereto}, but the page did not change: it may need the drag to start elsewhere (a handle inside the element), or take another way (buttons, the keyboard)"
            )));
        }
        Ok(ActionResult::ok(format!("Dragged {line} {whereto}")).with_effect(dragged.effect))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(target: Option<u32>, x: Option<f64>, y: Option<f64>) -> DragAndDropParams {
        DragAndDropParams { index: 3, target, x, y }
    }

    #[test]
    fn a_drag_goes_to_an_element_or_a_point_never_both_nor_onto_itself() {
        let ok = |p: DragAndDropParams| DragAndDrop::check(&p, &serde_json::Value::Null);
        assert!(ok(params(Some(5), None, None)).is_ok());
        assert!(ok(params(None, Some(10.0), Some(20.0))).is_ok());
        assert!(ok(params(Some(5), Some(10.0), Some(20.0))).unwrap_err().contains("not both"));
        assert!(ok(params(None, Some(10.0), None)).is_err(), "a point needs both");
        assert!(ok(params(None, None, None)).is_err());
        assert!(ok(params(Some(3), None, None)).unwrap_err().contains("dropped on itself"));
        assert!(ok(params(None, Some(-1.0), Some(2.0))).unwrap_err().contains("`x`"));
        assert_eq!(params(None, Some(1.0), Some(2.0)).drop_point(), Some(DropPoint::Point(1.0, 2.0)));
    }
}
