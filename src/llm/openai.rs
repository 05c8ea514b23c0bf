//! The OpenAI chat-completions wire format, which many servers speak.
//!
//! Three providers share it: OpenAI itself; OpenAI-compatible servers (OpenRouter, Groq,
//! DeepSeek, LM Studio, vLLM, …), which differ only in the base URL; and Azure OpenAI, which takes
//! the key in an `api-key` header instead of a bearer token and comes in two forms: the
//! resource's endpoint, with the deployment (the configured model) and an `api-version` in the
//! URL, and the v1 API (`…/openai/v1`), which reads like OpenAI's.
//!
//! Structured output uses `response_format: {type: "json_schema", strict: true}`, so the model
//! can only answer with an object of the agent-output schema. Servers without a schema mode
//! (DeepSeek, some local servers) get `{type: "json_object"}` instead, with the schema written
//! into the system prompt; the agent's validator then holds the answer to it. Both functions
//! are pure.

use super::schema::{openai_strict, openai_strict_fits};
use super::settings::{is_azure_v1_url, LlmSettings, Provider, StructuredOutput};
use super::{
    http_error, parse_body, with_extra_headers, ChatRequest, Completion, HttpRequest, HttpResponse, LlmError, Usage,
};
use crate::web::encode_query_component;
use serde::Deserialize;
use serde_json::json;

/// Builds the POST to `{base_url}/chat/completions`, or for Azure OpenAI with the resource's
/// endpoint to `{base_url}/openai/deployments/{model}/chat/completions?api-version={api_version}`.
pub fn build_request(settings: &LlmSettings, request: &ChatRequest) -> HttpRequest {
    let user = match &request.image {
        None => json!(request.user),
        Some(png) => json!([
            {"type": "text", "text": request.user},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}"), "detail": "auto"}},
        ]),
    };
    let (system, response_format) = match settings.structured_output {
        StructuredOutput::JsonSchema => {
            let schema = openai_strict(&request.schema);
            // A task's output schema with a map or a free object cannot be strict: the model
            // is then guided, and the agent checks the answer (`openai_strict_fits`).
            let strict = openai_strict_fits(&schema);
            (
                request.system.clone(),
                json!({
                    "type": "json_schema",
                    "json_schema": {"name": request.schema_name, "strict": strict, "schema": schema},
                }),
            )
        }
        StructuredOutput::JsonObject => (
            format!(
                "{}\n\n## Answer format\n\nAnswer with one JSON object and nothing else (no prose, no code fence). It must follow this JSON Schema:\n\n{}\n",
                request.system.trim_end(),
                request.schema
            ),
            json!({"type": "json_object"}),
        ),
    };
    let body = json!({
        "model": settings.model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
        "response_format": response_format,
    });
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    let base = settings.base_url.trim_end_matches('/');
    let url = if settings.provider == Provider::AzureOpenAi {
        if !settings.api_key.is_empty() {
            headers.push(("api-key".to_string(), settings.api_key.clone()));
        }
        let version = settings.api_version.as_deref().map(str::trim).filter(|v| !v.is_empty());
        if is_azure_v1_url(base) {
            // The v1 API: the deployment is the body's model; an API version only if one is set
            // (`preview` for preview features).
            match version {
                Some(v) => format!("{base}/chat/completions?api-version={}", encode_query_component(v)),
                None => format!("{base}/chat/completions"),
            }
        } else {
            // The resource's endpoint, with or without the `/openai` the portal sometimes shows.
            // Settings without a version are refused before a request is built
            // (`SettingsError::NoApiVersion`).
            let base = base.strip_suffix("/openai").unwrap_or(base);
            format!(
                "{base}/openai/deployments/{}/chat/completions?api-version={}",
                encode_query_component(&settings.model),
                encode_query_component(version.unwrap_or_default()),
            )
        }
    } else {
        if !settings.api_key.is_empty() {
            headers.push(("authorization".to_string(), format!("Bearer {}", settings.api_key)));
        }
        format!("{base}/chat/completions")
    };
    HttpRequest { url, headers: with_extra_headers(headers, settings), body: body.to_string() }
}

#[derive(Deserialize)]
struct Response {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    /// A string (OpenAI), or a list of parts (some compatible servers: Mistral's
    /// `[{type: "thinking", …}, {type: "text", text}]`), read by [`message_text`].
    #[serde(default)]
    content: Option<serde_json::Value>,
    #[serde(default)]
    refusal: Option<String>,
}

/// The answer's text and any refusal in it: a string as it is; from a list of parts, the
/// `text` parts joined (a part may also be a bare string) and the first `refusal` part's
/// words; reasoning and other parts are left out.
fn message_text(content: Option<serde_json::Value>) -> (Option<String>, Option<String>) {
    use serde_json::Value;
    match content {
        Some(Value::String(text)) => (Some(text), None),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            let mut refusal = None;
            for part in &parts {
                let piece = match part {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                        Some("text") | Some("output_text") => o.get("text").and_then(Value::as_str),
                        Some("refusal") => {
                            refusal = refusal.or_else(|| o.get("refusal").and_then(Value::as_str).map(str::to_string));
                            None
                        }
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(piece) = piece {
                    text.push_str(piece);
                }
            }
            (Some(text), refusal)
        }
        _ => (None, None),
    }
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    /// `{cached_tokens, …}`: the part of the prompt read from the prompt cache. Read loosely:
    /// compatible servers send it in other shapes, or null.
    #[serde(default)]
    prompt_tokens_details: Option<serde_json::Value>,
}

/// Parses a chat-completions response, or the provider's error body. An answer that is not
/// taken (refused, cut off, empty) was billed all the same: its error carries the `usage`
/// ([`LlmError::Billed`]).
pub fn parse_response(url: &str, response: &HttpResponse) -> Result<Completion, LlmError> {
    http_error(url, response)?;
    let parsed: Response = parse_body(&response.body, "chat-completions")?;
    let usage = parsed.usage.as_ref().map(WireUsage::usage);
    let billed = |error| LlmError::billed(error, usage);
    let choice = parsed
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| billed(LlmError::Malformed("the response has no choices".into())))?;
    let (content, refusal_part) = message_text(choice.message.content);
    if let Some(refusal) = choice.message.refusal.or(refusal_part).filter(|r| !r.is_empty()) {
        return Err(billed(LlmError::Refusal(refusal)));
    }
    match choice.finish_reason.as_deref() {
        Some("length") => return Err(billed(LlmError::Truncated)),
        // OpenAI's and Azure's content filters stop an answer this way.
        Some("content_filter") => {
            return Err(billed(LlmError::Refusal("the provider's content filter withheld the answer".into())))
        }
        _ => {}
    }
    let content = content
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| billed(LlmError::Malformed("the response message has no content".into())))?;
    Ok(Completion { content, usage: usage.unwrap_or_default(), model: String::new() })
}

impl WireUsage {
    fn usage(&self) -> Usage {
        let cached = self.prompt_tokens_details.as_ref().and_then(|d| d.get("cached_tokens")).and_then(|c| c.as_u64());
        Usage::new(self.prompt_tokens, self.completion_tokens).with_cached(cached.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ERROR_401: &str = include_str!("../../tests/fixtures/llm/openai/error_401.json");

    fn settings(key: &str) -> LlmSettings {
        LlmSettings {
            base_url: "https://api.openai.com/v1/".into(),
            model: "gpt-4.1-mini".into(),
            api_key: key.into(),
            ..LlmSettings::default()
        }
    }

    fn ok(body: &str) -> HttpResponse {
        HttpResponse { status: 200, body: body.into(), ..HttpResponse::default() }
    }

    #[test]
    fn parts_give_their_text_and_their_refusal() {
        let parts = |content: &str| {
            let body = format!(r#"{{"choices":[{{"message":{{"content":{content}}},"finish_reason":"stop"}}]}}"#);
            parse_response("u", &ok(&body))
        };
        assert_eq!(parts(r#"["[1,", {"type":"text","text":"2]"}]"#).unwrap().content, "[1,2]");
        assert_eq!(parts(r#"[{"type":"refusal","refusal":"No."}]"#), Err(LlmError::Refusal("No.".into())));
        assert!(matches!(parts(r#"[{"type":"thinking","thinking":[]}]"#), Err(LlmError::Malformed(_))));
        assert!(matches!(parts("5"), Err(LlmError::Malformed(_))));
    }

    #[test]
    fn request_carries_model_messages_and_strict_schema() {
        let req = ChatRequest {
            system: "sys".into(),
            user: "state".into(),
            image: None,
            schema_name: "agent_output".into(),
            schema: json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
        };
        let http = build_request(&settings("sk-1"), &req);
        assert_eq!(http.url, "https://api.openai.com/v1/chat/completions");
        assert!(http.headers.contains(&("authorization".into(), "Bearer sk-1".into())));
        let body: serde_json::Value = crate::json::from_text(&http.body).unwrap();
        assert_eq!(body["model"], "gpt-4.1-mini");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["content"], "state");
        assert_eq!(body["response_format"]["json_schema"]["strict"], true);
        assert_eq!(
            body["response_format"]["json_schema"]["schema"],
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": ["string", "null"]}}, "additionalProperties": false})
        );
    }

    /// A task's output schema with a map (prices by name) and a free object: strict mode would
    /// close both to `{}`, so the request is not strict and keeps them open.
    #[test]
    fn a_schema_strict_mode_cannot_express_goes_without_strict() {
        let req = |schema| ChatRequest {
            system: "sys".into(),
            user: "state".into(),
            image: None,
            schema_name: "agent_output".into(),
            schema,
        };
        let open = json!({"type": "object", "properties": {
            "prices": {"type": "object", "additionalProperties": {"type": "number"}},
            "raw": {"type": "object"}
        }, "required": ["prices", "raw"]});
        let body: serde_json::Value = crate::json::from_text(&build_request(&settings("k"), &req(open)).body).unwrap();
        let format = &body["response_format"]["json_schema"];
        assert_eq!(format["strict"], false);
        assert_eq!(
            format["schema"]["properties"]["prices"],
            json!({"type": "object", "additionalProperties": {"type": "number"}})
        );
        assert_eq!(format["schema"]["properties"]["raw"], json!({"type": "object"}));
        // The empty parameters of an action that takes none stay closed and strict.
        let empty =
            json!({"type": "object", "properties": {"go_back": {"type": "object", "additionalProperties": false}}});
        let body: serde_json::Value = crate::json::from_text(&build_request(&settings("k"), &req(empty)).body).unwrap();
        assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    }

    #[test]
    fn no_authorization_header_without_a_key() {
        let req = ChatRequest {
            system: String::new(),
            user: String::new(),
            schema_name: "x".into(),
            schema: json!({}),
            image: None,
        };
        let http = build_request(&settings(""), &req);
        assert!(http.headers.iter().all(|(k, _)| k != "authorization"));
    }

    #[test]
    fn recorded_error_body_names_status_url_and_message() {
        let err = parse_response(
            "https://api.openai.com/v1/chat/completions",
            &HttpResponse { status: 401, body: ERROR_401.into(), ..HttpResponse::default() },
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("HTTP 401"), "{text}");
        assert!(text.contains("https://api.openai.com/v1/chat/completions"), "{text}");
        assert!(text.contains("Incorrect API key provided"), "{text}");
        assert!(text.contains("API key in Tabwright's settings"), "{text}");
    }

    #[test]
    fn malformed_bodies_are_malformed_not_panics() {
        for body in ["", "{", "[]", r#"{"choices": []}"#, r#"{"choices": [{"message": {"content": null}}]}"#] {
            assert!(matches!(parse_response("u", &ok(body)), Err(LlmError::Malformed(_))), "{body}");
        }
    }

    #[test]
    fn non_json_error_bodies_are_quoted_briefly() {
        let err = parse_response(
            "u",
            &HttpResponse { status: 502, body: "<html>Bad gateway</html>".into(), ..HttpResponse::default() },
        )
        .unwrap_err();
        assert!(err.to_string().contains("<html>Bad gateway</html>"));
    }
}
