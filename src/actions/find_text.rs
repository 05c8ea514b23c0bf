//! `find_text`: bring a piece of text into view, like the browser's find bar.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindTextParams {
    /// The text to find (case and spacing are ignored).
    pub text: String,
}

pub struct FindText;

impl ActionDef for FindText {
    type Params = FindTextParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "find_text",
        description: "Scroll the page so that the first occurrence of a text is in view.",
        domains: &[],
        page_filter: Some(|page, _| page.notice.is_none() && !crate::web::is_blank_page(page.url())),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn check(params: &FindTextParams, _schema: &serde_json::Value) -> Result<(), String> {
        if params.text.trim().is_empty() {
            return Err("field `text`: must not be empty".into());
        }
        Ok(())
    }

    fn describe(params: &FindTextParams, _page: &PageState) -> crate::message::Said {
        let text = format!("{:?}", params.text);
        crate::message::Said::new("do_find_text", format!("find {text}"), [text])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: FindTextParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let count = ctx.browser.find_text(&params.text).await?;
        Ok(match count {
            0 => ActionResult::error(format!(
                "The text {:?} is not on the page. Try a shorter or different wording, or search_page.",
                params.text
            )),
            1 => ActionResult::ok(format!("Found {:?} and scrolled it into view", params.text)),
            n => ActionResult::ok(format!("Found {:?} {n} times; scrolled the first into view", params.text)),
        })
    }
}
