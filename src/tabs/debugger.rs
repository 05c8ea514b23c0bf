//! The debugger: trusted input, screenshots and scripts over the Chrome DevTools Protocol
//! (chrome.debugger in the extension).
//!
//! Chrome shows a "… started debugging this browser" bar while the debugger is attached, which
//! alarms people, so a tab is attached only when an action needs it and detached when the task
//! ends. The failures people meet are turned into errors that say what to do: DevTools or
//! another extension already attached, the bar closed by the user (`canceled_by_user`, after
//! which Tabwright does not re-attach on its own), pages Chrome does not let extensions debug.

use super::host::TabHost;
use super::wait::within;
use crate::browser::{BrowserError, KeyPress, Screenshot};
use std::collections::BTreeSet;

/// One protocol command may take this long (a page busy in a long script).
const COMMAND_TIMEOUT_MS: u32 = 15_000;
/// `evaluate` scripts may run this long.
const SCRIPT_TIMEOUT_MS: u32 = 10_000;

/// The longest a key waits for the page to catch up with the last one.
const KEY_WAIT_MAX_MS: u32 = 2_000;

/// The script `page_caught_up` runs in the page after typed words, before a key that acts on
/// them: it resolves once 400 ms have passed (a person's look at what the typing did) and the
/// page's DOM has not changed for 150 ms, or after 1.5 s whatever the page does.
const PAGE_QUIET: &str = "new Promise((done) => { if (document.hidden) { done(); return; } \
     const start = performance.now(); let last = start; \
     const seen = new MutationObserver(() => { last = performance.now(); }); \
     seen.observe(document, { subtree: true, childList: true, attributes: true, characterData: true }); \
     const look = () => { const now = performance.now(); \
       if ((now - start >= 400 && now - last >= 150) || now - start >= 1500) { seen.disconnect(); done(); } \
       else { setTimeout(look, 50); } }; \
     setTimeout(look, 50); })";

/// The script `page_caught_up` runs in the page between keys: it resolves after the page's next animation
/// frame and the tasks that frame queued, or after 100 ms when no frame comes; at once in a
/// tab in the background, which draws no frames and runs its timers once a second at most.
const PAGE_CAUGHT_UP: &str = "new Promise((done) => { if (document.hidden) { done(); return; } \
     const late = setTimeout(done, 100); \
     requestAnimationFrame(() => setTimeout(() => { clearTimeout(late); done(); }, 0)); })";

pub struct Debugger<H> {
    host: H,
    attached: BTreeSet<i32>,
    /// Tabs whose debugging bar the user closed: the task does not attach to them again.
    declined: BTreeSet<i32>,
}

impl<H: TabHost> Debugger<H> {
    pub fn new(host: H) -> Self {
        Debugger { host, attached: BTreeSet::new(), declined: BTreeSet::new() }
    }

    /// Notes why Chrome detached the debugger from the tab, if it did since the last look.
    fn note_detach(&mut self, tab_id: i32) {
        if let Some(reason) = self.host.debugger_detached(tab_id) {
            self.attached.remove(&tab_id);
            if reason == "canceled_by_user" {
                self.declined.insert(tab_id);
            }
        }
    }

    /// Whether debugger actions can run on the tab: not after the user closed the debugging
    /// bar for it during this task.
    pub fn available(&mut self, tab_id: i32) -> bool {
        self.note_detach(tab_id);
        !self.declined.contains(&tab_id)
    }

    async fn ensure_attached(&mut self, tab_id: i32, what: &str) -> Result<(), BrowserError> {
        self.note_detach(tab_id);
        if self.declined.contains(&tab_id) {
            return Err(BrowserError::Debugger {
                what: what.into(),
                reason: "you closed Chrome's debugging bar for this tab, so Tabwright stopped using the debugger there. Keys, clicks at a point, screenshots and scripts are unavailable on this tab; start the task again to allow them".into(),
            });
        }
        if self.attached.contains(&tab_id) {
            return Ok(());
        }
        // Counted as attached before the call ends, so that a task stopped meanwhile still
        // detaches it (detaching a tab that is not attached is harmless).
        self.attached.insert(tab_id);
        if let Err(e) = self.host.attach_debugger(tab_id).await {
            self.attached.remove(&tab_id);
            return Err(attach_error(what, &e));
        }
        Ok(())
    }

    /// Sends a command, attaching first; re-attaches once if Chrome detached meanwhile (a
    /// cross-site navigation can do that) unless the user declined.
    async fn command(
        &mut self,
        tab_id: i32,
        what: &str,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        self.ensure_attached(tab_id, what).await?;
        match self.send(tab_id, what, method, &params).await {
            Err(BrowserError::Debugger { reason, .. }) if reason.contains("not attached") => {
                self.attached.remove(&tab_id);
                self.ensure_attached(tab_id, what).await?;
                self.send(tab_id, what, method, &params).await
            }
            other => other,
        }
    }

    async fn send(
        &self,
        tab_id: i32,
        what: &str,
        method: &str,
        params: &serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        match within(&self.host, COMMAND_TIMEOUT_MS, self.host.debugger_command(tab_id, method, params)).await {
            None => {
                Err(BrowserError::Timeout { what: format!("{what} ({method})"), seconds: COMMAND_TIMEOUT_MS / 1000 })
            }
            Some(Err(reason)) => Err(BrowserError::Debugger { what: what.into(), reason }),
            Some(Ok(value)) => Ok(value),
        }
    }

    /// A left click at a point of the viewport (CSS pixels), as a mouse makes it.
    pub async fn click_at(&mut self, tab_id: i32, x: f64, y: f64) -> Result<(), BrowserError> {
        let what = "Clicking";
        let at = |kind: &str, buttons: u32| serde_json::json!({"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1, "pointerType": "mouse"});
        self.command(
            tab_id,
            what,
            "Input.dispatchMouseEvent",
            serde_json::json!({"type": "mouseMoved", "x": x, "y": y}),
        )
        .await?;
        self.command(tab_id, what, "Input.dispatchMouseEvent", at("mousePressed", 1)).await?;
        self.command(tab_id, what, "Input.dispatchMouseEvent", at("mouseReleased", 0)).await?;
        Ok(())
    }

    /// Presses each key (with its modifiers held) into whatever has focus, one at a time: the
    /// next goes only once the page has handled the last and drawn what it changed (one frame
    /// of the page, `PAGE_CAUGHT_UP`), as a person's next key comes. A type-ahead list filters
    /// and redraws after each key; an arrow sent before the list is drawn moves nothing. After
    /// typed words, the key that acts on them waits for the page to go quiet (`PAGE_QUIET`): a
    /// list that filters a moment after the typing stops (Tom Select's 300 ms), or a select
    /// that takes Enter as more typing for 200 ms (Angular Material's), gets it as a person's
    /// Enter comes, after a look at the list.
    pub async fn press_keys(&mut self, tab_id: i32, keys: &[KeyPress]) -> Result<(), BrowserError> {
        let what = "Pressing keys";
        for (n, key) in keys.iter().enumerate() {
            if n > 0 {
                let typed = |k: &KeyPress| k.text.as_deref().is_some_and(|t| t != "\r");
                // Words typed, then a key that acts on them (Enter, an arrow, Tab): a person
                // looks at what the page made of the words first.
                let script = if typed(&keys[n - 1]) && !typed(key) { PAGE_QUIET } else { PAGE_CAUGHT_UP };
                self.page_caught_up(tab_id, script).await;
            }
            let held = modifier_keys(key.modifiers);
            for (name, code, key_code, _) in &held {
                let down = serde_json::json!({"type": "rawKeyDown", "key": name, "code": code, "windowsVirtualKeyCode": key_code, "modifiers": key.modifiers});
                self.command(tab_id, what, "Input.dispatchKeyEvent", down).await?;
            }
            let mut down = serde_json::json!({
                "type": if key.text.is_some() { "keyDown" } else { "rawKeyDown" },
                "key": key.key,
                "code": key.code,
                "windowsVirtualKeyCode": key.key_code,
                "nativeVirtualKeyCode": key.key_code,
                "modifiers": key.modifiers,
            });
            if let Some(text) = &key.text {
                down["text"] = text.clone().into();
                down["unmodifiedText"] = text.clone().into();
            }
            self.command(tab_id, what, "Input.dispatchKeyEvent", down).await?;
            let up = serde_json::json!({
                "type": "keyUp",
                "key": key.key,
                "code": key.code,
                "windowsVirtualKeyCode": key.key_code,
                "nativeVirtualKeyCode": key.key_code,
                "modifiers": key.modifiers,
            });
            self.command(tab_id, what, "Input.dispatchKeyEvent", up).await?;
            for (name, code, key_code, _) in held.iter().rev() {
                let up = serde_json::json!({"type": "keyUp", "key": name, "code": code, "windowsVirtualKeyCode": key_code, "modifiers": 0});
                self.command(tab_id, what, "Input.dispatchKeyEvent", up).await?;
            }
        }
        Ok(())
    }

    /// Waits until the page has drawn a frame since the last input and run what it queued then
    /// (a framework's render), or (`PAGE_QUIET`) has had a person's pause and gone quiet. A page that cannot be asked (it is navigating away after the
    /// last key) is not waited for: the next key goes to whatever has focus then.
    async fn page_caught_up(&mut self, tab_id: i32, script: &str) {
        let params = serde_json::json!({
            "expression": script,
            "awaitPromise": true,
            "returnByValue": true,
            "silent": true,
        });
        // Sent on the debugger the last key attached, bounded by its own short limit: a page
        // that replaced its timers would otherwise hold each key for the command's limit.
        let waited = self.host.debugger_command(tab_id, "Runtime.evaluate", &params);
        let _ = within(&self.host, KEY_WAIT_MAX_MS, waited).await;
    }

    /// A PNG of the visible part of the tab.
    pub async fn screenshot(&mut self, tab_id: i32) -> Result<Screenshot, BrowserError> {
        let what = "Taking a screenshot";
        let result = self
            .command(tab_id, what, "Page.captureScreenshot", serde_json::json!({"format": "png", "fromSurface": true}))
            .await?;
        let png_base64 = result["data"].as_str().unwrap_or_default().to_string();
        let (width, height) = crate::browser::png_size(&png_base64)
            .ok_or_else(|| BrowserError::Debugger { what: what.into(), reason: "Chrome returned no image".into() })?;
        Ok(Screenshot { png_base64, width, height })
    }

    /// The address of the page the debugger's target shows now (where a script would run).
    pub async fn target_url(&mut self, tab_id: i32) -> Result<String, BrowserError> {
        let info =
            self.command(tab_id, "Reading the page's address", "Target.getTargetInfo", serde_json::json!({})).await?;
        Ok(info["targetInfo"]["url"].as_str().unwrap_or_default().to_string())
    }

    /// Runs an expression in the page's main world and returns its value as JSON text.
    pub async fn evaluate(&mut self, tab_id: i32, code: &str) -> Result<String, BrowserError> {
        let params = serde_json::json!({
            "expression": code,
            "returnByValue": true,
            "awaitPromise": true,
            "userGesture": true,
            "timeout": SCRIPT_TIMEOUT_MS,
        });
        let result = self.command(tab_id, "Running the script", "Runtime.evaluate", params).await?;
        if let Some(details) = result.get("exceptionDetails") {
            let text = details["exception"]["description"]
                .as_str()
                .or_else(|| details["text"].as_str())
                .unwrap_or("the script threw an exception");
            return Err(BrowserError::Script(text.to_string()));
        }
        let value = &result["result"];
        Ok(match value.get("value") {
            Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
            None => value["description"].as_str().or_else(|| value["type"].as_str()).unwrap_or("undefined").to_string(),
        })
    }

    /// Lets go of one tab (it is being closed).
    pub async fn release(&mut self, tab_id: i32) {
        if self.attached.remove(&tab_id) {
            let _ = self.host.detach_debugger(tab_id).await;
        }
    }

    /// Lets go of every tab: the task is over, and the debugging bar goes away.
    pub async fn release_all(&mut self) {
        for tab_id in std::mem::take(&mut self.attached) {
            let _ = self.host.detach_debugger(tab_id).await;
            // A detach noted now (the user closed the bar at the very end) must not hold
            // against the next task.
            let _ = self.host.debugger_detached(tab_id);
        }
        for tab_id in std::mem::take(&mut self.declined) {
            let _ = self.host.debugger_detached(tab_id);
        }
    }
}

fn attach_error(what: &str, error: &str) -> BrowserError {
    let reason = if error.contains("Another debugger is already attached") {
        "another debugger (DevTools or another extension) is attached to this tab. Close DevTools or the other tool and try again".to_string()
    } else if error.contains("Cannot access") || error.contains("Cannot attach") {
        format!("Chrome does not let extensions debug this page ({error})")
    } else {
        error.to_string()
    };
    BrowserError::Debugger { what: what.into(), reason }
}

/// The modifier keys to hold for a CDP modifier mask: (key, code, key code, bit).
fn modifier_keys(mask: u32) -> Vec<(&'static str, &'static str, u32, u32)> {
    [
        ("Alt", "AltLeft", 18, 1),
        ("Control", "ControlLeft", 17, 2),
        ("Meta", "MetaLeft", 91, 4),
        ("Shift", "ShiftLeft", 16, 8),
    ]
    .into_iter()
    .filter(|(.., bit)| mask & bit != 0)
    .collect()
}
