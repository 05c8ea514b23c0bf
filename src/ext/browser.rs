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
use crate::protocol::{ContentReply, ContentRequest, PROTOCOL_VERSION};
use gloo_timers::future::TimeoutFuture;

/// How long a page may take to load before the step goes on without it.
const LOAD_TIMEOUT_MS: f64 = 20_000.0;
/// How long after a click or keystroke a navigation may take to start.
const NAVIGATION_GRACE_MS: f64 = 400.0;
/// How long after `navigate` the page may take to start loading.
const NAVIGATION_START_MS: f64 = 5_000.0;
const POLL_MS: u32 = 50;
/// How long the content script may take to answer one request.
const CONTENT_TIMEOUT_MS: u32 = 15_000;

pub struct ChromeBrowser {
    tab_id: i32,
}

fn empty_snapshot(url: String, title: String) -> Snapshot {
    Snapshot { version: crate::dom::SNAPSHOT_VERSION, url, title, scroll: Default::default(), elements: Vec::new() }
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

    /// Watches the tab after something that may navigate. Waits up to `start_within_ms` for a
    /// navigation to start (the URL changes, or a finished page starts loading again); if one
    /// starts, waits for it to finish. Returns the tab afterwards and whether one started. A
    /// page that was still loading before (it never finishes) is not waited on again.
    async fn follow_navigation(&self, before: &Tab, start_within_ms: f64) -> Result<(Tab, bool), BrowserError> {
        let was_complete = before.status.as_deref() == Some("complete");
        let deadline = now_ms() + start_within_ms;
        let mut tab = self.tab().await?;
        loop {
            let url_changed =
                tab.url != before.url || tab.pending_url.as_ref().is_some_and(|p| Some(p) != before.url.as_ref());
            let reloading = was_complete && tab.status.as_deref() != Some("complete");
            if url_changed || reloading {
                if tab.status.as_deref() != Some("complete") {
                    tab = self.wait_for_load().await?;
                }
                return Ok((tab, true));
            }
            if now_ms() >= deadline {
                return Ok((tab, false));
            }
            TimeoutFuture::new(POLL_MS).await;
            tab = self.tab().await?;
        }
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
                // An http(s) page Chrome will not script is an error page (the site failed to
                // load): the LLM can navigate away, so it is not a restricted page.
                let files = chrome::content_script_files().map_err(|reason| BrowserError::ContentScript { reason })?;
                chrome::inject_content_scripts(self.tab_id, &files).await.map_err(|e| BrowserError::ContentScript {
                    reason: format!("{first}; the content script could not be injected either: {e}"),
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

    /// Asks the content script for a snapshot and checks it.
    async fn read_page(&self) -> Result<Snapshot, BrowserError> {
        let reply = self.ask_content(&ContentRequest::Snapshot { v: PROTOCOL_VERSION }).await?;
        let raw = match (reply.ok, reply.snapshot) {
            (true, Some(raw)) => raw,
            _ => {
                return Err(BrowserError::ContentScript {
                    reason: reply.message.unwrap_or_else(|| "the page could not be indexed".into()),
                })
            }
        };
        Snapshot::from_json(raw).map_err(|e| BrowserError::ContentScript { reason: e.to_string() })
    }

    /// Runs an element action and maps the content script's failure codes to typed errors.
    async fn element_action(&self, request: ContentRequest, index: u32) -> Result<ActionEffect, BrowserError> {
        let before = self.tab().await?;
        let reply = self.ask_content(&request).await?;
        if !reply.ok {
            let reason = reply.message.unwrap_or_else(|| "the page refused the action".into());
            return Err(match reply.code.as_deref() {
                Some("element_gone") => BrowserError::ElementGone { index },
                _ => BrowserError::ElementUnsuitable { index, reason },
            });
        }
        let (after, _) = self.follow_navigation(&before, NAVIGATION_GRACE_MS).await?;
        let navigated_to = after.url.filter(|url| Some(url) != before.url.as_ref());
        Ok(ActionEffect { navigated_to })
    }
}

impl Browser for ChromeBrowser {
    async fn observe(&mut self) -> Result<PageState, BrowserError> {
        let tab = self.wait_for_load().await?;
        let url = tab.url.clone().unwrap_or_default();
        let title = tab.title.clone().unwrap_or_default();
        if is_blank_page(&url) {
            // A new tab: nothing to see yet, but the task can navigate from here.
            return Ok(PageState::new(self.tab_id, empty_snapshot(url, title)));
        }
        if is_restricted(&url) {
            return Err(BrowserError::RestrictedPage { url });
        }
        match self.read_page().await {
            Ok(snapshot) => Ok(PageState::new(self.tab_id, snapshot)),
            // Unreadable (an error page, a page too busy to answer): the LLM still sees where the
            // tab is and why the page is empty, so it can go elsewhere.
            Err(e @ (BrowserError::ContentScript { .. } | BrowserError::Timeout { .. })) => {
                let why = if e.to_string().contains("showing error page") {
                    "The page failed to load: Chrome is showing its error page for this URL.".to_string()
                } else {
                    e.to_string()
                };
                Ok(PageState { tab_id: self.tab_id, snapshot: empty_snapshot(url, title), notice: Some(why) })
            }
            Err(e) => Err(e),
        }
    }

    async fn navigate(&mut self, url: &str) -> Result<ActionEffect, BrowserError> {
        let before = self.tab().await?;
        chrome::update_tab(self.tab_id, &serde_json::json!({"url": url}))
            .await
            .map_err(|reason| BrowserError::Navigation { url: url.into(), reason })?;
        let (after, started) = self.follow_navigation(&before, NAVIGATION_START_MS).await?;
        if !started {
            return Err(BrowserError::Navigation {
                url: url.into(),
                reason: "the page did not start loading (it may be a download, or a URL the browser refused)".into(),
            });
        }
        Ok(ActionEffect { navigated_to: after.url })
    }

    async fn click(&mut self, index: u32) -> Result<ActionEffect, BrowserError> {
        self.element_action(ContentRequest::Click { v: PROTOCOL_VERSION, index }, index).await
    }

    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError> {
        self.element_action(ContentRequest::Input { v: PROTOCOL_VERSION, index, text: text.into(), clear }, index).await
    }
}
