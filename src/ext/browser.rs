//! `ChromeBrowser`: the `Browser` port over chrome.tabs, chrome.scripting and the content scripts.
//!
//! Observing asks the top frame's content script for its snapshot, then each child frame it
//! names (by Chrome frame id) for theirs, nested frames included, and stitches them into one
//! page with one numbering (`dom::Stitcher`); then it draws the highlights. Clicks and typing
//! are done by the content script of the element's own frame, addressed by its local index.
//! Navigation and load waiting use chrome.tabs. After an action the tab is watched briefly: if
//! a navigation starts, the action waits for it to finish (capped), so the next observation sees
//! the new page rather than a half-loaded one.

use super::chrome::{self, from_js, Tab};
use crate::actions::url::{is_blank_page, is_restricted};
use crate::browser::{ActionEffect, Browser, BrowserError, PageState};
use crate::dom::{FrameNode, FrameSet, FrameSnapshot, Snapshot, Stitcher};
use crate::protocol::{ContentReply, ContentRequest, ScreenRegion, PROTOCOL_VERSION};
use crate::settings::PageOptions;
use gloo_timers::future::TimeoutFuture;
use std::collections::{BTreeMap, VecDeque};

/// How long a page may take to load before the step goes on without it.
const LOAD_TIMEOUT_MS: f64 = 20_000.0;
/// How long after a click or keystroke a navigation may take to start.
const NAVIGATION_GRACE_MS: f64 = 400.0;
/// How long after `navigate` the page may take to start loading.
const NAVIGATION_START_MS: f64 = 5_000.0;
const POLL_MS: u32 = 50;
/// How long the top frame's content script may take to answer one request.
const CONTENT_TIMEOUT_MS: u32 = 15_000;
/// A child frame that takes longer is left out of this step's page.
const CHILD_FRAME_TIMEOUT_MS: u32 = 5_000;
/// All child frames of a page together get this long; the rest are shown unread.
const CHILD_FRAMES_BUDGET_MS: f64 = 8_000.0;
/// Frames read per page at most.
const MAX_FRAMES: usize = crate::dom::limits::MAX_FRAMES;

pub struct ChromeBrowser {
    tab_id: i32,
    options: PageOptions,
    stitcher: Stitcher,
    /// Frames that show highlights, to clear when the task ends.
    highlighted: Vec<i64>,
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

impl ChromeBrowser {
    pub fn new(tab_id: i32, options: PageOptions) -> Self {
        ChromeBrowser { tab_id, options, stitcher: Stitcher::new(), highlighted: Vec::new() }
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

    /// Sends a request to the content script of a frame. When the top frame has no script to
    /// ask for a snapshot (the tab predates the extension), the scripts are injected into every
    /// frame first; other requests never inject (clearing highlights on a page that has moved
    /// on must not load anything into it). A frame that does not answer in time (blocked by a
    /// dialog or a busy script) is an error.
    async fn ask_frame(&self, frame_id: i64, request: &ContentRequest) -> Result<ContentReply, BrowserError> {
        let timeout = if frame_id == 0 { CONTENT_TIMEOUT_MS } else { CHILD_FRAME_TIMEOUT_MS };
        super::timeout::within(timeout, self.ask_frame_unbounded(frame_id, request)).await.unwrap_or_else(|| {
            Err(BrowserError::Timeout {
                what: "Waiting for the page to answer (it may be showing a dialog or running a long script)".into(),
                seconds: timeout / 1000,
            })
        })
    }

    async fn ask_frame_unbounded(&self, frame_id: i64, request: &ContentRequest) -> Result<ContentReply, BrowserError> {
        let reply = match chrome::send_to_frame(self.tab_id, frame_id, request).await {
            Ok(reply) => reply,
            Err(reason) if frame_id != 0 || !matches!(request, ContentRequest::Snapshot { .. }) => {
                return Err(BrowserError::ContentScript { reason })
            }
            Err(first) => {
                let tab = self.tab().await?;
                let url = tab.url.unwrap_or_default();
                if is_restricted(&url) {
                    return Err(BrowserError::RestrictedPage { url });
                }
                // An http(s) page Chrome will not script is an error page (the site failed to
                // load): the LLM can navigate away, so it is not a restricted page.
                chrome::inject_content_scripts(self.tab_id).await.map_err(|e| BrowserError::ContentScript {
                    reason: format!("{first}; the content script could not be injected either: {e}"),
                })?;
                chrome::send_to_frame(self.tab_id, frame_id, request)
                    .await
                    .map_err(|reason| BrowserError::ContentScript { reason })?
            }
        };
        if reply.is_undefined() || reply.is_null() {
            return Err(BrowserError::ContentScript { reason: "the content script sent no answer".into() });
        }
        let reply = from_js::<ContentReply>(reply)
            .map_err(|e| BrowserError::ContentScript { reason: format!("unreadable answer: {e}") })?;
        Ok(reply)
    }

    /// One frame's snapshot, checked.
    async fn frame_snapshot(&self, frame_id: i64, screen: Option<ScreenRegion>) -> Result<FrameSnapshot, BrowserError> {
        let request = ContentRequest::Snapshot {
            v: PROTOCOL_VERSION,
            viewport_expansion: self.options.viewport_expansion,
            screen,
        };
        let reply = self.ask_frame(frame_id, &request).await?;
        match (reply.ok, reply.snapshot) {
            (true, Some(raw)) => {
                FrameSnapshot::from_json(raw).map_err(|e| BrowserError::ContentScript { reason: e.to_string() })
            }
            _ => Err(BrowserError::ContentScript {
                reason: reply.message.unwrap_or_else(|| "the page could not be indexed".into()),
            }),
        }
    }

    /// The whole page: the top frame, then every frame it (or a frame inside it) shows, read
    /// breadth-first and stitched in page order. A child frame that cannot be read is shown
    /// empty; the top frame's errors are the page's.
    async fn read_page(&mut self) -> Result<Snapshot, BrowserError> {
        let top = self.frame_snapshot(0, None).await?;
        // Each child frame is told where the top window's screen lies in its own coordinates:
        // its content box starts at the sum of the placeholders' positions on the way down.
        let top_size = top.viewport;
        let mut queue: VecDeque<(i64, (f64, f64))> = child_frames(&top, (0.0, 0.0)).collect();
        let mut frames = FrameSet { top: Some(top), ..Default::default() };
        let mut asked = std::collections::HashSet::new();
        let deadline = now_ms() + CHILD_FRAMES_BUDGET_MS;
        while let Some((frame_id, (x, y))) = queue.pop_front() {
            if !asked.insert(frame_id) || asked.len() > MAX_FRAMES || now_ms() > deadline {
                continue;
            }
            let screen = top_size.map(|(width, height)| ScreenRegion {
                top: -y,
                left: -x,
                bottom: height - y,
                right: width - x,
            });
            if let Ok(snapshot) = self.frame_snapshot(frame_id, screen).await {
                queue.extend(child_frames(&snapshot, (x, y)));
                frames.children.insert(frame_id, snapshot);
            }
        }
        let page = self.stitcher.stitch(&frames);
        if self.options.highlights {
            self.highlight(&page).await;
        }
        Ok(page)
    }

    /// Draws each frame's boxes, labelled with the page-wide numbers. Best effort: a frame that
    /// cannot draw does not fail the step.
    async fn highlight(&mut self, page: &Snapshot) {
        let mut by_frame: BTreeMap<i64, Vec<(u32, u32)>> = BTreeMap::new();
        for element in page.elements() {
            if let Some(target) = self.stitcher.target(element.index) {
                by_frame.entry(target.frame_id).or_default().push((target.local, element.index));
            }
        }
        // Frames that showed boxes last step but have none now (not read, or emptied) are
        // cleared, so no stale numbers stay on the page.
        for frame_id in std::mem::take(&mut self.highlighted) {
            if !by_frame.contains_key(&frame_id) {
                let _ = self.ask_frame(frame_id, &ContentRequest::ClearHighlights { v: PROTOCOL_VERSION }).await;
            }
        }
        for (frame_id, labels) in by_frame {
            if self.ask_frame(frame_id, &ContentRequest::Highlight { v: PROTOCOL_VERSION, labels }).await.is_ok() {
                self.highlighted.push(frame_id);
            }
        }
    }

    /// Runs an element action in the element's frame and maps the content script's failure
    /// codes to typed errors.
    async fn element_action(
        &self,
        index: u32,
        request: impl FnOnce(u32) -> ContentRequest,
    ) -> Result<ActionEffect, BrowserError> {
        let target = self.stitcher.target(index).ok_or(BrowserError::ElementGone { index })?;
        let before = self.tab().await?;
        let reply = self.ask_frame(target.frame_id, &request(target.local)).await?;
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

/// The child frames a frame snapshot shows, with where each one's content starts in the top
/// window, given where this frame's starts.
fn child_frames(snapshot: &FrameSnapshot, origin: (f64, f64)) -> impl Iterator<Item = (i64, (f64, f64))> + '_ {
    snapshot.nodes.iter().filter_map(move |n| match n {
        FrameNode::Frame { frame_id, at, .. } if *frame_id > 0 => Some((*frame_id, (origin.0 + at.0, origin.1 + at.1))),
        _ => None,
    })
}

impl Browser for ChromeBrowser {
    async fn observe(&mut self) -> Result<PageState, BrowserError> {
        let tab = self.wait_for_load().await?;
        let url = tab.url.clone().unwrap_or_default();
        let title = tab.title.clone().unwrap_or_default();
        if is_blank_page(&url) {
            // A new tab: nothing to see yet, but the task can navigate from here.
            return Ok(PageState::new(self.tab_id, Snapshot::with_elements(&url, &title, Vec::new())));
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
                Ok(PageState {
                    tab_id: self.tab_id,
                    snapshot: Snapshot::with_elements(&url, &title, Vec::new()),
                    notice: Some(why),
                })
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
        self.element_action(index, |local| ContentRequest::Click { v: PROTOCOL_VERSION, index: local }).await
    }

    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError> {
        self.element_action(index, |local| ContentRequest::Input {
            v: PROTOCOL_VERSION,
            index: local,
            text: text.into(),
            clear,
        })
        .await
    }

    async fn finish(&mut self) {
        for frame_id in std::mem::take(&mut self.highlighted) {
            let _ = self.ask_frame(frame_id, &ContentRequest::ClearHighlights { v: PROTOCOL_VERSION }).await;
        }
    }
}
