//! `search_page`: find text or a pattern anywhere on the page, without the LLM.
//!
//! The element list covers what is around the viewport; this searches the page's whole text
//! and returns each match with some context, which is cheaper and exact where `extract` would
//! ask a model.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::dom::untrusted_block;
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const MAX_MATCHES: u32 = 30;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchPageParams {
    /// The text to find (case is ignored), or a JavaScript regular expression when `regex` is true.
    pub pattern: String,
    /// Treat `pattern` as a regular expression.
    pub regex: Option<bool>,
}

pub struct SearchPage;

impl ActionDef for SearchPage {
    type Params = SearchPageParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "search_page",
        description: "Search the whole page's text for a word, phrase or regular expression; returns each match with its context.",
        domains: &[],
        page_filter: Some(|page, _| page.notice.is_none() && !crate::web::is_blank_page(page.url())),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    fn check(params: &SearchPageParams, _schema: &serde_json::Value) -> Result<(), String> {
        if params.pattern.is_empty() {
            return Err("field `pattern`: must not be empty".into());
        }
        if params.pattern.chars().count() > 500 {
            return Err("field `pattern`: at most 500 characters".into());
        }
        Ok(())
    }

    fn describe(params: &SearchPageParams, _page: &PageState) -> crate::message::Said {
        let pattern =
            if params.regex == Some(true) { format!("/{}/", params.pattern) } else { format!("{:?}", params.pattern) };
        crate::message::Said::new("do_search_page", format!("search the page for {pattern}"), [pattern])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: SearchPageParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let found = match ctx.browser.search_page(&params.pattern, params.regex == Some(true), MAX_MATCHES).await {
            Ok(found) => found,
            Err(BrowserError::Script(reason)) => {
                return Ok(ActionResult::error(format!("The pattern is not valid: {reason}")))
            }
            Err(e) => return Err(e),
        };
        if found.total == 0 {
            return Ok(ActionResult::ok(format!("No match for {:?} on the page", params.pattern)));
        }
        let mut listed = String::new();
        for (i, m) in found.matches.iter().enumerate() {
            listed.push_str(&format!("{}. …{}[{}]{}…\n", i + 1, m.before, m.text, m.after));
        }
        let shown = found.matches.len() as u32;
        let more = if found.total > shown { format!(" (showing the first {shown})") } else { String::new() };
        Ok(ActionResult::ok(format!(
            "Found {} match(es) for {:?} on the page{more}; they are in the results below, each match in [brackets]",
            found.total, params.pattern
        ))
        .with_detail(untrusted_block(&listed, 10_000)))
    }
}
