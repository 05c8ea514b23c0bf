//! The LLM layer against each provider's wire format and against a misbehaving network.
//!
//! - Request goldens: for every provider, the URL, the headers and the whole body built for one
//!   request with a screenshot, including the provider's rewrite of the answer schema.
//! - The providers' own answers (`tests/fixtures/llm/<provider>/`, recorded by their SDKs' tests
//!   or printed in their documentation; its README names each): success, refusal, truncation,
//!   content that is not JSON, and error bodies, each parsed into the `Completion` or `LlmError`
//!   the agent acts on. Whether each request fits the provider's published schema is
//!   tests/request_schemas.rs.
//! - The client over a scripted transport: retries with `retry-after` and jittered backoff,
//!   errors that are never retried, the fallback model, and what calls cost.
//! - The settings that choose all this.

use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::VecDeque;
use tabwright::llm::pricing::ModelPrice;
use tabwright::llm::{
    anthropic, build_request, gemini, ollama, openai, parse_response, schema, ChatRequest, Completion, HttpRequest,
    HttpResponse, LlmClient, LlmError, LlmTransport, TransportError, Usage,
};
use tabwright::settings::{
    LlmSettings, Provider, SettingsError, StoredSettings, MIN_OLLAMA_CONTEXT_TOKENS, MIN_REQUEST_BUDGET_TOKENS,
    SUPPORTED_PROVIDERS,
};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// A small answer schema with what every provider rewrites: `$schema`, `title`, `oneOf`,
/// `format`, an optional property and an object without properties.
fn answer_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "AgentOutput",
        "type": "object",
        "properties": {
            "next_goal": {"type": "string"},
            "memory": {"type": "string", "default": null},
            "action": {
                "type": "array",
                "items": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {
                                "navigate": {
                                    "type": "object",
                                    "properties": {"url": {"type": "string", "format": "uri"}},
                                    "required": ["url"],
                                    "additionalProperties": false,
                                },
                            },
                            "required": ["navigate"],
                            "additionalProperties": false,
                        },
                        {
                            "type": "object",
                            "properties": {"screenshot": {"type": "object", "additionalProperties": false}},
                            "required": ["screenshot"],
                            "additionalProperties": false,
                        },
                    ],
                },
            },
        },
        "required": ["next_goal", "action"],
    })
}

fn chat(image: Option<&str>) -> ChatRequest {
    ChatRequest {
        system: "You are a browser agent.".into(),
        user: "Task: log in.".into(),
        schema_name: "agent_output".into(),
        schema: answer_schema(),
        image: image.map(str::to_string),
    }
}

fn settings(provider: Provider, base_url: &str, model: &str) -> LlmSettings {
    LlmSettings {
        provider,
        base_url: base_url.into(),
        model: model.into(),
        api_key: "key-123".into(),
        ..LlmSettings::default()
    }
}

fn body(request: &HttpRequest) -> Value {
    tabwright::json::from_text(&request.body).expect("the request body is JSON")
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

fn response(status: u16, body: &str) -> HttpResponse {
    HttpResponse { status, headers: Vec::new(), body: body.into() }
}

fn fixture(path: &str) -> String {
    let full = format!("{}/tests/fixtures/llm/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn parse(provider: Provider, path: &str) -> Result<Completion, LlmError> {
    let status = path
        .rsplit('/')
        .next()
        .and_then(|name| name.strip_prefix("error_"))
        .and_then(|rest| rest.trim_end_matches(".json").parse().ok())
        .unwrap_or(200);
    parse_response(provider, "https://llm.example/endpoint", &response(status, &fixture(path)))
}

/// What the parser refused in the fixture at `path`, as the error itself and what the answer
/// was billed (the usage its body reported; `None` when it reported none).
fn refused(provider: Provider, path: &str) -> (LlmError, Option<Usage>) {
    let err = parse(provider, path).unwrap_err();
    let usage = match &err {
        LlmError::Billed { usage, model, .. } => {
            assert_eq!(model, "", "a parser cannot know the model; the client names it");
            Some(*usage)
        }
        _ => None,
    };
    assert_eq!(err.to_string(), err.unbilled().to_string(), "a bill does not change what the error says");
    (err.unbilled().clone(), usage)
}

fn json_of(completion: &Completion) -> Value {
    tabwright::json::from_text(&completion.content).expect("the content is JSON")
}

// ---------------------------------------------------------------------------------------------
// OpenAI, OpenAI-compatible servers and Azure OpenAI

#[test]
fn openai_request_golden() {
    let http =
        build_request(&settings(Provider::OpenAi, "https://api.openai.com/v1/", "gpt-4.1-mini"), &chat(Some(PNG)));
    assert_eq!(http.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(
        http.headers,
        vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("authorization".to_string(), "Bearer key-123".to_string()),
        ]
    );
    assert_eq!(
        body(&http),
        json!({
            "model": "gpt-4.1-mini",
            "messages": [
                {"role": "system", "content": "You are a browser agent."},
                {"role": "user", "content": [
                    {"type": "text", "text": "Task: log in."},
                    {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}"), "detail": "auto"}},
                ]},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "agent_output", "strict": true, "schema": schema::openai_strict(&answer_schema())},
            },
        })
    );
    let strict = &body(&http)["response_format"]["json_schema"]["schema"];
    assert_eq!(strict["required"], json!(["next_goal", "memory", "action"]));
    assert!(strict["properties"]["action"]["items"].get("anyOf").is_some());
}

#[test]
fn a_server_without_a_schema_mode_gets_json_object_and_the_schema_in_the_system_prompt() {
    let mut s = settings(Provider::OpenAiCompatible, "https://api.deepseek.com", "deepseek-chat");
    s.structured_output = tabwright::settings::StructuredOutput::JsonObject;
    let sent = body(&build_request(&s, &chat(None)));
    assert_eq!(sent["response_format"], json!({"type": "json_object"}));
    let system = sent["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are a browser agent."), "{system}");
    assert!(system.contains("Answer with one JSON object"), "JSON mode needs the word JSON in the prompt");
    let written = system.rsplit("JSON Schema:").next().unwrap().trim();
    assert_eq!(tabwright::json::from_text::<Value>(written).unwrap(), answer_schema(), "the schema, exactly");
    assert_eq!(sent["messages"][1]["content"], "Task: log in.");
}

#[test]
fn openai_compatible_servers_get_the_same_format_at_their_base_url() {
    let mut s = settings(Provider::OpenAiCompatible, "https://openrouter.ai/api/v1", "openai/gpt-4.1-mini");
    s.extra_headers =
        vec![("HTTP-Referer".into(), "https://tabwright.example".into()), ("X-Title".into(), "Tabwright".into())];
    let http = build_request(&s, &chat(None));
    assert_eq!(http.url, "https://openrouter.ai/api/v1/chat/completions");
    assert_eq!(header(&http, "authorization"), Some("Bearer key-123"));
    assert_eq!(header(&http, "http-referer"), Some("https://tabwright.example"));
    assert_eq!(header(&http, "x-title"), Some("Tabwright"));
    let b = body(&http);
    assert_eq!(b["model"], "openai/gpt-4.1-mini");
    assert_eq!(b["messages"][1]["content"], "Task: log in.");
    assert_eq!(b["response_format"]["json_schema"]["strict"], true);
}

#[test]
fn azure_puts_the_deployment_and_version_in_the_url_and_the_key_in_api_key() {
    let mut s = settings(Provider::AzureOpenAi, "https://contoso.openai.azure.com/openai/", "gpt-4.1-mini-prod");
    s.api_version = Some("2024-10-21".into());
    let http = build_request(&s, &chat(None));
    assert_eq!(
        http.url,
        "https://contoso.openai.azure.com/openai/deployments/gpt-4.1-mini-prod/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(header(&http, "api-key"), Some("key-123"));
    assert_eq!(header(&http, "authorization"), None);
    assert_eq!(body(&http)["response_format"]["type"], "json_schema");
}

/// A server that answers `message.content` as a list of parts: Mistral's reasoning models send
/// `[{type: "thinking", thinking: [...]}, {type: "text", text}]` (its OpenAPI's ThinkChunk and
/// TextChunk; the shape as reported in spring-projects/spring-ai#5019).
#[test]
fn content_given_as_parts_is_read() {
    let c = parse(Provider::OpenAiCompatible, "openai/content_parts.json").unwrap();
    assert_eq!(json_of(&c)["next_goal"], "Open the log-in page");
    assert!(!c.content.contains("first thing to open"), "the reasoning is not the answer: {}", c.content);
    assert_eq!(c.usage, Usage::new(1512, 178));
}

/// The v1 form, as Azure's own documentation writes it: `base_url=https://YOUR-RESOURCE-NAME.openai.azure.com/openai/v1/`
/// with the deployment as the body's model and no dated api-version (learn.microsoft.com,
/// azure/ai-foundry/openai/api-version-lifecycle).
#[test]
fn azure_v1_takes_the_deployment_in_the_body_and_no_version() {
    let mut s = settings(Provider::AzureOpenAi, "https://contoso.openai.azure.com/openai/v1/", "gpt-4.1-mini-prod");
    let http = build_request(&s, &chat(None));
    assert_eq!(http.url, "https://contoso.openai.azure.com/openai/v1/chat/completions");
    assert_eq!(body(&http)["model"], "gpt-4.1-mini-prod");
    assert_eq!(header(&http, "api-key"), Some("key-123"));
    // A preview version, when one is set.
    s.api_version = Some("preview".into());
    assert_eq!(
        build_request(&s, &chat(None)).url,
        "https://contoso.openai.azure.com/openai/v1/chat/completions?api-version=preview"
    );
}

#[test]
fn an_extra_header_replaces_the_providers_own() {
    let mut s = settings(Provider::OpenAi, "https://gateway.example/v1", "gpt-4.1");
    s.extra_headers = vec![("Authorization".into(), "Bearer gateway-token".into())];
    let http = build_request(&s, &chat(None));
    let auth: Vec<_> = http.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("authorization")).collect();
    assert_eq!(auth, vec![&("Authorization".to_string(), "Bearer gateway-token".to_string())]);
}

/// Answers recorded from OpenAI by its Python SDK's tests and printed in its OpenAPI document
/// (tests/fixtures/llm/README.md names each).
#[test]
fn openai_fixtures_parse() {
    // A structured-output answer: the JSON text of `message.content`, as the model wrote it.
    let c = parse(Provider::OpenAi, "openai/success.json").unwrap();
    assert_eq!(json_of(&c), json!({"city": "San Francisco", "temperature": 65, "units": "f"}));
    assert_eq!(c.usage, Usage::new(79, 14));
    // The reference's example, with every usage detail: nothing came from the cache.
    let c = parse(Provider::OpenAi, "openai/success_usage_details.json").unwrap();
    assert_eq!((c.content.as_str(), c.usage), ("Hello! How can I assist you today?", Usage::new(19, 10)));
    // Answers not taken were billed all the same: each error carries the usage of its body.
    assert_eq!(
        refused(Provider::OpenAi, "openai/refusal.json"),
        (LlmError::Refusal("I'm very sorry, but I can't assist with that.".into()), Some(Usage::new(79, 12)))
    );
    // Cut at `max_tokens` one token in: `{"` is not an answer.
    assert_eq!(refused(Provider::OpenAi, "openai/truncated.json"), (LlmError::Truncated, Some(Usage::new(79, 1))));
    let (err, usage) = refused(Provider::AzureOpenAi, "openai/content_filter.json");
    assert!(matches!(err, LlmError::Refusal(r) if r.contains("content filter")));
    assert_eq!(usage, Some(Usage::new(1187, 9)));
    // Text that is not JSON is handed on as is: the agent's validator tells the model.
    let c = parse(Provider::OpenAiCompatible, "openai/plain_text.json").unwrap();
    assert!(c.content.starts_with("I'm unable to provide real-time weather updates."));
    assert!(tabwright::json::from_text::<Value>(&c.content).is_err());
    assert_eq!(c.usage, Usage::new(14, 37));
    let err = parse(Provider::OpenAi, "openai/error_401.json").unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 401, message, .. } if message.starts_with("Incorrect API key")));
    assert!(err.to_string().contains("API key in Tabwright's settings"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Anthropic

#[test]
fn anthropic_request_golden() {
    let http = build_request(
        &settings(Provider::Anthropic, "https://api.anthropic.com/v1/", "claude-sonnet-4-20250514"),
        &chat(Some(PNG)),
    );
    assert_eq!(http.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(header(&http, "x-api-key"), Some("key-123"));
    assert_eq!(header(&http, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(header(&http, "content-type"), Some("application/json"));
    assert_eq!(header(&http, "anthropic-dangerous-direct-browser-access"), Some("true"));
    assert_eq!(header(&http, "authorization"), None);
    let input_schema = schema::anthropic_input_schema(&answer_schema());
    assert_eq!(
        body(&http),
        json!({
            "model": "claude-sonnet-4-20250514",
            "max_tokens": anthropic::MAX_TOKENS,
            // Prompt-caching breakpoints as Anthropic's prompt caching guide writes them:
            // `cache_control: {type: "ephemeral"}` on the system block and on the tool.
            "system": [{"type": "text", "text": "You are a browser agent.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "Task: log in."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ]}],
            "tools": [{
                "name": "agent_output",
                "description": "Give your answer by calling this tool: its input is your whole answer.",
                "input_schema": input_schema,
                "cache_control": {"type": "ephemeral"},
            }],
            "tool_choice": {"type": "tool", "name": "agent_output"},
        })
    );
    // The rewrite happened: no `$schema` or `title`, `anyOf` for `oneOf`, optional stays optional.
    assert!(input_schema.get("$schema").is_none() && input_schema.get("title").is_none());
    assert!(input_schema["properties"]["action"]["items"].get("anyOf").is_some());
    assert_eq!(input_schema["required"], json!(["next_goal", "action"]));
    let no_image =
        body(&build_request(&settings(Provider::Anthropic, "https://api.anthropic.com/v1", "m"), &chat(None)));
    assert_eq!(no_image["messages"][0]["content"], json!([{"type": "text", "text": "Task: log in."}]));
}

/// Answers recorded from Anthropic by its Python SDK's tests, and its documentation's examples
/// (tests/fixtures/llm/README.md names each).
#[test]
fn anthropic_fixtures_parse() {
    // The tool's input is the answer, whatever the tool was called, in the model's key order.
    let c = parse(Provider::Anthropic, "anthropic/success.json").unwrap();
    assert_eq!(json_of(&c), json!({"location": "San Francisco, CA", "units": "f"}));
    assert!(c.content.starts_with(r#"{"location""#), "{}", c.content);
    assert_eq!(c.usage, Usage::new(656, 74));
    assert_eq!(c.model, "");
    // Text the model wrote before calling the tool is not the answer.
    let c = parse(Provider::Anthropic, "anthropic/success_text_and_tool.json").unwrap();
    assert_eq!(json_of(&c), json!({"location": "San Francisco, CA", "units": "f"}));
    assert_eq!(c.usage, Usage::new(701, 93));
    // Answers not taken were billed all the same: each error carries the usage of its body.
    assert_eq!(
        refused(Provider::Anthropic, "anthropic/truncated.json"),
        (LlmError::Truncated, Some(Usage::new(42, 1)))
    );
    // An answer written as text, with no tool call: a model (or a server) that does not follow
    // the forced tool.
    let (err, usage) = refused(Provider::Anthropic, "anthropic/text_instead_of_tool.json");
    assert!(
        matches!(&err, LlmError::Malformed(m) if m.contains("instead of calling the answer tool") && m.contains("supports tool use") && m.contains("Green Tea")),
        "{err}"
    );
    assert_eq!(usage, Some(Usage::new(406, 50)));
    // A refusal's explanation and policy category, from stop_details (its content is empty).
    assert_eq!(
        refused(Provider::Anthropic, "anthropic/refusal_stop_details.json"),
        (
            LlmError::Refusal(
                "This request was declined because it conflicts with Anthropic's Usage Policy. (policy category: cyber)"
                    .into()
            ),
            Some(Usage::new(1422, 0))
        )
    );
    // A part of an answer came before the context window ran out: not taken as an answer, and
    // the whole of the context billed.
    assert_eq!(
        refused(Provider::Anthropic, "anthropic/context_window_exceeded.json"),
        (LlmError::ContextWindowExceeded, Some(Usage::new(199_871, 129)))
    );
    let (err, usage) = refused(Provider::Anthropic, "anthropic/pause_turn.json");
    assert!(matches!(&err, LlmError::Malformed(m) if m.contains("pause_turn")), "{err}");
    assert!(!err.ends_task(), "a paused turn is asked again");
    assert_eq!(usage, Some(Usage::new(2210, 14)));
    let err = parse(Provider::Anthropic, "anthropic/error_429.json").unwrap_err();
    assert!(
        matches!(&err, LlmError::Http { status: 429, message, .. } if message.starts_with("This request would exceed your organization's rate limit")),
        "{err}"
    );
    assert!(err.to_string().contains("rate-limiting"), "{err}");
    let err = parse(Provider::Anthropic, "anthropic/error_400.json").unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 400, message, .. } if message.contains("tool_result")), "{err}");
    let err = parse(Provider::Anthropic, "anthropic/error_404.json").unwrap_err();
    assert!(
        matches!(&err, LlmError::Http { status: 404, message, .. } if message == "The requested resource could not be found."),
        "{err}"
    );
    let err = parse(Provider::Anthropic, "anthropic/error_529.json").unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 529, message, .. } if message == "Overloaded"), "{err}");
    assert!(err.to_string().contains("server error"), "{err}");
}

/// Anthropic's refusal with `stop_details.explanation` (optional in the SDK's
/// `RefusalStopDetails`) gives that as the reason. Without it, the text the model had written
/// when the refusal stopped it is what came before the refusal, and is said as that, not as a
/// reason. The recorded-style body is the refusal fixture with the model's text in it, and its
/// explanation, then its category too, taken out.
#[test]
fn an_anthropic_refusal_without_an_explanation_quotes_what_came_before_it() {
    let refusal = |edit: &dyn Fn(&mut Value)| {
        let mut body: Value = tabwright::json::from_text(&fixture("anthropic/refusal_stop_details.json")).unwrap();
        body["content"] = json!([{"type": "text", "text": "Sure. The first step is to"}]);
        edit(&mut body);
        parse_response(Provider::Anthropic, "u", &response(200, &body.to_string())).unwrap_err()
    };
    let err = refusal(&|_| {});
    assert_eq!(
        err.unbilled(),
        &LlmError::Refusal(
            "This request was declined because it conflicts with Anthropic's Usage Policy. (policy category: cyber)"
                .into()
        ),
        "the explanation is the reason, whatever came before it"
    );
    let err = refusal(&|body| {
        body["stop_details"].as_object_mut().unwrap().remove("explanation");
    });
    assert_eq!(
        err.unbilled(),
        &LlmError::RefusedMidAnswer { written: "Sure. The first step is to".into(), category: Some("cyber".into()) }
    );
    assert_eq!(
        err.to_string(),
        "The model refused to go on (no reason given; policy category: cyber). It had written: “Sure. The first step is to”"
    );
    assert_eq!(err.bills(), vec![("", Usage::new(1422, 0))]);
    assert!(!err.ends_task(), "the next step asks again");
    let err = refusal(&|body| body["stop_details"] = json!({"type": "refusal", "category": null, "explanation": null}));
    assert_eq!(
        err.to_string(),
        "The model refused to go on (no reason given). It had written: “Sure. The first step is to”"
    );
}

// ---------------------------------------------------------------------------------------------
// Gemini

#[test]
fn gemini_request_golden() {
    let s = settings(Provider::Gemini, "https://generativelanguage.googleapis.com/v1beta/", "models/gemini-2.5-flash");
    let http = build_request(&s, &chat(Some(PNG)));
    assert_eq!(http.url, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(header(&http, "x-goog-api-key"), Some("key-123"));
    assert_eq!(header(&http, "authorization"), None);
    assert!(!http.url.contains("key-123"), "the key stays out of the URL");
    let response_schema = schema::gemini_json_schema(&answer_schema());
    assert_eq!(
        body(&http),
        json!({
            "systemInstruction": {"parts": [{"text": "You are a browser agent."}]},
            "contents": [{"role": "user", "parts": [
                {"text": "Task: log in."},
                {"inlineData": {"mimeType": "image/png", "data": PNG}},
            ]}],
            "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": response_schema},
        })
    );
    // The rewrite happened: `format: uri` is gone and the empty object got its placeholder.
    let branches = &response_schema["properties"]["action"]["items"]["anyOf"];
    assert!(branches[0]["properties"]["navigate"]["properties"]["url"].get("format").is_none());
    assert!(branches[1]["properties"]["screenshot"]["properties"].get(schema::UNUSED_PROPERTY).is_some());
    let no_image = body(&build_request(&s, &chat(None)));
    assert_eq!(no_image["contents"][0]["parts"], json!([{"text": "Task: log in."}]));
}

/// Answers recorded from Gemini by Google's js-genai and Firebase SDK tests (tests/fixtures/llm/
/// README.md names each).
#[test]
fn gemini_fixtures_parse() {
    let c = parse(Provider::Gemini, "gemini/success.json").unwrap();
    assert_eq!(json_of(&c)["simpleString"], "example");
    // Thinking tokens are billed as output; 3 of the 5 input tokens came from the cache.
    assert_eq!(c.usage, Usage::new(5, 238 + 41).with_cached(3));
    // A thought summary is the model's reasoning, not its answer.
    let c = parse(Provider::Gemini, "gemini/success_thought_summary.json").unwrap();
    assert_eq!(c.content, "Mountain View");
    // Answers not taken were billed all the same: each error carries the usageMetadata of its
    // body (none in the bodies that have none).
    let (err, usage) = refused(Provider::Gemini, "gemini/refusal.json");
    assert!(matches!(err, LlmError::Refusal(r) if r.contains("SAFETY")));
    assert_eq!(usage, Some(Usage::new(7, 20)));
    let (err, usage) = refused(Provider::Gemini, "gemini/refusal_recitation.json");
    assert!(matches!(err, LlmError::Refusal(r) if r.contains("RECITATION")));
    assert_eq!(usage, Some(Usage::new(18, 0)));
    let (err, usage) = refused(Provider::Gemini, "gemini/blocked_prompt.json");
    assert!(matches!(err, LlmError::Refusal(r) if r.contains("SAFETY")));
    assert_eq!(usage, None);
    // No candidate, and feedback with a message but no reason: refused, with the message.
    let (err, usage) = refused(Provider::Gemini, "gemini/prompt_feedback_only.json");
    assert!(matches!(&err, LlmError::Refusal(r) if r.contains("Message")), "{err}");
    assert_eq!(usage, None);
    // `OTHER` is no answer; its finishMessage says why.
    let err = parse(Provider::Gemini, "gemini/finish_other.json").unwrap_err();
    assert!(err.to_string().contains("Model failed to generate content due to internal error."), "{err}");
    // The thoughts are billed as output.
    assert_eq!(
        refused(Provider::Gemini, "gemini/truncated.json"),
        (LlmError::Truncated, Some(Usage::new(7, 149 + 48)))
    );
    // The whole output budget went to thinking: no parts at all.
    assert_eq!(
        refused(Provider::Gemini, "gemini/truncated_no_parts.json"),
        (LlmError::Truncated, Some(Usage::new(7, 19)))
    );
    let c = parse(Provider::Gemini, "gemini/plain_text.json").unwrap();
    assert!(c.content.starts_with("Google's headquarters"), "{}", c.content);
    assert!(tabwright::json::from_text::<Value>(&c.content).is_err());
    let err = parse(Provider::Gemini, "gemini/error_400.json").unwrap_err();
    assert!(
        matches!(&err, LlmError::Http { status: 400, message, .. } if message == "API key not valid. Please pass a valid API key (INVALID_ARGUMENT)"),
        "{err}"
    );
    let err = parse(Provider::Gemini, "gemini/error_429.json").unwrap_err();
    assert!(
        matches!(&err, LlmError::Http { status: 429, message, .. } if message.contains("RESOURCE_EXHAUSTED")),
        "{err}"
    );
    assert!(err.to_string().contains("rate-limiting"), "{err}");
    let err = parse(Provider::Gemini, "gemini/error_404.json").unwrap_err();
    assert!(
        matches!(&err, LlmError::Http { status: 404, message, .. } if message.contains("is not found for API version v1beta")),
        "{err}"
    );
    assert!(err.to_string().contains("model name"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Ollama

#[test]
fn ollama_request_golden() {
    let mut s = settings(Provider::Ollama, "http://localhost:11434/", "qwen2.5:7b");
    s.api_key.clear();
    let http = build_request(&s, &chat(Some(PNG)));
    assert_eq!(http.url, "http://localhost:11434/api/chat");
    assert_eq!(http.headers, vec![("content-type".to_string(), "application/json".to_string())]);
    let format = schema::ollama_format(&answer_schema());
    assert_eq!(
        body(&http),
        json!({
            "model": "qwen2.5:7b",
            "stream": false,
            "format": format,
            "messages": [
                {"role": "system", "content": "You are a browser agent."},
                {"role": "user", "content": "Task: log in.", "images": [PNG]},
            ],
            // Ollama's API reference: model parameters go in `options`; `num_ctx` is the
            // context window (its default, 4,096 on most machines, is smaller than a step).
            "options": {"num_ctx": 32768},
        })
    );
    assert!(format.get("$schema").is_none() && format["properties"]["action"]["items"].get("anyOf").is_some());
    let no_image = body(&build_request(&s, &chat(None)));
    assert_eq!(no_image["messages"][1], json!({"role": "user", "content": "Task: log in."}));
}

/// Ollama's own answers: its API reference's examples and the error bodies its server tests
/// check byte for byte (tests/fixtures/llm/README.md names each).
#[test]
fn ollama_fixtures_parse() {
    let c = parse(Provider::Ollama, "ollama/success.json").unwrap();
    assert_eq!(json_of(&c), json!({"age": 22, "available": false}));
    assert_eq!(c.usage, Usage::new(34, 12));
    assert_eq!(refused(Provider::Ollama, "ollama/truncated.json"), (LlmError::Truncated, Some(Usage::new(34, 12))));
    // Ollama has no refusal signal, and an older server no done_reason: the text goes to the
    // validator like any other.
    let c = parse(Provider::Ollama, "ollama/plain_text.json").unwrap();
    assert_eq!(c.content, "Hello! How are you today?");
    assert_eq!(c.usage, Usage::new(26, 298));
    let err = parse(Provider::Ollama, "ollama/error_404.json").unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 404, message, .. } if message == "model '' not found"), "{err}");
    assert!(err.to_string().contains("model name"), "{err}");
    let err = parse(Provider::Ollama, "ollama/error_400.json").unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 400, message, .. } if message == "model is required"), "{err}");
    let err = parse(Provider::Ollama, "ollama/error_503.json").unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 503, message, .. } if message == "model is overloaded"), "{err}");
    assert!(err.to_string().contains("server error"), "{err}");
}

#[test]
fn every_provider_refuses_garbage_without_panicking() {
    let providers = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini, Provider::Ollama];
    for provider in providers {
        for body in ["", "null", "{", "[1,2]", "\"text\"", "{\"choices\": {}}", "<html>OK</html>"] {
            let r = parse_response(provider, "u", &response(200, body));
            assert!(matches!(r, Err(LlmError::Malformed(_))), "{provider:?} {body}: {r:?}");
        }
        let r = parse_response(provider, "u", &response(503, ""));
        assert!(
            matches!(r, Err(LlmError::Http { status: 503, ref message, .. }) if message == "(empty body)"),
            "{r:?}"
        );
    }
    // The per-provider functions are the ones the dispatcher calls.
    let ok = fixture("openai/success.json");
    assert_eq!(
        openai::parse_response("u", &response(200, &ok)),
        parse_response(Provider::AzureOpenAi, "u", &response(200, &ok))
    );
    let ok = fixture("anthropic/success.json");
    assert_eq!(
        anthropic::parse_response("u", &response(200, &ok)),
        parse_response(Provider::Anthropic, "u", &response(200, &ok))
    );
    let ok = fixture("gemini/success.json");
    assert_eq!(
        gemini::parse_response("u", &response(200, &ok)),
        parse_response(Provider::Gemini, "u", &response(200, &ok))
    );
    let ok = fixture("ollama/success.json");
    assert_eq!(
        ollama::parse_response("u", &response(200, &ok)),
        parse_response(Provider::Ollama, "u", &response(200, &ok))
    );
}

// ---------------------------------------------------------------------------------------------
// The client: retries and the fallback model

/// A transport that answers from a script, and records the requests and the sleeps.
struct Scripted {
    replies: RefCell<VecDeque<Result<HttpResponse, TransportError>>>,
    requests: RefCell<Vec<HttpRequest>>,
    sleeps: RefCell<Vec<u32>>,
    random: f64,
}

impl Scripted {
    fn new(replies: Vec<Result<HttpResponse, TransportError>>) -> Self {
        Scripted {
            replies: RefCell::new(replies.into()),
            requests: RefCell::new(Vec::new()),
            sleeps: RefCell::new(Vec::new()),
            random: 0.25,
        }
    }

    fn models(&self) -> Vec<String> {
        self.requests.borrow().iter().map(|r| body(r)["model"].as_str().unwrap_or_default().to_string()).collect()
    }
}

impl LlmTransport for &Scripted {
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.requests.borrow_mut().push(request.clone());
        self.replies.borrow_mut().pop_front().unwrap_or_else(|| Err(TransportError("the script ran out".into())))
    }

    async fn sleep(&self, ms: u32) {
        self.sleeps.borrow_mut().push(ms);
    }

    fn random(&self) -> f64 {
        self.random
    }
}

fn ok_reply() -> Result<HttpResponse, TransportError> {
    Ok(response(200, &fixture("openai/success.json")))
}

fn status(code: u16) -> Result<HttpResponse, TransportError> {
    Ok(response(code, &format!(r#"{{"error": {{"message": "status {code}"}}}}"#)))
}

fn with_fallback(fallback: Option<&str>) -> LlmSettings {
    LlmSettings {
        fallback_model: fallback.map(str::to_string),
        ..settings(Provider::OpenAi, "https://api.openai.com/v1", "gpt-4.1")
    }
}

fn complete(client: &LlmClient<&Scripted>) -> Result<Completion, LlmError> {
    futures::executor::block_on(client.complete(&chat(None)))
}

#[test]
fn retry_after_is_honoured_then_a_jittered_backoff_then_success() {
    let limited = HttpResponse {
        status: 429,
        headers: vec![("retry-after".into(), "2".into())],
        body: r#"{"error": {"message": "Rate limit reached"}}"#.into(),
    };
    let transport = Scripted::new(vec![Ok(limited), status(503), ok_reply()]);
    let client = LlmClient::new(with_fallback(None), &transport);
    let c = complete(&client).unwrap();
    assert_eq!(json_of(&c)["city"], "San Francisco");
    assert_eq!(c.model, "gpt-4.1");
    // 2 s as asked; then the second retry's ceiling (2 s) times the random draw (0.25).
    assert_eq!(*transport.sleeps.borrow(), vec![2_000, 500]);
    assert_eq!(transport.requests.borrow().len(), 3);
}

#[test]
fn unauthorised_is_never_retried() {
    let transport = Scripted::new(vec![Ok(response(401, &fixture("openai/error_401.json"))), ok_reply()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let err = complete(&client).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 401, .. }), "{err}");
    assert_eq!(transport.requests.borrow().len(), 1);
    assert!(transport.sleeps.borrow().is_empty());
}

#[test]
fn after_three_retries_the_last_error_is_returned() {
    let transport = Scripted::new(vec![status(500), status(502), status(503), status(504), ok_reply()]);
    let client = LlmClient::new(with_fallback(None), &transport);
    let err = complete(&client).unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 504, message, .. } if message == "status 504"), "{err}");
    assert_eq!(transport.requests.borrow().len(), 4);
    // Ceilings 1, 2 and 4 s, times 0.25.
    assert_eq!(*transport.sleeps.borrow(), vec![250, 500, 1_000]);
    assert!(err.ends_task());
}

#[test]
fn an_unreachable_server_is_retried() {
    let transport = Scripted::new(vec![
        Err(TransportError("connection refused".into())),
        Err(TransportError("reset".into())),
        ok_reply(),
    ]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    assert!(complete(&client).is_ok());
    assert_eq!(transport.sleeps.borrow().len(), 2);
    // Unreachable to the end: the fallback lives on the same server, so it is not tried.
    let transport = Scripted::new(vec![]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let err = complete(&client).unwrap_err();
    assert!(matches!(&err, LlmError::Unreachable { reason, .. } if reason == "the script ran out"), "{err}");
    assert_eq!(transport.models(), vec!["gpt-4.1"; 4]);
}

#[test]
fn a_long_retry_after_is_capped_at_a_minute() {
    let limited =
        HttpResponse { status: 503, headers: vec![("retry-after".into(), "86400".into())], body: String::new() };
    let transport = Scripted::new(vec![Ok(limited), ok_reply()]);
    let client = LlmClient::new(with_fallback(None), &transport);
    assert!(complete(&client).is_ok());
    assert_eq!(*transport.sleeps.borrow(), vec![60_000]);
}

#[test]
fn the_fallback_answers_when_retries_run_out() {
    let transport = Scripted::new(vec![status(429), status(429), status(429), status(429), ok_reply()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let c = complete(&client).unwrap();
    assert_eq!(c.model, "gpt-4.1-mini");
    assert_eq!(transport.models(), vec!["gpt-4.1", "gpt-4.1", "gpt-4.1", "gpt-4.1", "gpt-4.1-mini"]);
}

#[test]
fn after_the_fallback_answered_it_is_asked_first_for_a_while_then_the_model_again() {
    use tabwright::llm::STICKY_FALLBACK_CALLS;
    let n = STICKY_FALLBACK_CALLS as usize;
    let mut replies = vec![status(404), ok_reply()];
    replies.extend((0..n + 1).map(|_| ok_reply()));
    let transport = Scripted::new(replies);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    for _ in 0..n + 2 {
        assert!(complete(&client).is_ok());
    }
    let mut expected = vec!["gpt-4.1", "gpt-4.1-mini"];
    expected.extend(std::iter::repeat_n("gpt-4.1-mini", n));
    expected.push("gpt-4.1");
    assert_eq!(transport.models(), expected, "no wasted request on the failing model for {n} calls");
}

#[test]
fn a_failing_stand_in_hands_back_to_the_model_at_once() {
    let transport = Scripted::new(vec![status(404), ok_reply(), status(404), ok_reply()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    assert_eq!(complete(&client).unwrap().model, "gpt-4.1-mini");
    assert_eq!(complete(&client).unwrap().model, "gpt-4.1");
    assert_eq!(transport.models(), vec!["gpt-4.1", "gpt-4.1-mini", "gpt-4.1-mini", "gpt-4.1"]);
}

#[test]
fn the_fallback_answers_when_the_model_is_unknown() {
    let transport = Scripted::new(vec![status(404), ok_reply()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    assert_eq!(complete(&client).unwrap().model, "gpt-4.1-mini");
    assert!(transport.sleeps.borrow().is_empty());
}

#[test]
fn bad_requests_and_keys_do_not_fall_back() {
    for code in [400, 401, 403] {
        let transport = Scripted::new(vec![status(code), ok_reply()]);
        let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
        assert!(matches!(complete(&client), Err(LlmError::Http { status, .. }) if status == code));
        assert_eq!(transport.models(), vec!["gpt-4.1"]);
    }
    // Nor do answers another model would not fix in this step (the agent's next step does),
    // which come back with what they cost, the model named.
    let transport = Scripted::new(vec![Ok(response(200, &fixture("openai/truncated.json"))), ok_reply()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let err = complete(&client).unwrap_err();
    assert_eq!(err.unbilled(), &LlmError::Truncated);
    assert_eq!(err.bills(), vec![("gpt-4.1", Usage::new(79, 1))]);
    assert_eq!(transport.requests.borrow().len(), 1, "a billed answer is not asked again by the client");
}

/// Every answer a call was billed for comes back with its outcome, whichever model gave it:
/// the fallback's, when it answered unusably after the model could not answer at all; the
/// stand-in's, when the fallback answers for the model; the connection check's.
#[test]
fn every_billed_answer_of_a_call_comes_back_with_its_model() {
    let truncated = || Ok(response(200, &fixture("openai/truncated.json")));
    let transport = Scripted::new(vec![status(404), truncated()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let err = complete(&client).unwrap_err();
    assert!(
        matches!(&err, LlmError::FallbackFailed { error, fallback_error, .. }
            if matches!(**error, LlmError::Http { status: 404, .. }) && fallback_error.unbilled() == &LlmError::Truncated),
        "{err}"
    );
    assert_eq!(err.bills(), vec![("gpt-4.1-mini", Usage::new(79, 1))], "the 404 was not billed; the fallback was");
    assert!(!err.ends_task(), "the next step asks again");

    // The fallback standing in for the model answers unusably: its bill, its name.
    let transport = Scripted::new(vec![status(404), ok_reply(), truncated()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    assert_eq!(complete(&client).unwrap().model, "gpt-4.1-mini");
    assert_eq!(complete(&client).unwrap_err().bills(), vec![("gpt-4.1-mini", Usage::new(79, 1))]);

    // A connection check answered with something else than asked: billed, and said as before.
    let transport = Scripted::new(vec![openai_answer("Sure! Here you go.")]);
    let err =
        futures::executor::block_on(LlmClient::new(with_fallback(None), &transport).check_connection()).unwrap_err();
    assert_eq!(err.bills(), vec![("gpt-4.1", Usage::new(40, 5))]);
    assert!(matches!(err.unbilled(), LlmError::Malformed(m) if m.contains("not with the JSON object asked for")));
}

#[test]
fn the_fallback_is_tried_once_and_both_failures_are_reported() {
    let transport = Scripted::new(vec![status(404), status(503), ok_reply()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let err = complete(&client).unwrap_err();
    assert!(
        matches!(&err, LlmError::FallbackFailed { model, error, fallback, fallback_error }
            if model == "gpt-4.1" && fallback == "gpt-4.1-mini"
            && matches!(**error, LlmError::Http { status: 404, .. })
            && matches!(**fallback_error, LlmError::Http { status: 503, .. })),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("With the model gpt-4.1:") && text.contains("With the fallback model gpt-4.1-mini:"),
        "{text}"
    );
    assert_eq!(transport.requests.borrow().len(), 2);
    assert!(err.ends_task());
}

#[test]
fn extraction_uses_its_own_model_and_the_same_fallback() {
    let mut s = with_fallback(Some("gpt-4.1-mini"));
    s.extraction_model = Some("gpt-4.1-nano".into());
    let transport = Scripted::new(vec![ok_reply(), status(404), ok_reply()]);
    let client = LlmClient::new(s, &transport);
    let first = futures::executor::block_on(client.complete_extraction(&chat(None))).unwrap();
    assert_eq!(first.model, "gpt-4.1-nano");
    let second = futures::executor::block_on(client.complete_extraction(&chat(None))).unwrap();
    assert_eq!(second.model, "gpt-4.1-mini");
    assert_eq!(transport.models(), vec!["gpt-4.1-nano", "gpt-4.1-nano", "gpt-4.1-mini"]);
}

#[test]
fn the_client_speaks_the_configured_provider() {
    let transport = Scripted::new(vec![Ok(response(200, &fixture("anthropic/success.json")))]);
    let client = LlmClient::new(
        settings(Provider::Anthropic, "https://api.anthropic.com/v1", "claude-sonnet-4-20250514"),
        &transport,
    );
    let c = complete(&client).unwrap();
    assert_eq!(json_of(&c)["location"], "San Francisco, CA");
    assert_eq!(c.model, "claude-sonnet-4-20250514");
    assert_eq!(transport.requests.borrow()[0].url, "https://api.anthropic.com/v1/messages");
    // $3 in and $15 out per million tokens.
    let cost = client.cost_usd(&c.model, c.usage).unwrap();
    assert!((cost - (656.0 * 3.0 + 74.0 * 15.0) / 1e6).abs() < 1e-12, "{cost}");
}

#[test]
fn user_prices_come_before_the_built_in_ones() {
    let mut s = with_fallback(None);
    s.prices = vec![ModelPrice {
        model_prefix: "gpt-4.1".into(),
        input_per_million: 1.0,
        output_per_million: 2.0,
        cached_input_per_million: None,
    }];
    let transport = Scripted::new(vec![]);
    let client = LlmClient::new(s, &transport);
    let usage = Usage::new(1_000_000, 500_000);
    assert_eq!(client.cost_usd("gpt-4.1-mini", usage), Some(2.0));
    let built_in = tabwright::llm::pricing::cost_usd("gpt-4.1-mini", usage).unwrap();
    assert!((built_in - (0.40 + 0.80)).abs() < 1e-9, "{built_in}");
    assert_eq!(client.cost_usd("some-local-model", usage), None);
}

// ---------------------------------------------------------------------------------------------
// Settings

fn validate(llm: Value) -> Result<LlmSettings, SettingsError> {
    StoredSettings::from_json(json!({ "llm": llm })).and_then(|s| s.validate()).map(|s| s.llm)
}

#[test]
fn every_supported_provider_name_parses() {
    for name in SUPPORTED_PROVIDERS {
        let provider = Provider::parse(name).unwrap();
        assert_eq!(provider.name(), *name);
    }
    assert_eq!(Provider::parse(" Azure-OpenAI "), Some(Provider::AzureOpenAi));
    assert_eq!(Provider::parse("OpenAI compatible"), Some(Provider::OpenAiCompatible));
    assert_eq!(Provider::parse("carrier-pigeon"), None);
    let err = validate(json!({"provider": "carrier-pigeon", "base_url": "http://x", "model": "m"})).unwrap_err();
    assert_eq!(err, SettingsError::UnknownProvider("carrier-pigeon".into()));
    assert!(err.to_string().contains("openai, openai_compatible, azure_openai, anthropic, gemini, ollama"), "{err}");
}

#[test]
fn the_new_llm_settings_validate_with_defaults() {
    let s = validate(json!({"base_url": "https://api.openai.com/v1", "model": "gpt-4.1"})).unwrap();
    assert_eq!(s.provider, Provider::OpenAi);
    assert_eq!((s.timeout_s, s.fallback_model, s.api_version), (60, None, None));
    assert!(s.extra_headers.is_empty() && s.prices.is_empty());

    let s = validate(json!({
        "provider": "anthropic",
        "base_url": "https://api.anthropic.com/v1",
        "model": "claude-sonnet-4-20250514",
        "fallback_model": " claude-3-5-haiku-20241022 ",
        "timeout_s": 120,
        "extra_headers": {" X-Team ": " browser ", "": ""},
        "prices": [{"model_prefix": " claude-", "input_per_million": 2.5, "output_per_million": 12}],
    }))
    .unwrap();
    assert_eq!(s.provider, Provider::Anthropic);
    assert_eq!(s.fallback_model.as_deref(), Some("claude-3-5-haiku-20241022"));
    assert_eq!(s.timeout_s, 120);
    assert_eq!(s.extra_headers, vec![("X-Team".to_string(), "browser".to_string())]);
    assert_eq!(
        s.prices,
        vec![ModelPrice {
            model_prefix: "claude-".into(),
            input_per_million: 2.5,
            output_per_million: 12.0,
            cached_input_per_million: None
        }]
    );

    // A fallback equal to the model is no fallback.
    let s = validate(json!({"base_url": "http://x", "model": "m", "fallback_model": "m"})).unwrap();
    assert_eq!(s.fallback_model, None);
}

#[test]
fn bad_llm_settings_say_what_to_fix() {
    let base = |extra: Value| {
        let mut llm = json!({"base_url": "https://x.example", "model": "m"});
        llm.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        validate(llm)
    };
    // Ollama: the context asked for, and a request budget that fits in it with room to answer.
    let ollama = |extra: Value| {
        let mut stored = json!({"llm": {"provider": "ollama", "base_url": "http://localhost:11434", "model": "m"}});
        stored.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        StoredSettings::from_json(stored).and_then(|s| s.validate())
    };
    let s = ollama(json!({})).unwrap();
    assert_eq!((s.llm.context_tokens, s.agent.request_budget_tokens), (32_768, 28_672));
    let s =
        ollama(json!({"llm": {"provider": "ollama", "base_url": "http://x", "model": "m", "context_tokens": 131072}}))
            .unwrap();
    assert_eq!((s.llm.context_tokens, s.agent.request_budget_tokens), (131_072, 32_000));
    let s = ollama(json!({"request_budget_tokens": 9000, "llm": {"provider": "ollama", "base_url": "http://x", "model": "m", "context_tokens": 12288}}))
        .unwrap();
    assert_eq!(s.agent.request_budget_tokens, 8_192);
    let err =
        ollama(json!({"llm": {"provider": "ollama", "base_url": "http://x", "model": "m", "context_tokens": 4096}}))
            .unwrap_err();
    assert!(matches!(err, SettingsError::OutOfRange { min: 8_192, .. }), "{err}");
    // A context that holds the smallest budget and the answer, or the task cannot start.
    let err =
        ollama(json!({"llm": {"provider": "ollama", "base_url": "http://x", "model": "m", "context_tokens": 8192}}))
            .unwrap_err();
    assert!(
        matches!(err, SettingsError::TooFewTokens { setting: "llm.context_tokens", value: 8_192, min, .. } if min == MIN_OLLAMA_CONTEXT_TOKENS),
        "{err}"
    );
    assert!(err.to_string().contains("A request's fixed part alone"), "{err}");
    let least = json!({"llm": {"provider": "ollama", "base_url": "http://x", "model": "m", "context_tokens": MIN_OLLAMA_CONTEXT_TOKENS}});
    assert_eq!(ollama(least).unwrap().agent.request_budget_tokens, MIN_REQUEST_BUDGET_TOKENS);
    // Other providers keep their budget whatever the field says.
    let s = base(json!({"context_tokens": 8192})).unwrap();
    assert_eq!(s.context_tokens, 8192);
    assert_eq!(base(json!({"provider": "azure_openai"})), Err(SettingsError::NoApiVersion));
    assert_eq!(base(json!({"provider": "azure_openai", "api_version": "  "})), Err(SettingsError::NoApiVersion));
    // The v1 base URL needs none.
    let v1 = validate(
        json!({"provider": "azure_openai", "base_url": "https://contoso.openai.azure.com/openai/v1", "model": "m"}),
    )
    .unwrap();
    assert_eq!(v1.api_version, None);
    let s = base(json!({"provider": "azure", "api_version": " 2024-10-21 "})).unwrap();
    assert_eq!(s.api_version.as_deref(), Some("2024-10-21"));
    for timeout in [9, 601] {
        let err = base(json!({"timeout_s": timeout})).unwrap_err();
        assert!(matches!(err, SettingsError::OutOfRange { name: "LLM timeout", min: 10, max: 600, .. }), "{err}");
    }
    assert_eq!(base(json!({"extra_headers": {"Bad Header": "x"}})), Err(SettingsError::BadHeader("Bad Header".into())));
    assert_eq!(base(json!({"extra_headers": {"X-Ok": "two\nlines"}})), Err(SettingsError::BadHeader("X-Ok".into())));
    let bad_price = json!({"prices": [{"model_prefix": "gpt", "input_per_million": -1, "output_per_million": 1}]});
    assert_eq!(base(bad_price), Err(SettingsError::BadPrice("gpt".into())));
    let no_prefix = json!({"prices": [{"model_prefix": " ", "input_per_million": 1, "output_per_million": 1}]});
    assert_eq!(base(no_prefix), Err(SettingsError::BadPrice(String::new())));
    assert!(matches!(
        StoredSettings::from_json(json!({"llm": {"prices": [{"model_prefix": "gpt"}]}})),
        Err(SettingsError::Unreadable(_))
    ));
    for err in [SettingsError::NoApiVersion, SettingsError::BadHeader("x".into()), SettingsError::BadPrice("x".into())]
    {
        assert!(err.to_string().contains("Tabwright's settings"), "{err}");
    }
}

fn openai_answer(content: &str) -> Result<HttpResponse, TransportError> {
    let body = json!({
        "id": "chatcmpl-check", "object": "chat.completion", "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}
    });
    Ok(response(200, &body.to_string()))
}

#[test]
fn checking_a_connection_asks_the_model_once_for_its_json_and_names_what_failed() {
    let transport = Scripted::new(vec![openai_answer(r#"{"ok": true}"#)]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let c = futures::executor::block_on(client.check_connection()).unwrap();
    assert_eq!((c.model.as_str(), c.usage.input_tokens), ("gpt-4.1", 40));
    let sent = body(&transport.requests.borrow()[0]);
    assert_eq!(sent["response_format"]["json_schema"]["name"], "connection_check");
    assert_eq!(sent["response_format"]["json_schema"]["strict"], true);

    // A server error is not retried and the fallback is not tried: the check is of this model.
    let transport = Scripted::new(vec![status(503), ok_reply()]);
    let client = LlmClient::new(with_fallback(Some("gpt-4.1-mini")), &transport);
    let err = futures::executor::block_on(client.check_connection()).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 503, .. }), "{err}");
    assert_eq!(transport.requests.borrow().len(), 1);
    assert!(transport.sleeps.borrow().is_empty());

    // An answer that is not the object asked for says what came back.
    let transport = Scripted::new(vec![openai_answer("Sure! Here you go.")]);
    let client = LlmClient::new(with_fallback(None), &transport);
    let err = futures::executor::block_on(client.check_connection()).unwrap_err();
    assert!(err.to_string().contains("not with the JSON object asked for: Sure! Here you go."), "{err}");
    let err = futures::executor::block_on(
        LlmClient::new(with_fallback(None), &Scripted::new(vec![Ok(response(401, &fixture("openai/error_401.json")))]))
            .check_connection(),
    )
    .unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 401, .. }), "{err}");
}

/// Each provider's count of input read from its prompt cache, in the place its API reference
/// puts it, on the success answers: OpenAI's `usage.prompt_tokens_details.cached_tokens` (part
/// of `prompt_tokens`), Anthropic's `cache_read_input_tokens` and `cache_creation_input_tokens`
/// (counted apart from `input_tokens`), Gemini's `usageMetadata.cachedContentTokenCount` (part
/// of `promptTokenCount`).
#[test]
fn cached_input_is_read_from_each_providers_usage() {
    let with = |path: &str, pointer: &str, patch: Value| {
        let mut body: Value = tabwright::json::from_text(&fixture(path)).unwrap();
        let usage = body.pointer_mut(pointer).unwrap().as_object_mut().unwrap();
        usage.extend(patch.as_object().unwrap().clone());
        body.to_string()
    };
    // OpenAI's example says `cached_tokens: 0`; the same answer with 16 of its 19 from the cache.
    let openai = with(
        "openai/success_usage_details.json",
        "/usage",
        json!({"prompt_tokens_details": {"cached_tokens": 16, "audio_tokens": 0}}),
    );
    let c = parse_response(Provider::OpenAi, "u", &response(200, &openai)).unwrap();
    assert_eq!(c.usage, Usage::new(19, 10).with_cached(16));
    // Anthropic's recorded answer read 0 from its cache and wrote 0; with 640 read and 48
    // written, the three parts add up.
    let anthropic = with(
        "anthropic/success_text_and_tool.json",
        "/usage",
        json!({"input_tokens": 13, "cache_read_input_tokens": 640, "cache_creation_input_tokens": 48}),
    );
    let c = parse_response(Provider::Anthropic, "u", &response(200, &anthropic)).unwrap();
    assert_eq!(c.usage, Usage::new(13 + 640 + 48, 93).with_cached(640));
    // Gemini's recorded answer has its own count (3 of 5): see gemini_fixtures_parse.
    // A compatible server's null details are no cache.
    let null = with("openai/success.json", "/usage", json!({"prompt_tokens_details": null}));
    assert_eq!(
        parse_response(Provider::OpenAiCompatible, "u", &response(200, &null)).unwrap().usage.cached_input_tokens,
        0
    );
}
