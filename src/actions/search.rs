//! `search`: look something up with a web search engine.

use super::SearchEngine;
use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// What to search for.
    pub query: String,
    /// The search engine; leave null for the user's default.
    pub engine: Option<SearchEngine>,
}

pub struct Search;

impl ActionDef for Search {
    type Params = SearchParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "search",
        description: "Search the web for a query in the current tab and show the results page.",
        domains: &[],
        page_filter: None,
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn check(params: &SearchParams, _schema: &serde_json::Value) -> Result<(), String> {
        if params.query.trim().is_empty() {
            return Err("field `query`: must not be empty".into());
        }
        Ok(())
    }

    fn describe(params: &SearchParams, _page: &PageState) -> crate::message::Said {
        let query = format!("{:?}", params.query);
        crate::message::Said::new("do_search", format!("search for {query}"), [query])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: SearchParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let engine = params.engine.unwrap_or(ctx.options.search_engine);
        let url = engine.results_url(params.query.trim());
        let effect = ctx.browser.navigate(&url).await?;
        let landed = effect.navigated_to.unwrap_or(url);
        let name = serde_json::to_value(engine).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        Ok(ActionResult {
            navigated_to: Some(landed.clone()),
            ..ActionResult::ok(format!(
                "Searched {name} for {:?}; the results are at {}",
                params.query,
                crate::dom::untrusted(&landed, 300)
            ))
        })
    }
}
