//! `input`: type text into a field by its index.

use super::{
    element_label, is_secret_field, observed_element, ActionContext, ActionDef, ActionResult, ActionSpec, Needs,
};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
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
        page_filter: Some(|page, _| page.snapshot.has_elements()),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn recorded_params(params: &InputParams, page: &PageState) -> serde_json::Value {
        let mut value = serde_json::to_value(params).unwrap_or_default();
        // A placeholder names a secret without holding it: kept, so a replay can type it again.
        if is_secret_field(page, params.index) && !crate::safety::only_placeholders(&params.text) {
            value["text"] = serde_json::Value::String("•••".into());
        }
        value
    }

    fn describe(params: &InputParams, page: &PageState) -> crate::message::Said {
        let (text, label) = (shown_text(params, page), element_label(page, params.index));
        crate::message::Said::new("do_input", format!("type {text} into {label}"), [text, label])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: InputParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let line = match observed_element(ctx.page, params.index) {
            Ok(line) => line,
            Err(result) => return Ok(result),
        };
        let effect = ctx.browser.input(params.index, &params.text, params.clear.unwrap_or(true)).await?;
        let shown = shown_text(&params, ctx.page);
        Ok(ActionResult::ok(format!("Typed {shown} into {line}")).with_effect(effect))
    }
}

/// The typed text as shown to people and in results: masked for password and card fields.
fn shown_text(params: &InputParams, page: &PageState) -> String {
    if is_secret_field(page, params.index) {
        "•••".to_string()
    } else {
        format!("{:?}", params.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::{Element, Snapshot};

    fn page_with(attrs: &[(&str, &str)]) -> PageState {
        PageState::new(1, Snapshot::with_elements("https://x/", "", vec![Element::new(4, "input", attrs, "")]))
    }

    fn params(text: &str) -> InputParams {
        InputParams { index: 4, text: text.into(), clear: None }
    }

    #[test]
    fn text_typed_into_password_and_card_fields_is_masked_in_descriptions_and_records() {
        for attrs in [&[("type", "password")][..], &[("autocomplete", "cc-number"), ("name", "card")][..]] {
            let page = page_with(attrs);
            let description = Input::describe(&params("4111 1111 1111 1111"), &page).english;
            assert!(description.starts_with("type ••• into [4]"), "{description}");
            assert_eq!(Input::recorded_params(&params("4111 1111 1111 1111"), &page)["text"], "•••");
        }
    }

    #[test]
    fn text_typed_into_ordinary_fields_is_shown() {
        let page = page_with(&[("name", "q"), ("placeholder", "Search")]);
        assert_eq!(Input::describe(&params("shoes"), &page).english, "type \"shoes\" into [4] Search");
        assert_eq!(Input::recorded_params(&params("shoes"), &page)["text"], "shoes");
    }
}
