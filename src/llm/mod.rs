//! Talking to language models.
//!
//! Two layers, kept apart so each can be tested alone:
//! - the **transport port** [`LlmTransport`]: send one HTTP POST, get status and body back. The
//!   extension implements it with gloo-net (fetch); tests script it.
//! - the **wire formats** ([`openai`]): pure functions that build the HTTP request for a
//!   [`ChatRequest`] and parse the provider's answer into a [`Completion`] or a typed [`LlmError`].
//!
//! [`LlmClient`] joins the two for the agent loop.

pub mod openai;
pub mod schema;

use crate::settings::LlmSettings;

/// An HTTP request ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpResponse {
    pub status: u16,
    pub body: String,
}

/// The request could not be sent or no response arrived.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct TransportError(pub String);

/// Sends HTTP requests to an LLM provider.
#[allow(async_fn_in_trait)]
pub trait LlmTransport {
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError>;
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

/// The model's answer: the JSON text it wrote, and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub content: String,
    pub usage: Usage,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("Could not reach the LLM at {url}: {reason}. Check the base URL in Tabwright's options and that the server is running.")]
    Unreachable { url: String, reason: String },
    #[error("The LLM at {url} answered HTTP {status}: {}{hint}", message.trim_end_matches('.'), hint = status_hint(*status))]
    Http { url: String, status: u16, message: String },
    #[error("The model refused: {0}")]
    Refusal(String),
    #[error("The model's answer was cut off at the output token limit before it was complete.")]
    Truncated,
    #[error("The LLM's answer could not be read: {0}")]
    Malformed(String),
}

impl LlmError {
    /// Errors that retrying the same request cannot fix end the task at once.
    pub fn ends_task(&self) -> bool {
        matches!(self, LlmError::Unreachable { .. } | LlmError::Http { .. })
    }
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => ". Check the API key in Tabwright's options.",
        404 => ". Check the base URL and the model name in Tabwright's options.",
        429 => ". The provider is rate-limiting; wait a moment and try again.",
        500..=599 => ". The provider had a server error; try again later.",
        _ => "",
    }
}

/// A configured model behind a transport.
pub struct LlmClient<T> {
    settings: LlmSettings,
    transport: T,
}

impl<T: LlmTransport> LlmClient<T> {
    pub fn new(settings: LlmSettings, transport: T) -> Self {
        LlmClient { settings, transport }
    }

    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The model `extract` reads pages with.
    pub fn extraction_model(&self) -> &str {
        self.settings.extraction_model.as_deref().unwrap_or(&self.settings.model)
    }

    pub async fn complete(&self, request: &ChatRequest) -> Result<Completion, LlmError> {
        self.send(&self.settings, request).await
    }

    /// Like [`complete`](Self::complete), with the extraction model.
    pub async fn complete_extraction(&self, request: &ChatRequest) -> Result<Completion, LlmError> {
        match &self.settings.extraction_model {
            Some(model) if *model != self.settings.model => {
                let settings = LlmSettings { model: model.clone(), ..self.settings.clone() };
                self.send(&settings, request).await
            }
            _ => self.send(&self.settings, request).await,
        }
    }

    async fn send(&self, settings: &LlmSettings, request: &ChatRequest) -> Result<Completion, LlmError> {
        let http = openai::build_request(settings, request);
        let response = self
            .transport
            .post(&http)
            .await
            .map_err(|e| LlmError::Unreachable { url: http.url.clone(), reason: e.0 })?;
        openai::parse_response(&http.url, &response)
    }
}
