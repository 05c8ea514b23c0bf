//! Talking to language models.
//!
//! Three layers, kept apart so each can be tested alone:
//! - the **transport port** [`LlmTransport`]: send one HTTP POST, get status, headers and body
//!   back; sleep between retries; draw the random number that spreads retries out. The extension
//!   implements it with fetch and timers; tests script it.
//! - the **wire formats**, one module per provider family ([`openai`] for OpenAI, OpenAI-compatible
//!   servers and Azure OpenAI; [`anthropic`]; [`gemini`]; [`ollama`]): pure functions that build
//!   the HTTP request for a [`ChatRequest`] and parse the answer into a [`Completion`] or a typed
//!   [`LlmError`]. Each asks for structured output in its provider's own way, with the agent's
//!   schema rewritten by [`schema`].
//! - [`LlmClient`], which joins them for the agent loop: it picks the wire format the settings
//!   name, retries what may pass ([`retry`]), and falls back to a second model when the first
//!   cannot answer.
//!
//! The parsers hand the model's text on as it is, even when it is not valid JSON: the agent's
//! validator reads it (and tells the model what was wrong on the next step). They only fail when
//! the provider's answer carries no usable text at all, or says the answer was refused or cut off.
//! Such an answer is billed all the same, so its error carries the usage the provider reported
//! ([`LlmError::Billed`]), and the agent counts it in the task's tokens and cost as it counts an
//! answer it used. [`pricing`] turns token counts into dollars.

pub mod anthropic;
mod client;
pub mod gemini;
pub mod models;
pub mod ollama;
pub mod openai;
pub mod pricing;
pub mod retry;
pub mod schema;
pub mod settings;

pub use client::{connection_check_request, LlmClient, STICKY_FALLBACK_CALLS};

use settings::{LlmSettings, Provider};

/// An HTTP request ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct HttpResponse {
    pub status: u16,
    /// Response headers with lower-case names (retries read `retry-after` here).
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    /// The first header named `name` (compared without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// The request could not be sent or no response arrived.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct TransportError(pub String);

/// Sends HTTP requests to an LLM provider, and waits between retries.
#[allow(async_fn_in_trait)]
pub trait LlmTransport {
    /// Sends one POST. Any HTTP answer is `Ok`, whatever its status; `Err` means no answer came
    /// (the server is unreachable, or it took longer than the transport allows).
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError>;

    /// Waits `ms` milliseconds before a retry. The default does not wait, for transports (tests)
    /// that have no time to lose.
    async fn sleep(&self, _ms: u32) {}

    /// A random number from 0 to 1 that spreads retries out. The default is the middle.
    fn random(&self) -> f64 {
        0.5
    }
}

/// What the agent asks of the model: a system prompt, one user message, and the JSON Schema the
/// answer must follow.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub system: String,
    pub user: String,
    pub schema_name: String,
    pub schema: serde_json::Value,
    /// A PNG screenshot (base64) to show the model with the user message.
    pub image: Option<String>,
}

/// The model's answer: the JSON text it wrote, what it cost, and which model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub content: String,
    pub usage: Usage,
    /// The configured model that answered: the main, extraction or fallback model. Empty from
    /// the providers' `parse_response`, which cannot know it; [`LlmClient`] fills it in.
    pub model: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Usage {
    /// Every input token of the request, those read from the provider's cache included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, those the provider read from its prompt cache, which cost less
    /// ([`pricing`]): OpenAI's `prompt_tokens_details.cached_tokens`, Anthropic's
    /// `cache_read_input_tokens`, Gemini's `cachedContentTokenCount`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage { input_tokens, output_tokens, cached_input_tokens: 0 }
    }

    /// With `cached` of the input tokens read from the provider's cache.
    pub fn with_cached(self, cached: u64) -> Self {
        Usage { cached_input_tokens: cached.min(self.input_tokens), ..self }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("Could not reach the LLM at {url}: {reason}. Check the base URL in Tabwright's settings and that the server is running.")]
    Unreachable { url: String, reason: String },
    #[error("The LLM at {url} answered HTTP {status}: {}{hint}", message.trim_end_matches('.'), hint = status_hint(*status, url, message).1)]
    Http { url: String, status: u16, message: String },
    #[error("The model refused: {0}")]
    Refusal(String),
    /// Anthropic's refusal (`stop_reason: refusal`) that came without an explanation: what the
    /// model had written when it stopped is no reason, only what came before the refusal.
    #[error("{}", refused_mid_answer(written, category.as_deref()))]
    RefusedMidAnswer { written: String, category: Option<String> },
    #[error("The model's answer was cut off at the output token limit before it was complete.")]
    Truncated,
    #[error("The request and the model's answer did not fit in the model's context window. Lower the most input tokens one request may carry in Tabwright's settings, or choose a model with a larger context.")]
    ContextWindowExceeded,
    #[error("The LLM's answer could not be read: {0}")]
    Malformed(String),
    #[error("With the model {model}: {error} With the fallback model {fallback}: {fallback_error}")]
    FallbackFailed { model: String, error: Box<LlmError>, fallback: String, fallback_error: Box<LlmError> },
    /// An answer the provider billed though it could not be used (cut off, refused, over the
    /// context window, without an answer): `error` says why, `usage` is what the provider
    /// reported it cost. It reads as `error`; the agent adds `usage` to the task's.
    #[error("{error}")]
    Billed {
        error: Box<LlmError>,
        usage: Usage,
        /// The configured model that was billed. Empty from the providers' `parse_response`,
        /// which cannot know it; [`LlmClient`] fills it in, as for a [`Completion`].
        model: String,
    },
}

/// What a refusal without an explanation says (see [`LlmError::RefusedMidAnswer`]).
fn refused_mid_answer(written: &str, category: Option<&str>) -> String {
    match category {
        Some(category) => format!(
            "The model refused to go on (no reason given; policy category: {category}). It had written: “{written}”"
        ),
        None => format!("The model refused to go on (no reason given). It had written: “{written}”"),
    }
}

impl LlmError {
    /// Errors that retrying the same request cannot fix end the task at once (the client has
    /// already retried what might pass).
    pub fn ends_task(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } | LlmError::Http { .. } => true,
            LlmError::FallbackFailed { fallback_error, .. } => fallback_error.ends_task(),
            LlmError::Billed { error, .. } => error.ends_task(),
            LlmError::Refusal(_)
            | LlmError::RefusedMidAnswer { .. }
            | LlmError::Truncated
            | LlmError::ContextWindowExceeded
            | LlmError::Malformed(_) => false,
        }
    }

    /// `error`, billed for `usage` when the provider's answer reported any tokens.
    pub fn billed(error: LlmError, usage: Option<Usage>) -> LlmError {
        match usage {
            Some(usage) if usage != Usage::default() => {
                LlmError::Billed { error: Box::new(error), usage, model: String::new() }
            }
            _ => error,
        }
    }

    /// The error itself, without what it cost: why the answer could not be used.
    pub fn unbilled(&self) -> &LlmError {
        match self {
            LlmError::Billed { error, .. } => error.unbilled(),
            other => other,
        }
    }

    /// Every answer this error stands for that the provider billed, as (model, usage): one for
    /// a billed answer, those of both models when the fallback failed too, none for an error
    /// that had no answer (an HTTP error, an unreachable server).
    pub fn bills(&self) -> Vec<(&str, Usage)> {
        match self {
            LlmError::Billed { usage, model, .. } => vec![(model.as_str(), *usage)],
            LlmError::FallbackFailed { error, fallback_error, .. } => {
                let mut bills = error.bills();
                bills.extend(fallback_error.bills());
                bills
            }
            _ => Vec::new(),
        }
    }

    /// This error with `model` named as the one billed, where it was billed and no model was
    /// named yet (the providers' parsers cannot know it).
    fn billed_by(self, model: &str) -> LlmError {
        match self {
            LlmError::Billed { error, usage, model: named } if named.is_empty() => {
                LlmError::Billed { error, usage, model: model.to_string() }
            }
            other => other,
        }
    }
}

/// What to do about an HTTP error: the name of its message (see `crate::message`) and the
/// English appended to the provider's own words.
fn status_hint(status: u16, url: &str, message: &str) -> (&'static str, &'static str) {
    const KEY: &str = ". Check the API key in Tabwright's settings.";
    match status {
        // A local Ollama refuses requests from an extension's origin until told to accept them.
        403 if url.ends_with("/api/chat") => ("llm_http_ollama_origins", ". Ollama refuses requests from extensions unless started with OLLAMA_ORIGINS=chrome-extension://* — restart it that way."),
        // Gemini reports a bad key as a bad request.
        400 if message.to_ascii_lowercase().contains("api key") => ("llm_http_key", KEY),
        401 | 403 => ("llm_http_key", KEY),
        404 => ("llm_http_not_found", ". Check the base URL and the model name in Tabwright's settings."),
        429 => ("llm_http_rate_limited", ". The provider is rate-limiting; wait a moment and try again."),
        500..=599 => ("llm_http_server", ". The provider had a server error; try again later."),
        _ => ("llm_http", ""),
    }
}

impl crate::message::Localize for LlmError {
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        use crate::message::LocaleText as L;
        Some(match self {
            // The base URL may be wrong: the settings are a way.
            LlmError::Unreachable { url, reason } => L::new("llm_unreachable", [url, reason]).fixed_in_settings(),
            LlmError::Http { url, status, message } => {
                let key = status_hint(*status, url, message).0;
                let text = L::new(key, [url.clone(), status.to_string(), message.trim_end_matches('.').to_string()]);
                // A key, a base URL or a model the provider refuses.
                if matches!(key, "llm_http_key" | "llm_http_not_found") {
                    text.fixed_in_settings()
                } else {
                    text
                }
            }
            LlmError::Refusal(why) => L::new("llm_refusal", [why]),
            LlmError::RefusedMidAnswer { written, category: None } => L::new("llm_refused_mid_answer", [written]),
            LlmError::RefusedMidAnswer { written, category: Some(category) } => {
                L::new("llm_refused_mid_answer_category", [category, written])
            }
            LlmError::Truncated => L::plain("llm_truncated"),
            LlmError::ContextWindowExceeded => L::plain("llm_context_window_exceeded"),
            LlmError::Malformed(why) => L::new("llm_malformed", [why]),
            // Two errors in one: each is already in English, with its own advice.
            LlmError::FallbackFailed { .. } => return None,
            // What it cost is counted, not said.
            LlmError::Billed { error, .. } => return error.locale_text(),
        })
    }
}

/// Builds the HTTP request for `request` in the wire format of `settings.provider`.
pub fn build_request(settings: &LlmSettings, request: &ChatRequest) -> HttpRequest {
    match settings.provider {
        Provider::OpenAi | Provider::OpenAiCompatible | Provider::AzureOpenAi => {
            openai::build_request(settings, request)
        }
        Provider::Anthropic => anthropic::build_request(settings, request),
        Provider::Gemini => gemini::build_request(settings, request),
        Provider::Ollama => ollama::build_request(settings, request),
    }
}

/// Parses an answer from `url` in the wire format of `provider`.
pub fn parse_response(provider: Provider, url: &str, response: &HttpResponse) -> Result<Completion, LlmError> {
    match provider {
        Provider::OpenAi | Provider::OpenAiCompatible | Provider::AzureOpenAi => openai::parse_response(url, response),
        Provider::Anthropic => anthropic::parse_response(url, response),
        Provider::Gemini => gemini::parse_response(url, response),
        Provider::Ollama => ollama::parse_response(url, response),
    }
}

/// The provider's own headers, then the user's extra ones; an extra header replaces a provider
/// header of the same name, so a gateway can take over authorization.
fn with_extra_headers(mut headers: Vec<(String, String)>, settings: &LlmSettings) -> Vec<(String, String)> {
    for (name, value) in &settings.extra_headers {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    headers
}

/// `Err(Http)` for a status outside 2xx, with the message of the error body.
fn http_error(url: &str, response: &HttpResponse) -> Result<(), LlmError> {
    if (200..300).contains(&response.status) {
        return Ok(());
    }
    Err(LlmError::Http { url: url.to_string(), status: response.status, message: error_message(&response.body) })
}

/// The human-readable part of an error body: `{"error": {"message"}}` (OpenAI, Anthropic,
/// Gemini, which also give a status word such as `RESOURCE_EXHAUSTED`), a plain
/// `{"error": "..."}` (Ollama) or `{"message": "..."}`, or the start of whatever text came back.
fn error_message(body: &str) -> String {
    if let Ok(v) = crate::json::from_text::<serde_json::Value>(body) {
        let candidates = [v.pointer("/error/message"), v.get("error"), v.get("message"), v.get("detail")];
        if let Some(s) = candidates.into_iter().flatten().find_map(|m| m.as_str()) {
            return match v.pointer("/error/status").and_then(|s| s.as_str()) {
                Some(status) if !status.is_empty() => format!("{} ({status})", s.trim_end_matches('.')),
                _ => s.to_string(),
            };
        }
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return "(empty body)".to_string();
    }
    excerpt(trimmed, 300)
}

/// The first `max` characters of `text`, with an ellipsis when cut: a provider's words in an
/// error, a step's texts in a trimmed record, a memory line.
pub fn excerpt(text: &str, max: usize) -> String {
    // Cut where character `max` begins, when there is one.
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Parses a 2xx body, or says which format was expected.
fn parse_body<'a, T: serde::Deserialize<'a>>(body: &'a str, format: &str) -> Result<T, LlmError> {
    crate::json::from_text(body).map_err(|e| {
        LlmError::Malformed(format!(
            "not a {format} response ({e}); check that the provider in Tabwright's settings matches the server"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    /// Cut in characters, not bytes, with an ellipsis only when something was cut.
    #[test]
    fn an_excerpt_cuts_characters_and_says_so() {
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc…");
        assert_eq!(excerpt("", 0), "");
        assert_eq!(excerpt("搜索按钮", 2), "搜索…");
        assert_eq!(excerpt("搜索", 2), "搜索", "six bytes, two characters: whole");
        assert_eq!(excerpt("café!", 4), "café…");
    }
}
