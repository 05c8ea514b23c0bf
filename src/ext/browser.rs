//! `ChromeBrowser`: the `Browser` port over chrome.tabs, chrome.scripting and the content script.
//!
//! Clicks and typing are done by the content script in the page (it knows the elements by
//! index); navigation and load waiting by chrome.tabs. After an action the tab is watched
//! briefly: if a navigation starts, the action waits for it to finish (capped), so the next
//! observation sees the new page rather than a half-loaded one.

use super::chrome::{self, from_js, Tab};
use crate::actions::url::{is_blank_page, is_restricted};
use crate::browser::{ActionEffect, Browser, BrowserError, PageState};
use crate::dom::Snapshot;
use crate::protocol::{ContentReply, ContentRequest};
use gloo_timers::future::TimeoutFuture;

/// The content scripts, in the order the manifest lists them.
pub const CONTENT_SCRIPTS: &[&str] = &["content/indexer.js", "content/executor.js", "content/main.js"];

/// How long a page may take to load before the step goes on without it.
const LOAD_TIMEOUT_MS: f64 = 20_000.0;
/// How long after a click or keystroke a navigation may take to start.
const NAVIGATION_GRACE_MS: f64 = 400.0;
const POLL_MS: u32 = 50;
/// How long the content script may take to answer one request.
const CONTENT_TIMEOUT_MS: u32 = 15_000;

pub struct ChromeBrowser {
    tab_id: i32,
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

impl ChromeBrowser {
    pub fn new(tab_id: i32) -> Self {
        ChromeBrowser { tab_id }
    }

    async fn tab(&self) -> Result<Tab, BrowserError> {
        chrome::get_tab(self.tab_id).await.map_err(|_| BrowserError::TabClosed)
    }

    /// Waits until the tab has finished loading, up to `LOAD_TIMEOUT_MS`. A page that never
    /// finishes (a stuck resource) is observed as it is.
    async fn wait_for_load(&self) -> Result<Tab, BrowserError> {
        let deadline = now_ms() + LOAD_TIMEOUT_MS;
        loop {
            let tab = self.tab().await?;
            if tab.status.as_deref() == Some("complete") || now_ms() > deadline {
                return Ok(tab);
            }
            TimeoutFuture::new(POLL_MS).await;
        }
    }

    /// After an action: if the tab starts loading within the grace period, wait for the load,
    /// and report the new URL when it changed.
    async fn settle_after_action(&self, url_before: &str) -> Result<ActionEffect, BrowserError> {
        let grace_end = now_ms() + NAVIGATION_GRACE_MS;
        let mut tab = self.tab().await?;
        while tab.status.as_deref() == Some("complete")
            && tab.url.as_deref() == Some(url_before)
            && now_ms() < grace_end
        {
            TimeoutFuture::new(POLL_MS).await;
            tab = self.tab().await?;
        }
        if tab.status.as_deref() != Some("complete") {
            tab = self.wait_for_load().await?;
        }
        let url = tab.url.unwrap_or_default();
        Ok(ActionEffect { navigated_to: (url != url_before).then_some(url) })
    }

    /// Sends a request to the content script, injecting it first if the tab has none. A page
    /// that does not answer in time (blocked by a dialog or a busy script) is an error.
    async fn ask_content(&self, request: &ContentRequest) -> Result<ContentReply, BrowserError> {
        super::timeout::within(CONTENT_TIMEOUT_MS, self.ask_content_unbounded(request)).await.unwrap_or_else(|| {
            Err(BrowserError::Timeout {
                what: "Waiting for the page to answer (it may be showing a dialog or running a long script)".into(),
                seconds: CONTENT_TIMEOUT_MS / 1000,
            })
        })
    }

    async fn ask_content_unbounded(&self, request: &ContentRequest) -> Result<ContentReply, BrowserError> {
        let reply = match chrome::send_to_tab(self.tab_id, request).await {
            Ok(reply) => reply,
            Err(first) => {
                let tab = self.tab().await?;
                let url = tab.url.unwrap_or_default();
                if is_restricted(&url) {
                    return Err(BrowserError::RestrictedPage { url });
                }
                chrome::inject_content_scripts(self.tab_id, CONTENT_SCRIPTS).await.map_err(|e| {
                    if e.contains("Cannot access") || e.contains("cannot be scripted") {
                        BrowserError::RestrictedPage { url: url.clone() }
                    } else {
                        BrowserError::ContentScript {
                            reason: format!("{first}; injecting the content script failed: {e}"),
                        }
                    }
                })?;
                chrome::send_to_tab(self.tab_id, request)
                    .await
                    .map_err(|reason| BrowserError::ContentScript { reason })?
            }
        };
        if reply.is_undefined() || reply.is_null() {
            return Err(BrowserError::ContentScript { reason: "the content script sent no answer".into() });
        }
        from_js::<ContentReply>(reply)
            .map_err(|e| BrowserError::ContentScript { reason: format!("unreadable answer: {e}") })
    }

    /// Runs an element action and maps the content script's failure codes to typed errors.
    async fn element_action(&self, request: ContentRequest, index: u32) -> Result<ActionEffect, BrowserError> {
        let url_before = self.tab().await?.url.unwrap_or_default();
        let reply = self.ask_content(&request).await?;
        if !reply.ok {
            let reason = reply.message.unwrap_or_else(|| "the page refused the action".into());
            return Err(match reply.code.as_deref() {
                Some("element_gone") => BrowserError::ElementGone { index },
                _ => BrowserError::ElementUnsuitable { index, reason },
            });
        }
        self.settle_after_action(&url_before).await
    }
}

impl Browser for ChromeBrowser {
    async fn observe(&mut self) -> Result<PageState, BrowserError> {
        let tab = self.wait_for_load().await?;
        let url = tab.url.unwrap_or_default();
        if is_blank_page(&url) {
            // A new tab: nothing to see yet, but the task can navigate from here.
            let snapshot = Snapshot {
                version: crate::dom::SNAPSHOT_VERSION,
                url,
                title: tab.title.unwrap_or_default(),
                scroll: Default::default(),
                elements: Vec::new(),
            };
            return Ok(PageState::new(self.tab_id, snapshot));
        }
        if is_restricted(&url) {
            return Err(BrowserError::RestrictedPage { url });
        }
        let reply = self.ask_content(&ContentRequest::Snapshot { v: crate::dom::SNAPSHOT_VERSION }).await?;
        let raw = match (reply.ok, reply.snapshot) {
            (true, Some(raw)) => raw,
            _ => {
                return Err(BrowserError::ContentScript {
                    reason: reply.message.unwrap_or_else(|| "the page could not be indexed".into()),
                })
            }
        };
        let snapshot = Snapshot::from_json(raw).map_err(|e| BrowserError::ContentScript { reason: e.to_string() })?;
        Ok(PageState::new(self.tab_id, snapshot))
    }

    async fn navigate(&mut self, url: &str) -> Result<ActionEffect, BrowserError> {
        let before = self.tab().await?.url.unwrap_or_default();
        chrome::update_tab(self.tab_id, &serde_json::json!({"url": url}))
            .await
            .map_err(|reason| BrowserError::Navigation { url: url.into(), reason })?;
        // Wait for the tab to start loading the new URL, then for the load to finish.
        let deadline = now_ms() + LOAD_TIMEOUT_MS;
        loop {
            let tab = self.tab().await?;
            let loading_new = tab.status.as_deref() != Some("complete") || tab.url.as_deref() != Some(before.as_str());
            if loading_new || now_ms() > deadline {
                break;
            }
            TimeoutFuture::new(POLL_MS).await;
        }
        let tab = self.wait_for_load().await?;
        Ok(ActionEffect { navigated_to: tab.url })
    }

    async fn click(&mut self, index: u32) -> Result<ActionEffect, BrowserError> {
        self.element_action(ContentRequest::Click { v: 1, index }, index).await
    }

    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError> {
        self.element_action(ContentRequest::Input { v: 1, index, text: text.into(), clear }, index).await
    }
}
