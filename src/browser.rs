//! The `Browser` port: everything the agent loop may ask of a browser.
//!
//! The core drives a browser only through this trait. In the extension, `ext::ChromeBrowser`
//! implements it with chrome.tabs, chrome.scripting and content-script messages; in native tests a
//! scripted fake does. Errors are typed so the loop can tell a problem the LLM can route around
//! (an element that is gone) from one that ends the task (a page the extension may not touch).

use crate::dom::Snapshot;

/// The state of the task's tab as observed at the start of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct PageState {
    pub tab_id: i32,
    pub snapshot: Snapshot,
    /// Set when the page could not be read: what went wrong, shown to the LLM with the (empty)
    /// element list so it can still navigate away or finish.
    pub notice: Option<String>,
}

impl PageState {
    pub fn new(tab_id: i32, snapshot: Snapshot) -> Self {
        PageState { tab_id, snapshot, notice: None }
    }

    /// A page that could not be read, at the last URL known.
    pub fn unreadable(tab_id: i32, url: &str, why: String) -> Self {
        PageState { tab_id, snapshot: Snapshot::with_elements(url, "", Vec::new()), notice: Some(why) }
    }

    pub fn url(&self) -> &str {
        &self.snapshot.url
    }
}

/// What a page-changing action led to, so the result text can tell the LLM.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ActionEffect {
    /// Set when the tab's URL differs after the action.
    pub navigated_to: Option<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BrowserError {
    #[error("Tabwright cannot work on {url}: Chrome does not let extensions act on this kind of page. Switch to a normal web page (http or https) and start the task again.")]
    RestrictedPage { url: String },
    #[error("Element [{index}] is no longer on the page — the page changed since it was observed. Use an index from the current page state.")]
    ElementGone { index: u32 },
    #[error("Element [{index}] cannot take that action: {reason}")]
    ElementUnsuitable { index: u32, reason: String },
    #[error("The task's tab was closed. Start the task again on an open tab.")]
    TabClosed,
    #[error("The page could not be read ({reason}).")]
    ContentScript { reason: String },
    #[error("Navigation to {url} failed: {reason}")]
    Navigation { url: String, reason: String },
    #[error("{what} took longer than {seconds} s and was abandoned.")]
    Timeout { what: String, seconds: u32 },
}

impl BrowserError {
    /// True when the task cannot go on, whatever the LLM does next.
    pub fn ends_task(&self) -> bool {
        matches!(self, BrowserError::RestrictedPage { .. } | BrowserError::TabClosed)
    }
}

/// A browser the agent can drive. Methods are async because every real implementation waits
/// on the browser; the trait is used with static dispatch only, and its futures need not be
/// `Send` (the service worker is single-threaded).
#[allow(async_fn_in_trait)]
pub trait Browser {
    /// Indexes the task's tab and returns what a person would see.
    async fn observe(&mut self) -> Result<PageState, BrowserError>;
    /// Loads `url` in the task's tab and waits for it to finish loading.
    async fn navigate(&mut self, url: &str) -> Result<ActionEffect, BrowserError>;
    /// Clicks the element with this index, as a person would.
    async fn click(&mut self, index: u32) -> Result<ActionEffect, BrowserError>;
    /// Types `text` into the element with this index, replacing its content when `clear`.
    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError>;
    /// The task is over: remove whatever the browser shows for it (highlights) and let go of
    /// what it holds. Best effort; never fails.
    async fn finish(&mut self) {}
}
