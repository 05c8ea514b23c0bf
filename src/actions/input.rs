//! `input`: type text into a field by its index.

use super::{observed_element, ActionContext, ActionDef, ActionResult, ActionSpec};
use crate::browser::{Browser, BrowserError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputParams {
    /// The index of the field, as shown in `[index]` in the browser state.
    pub index: u32,
    /// The text to type.
    pub text: String,
    /// Replace what the field holds (the default) or, when false, append to it.
    pub clear: Option<bool>,
}

pub struct Input;

impl ActionDef for Input {
    type Params = InputParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "input",
        description: "Type text into an input field, text area or editable element by its index.",
        domains: &[],
        page_filter: Some(|page| !page.snapshot.elements.is_empty()),
        terminates_sequence: false,
    };

    async fn execute<B: Browser>(params: InputParams, ctx: &mut ActionContext<'_, B>) -> Result<ActionResult, BrowserError> {
        let line = match observed_element(ctx.page, params.index) {
            Ok(line) => line,
            Err(result) => return Ok(result),
        };
        let effect = ctx.browser.input(params.index, &params.text, params.clear.unwrap_or(true)).await?;
        let shown = if ctx.page.snapshot.element(params.index).is_some_and(|e| e.attributes.get("type").is_some_and(|t| t == "password")) {
            "•••".to_string()
        } else {
            format!("{:?}", params.text)
        };
        Ok(ActionResult::ok(format!("Typed {shown} into {line}")).with_navigation(effect.navigated_to))
    }
}
