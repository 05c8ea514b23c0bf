//! Google's Gemini API wire format (`generateContent`).
//!
//! Structured output uses `generationConfig.responseJsonSchema`, which takes JSON Schema (the
//! older `responseSchema` takes only an OpenAPI subset), with `responseMimeType:
//! application/json`. Gemini says why an answer stopped in `finishReason` and why a prompt was
//! refused in `promptFeedback.blockReason`; safety stops become [`LlmError::Refusal`]. Both
//! functions are pure.

use super::schema::gemini_json_schema;
use super::settings::LlmSettings;
use super::{excerpt, http_error, parse_body, with_extra_headers, ChatRequest, Completion, HttpRequest, HttpResponse};
use super::{LlmError, Usage};
use crate::web::encode_query_component;
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
    /// Why the model stopped, in words, when it did not stop as usual.
    #[serde(default)]
    finish_message: Option<String>,
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
    /// Why the prompt was blocked, in words.
    #[serde(default)]
    block_reason_message: Option<String>,
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
    /// Of the prompt, the tokens read from a cache (implicit or explicit).
    #[serde(default)]
    cached_content_token_count: u64,
}

/// Finish reasons that mean the model or Google's filters would not answer (the API
/// reference's `FinishReason`: safety, recitation, an unsupported language, the block lists,
/// personal data, and their image kin).
const REFUSED: &[&str] = &[
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
];

/// Finish reasons that end an answer early for a reason the next try may not meet: an
/// unspecified one, and the model's own slips (tool calls it was not offered, a malformed
/// answer).
const FAILED: &[&str] = &[
    "OTHER",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE",
    "MALFORMED_RESPONSE",
    "NO_IMAGE",
];

/// Parses a `generateContent` response, or the error body `{error: {code, message, status}}`.
/// Output tokens include a thinking model's thoughts, which are billed as output.
///
/// A prompt Gemini blocked has `promptFeedback.blockReason` (and maybe `blockReasonMessage`) and
/// no candidate; no candidate with only a `blockReasonMessage` is blocked too; `promptFeedback`
/// with neither (its safety ratings) is no refusal. A candidate's `finishReason`: `STOP` (or
/// none) is an answer, `MAX_TOKENS` [`LlmError::Truncated`], the [`REFUSED`] ones a refusal,
/// the [`FAILED`] ones a failed answer asked again; a reason newer than these is taken as a
/// stop when text came. `finishMessage`, when given, is said with the reason. An answer that is
/// not taken was billed all the same: its error carries the `usageMetadata`
/// ([`LlmError::Billed`]).
pub fn parse_response(url: &str, response: &HttpResponse) -> Result<Completion, LlmError> {
    http_error(url, response)?;
    let parsed: Response = parse_body(&response.body, "Gemini generateContent")?;
    let usage = parsed.usage_metadata.as_ref().map(UsageMetadata::usage);
    let billed = |error| LlmError::billed(error, usage);
    let feedback = parsed.prompt_feedback.unwrap_or(PromptFeedback { block_reason: None, block_reason_message: None });
    let reason = feedback.block_reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
    let message = feedback.block_reason_message.as_deref().map(str::trim).filter(|m| !m.is_empty());
    let blocked = |reason: Option<&str>, message: Option<&str>| {
        let reason = reason.unwrap_or("no reason given");
        LlmError::Refusal(match message {
            Some(message) => format!("Gemini blocked the prompt ({reason}): {}", excerpt(message, 300)),
            None => format!("Gemini blocked the prompt ({reason})"),
        })
    };
    if reason.is_some() {
        return Err(billed(blocked(reason, message)));
    }
    let Some(candidate) = parsed.candidates.into_iter().next() else {
        // No answer, and the feedback says why in words only.
        return Err(billed(match message {
            Some(message) => blocked(None, Some(message)),
            None => LlmError::Malformed("the response has no candidates".into()),
        }));
    };
    let because = |reason: &str| match candidate.finish_message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
        Some(message) => format!("{reason}: {}", excerpt(message, 300)),
        None => reason.to_string(),
    };
    match candidate.finish_reason.as_deref() {
        Some("MAX_TOKENS") => return Err(billed(LlmError::Truncated)),
        Some(reason) if REFUSED.contains(&reason) => {
            return Err(billed(LlmError::Refusal(format!("Gemini stopped the answer ({})", because(reason)))));
        }
        Some(reason) if FAILED.contains(&reason) => {
            return Err(billed(LlmError::Malformed(format!("Gemini ended the answer early ({})", because(reason)))));
        }
        _ => {}
    }
    let content: String = candidate
        .content
        .map(|c| c.parts.into_iter().filter(|p| !p.thought).filter_map(|p| p.text).collect())
        .unwrap_or_default();
    if content.trim().is_empty() {
        let why = candidate.finish_reason.map(|r| format!(" (finish reason {r})")).unwrap_or_default();
        return Err(billed(LlmError::Malformed(format!("the response has no text{why}"))));
    }
    Ok(Completion { content, usage: usage.unwrap_or_default(), model: String::new() })
}

impl UsageMetadata {
    /// A thinking model's thoughts are billed as output.
    fn usage(&self) -> Usage {
        Usage::new(self.prompt_token_count, self.candidates_token_count + self.thoughts_token_count)
            .with_cached(self.cached_content_token_count)
    }
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
        assert_eq!(c.usage, Usage::new(10, 24));
    }

    fn stopped(reason: &str, message: Option<&str>) -> Result<Completion, LlmError> {
        let message = message.map(|m| format!(r#","finishMessage":"{m}""#)).unwrap_or_default();
        let body = format!(
            r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"text":"{{}}"}}]}},"finishReason":"{reason}"{message}}}]}}"#
        );
        parse_response("u", &ok(&body))
    }

    #[test]
    fn every_documented_finish_reason_has_its_outcome() {
        assert_eq!(stopped("STOP", None).unwrap().content, "{}");
        assert_eq!(stopped("FINISH_REASON_UNSPECIFIED", None).unwrap().content, "{}");
        assert_eq!(stopped("MAX_TOKENS", None), Err(LlmError::Truncated));
        for reason in REFUSED {
            assert!(
                matches!(stopped(reason, None), Err(LlmError::Refusal(r)) if r.contains(reason)),
                "{reason} is a refusal"
            );
        }
        for reason in FAILED {
            let r = stopped(reason, None);
            assert!(matches!(&r, Err(LlmError::Malformed(m)) if m.contains(reason)), "{reason}: {r:?}");
            assert!(!r.unwrap_err().ends_task(), "{reason} is asked again");
        }
        // A reason newer than this list, with an answer: the answer.
        assert_eq!(stopped("SOMETHING_NEW", None).unwrap().content, "{}");
    }

    #[test]
    fn the_finish_message_is_said_with_its_reason() {
        let r = stopped("OTHER", Some("The model could not complete the answer."));
        assert_eq!(
            r,
            Err(LlmError::Malformed(
                "Gemini ended the answer early (OTHER: The model could not complete the answer.)".into()
            ))
        );
        assert!(
            matches!(stopped("LANGUAGE", Some("Unsupported language.")), Err(LlmError::Refusal(m)) if m.contains("LANGUAGE: Unsupported language."))
        );
    }

    /// The API reference's GenerateContentResponse: `promptFeedback` comes with its safety
    /// ratings whether or not the prompt was blocked; only `blockReason` blocks it.
    #[test]
    fn prompt_feedback_without_a_block_reason_is_no_refusal() {
        let body = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"{}"}]},"finishReason":"STOP","index":0}],
            "promptFeedback":{"safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"NEGLIGIBLE"}]}}"#;
        assert_eq!(parse_response("u", &ok(body)).unwrap().content, "{}");
        let blocked = r#"{"promptFeedback":{"blockReason":"OTHER","safetyRatings":[]}}"#;
        assert!(matches!(parse_response("u", &ok(blocked)), Err(LlmError::Refusal(m)) if m.contains("OTHER")));
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
