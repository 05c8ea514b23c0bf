//! `extract`: answer a question from the whole page with the extraction model.
//!
//! The element list shows what can be clicked; the text a task is after (prices, an article,
//! a table) is often longer than that. The content script converts the page to markdown with
//! a well-kept library (Turndown), and the extraction model reads it in chunks, each asked the
//! same query; what the chunks found is joined into the result.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::dom::{untrusted, untrusted_block};
use crate::llm::{ChatRequest, LlmTransport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Markdown per call: well within any current model's context, large enough for most pages.
const CHUNK_CHARS: usize = 40_000;
/// Calls per extraction at most; the rest of a very long page is left out (and said so).
const MAX_CHUNKS: usize = 4;
/// The joined answer shown to the agent.
const MAX_RESULT_CHARS: usize = 20_000;

pub const EXTRACTION_PROMPT: &str = include_str!("../prompt/extraction_prompt.md");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractParams {
    /// What to extract, as a question or instruction ("the prices of all plans").
    pub query: String,
}

pub struct Extract;

#[derive(Deserialize)]
struct ChunkAnswer {
    found: bool,
    content: String,
}

impl ActionDef for Extract {
    type Params = ExtractParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "extract",
        description: "Read the whole page (not only the listed elements) and extract the information a query asks for.",
        domains: &[],
        page_filter: Some(|page, _| page.notice.is_none() && !crate::web::is_blank_page(page.url())),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs { content_script: true, debugger: false, llm: true },
    };

    fn check(params: &ExtractParams, _schema: &serde_json::Value) -> Result<(), String> {
        if params.query.trim().is_empty() {
            return Err("field `query`: say what to extract".into());
        }
        Ok(())
    }

    fn describe(params: &ExtractParams, _page: &PageState) -> crate::message::Said {
        let query = format!("{:?}", params.query);
        crate::message::Said::new("do_extract", format!("extract {query}"), [query])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: ExtractParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let page = ctx.browser.page_markdown().await?;
        let chunks = chunk_markdown(&page.markdown, CHUNK_CHARS);
        if chunks.is_empty() {
            return Ok(ActionResult::error("The page has no text to extract from."));
        }
        let total = chunks.len();
        let mut found = Vec::new();
        // Every answer is billed, used or not: each goes with the result, whatever it says.
        let mut bills = Vec::new();
        for (i, chunk) in chunks.iter().take(MAX_CHUNKS).enumerate() {
            let request = ChatRequest {
                system: EXTRACTION_PROMPT.to_string(),
                user: format!(
                    "<query>\n{}\n</query>\n\n<page url=\"{}\" title=\"{}\" part=\"{} of {total}\">\n{}\n</page>\n",
                    params.query.trim(),
                    untrusted(&page.url, 300),
                    untrusted(&page.title, 200),
                    i + 1,
                    untrusted_block(chunk, CHUNK_CHARS + 1_000),
                ),
                schema_name: "extraction".into(),
                schema: json!({
                    "type": "object",
                    "properties": {
                        "found": {"type": "boolean", "description": "Whether this part of the page answers the query."},
                        "content": {"type": "string", "description": "The extracted information, in markdown."},
                    },
                    "required": ["found", "content"],
                    "additionalProperties": false,
                }),
                image: None,
            };
            // A secret's value the page shows (a field that echoes it) stays in the browser.
            let request = ChatRequest { user: ctx.secrets.redact(&request.user), ..request };
            let completion = match ctx.llm.complete_extraction(&request).await {
                Ok(c) => c,
                Err(e) => {
                    bills.extend(e.bills().into_iter().map(|(model, usage)| (model.to_string(), usage)));
                    let failed = format!("Extraction with the model {} failed: {e}", ctx.llm.extraction_model());
                    return Ok(ActionResult { bills, ..ActionResult::error(failed) });
                }
            };
            bills.push((completion.model.clone(), completion.usage));
            match crate::json::from_text::<ChunkAnswer>(completion.content.trim()) {
                Ok(answer) if answer.found && !answer.content.trim().is_empty() => found.push(answer.content),
                Ok(_) => {}
                Err(e) => {
                    let unread = format!(
                        "The extraction model's answer could not be read ({e}); try extract again with a simpler query."
                    );
                    return Ok(ActionResult { bills, ..ActionResult::error(unread) });
                }
            }
        }
        let read = if total > MAX_CHUNKS {
            format!(
                " (read the first {MAX_CHUNKS} of {total} parts of this long page; scroll or search_page for the rest)"
            )
        } else {
            String::new()
        };
        if found.is_empty() {
            let nothing = format!("Extracted nothing for {:?}: the page does not contain it{read}", params.query);
            return Ok(ActionResult { bills, ..ActionResult::ok(nothing) });
        }
        let joined = found.join("\n\n");
        let result =
            ActionResult::ok(format!("Extracted {:?} from the page (shown in the results below){read}", params.query))
                .with_detail(untrusted_block(&joined, MAX_RESULT_CHARS));
        Ok(ActionResult { bills, ..result })
    }
}

/// Splits markdown into chunks of at most about `max` characters, at line ends where possible
/// (never inside a character).
fn chunk_markdown(markdown: &str, max: usize) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    let mut current_chars = 0;
    for line in markdown.lines() {
        let line_chars = line.chars().count();
        if current_chars + line_chars + 1 > max && !current.trim().is_empty() {
            chunks.push(std::mem::take(&mut current));
            current_chars = 0;
        }
        if line_chars > max {
            // A single huge line (minified text): cut it by characters.
            let chars: Vec<char> = line.chars().collect();
            for piece in chars.chunks(max) {
                chunks.push(piece.iter().collect());
            }
            continue;
        }
        current.push_str(line);
        current.push('\n');
        current_chars += line_chars + 1;
    }
    if !current.trim().is_empty() {
        chunks.push(current);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_pages_are_cut_at_line_ends_and_long_lines_by_characters() {
        let text = format!("{}\n{}\n{}", "a".repeat(30), "b".repeat(30), "é".repeat(70));
        let chunks = chunk_markdown(&text, 50);
        assert_eq!(chunks[0], format!("{}\n", "a".repeat(30)));
        assert_eq!(chunks[1], format!("{}\n", "b".repeat(30)));
        assert_eq!(chunks[2], "é".repeat(50));
        assert_eq!(chunks[3], "é".repeat(20));
        assert!(chunk_markdown("  \n\n", 50).is_empty());
    }
}
