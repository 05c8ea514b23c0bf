//! `FetchTransport`: the LLM transport over the service worker's fetch, through gloo-net.
//!
//! Each request is aborted after a timeout, so a provider that never answers cannot hang a task.

use crate::llm::{HttpRequest, HttpResponse, LlmTransport, TransportError};
use gloo_net::http::Request;

pub struct FetchTransport {
    pub timeout_ms: u32,
}

impl LlmTransport for FetchTransport {
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let controller =
            web_sys::AbortController::new().map_err(|e| TransportError(super::chrome::js_error_text(&e)))?;
        let signal = controller.signal();
        let timeout_ms = self.timeout_ms;
        let _timer = gloo_timers::callback::Timeout::new(timeout_ms, move || controller.abort());
        let mut builder = Request::post(&request.url).abort_signal(Some(&signal));
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let describe = |e: gloo_net::Error| {
            if signal.aborted() {
                TransportError(format!("no answer within {} s", timeout_ms / 1000))
            } else {
                TransportError(e.to_string())
            }
        };
        let response = builder.body(request.body.clone()).map_err(describe)?.send().await.map_err(describe)?;
        let status = response.status();
        let body = response.text().await.map_err(describe)?;
        Ok(HttpResponse { status, body })
    }
}
