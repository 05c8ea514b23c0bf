//! `FetchTransport`: the LLM transport over the service worker's fetch, through gloo-net.
//!
//! Each request is aborted after a timeout (the `llm.timeout_s` setting), so a provider that
//! never answers cannot hang a task, and when the request's future is dropped (the user pressed
//! Stop), so the provider stops generating (and billing) at once. Response headers are handed
//! back so the client can honour `retry-after`; the waits between retries are timers, and the
//! jitter that spreads them out comes from `Math.random`.

use crate::llm::{HttpRequest, HttpResponse, LlmTransport, TransportError};
use gloo_net::http::Request;
use web_sys::{AbortController, AbortSignal};

pub struct FetchTransport {
    /// How long one request may take, in milliseconds.
    pub timeout_ms: u32,
}

/// Aborts the fetch it guards when dropped, unless disarmed first.
struct AbortOnDrop {
    controller: AbortController,
    armed: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.controller.abort();
        }
    }
}

impl FetchTransport {
    /// Sends `request` as a GET (its body is not sent): the providers' model lists.
    pub async fn get(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.send(request, false).await
    }

    async fn send(&self, request: &HttpRequest, post: bool) -> Result<HttpResponse, TransportError> {
        let controller = AbortController::new().map_err(|e| TransportError(super::chrome::js_error_text(&e)))?;
        let signal: AbortSignal = controller.signal();
        let mut guard = AbortOnDrop { controller, armed: true };
        let timer = {
            let controller = guard.controller.clone();
            gloo_timers::callback::Timeout::new(self.timeout_ms, move || controller.abort())
        };
        let timeout_s = self.timeout_ms / 1000;
        let describe = |e: gloo_net::Error| {
            if signal.aborted() {
                TransportError(format!("no answer within {timeout_s} s"))
            } else {
                TransportError(e.to_string())
            }
        };
        let mut builder =
            if post { Request::post(&request.url) } else { Request::get(&request.url) }.abort_signal(Some(&signal));
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let response = if post {
            builder.body(request.body.clone()).map_err(describe)?.send().await.map_err(describe)?
        } else {
            builder.send().await.map_err(describe)?
        };
        let status = response.status();
        // Header names come from fetch in lower case already; lowered again to be sure.
        let headers = response.headers().entries().map(|(name, value)| (name.to_ascii_lowercase(), value)).collect();
        let body = response.text().await.map_err(describe)?;
        // Finished: neither the timer nor the guard may abort anything now.
        timer.cancel();
        guard.armed = false;
        Ok(HttpResponse { status, headers, body })
    }
}

impl LlmTransport for FetchTransport {
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.send(request, true).await
    }

    async fn sleep(&self, ms: u32) {
        gloo_timers::future::TimeoutFuture::new(ms).await;
    }

    fn random(&self) -> f64 {
        js_sys::Math::random()
    }
}
