//! Google's Gemini API wire format (`generateContent`).
//!
//! Structured output uses `generationConfig.responseJsonSchema`, which takes JSON Schema (the
//! older `responseSchema` takes only an OpenAPI subset), with `responseMimeType:
//! application/json`. Gemini says why an answer stopped in `finishReason` and why a prompt was
//! refused in `promptFeedback.blockReason`; safety stops become [`LlmError::Refusal`]. Both
//! functions are pure.

use super::schema::gemini_json_schema;
use super::{http_error, parse_body, with_extra_headers, ChatRequest, Completion, HttpRequest, HttpResponse};
use super::{LlmError, Usage};
use crate::actions::url::encode_query_component;
use crate::settings::LlmSettings;
use serde::Deserialize;
use serde_json::json;

/// Builds the POST to `{base_url}/models/{model}:generateContent` (base URL such as
/// `https://generativelanguage.googleapis.com/v1beta`).
pub fn build_request(settings: &LlmSettings, request: &ChatRequest) -> HttpRequest {
    let mut parts = vec![json!({"text": request.user})];
    if let Some(png) = &request.image {
        parts.push(json!({"inlineData": {"mimeType": "image/png", "data": png}}));
    }
    let body = json!({
        "systemInstruction": {"parts": [{"text": request.system}]},
        "contents": [{"role": "user", "parts": parts}],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": gemini_json_schema(&request.schema),
        },
    });
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if !settings.api_key.is_empty() {
        headers.push(("x-goog-api-key".to_string(), settings.api_key.clone()));
    }
    // Model names are also written as the API lists them, `models/gemini-2.5-flash`.
    let model = settings.model.strip_prefix("models/").unwrap_or(&settings.model);
    HttpRequest {
        url: format!(
            "{}/models/{}:generateContent",
            settings.base_url.trim_end_matches('/'),
            encode_query_component(model)
        ),
        headers: with_extra_headers(headers, settings),
        body: body.to_string(),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    usage_metadata: Option<UsageMetadata>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
    /// A thought summary, when a thinking model was asked for them: not part of the answer.
    #[serde(default)]
    thought: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
}

/// Finish reasons that mean the model or Google's filters would not answer.
const REFUSED: &[&str] = &["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"];

/// Parses a `generateContent` response, or the error body `{error: {code, message, status}}`.
/// Output tokens include a thinking model's thoughts, which are billed as output.
pub fn parse_response(url: &str, response: &HttpResponse) -> Result<Completion, LlmError> {
    http_error(url, response)?;
    let parsed: Response = parse_body(&response.body, "Gemini generateContent")?;
    if let Some(reason) = parsed.prompt_feedback.and_then(|f| f.block_reason) {
        return Err(LlmError::Refusal(format!("Gemini blocked the prompt ({reason})")));
    }
    let candidate = parsed
        .candidates
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::Malformed("the response has no candidates".into()))?;
    match candidate.finish_reason.as_deref() {
        Some("MAX_TOKENS") => return Err(LlmError::Truncated),
        Some(reason) if REFUSED.contains(&reason) => {
            return Err(LlmError::Refusal(format!("Gemini stopped the answer ({reason})")));
        }
        _ => {}
    }
    let content: String = candidate
        .content
        .map(|c| c.parts.into_iter().filter(|p| !p.thought).filter_map(|p| p.text).collect())
        .unwrap_or_default();
    if content.trim().is_empty() {
        let why = candidate.finish_reason.map(|r| format!(" (finish reason {r})")).unwrap_or_default();
        return Err(LlmError::Malformed(format!("the response has no text{why}")));
    }
    let usage = parsed
        .usage_metadata
        .map(|u| Usage {
            input_tokens: u.prompt_token_count,
            output_tokens: u.candidates_token_count + u.thoughts_token_count,
        })
        .unwrap_or_default();
    Ok(Completion { content, usage, model: String::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) -> HttpResponse {
        HttpResponse { status: 200, body: body.into(), ..HttpResponse::default() }
    }

    #[test]
    fn text_parts_are_joined_without_thoughts() {
        let body = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"thinking…","thought":true},{"text":"{\"a\":"},{"text":"1}"}]},"finishReason":"STOP"}],
            "usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":4,"thoughtsTokenCount":20}}"#;
        let c = parse_response("u", &ok(body)).unwrap();
        assert_eq!(c.content, r#"{"a":1}"#);
        assert_eq!(c.usage, Usage { input_tokens: 10, output_tokens: 24 });
    }

    #[test]
    fn malformed_bodies_are_malformed_not_panics() {
        for body in [
            "",
            "{",
            "[]",
            r#"{"candidates": []}"#,
            r#"{"candidates": [{"finishReason": "OTHER"}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"inlineData": {}}]}}]}"#,
            r#"{"candidates": 3}"#,
        ] {
            let r = parse_response("u", &ok(body));
            assert!(matches!(r, Err(LlmError::Malformed(_))), "{body}: {r:?}");
        }
    }
}
