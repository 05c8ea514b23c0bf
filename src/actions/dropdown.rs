//! `dropdown_options` and `select_dropdown`: read and choose the options of a dropdown.
//!
//! A closed `<select>` shows only its chosen option, so the LLM first lists the options, then
//! chooses one by its text; the content script sets it the way the page's own code would see
//! a person's choice (native setter, `input` and `change` events).

use super::{
    element_label, is_secret_field, observed_element, ActionContext, ActionDef, ActionResult, ActionSpec, Needs,
};
use crate::browser::{Browser, BrowserError, PageState};
use crate::dom::{untrusted, untrusted_block};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropdownOptionsParams {
    /// The index of the dropdown (`<select>` or listbox).
    pub index: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectDropdownParams {
    /// The index of the dropdown (`<select>` or listbox).
    pub index: u32,
    /// The text of the option to choose, as listed by dropdown_options.
    pub text: String,
}

/// The option as shown to people and in results: masked in card fields (an expiry month).
fn shown_choice(params: &SelectDropdownParams, page: &PageState) -> String {
    if is_secret_field(page, params.index) {
        "•••".into()
    } else {
        format!("{:?}", params.text)
    }
}

fn has_dropdown(page: &PageState, _: &super::ActionOptions) -> bool {
    page.has_dropdown()
}

/// The element must be a dropdown on the observed page.
fn dropdown_line(page: &PageState, index: u32) -> Result<String, ActionResult> {
    let line = observed_element(page, index)?;
    match page.snapshot.element(index) {
        Some(el) if crate::browser::is_dropdown(el) => Ok(line),
        _ => Err(ActionResult::error(format!(
            "Element {line} is not a dropdown. Use dropdown_options on a <select> or listbox; click other elements to open them."
        ))),
    }
}

pub struct DropdownOptions;

impl ActionDef for DropdownOptions {
    type Params = DropdownOptionsParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "dropdown_options",
        description: "List all options of a dropdown (a <select> shows only its chosen one).",
        domains: &[],
        page_filter: Some(has_dropdown),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn describe(params: &DropdownOptionsParams, page: &PageState) -> crate::message::Said {
        let label = element_label(page, params.index);
        crate::message::Said::new("do_dropdown_options", format!("list the options of {label}"), [label])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: DropdownOptionsParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let line = match dropdown_line(ctx.page, params.index) {
            Ok(line) => line,
            Err(result) => return Ok(result),
        };
        let options = ctx.browser.dropdown_options(params.index).await?;
        if options.is_empty() {
            return Ok(ActionResult::error(format!("Dropdown {line} has no options.")));
        }
        let mut listed = String::new();
        for o in options.iter().take(200) {
            let mut flags = Vec::new();
            if o.selected {
                flags.push("selected");
            }
            if o.disabled {
                flags.push("disabled");
            }
            let group = o.group.as_deref().map(|g| format!("{g} › ")).unwrap_or_default();
            let flags = if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) };
            listed.push_str(&format!("{}: {group}{:?}{flags}\n", o.index, o.text));
        }
        if options.len() > 200 {
            listed.push_str(&format!("… and {} more\n", options.len() - 200));
        }
        let message = format!(
            "Dropdown {line} has {} options (listed in the results below); choose one with select_dropdown and its text",
            options.len()
        );
        Ok(ActionResult::ok(message).with_detail(untrusted_block(&listed, 20_000)))
    }
}

pub struct SelectDropdown;

impl ActionDef for SelectDropdown {
    type Params = SelectDropdownParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "select_dropdown",
        description: "Choose an option of a dropdown by the option's text.",
        domains: &[],
        page_filter: Some(has_dropdown),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn describe(params: &SelectDropdownParams, page: &PageState) -> crate::message::Said {
        let (choice, label) = (shown_choice(params, page), element_label(page, params.index));
        crate::message::Said::new("do_select_dropdown", format!("choose {choice} in {label}"), [choice, label])
    }

    fn recorded_params(params: &SelectDropdownParams, page: &PageState) -> serde_json::Value {
        let mut value = serde_json::to_value(params).unwrap_or_default();
        // A placeholder names a secret without holding it: kept, so a replay can type it again.
        if is_secret_field(page, params.index) && !crate::safety::only_placeholders(&params.text) {
            value["text"] = serde_json::Value::String("•••".into());
        }
        value
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: SelectDropdownParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let line = match dropdown_line(ctx.page, params.index) {
            Ok(line) => line,
            Err(result) => return Ok(result),
        };
        let (chosen, effect) = ctx.browser.select_option(params.index, &params.text).await?;
        let result =
            ActionResult::ok(format!("Chose {} in {line}", shown_choice(&params, ctx.page))).with_effect(effect);
        // The page's name for the option, when it differs from the words asked for, is page text.
        Ok(if !is_secret_field(ctx.page, params.index) && chosen.trim() != params.text.trim() {
            result.with_detail(format!("The option chosen reads: {}", untrusted(&chosen, 200)))
        } else {
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::{Element, Snapshot};

    fn page(autocomplete: &str) -> PageState {
        let select = Element::new(5, "select", &[("autocomplete", autocomplete)], "");
        PageState::new(1, Snapshot::with_elements("https://shop.example/", "", vec![select]))
    }

    fn params() -> SelectDropdownParams {
        SelectDropdownParams { index: 5, text: "08".into() }
    }

    #[test]
    fn the_option_chosen_in_a_card_select_is_masked_even_in_a_token_list() {
        let secret = page("billing cc-exp-month");
        assert_eq!(SelectDropdown::describe(&params(), &secret).english, "choose ••• in [5] <select>");
        assert_eq!(SelectDropdown::recorded_params(&params(), &secret)["text"], "•••");
        let plain = page("shipping country");
        assert_eq!(SelectDropdown::describe(&params(), &plain).english, "choose \"08\" in [5] <select>");
        assert_eq!(SelectDropdown::recorded_params(&params(), &plain)["text"], "08");
    }
}
