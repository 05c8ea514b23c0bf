//! `click`: click an element by its index, as a person would.

use super::{element_label, observed_element, ActionContext, ActionDef, ActionResult, ActionSpec};
use crate::browser::{Browser, BrowserError, PageState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickParams {
    /// The index of the element, as shown in `[index]` in the browser state.
    pub index: u32,
}

pub struct Click;

impl ActionDef for Click {
    type Params = ClickParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "click",
        description: "Click an interactive element by its index.",
        domains: &[],
        page_filter: Some(|page| page.snapshot.has_elements()),
        terminates_sequence: false,
    };

    fn describe(params: &ClickParams, page: &PageState) -> String {
        format!("click {}", element_label(page, params.index))
    }

    async fn execute<B: Browser>(
        params: ClickParams,
        ctx: &mut ActionContext<'_, B>,
    ) -> Result<ActionResult, BrowserError> {
        let line = match observed_element(ctx.page, params.index) {
            Ok(line) => line,
            Err(result) => return Ok(result),
        };
        let effect = ctx.browser.click(params.index).await?;
        Ok(ActionResult::ok(format!("Clicked {line}")).with_navigation(effect.navigated_to))
    }
}
