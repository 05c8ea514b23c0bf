//! Anthropic's Messages API wire format.
//!
//! Anthropic constrains output through tools rather than a response format: the request offers
//! one tool whose `input_schema` is the answer's schema and forces the model to call it
//! (`tool_choice: {type: "tool"}`). The tool call's `input` is the answer, so it is handed on as
//! JSON text like every other provider's. Both functions are pure.

use super::schema::anthropic_input_schema;
use super::settings::LlmSettings;
use super::{excerpt, http_error, parse_body, with_extra_headers, ChatRequest, Completion, HttpRequest, HttpResponse};
use super::{LlmError, Usage};
use serde::Deserialize;
use serde_json::{json, Value};

/// The API version the request and response shapes here follow.
pub const API_VERSION: &str = "2023-06-01";

/// The output token limit asked for. Anthropic requires one; this is within every current
/// model's own limit and far above what an agent step or an extraction writes.
pub const MAX_TOKENS: u32 = 8192;

/// Builds the POST to `{base_url}/messages` (base URL such as `https://api.anthropic.com/v1`).
pub fn build_request(settings: &LlmSettings, request: &ChatRequest) -> HttpRequest {
    let tool = tool_name(&request.schema_name);
    let mut content = vec![json!({"type": "text", "text": request.user})];
    if let Some(png) = &request.image {
        content.push(json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}));
    }
    // Cache breakpoints after the tool and after the system prompt: the prompt cache holds the
    // prefix up to each, so a step whose action schema is the last step's reads both from the
    // cache, and one whose schema changed (another page's actions) still writes them for the
    // next. The page's state comes after, in the one user message.
    let body = json!({
        "model": settings.model,
        "max_tokens": MAX_TOKENS,
        "system": [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": content}],
        "tools": [{
            "name": tool,
            "description": "Give your answer by calling this tool: its input is your whole answer.",
            "input_schema": anthropic_input_schema(&request.schema),
            "cache_control": {"type": "ephemeral"},
        }],
        "tool_choice": {"type": "tool", "name": tool},
    });
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("anthropic-version".to_string(), API_VERSION.to_string()),
        // The API refuses requests that carry a browser's Origin (the extension's) unless the
        // caller says it means to call from a browser, with the user's own key.
        ("anthropic-dangerous-direct-browser-access".to_string(), "true".to_string()),
    ];
    if !settings.api_key.is_empty() {
        headers.push(("x-api-key".to_string(), settings.api_key.clone()));
    }
    HttpRequest {
        url: format!("{}/messages", settings.base_url.trim_end_matches('/')),
        headers: with_extra_headers(headers, settings),
        body: body.to_string(),
    }
}

/// A tool name the API accepts (`^[a-zA-Z0-9_-]{1,64}$`) made from the schema's name.
fn tool_name(schema_name: &str) -> String {
    let name: String = schema_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    if name.is_empty() {
        "answer".to_string()
    } else {
        name
    }
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    content: Vec<Block>,
    #[serde(default)]
    stop_reason: Option<String>,
    /// With a refusal: `{type: "refusal", category, explanation}`, either may be null. Read
    /// loosely: a shape we do not know must not hide the refusal itself.
    #[serde(default)]
    stop_details: Option<Value>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    input: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    /// The input tokens after the last cache breakpoint: neither read from the cache nor
    /// written to it.
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

/// Parses a Messages response, or the error body `{type: "error", error: {type, message}}`.
///
/// Each documented `stop_reason` has its own outcome:
/// - `tool_use`, `end_turn`, `stop_sequence`: the answer tool's input is the answer (the tool is
///   forced, so `tool_use` is the usual one); text alone is a model that ignored the tool.
/// - `max_tokens`: cut off at the output limit ([`LlmError::Truncated`]).
/// - `model_context_window_exceeded`: the request and the answer outgrew the model's context
///   ([`LlmError::ContextWindowExceeded`]), whatever part of an answer came.
/// - `refusal`: [`LlmError::Refusal`] with the explanation of `stop_details`; without one, the
///   text the model had written is no reason but what came before the refusal
///   ([`LlmError::RefusedMidAnswer`]).
/// - `pause_turn`: the API paused a long turn (server tools, which no request here offers);
///   an answer already given is taken, else it is asked again.
/// - anything newer: an answer given is taken, else the reason is named.
///
/// An answer that is not taken was billed all the same: its error carries the `usage`
/// ([`LlmError::Billed`]).
pub fn parse_response(url: &str, response: &HttpResponse) -> Result<Completion, LlmError> {
    http_error(url, response)?;
    let parsed: Response = parse_body(&response.body, "Anthropic Messages")?;
    let usage = parsed.usage.as_ref().map(WireUsage::usage);
    let billed = |error| LlmError::billed(error, usage);
    let text: Vec<&str> =
        parsed.content.iter().filter(|b| b.kind == "text").filter_map(|b| b.text.as_deref()).collect();
    let text = text.join("\n");
    let stop_reason = parsed.stop_reason.as_deref().unwrap_or("");
    match stop_reason {
        "max_tokens" => return Err(billed(LlmError::Truncated)),
        "model_context_window_exceeded" => return Err(billed(LlmError::ContextWindowExceeded)),
        "refusal" => return Err(billed(refusal(parsed.stop_details.as_ref(), &text))),
        _ => {}
    }
    let input = parsed.content.into_iter().find(|b| b.kind == "tool_use").and_then(|b| b.input);
    let content = match input {
        // A model that wrote its answer as a string of JSON: hand the string on as it is.
        Some(Value::String(s)) => s,
        Some(input) => input.to_string(),
        None if stop_reason == "pause_turn" => {
            return Err(billed(LlmError::Malformed(
                "the provider paused the model's turn before it gave an answer (pause_turn); the step is asked again"
                    .into(),
            )));
        }
        None if !["", "end_turn", "tool_use", "stop_sequence"].contains(&stop_reason) => {
            return Err(billed(LlmError::Malformed(format!(
                "the model stopped without an answer, for a reason Tabwright does not know (\"{}\")",
                excerpt(stop_reason, 60)
            ))));
        }
        None if text.trim().is_empty() => {
            return Err(billed(LlmError::Malformed("the response has neither a tool call nor text".into())));
        }
        None => {
            return Err(billed(LlmError::Malformed(format!(
                "the model wrote text instead of calling the answer tool (\"{}\"); choose a model that supports tool use in Tabwright's settings",
                excerpt(text.trim(), 200)
            ))));
        }
    };
    Ok(Completion { content, usage: usage.unwrap_or_default(), model: String::new() })
}

impl WireUsage {
    /// Anthropic counts the three parts of the input apart; the total is their sum.
    fn usage(&self) -> Usage {
        let read = self.cache_read_input_tokens.unwrap_or(0);
        let written = self.cache_creation_input_tokens.unwrap_or(0);
        Usage::new(self.input_tokens + read + written, self.output_tokens).with_cached(read)
    }
}

/// A refusal as the person reads it: the explanation `stop_details` gives (with its policy
/// category); without one, what the model had written before it stopped, said as that and not
/// as the reason (the refusal cut it off); else a plain statement.
fn refusal(details: Option<&Value>, text: &str) -> LlmError {
    let field = |name: &str| details.and_then(|d| d.get(name)).and_then(Value::as_str).map(str::trim);
    let explanation = field("explanation").filter(|e| !e.is_empty());
    let category = field("category").filter(|c| !c.is_empty());
    let written = text.trim();
    LlmError::Refusal(match (explanation, category) {
        (Some(why), Some(category)) => format!("{} (policy category: {category})", excerpt(why, 300)),
        (Some(why), None) => excerpt(why, 300),
        (None, category) if !written.is_empty() => {
            return LlmError::RefusedMidAnswer {
                written: excerpt(written, 300),
                category: category.map(|c| excerpt(c, 60)),
            };
        }
        (None, Some(category)) => format!("the model declined to answer (policy category: {category})"),
        (None, None) => "the model declined to answer".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_made_acceptable() {
        assert_eq!(tool_name("agent_output"), "agent_output");
        assert_eq!(tool_name("my schema.v2"), "my_schema_v2");
        assert_eq!(tool_name(""), "answer");
        assert_eq!(tool_name(&"x".repeat(100)).len(), 64);
    }

    #[test]
    fn a_string_input_is_handed_on_unquoted() {
        let body =
            r#"{"content":[{"type":"tool_use","id":"t","name":"a","input":"{\"x\":1}"}],"stop_reason":"tool_use"}"#;
        let c = parse_response("u", &HttpResponse { status: 200, body: body.into(), ..HttpResponse::default() });
        assert_eq!(c.unwrap().content, r#"{"x":1}"#);
    }

    fn with_stop(reason: &str, content: &str, details: &str) -> Result<Completion, LlmError> {
        let body = format!(r#"{{"content":{content},"stop_reason":"{reason}","stop_details":{details}}}"#);
        parse_response("u", &HttpResponse { status: 200, body, ..HttpResponse::default() })
    }

    const ANSWER: &str = r#"[{"type":"tool_use","id":"t","name":"a","input":{"x":1}}]"#;
    const TEXT: &str = r#"[{"type":"text","text":"I won't do that."}]"#;

    #[test]
    fn every_documented_stop_reason_has_its_outcome() {
        for reason in ["tool_use", "end_turn", "stop_sequence", "pause_turn", "a_reason_from_next_year"] {
            assert_eq!(with_stop(reason, ANSWER, "null").unwrap().content, r#"{"x":1}"#, "{reason}");
        }
        assert_eq!(with_stop("max_tokens", ANSWER, "null"), Err(LlmError::Truncated));
        assert_eq!(with_stop("model_context_window_exceeded", ANSWER, "null"), Err(LlmError::ContextWindowExceeded));
        assert!(
            matches!(with_stop("pause_turn", "[]", "null"), Err(LlmError::Malformed(m)) if m.contains("pause_turn"))
        );
        assert!(
            matches!(with_stop("a_reason_from_next_year", "[]", "null"), Err(LlmError::Malformed(m)) if m.contains("a_reason_from_next_year"))
        );
        assert!(
            matches!(with_stop("end_turn", TEXT, "null"), Err(LlmError::Malformed(m)) if m.contains("instead of calling"))
        );
    }

    #[test]
    fn a_refusal_says_why_with_what_it_has() {
        let details = r#"{"type":"refusal","category":"bio","explanation":null}"#;
        let midway = |category: Option<&str>| LlmError::RefusedMidAnswer {
            written: "I won't do that.".into(),
            category: category.map(str::to_string),
        };
        assert_eq!(with_stop("refusal", TEXT, details), Err(midway(Some("bio"))));
        assert_eq!(
            with_stop("refusal", "[]", details),
            Err(LlmError::Refusal("the model declined to answer (policy category: bio)".into()))
        );
        assert_eq!(with_stop("refusal", TEXT, "null"), Err(midway(None)));
        assert_eq!(
            with_stop("refusal", "[]", r#""odd""#),
            Err(LlmError::Refusal("the model declined to answer".into()))
        );
        // The text is what came before the refusal, not its reason.
        assert_eq!(
            midway(None).to_string(),
            "The model refused to go on (no reason given). It had written: “I won't do that.”"
        );
        assert_eq!(
            midway(Some("bio")).to_string(),
            "The model refused to go on (no reason given; policy category: bio). It had written: “I won't do that.”"
        );
        // An explanation is the reason, whatever text came before it.
        let explained = r#"{"type":"refusal","category":null,"explanation":"It conflicts with the usage policy."}"#;
        assert_eq!(
            with_stop("refusal", TEXT, explained),
            Err(LlmError::Refusal("It conflicts with the usage policy.".into()))
        );
    }

    /// What a stop billed comes with its error; a body without usage bills nothing.
    #[test]
    fn an_answer_not_taken_carries_its_usage() {
        let body = r#"{"content":[],"stop_reason":"max_tokens","usage":{"input_tokens":10,"cache_read_input_tokens":30,"output_tokens":8192}}"#;
        let r = parse_response("u", &HttpResponse { status: 200, body: body.into(), ..HttpResponse::default() });
        let err = r.unwrap_err();
        assert_eq!(err.bills(), vec![("", Usage::new(40, 8192).with_cached(30))]);
        assert_eq!(err.unbilled(), &LlmError::Truncated);
        assert_eq!(err.to_string(), LlmError::Truncated.to_string());
        assert_eq!(with_stop("max_tokens", ANSWER, "null"), Err(LlmError::Truncated), "no usage, no bill");
    }

    #[test]
    fn malformed_bodies_are_malformed_not_panics() {
        for body in ["", "{", "[]", r#"{"content": []}"#, r#"{"content": [{"type": "tool_use"}]}"#, r#"{"content": 5}"#]
        {
            let r = parse_response("u", &HttpResponse { status: 200, body: body.into(), ..HttpResponse::default() });
            assert!(matches!(r, Err(LlmError::Malformed(_))), "{body}: {r:?}");
        }
    }
}
