//! Ollama's native chat wire format (`/api/chat`), for models run on the user's own machine.
//!
//! Ollama compiles the `format` schema into a grammar, so even a small local model can only
//! write JSON of the answer's shape; that is why Tabwright speaks Ollama's own API rather than
//! its OpenAI-compatible one. Ollama has no refusal signal: a model that declines writes text,
//! which the agent's validator reports like any unreadable answer. Both functions are pure.

use super::schema::ollama_format;
use super::settings::LlmSettings;
use super::{http_error, parse_body, with_extra_headers, ChatRequest, Completion, HttpRequest, HttpResponse};
use super::{LlmError, Usage};
use serde::Deserialize;
use serde_json::json;

/// Builds the POST to `{base_url}/api/chat` (base URL such as `http://localhost:11434`; one that
/// already ends in `/api` is accepted too).
pub fn build_request(settings: &LlmSettings, request: &ChatRequest) -> HttpRequest {
    let mut user = json!({"role": "user", "content": request.user});
    if let Some(png) = &request.image {
        user["images"] = json!([png]);
    }
    let body = json!({
        "model": settings.model,
        "stream": false,
        "format": ollama_format(&request.schema),
        "messages": [{"role": "system", "content": request.system}, user],
        // Ollama's own default context is smaller than a step's request, and it would cut the
        // prompt without a word (settings: `context_tokens`, which also bounds the budget).
        "options": {"num_ctx": settings.context_tokens},
    });
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    // A plain local server needs no key; one behind a proxy or a hosted Ollama may.
    if !settings.api_key.is_empty() {
        headers.push(("authorization".to_string(), format!("Bearer {}", settings.api_key)));
    }
    let base = settings.base_url.trim_end_matches('/');
    let base = base.strip_suffix("/api").unwrap_or(base);
    HttpRequest {
        url: format!("{base}/api/chat"),
        headers: with_extra_headers(headers, settings),
        body: body.to_string(),
    }
}

#[derive(Deserialize)]
struct Response {
    message: Message,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: u64,
    #[serde(default)]
    eval_count: u64,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

/// Parses an `/api/chat` response, or the error body `{error: "..."}`. An answer cut off or
/// empty carries its token counts ([`LlmError::Billed`]): a local model costs nothing in the
/// price table, but its tokens are the task's all the same.
pub fn parse_response(url: &str, response: &HttpResponse) -> Result<Completion, LlmError> {
    http_error(url, response)?;
    let parsed: Response = parse_body(&response.body, "Ollama chat")?;
    let usage = Usage::new(parsed.prompt_eval_count, parsed.eval_count);
    let billed = |error| LlmError::billed(error, Some(usage));
    if parsed.done_reason.as_deref() == Some("length") {
        return Err(billed(LlmError::Truncated));
    }
    let content = parsed
        .message
        .content
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| billed(LlmError::Malformed("the response message has no content".into())))?;
    Ok(Completion { content, usage, model: String::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_suffix_in_the_base_url_is_not_doubled() {
        let settings = LlmSettings { base_url: "http://localhost:11434/api/".into(), ..LlmSettings::default() };
        let request = ChatRequest {
            system: String::new(),
            user: String::new(),
            schema_name: "x".into(),
            schema: json!({}),
            image: None,
        };
        assert_eq!(build_request(&settings, &request).url, "http://localhost:11434/api/chat");
    }

    #[test]
    fn malformed_bodies_are_malformed_not_panics() {
        for body in ["", "{", "[]", r#"{"message": {}}"#, r#"{"message": {"content": "  "}}"#, r#"{"done": true}"#] {
            let r = parse_response("u", &HttpResponse { status: 200, body: body.into(), ..HttpResponse::default() });
            assert!(matches!(r, Err(LlmError::Malformed(_))), "{body}: {r:?}");
        }
    }
}
