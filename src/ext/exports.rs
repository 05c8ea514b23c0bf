//! The functions the background module calls, and the one running task.
//!
//! The background module forwards every side-panel request here with a broadcast function; the
//! core answers with a `PanelReply` and reports a running task's progress through that function.
//! Only one task runs at a time; its events are kept so a panel that (re)opens mid-task can
//! show everything so far.

use super::browser::ChromeBrowser;
use super::chrome::{self, to_js};
use super::transport::FetchTransport;
use crate::actions::url::{is_blank_page, is_restricted, is_web_url};
use crate::agent::{Agent, Ports, StopSignal};
use crate::browser::BrowserError;
use crate::protocol::{AgentEvent, PanelReply, PanelRequest, ProtocolError, PROTOCOL_VERSION as V};
use crate::settings::StoredSettings;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The LLM's answer may take this long before the request is abandoned.
const LLM_TIMEOUT_MS: u32 = 60_000;
/// Below Chrome's 30 s idle limit for service workers.
const KEEP_ALIVE_MS: u32 = 25_000;

struct TaskSlot {
    stop: StopSignal,
    events: Rc<RefCell<Vec<AgentEvent>>>,
    running: Rc<Cell<bool>>,
}

thread_local! {
    static CURRENT: RefCell<Option<TaskSlot>> = const { RefCell::new(None) };
}

fn refused(message: impl Into<String>) -> PanelReply {
    PanelReply::Refused { v: V, message: message.into() }
}

/// Handles one request from the side panel (or the headless runner, through the panel page).
/// `broadcast` receives every event of a task this request starts.
#[wasm_bindgen]
pub async fn handle_panel_message(message: JsValue, broadcast: js_sys::Function) -> JsValue {
    let request = chrome::from_js::<serde_json::Value>(message)
        .map_err(ProtocolError::Unreadable)
        .and_then(PanelRequest::from_json);
    let reply = match request {
        Err(e) => refused(e.to_string()),
        Ok(PanelRequest::StartTask { task, tab_id, start_url, .. }) => {
            start_task(task, tab_id, start_url, broadcast).await
        }
        Ok(PanelRequest::StopTask { .. }) => CURRENT.with_borrow(|slot| match slot {
            Some(slot) if slot.running.get() => {
                slot.stop.stop();
                PanelReply::Accepted { v: V }
            }
            _ => refused("No task is running."),
        }),
        Ok(PanelRequest::GetStatus { .. }) => CURRENT.with_borrow(|slot| match slot {
            Some(slot) => {
                PanelReply::Status { v: V, running: slot.running.get(), events: slot.events.borrow().clone() }
            }
            None => PanelReply::Status { v: V, running: false, events: Vec::new() },
        }),
    };
    to_js(&reply)
}

async fn start_task(
    task: String,
    tab_id: Option<i32>,
    start_url: Option<String>,
    broadcast: js_sys::Function,
) -> PanelReply {
    if CURRENT.with_borrow(|slot| slot.as_ref().is_some_and(|s| s.running.get())) {
        return refused("A task is already running. Stop it before starting another.");
    }
    let task = task.trim().to_string();
    if task.is_empty() {
        return refused("Type a task first.");
    }
    let settings = match chrome::stored_settings().await {
        Err(e) => return refused(format!("The settings could not be read ({e}). Reload the extension.")),
        Ok(raw) => match StoredSettings::from_json(raw).and_then(|s| s.validate()) {
            Ok(settings) => settings,
            Err(e) => return refused(e.to_string()),
        },
    };
    let tab_id = match pick_tab(tab_id, start_url.as_deref()).await {
        Ok(id) => id,
        Err(message) => return refused(message),
    };

    let events = Rc::new(RefCell::new(Vec::new()));
    let running = Rc::new(Cell::new(true));
    let stop = StopSignal::new();
    CURRENT.with_borrow_mut(|slot| {
        *slot = Some(TaskSlot { stop: stop.clone(), events: events.clone(), running: running.clone() });
    });
    let sink = {
        let events = events.clone();
        move |event: AgentEvent| {
            events.borrow_mut().push(event.clone());
            // A closed panel makes the call throw; the task goes on and the event is kept.
            let _ = broadcast.call1(&JsValue::NULL, &to_js(&event));
        }
    };
    let ports = Ports {
        browser: ChromeBrowser::new(tab_id),
        transport: FetchTransport { timeout_ms: LLM_TIMEOUT_MS },
        events: sink,
        clock: js_sys::Date::now,
    };
    let task_id = format!("task-{}", js_sys::Date::now() as u64);
    let agent = Agent::new(task_id, task, settings, ports, stop);
    {
        let running = running.clone();
        wasm_bindgen_futures::spawn_local(async move {
            agent.run().await;
            running.set(false);
        });
    }
    wasm_bindgen_futures::spawn_local(async move {
        while running.get() {
            gloo_timers::future::TimeoutFuture::new(KEEP_ALIVE_MS).await;
            chrome::keep_alive().await;
        }
    });
    PanelReply::Accepted { v: V }
}

/// The tab the task runs on: a new tab at `start_url`, the tab the panel named, or the active
/// tab of the last focused window.
async fn pick_tab(tab_id: Option<i32>, start_url: Option<&str>) -> Result<i32, String> {
    if let Some(url) = start_url {
        if !is_web_url(url) {
            return Err(format!("The start URL \"{url}\" is not an http(s) URL."));
        }
        let tab = chrome::create_tab(&serde_json::json!({"url": url, "active": true}))
            .await
            .map_err(|e| format!("Could not open a tab for {url}: {e}"))?;
        return tab.id.ok_or_else(|| "Chrome opened a tab without an id.".to_string());
    }
    let tab = match tab_id {
        Some(id) => chrome::get_tab(id).await.map_err(|_| BrowserError::TabClosed.to_string())?,
        None => chrome::query_tabs(&serde_json::json!({"active": true, "lastFocusedWindow": true}))
            .await
            .map_err(|e| format!("Could not find the current tab: {e}"))?
            .into_iter()
            .next()
            .ok_or_else(|| "There is no open tab to work in. Open a web page and try again.".to_string())?,
    };
    let url = tab.pending_url.or(tab.url).unwrap_or_default();
    if is_restricted(&url) && !is_blank_page(&url) {
        return Err(BrowserError::RestrictedPage { url }.to_string());
    }
    tab.id.ok_or_else(|| "The tab has no id.".to_string())
}
