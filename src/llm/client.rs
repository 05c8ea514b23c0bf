//! [`LlmClient`]: the configured model behind a transport, as the agent loop and `extract` use it.
//!
//! One call to [`LlmClient::complete`] may send several requests:
//! - a rate limit (429), a server error (5xx) or an unreachable server is retried up to
//!   [`MAX_RETRIES`] times, after the wait the provider asked for or an exponential backoff with
//!   jitter ([`super::retry`]); the waits go through the transport, so tests do not wait;
//! - when the model still cannot answer (retries exhausted on 429/5xx), or the provider refuses it
//!   for a reason another model may not share (a 404 for an unknown model, a 422, …), the
//!   fallback model, if one is set, is tried once. Errors a second model would meet just the same
//!   do not fall back: a bad request (400, which is also how providers refuse a screenshot the
//!   model cannot read), a bad or unauthorised key (401, 403), an unreachable server, and answers
//!   that were refused, cut off or unreadable (the agent's next step deals with those).
//!
//! Once the fallback has answered for a model, the next [`STICKY_FALLBACK_CALLS`] calls for that
//! model go to the fallback first: a model that is down or rate-limited stays so for a while,
//! and each step should not wait through its retries again. Then the model is tried again.
//!
//! What a call cost travels with its outcome: a [`Completion`]'s usage, or the bill of an answer
//! the provider charged for but that could not be used ([`LlmError::Billed`], with the model
//! that was billed). Only failures that carry no answer, and so no bill, are retried or left
//! for the fallback; a failed fallback keeps both errors, and with them both bills.

use super::pricing::PriceTable;
use super::retry::{backoff_ms, is_retryable_status, retry_after_ms, MAX_RETRIES};
use super::settings::LlmSettings;
use super::{build_request, error_message, parse_response, ChatRequest, Completion, LlmError, LlmTransport, Usage};
use std::borrow::Cow;
use std::cell::RefCell;

/// Calls sent to the fallback first after it answered for a model that could not.
pub const STICKY_FALLBACK_CALLS: u32 = 10;

/// A configured model (and its fallback) behind a transport.
pub struct LlmClient<T> {
    settings: LlmSettings,
    transport: T,
    prices: PriceTable,
    /// The model the fallback stands in for, and for how many more calls.
    standing_in: RefCell<Option<(String, u32)>>,
}

/// How one request went.
enum Attempt {
    /// An answer that asking again would not change.
    Final(Result<Completion, LlmError>),
    /// A failure that may pass: retry after the wait the provider asked for, if it did.
    Retryable { error: LlmError, retry_after_ms: Option<u32> },
}

impl<T: LlmTransport> LlmClient<T> {
    pub fn new(settings: LlmSettings, transport: T) -> Self {
        let prices = PriceTable::new(settings.prices.clone());
        LlmClient { settings, transport, prices, standing_in: RefCell::new(None) }
    }

    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The model `extract` reads pages with.
    pub fn extraction_model(&self) -> &str {
        self.settings.extraction_model.as_deref().unwrap_or(&self.settings.model)
    }

    /// The model tried when the main (or extraction) model cannot answer.
    pub fn fallback_model(&self) -> Option<&str> {
        self.settings.fallback_model.as_deref()
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// What `usage` of `model` cost in USD, by the user's prices and then the built-in ones;
    /// `None` for a model neither table prices.
    pub fn cost_usd(&self, model: &str, usage: Usage) -> Option<f64> {
        self.prices.cost_usd(model, usage)
    }

    /// Asks the agent's model, retrying and falling back as the module documentation says.
    pub async fn complete(&self, request: &ChatRequest) -> Result<Completion, LlmError> {
        self.send(&self.settings.model, request).await
    }

    /// Like [`complete`](Self::complete), with the extraction model.
    pub async fn complete_extraction(&self, request: &ChatRequest) -> Result<Completion, LlmError> {
        self.send(self.extraction_model(), request).await
    }

    /// Asks the agent's model (only it: no retries, no fallback) for a one-field JSON answer,
    /// the way a task would ask, so the user learns at once whether the URL, key, model and
    /// output format work together. The answer must be the JSON object asked for.
    pub async fn check_connection(&self) -> Result<Completion, LlmError> {
        let request = connection_check_request();
        let completion = match self.attempt(&self.settings.model, &request).await {
            Attempt::Final(result) => result?,
            Attempt::Retryable { error, .. } => return Err(error),
        };
        match crate::json::from_text::<serde_json::Value>(&completion.content) {
            Ok(serde_json::Value::Object(answer)) if answer.get("ok").is_some_and(serde_json::Value::is_boolean) => {
                Ok(completion)
            }
            _ => {
                let said: String = completion.content.chars().take(200).collect();
                Err(LlmError::Billed {
                    error: Box::new(LlmError::Malformed(format!(
                        "the model answered, but not with the JSON object asked for: {said}"
                    ))),
                    usage: completion.usage,
                    model: completion.model,
                })
            }
        }
    }

    async fn send(&self, model: &str, request: &ChatRequest) -> Result<Completion, LlmError> {
        if let Some(fallback) = self.stand_in_for(model) {
            match self.with_retries(&fallback, request).await {
                Ok(completion) => return Ok(completion),
                // The fallback is failing now: back to the model itself.
                Err(e) if falls_back(&e) || matches!(e, LlmError::Unreachable { .. }) => {
                    self.standing_in.replace(None);
                }
                Err(e) => return Err(e),
            }
        }
        let error = match self.with_retries(model, request).await {
            Ok(completion) => return Ok(completion),
            Err(error) => error,
        };
        let fallback = match self.settings.fallback_model.as_deref() {
            Some(fallback) if fallback != model && falls_back(&error) => fallback,
            _ => return Err(error),
        };
        match self.attempt(fallback, request).await {
            Attempt::Final(Ok(completion)) => {
                self.standing_in.replace(Some((model.to_string(), STICKY_FALLBACK_CALLS)));
                Ok(completion)
            }
            Attempt::Final(Err(fallback_error)) | Attempt::Retryable { error: fallback_error, .. } => {
                Err(LlmError::FallbackFailed {
                    model: model.to_string(),
                    error: Box::new(error),
                    fallback: fallback.to_string(),
                    fallback_error: Box::new(fallback_error),
                })
            }
        }
    }

    /// The fallback, when it stands in for `model` for this call (counting the call).
    fn stand_in_for(&self, model: &str) -> Option<String> {
        let fallback = self.settings.fallback_model.clone().filter(|f| f != model)?;
        let mut standing = self.standing_in.borrow_mut();
        match standing.as_mut() {
            Some((for_model, left)) if for_model == model && *left > 0 => {
                *left -= 1;
                Some(fallback)
            }
            _ => None,
        }
    }

    async fn with_retries(&self, model: &str, request: &ChatRequest) -> Result<Completion, LlmError> {
        let mut retries = 0;
        loop {
            match self.attempt(model, request).await {
                Attempt::Final(result) => return result,
                Attempt::Retryable { error, .. } if retries >= MAX_RETRIES => return Err(error),
                Attempt::Retryable { retry_after_ms, .. } => {
                    let ms = retry_after_ms.unwrap_or_else(|| backoff_ms(retries, self.transport.random()));
                    self.transport.sleep(ms).await;
                    retries += 1;
                }
            }
        }
    }

    /// Sends `request` to `model` once.
    async fn attempt(&self, model: &str, request: &ChatRequest) -> Attempt {
        let settings = if model == self.settings.model {
            Cow::Borrowed(&self.settings)
        } else {
            Cow::Owned(LlmSettings { model: model.to_string(), ..self.settings.clone() })
        };
        let http = build_request(&settings, request);
        match self.transport.post(&http).await {
            Err(e) => {
                Attempt::Retryable { error: LlmError::Unreachable { url: http.url, reason: e.0 }, retry_after_ms: None }
            }
            Ok(response) if is_retryable_status(response.status) => Attempt::Retryable {
                retry_after_ms: retry_after_ms(&response),
                error: LlmError::Http {
                    url: http.url,
                    status: response.status,
                    message: error_message(&response.body),
                },
            },
            Ok(response) => Attempt::Final(
                parse_response(settings.provider, &http.url, &response)
                    .map(|completion| Completion { model: model.to_string(), ..completion })
                    .map_err(|error| error.billed_by(model)),
            ),
        }
    }
}

/// The smallest request that still goes the way a task's does: a system prompt, a user
/// message and a strict JSON schema.
pub fn connection_check_request() -> ChatRequest {
    ChatRequest {
        system: "You check that a connection works. Answer with the JSON object asked for, nothing else.".into(),
        user: "Answer {\"ok\": true}.".into(),
        schema_name: "connection_check".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": false
        }),
        image: None,
    }
}

/// Whether a second model might answer where the first failed (see the module documentation).
fn falls_back(error: &LlmError) -> bool {
    match error {
        LlmError::Http { status, .. } => !matches!(status, 400 | 401 | 403),
        _ => false,
    }
}
