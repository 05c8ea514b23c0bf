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
    task_id: String,
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
        Ok(PanelRequest::StartTask { task, tab_id, start_url, output_schema, .. }) => {
            start_task(task, tab_id, start_url, output_schema, broadcast).await
        }
        Ok(PanelRequest::PauseTask { .. }) => CURRENT.with_borrow(|slot| match slot {
            Some(slot) if slot.running.get() => {
                slot.stop.pause();
                PanelReply::Accepted { v: V }
            }
            _ => refused("No task is running."),
        }),
        Ok(PanelRequest::ResumeTask { .. }) => CURRENT.with_borrow(|slot| match slot {
            Some(slot) if slot.running.get() && slot.stop.is_paused() => {
                slot.stop.resume();
                PanelReply::Accepted { v: V }
            }
            _ => refused("No task is paused."),
        }),
        Ok(PanelRequest::AnswerQuestion { answer, .. }) => {
            if answer.trim().is_empty() {
                refused("Type an answer first.")
            } else if super::browser::deliver_answer(answer) {
                PanelReply::Accepted { v: V }
            } else {
                refused("No question is waiting for an answer.")
            }
        }
        Ok(PanelRequest::StopTask { .. }) => CURRENT.with_borrow(|slot| match slot {
            Some(slot) if slot.running.get() => {
                slot.stop.stop();
                PanelReply::Accepted { v: V }
            }
            _ => refused("No task is running."),
        }),
        Ok(PanelRequest::GetStatus { task_id, since, .. }) => CURRENT.with_borrow(|slot| match slot {
            Some(slot) => {
                // Only what the caller lacks: a follower polling a long task must not get the
                // whole log (every step's record) again each time.
                let events = slot.events.borrow();
                let from = if task_id.as_deref() == Some(slot.task_id.as_str()) {
                    since.unwrap_or(0).min(events.len() as u32)
                } else {
                    0
                };
                PanelReply::Status {
                    v: V,
                    task_id: Some(slot.task_id.clone()),
                    running: slot.running.get(),
                    from,
                    events: events[from as usize..].to_vec(),
                }
            }
            None => PanelReply::Status { v: V, task_id: None, running: false, from: 0, events: Vec::new() },
        }),
    };
    to_js(&reply)
}

/// The worker's clock: wall time for timings, timers for action timeouts.
struct WallClock;

impl crate::agent::Clock for WallClock {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    async fn sleep(&self, ms: u32) {
        gloo_timers::future::TimeoutFuture::new(ms).await;
    }
}

async fn start_task(
    task: String,
    tab_id: Option<i32>,
    start_url: Option<String>,
    output_schema: Option<serde_json::Value>,
    broadcast: js_sys::Function,
) -> PanelReply {
    let task = task.trim().to_string();
    if task.is_empty() {
        return refused("Type a task first.");
    }
    if let Some(schema) = &output_schema {
        if !schema.is_object() {
            return refused(
                "The output schema must be a JSON Schema object, e.g. {\"type\": \"object\", \"properties\": {…}}.",
            );
        }
    }
    // Claim the slot before the first await, so two start requests cannot both pass the check.
    let claim = CURRENT.with_borrow_mut(|slot| {
        if slot.as_ref().is_some_and(|s| s.running.get()) {
            return None;
        }
        let claimed = TaskSlot {
            task_id: format!("task-{}", js_sys::Date::now() as u64),
            stop: StopSignal::new(),
            events: Rc::new(RefCell::new(Vec::new())),
            running: Rc::new(Cell::new(true)),
        };
        let handles = (claimed.task_id.clone(), claimed.stop.clone(), claimed.events.clone(), claimed.running.clone());
        *slot = Some(claimed);
        Some(handles)
    });
    let Some((task_id, stop, events, running)) = claim else {
        return refused("A task is already running. Stop it before starting another.");
    };
    let prepared = prepare(tab_id, start_url.as_deref()).await;
    let (settings, tab_id) = match prepared {
        Ok(ready) => ready,
        Err(message) => {
            running.set(false);
            return refused(message);
        }
    };

    // Each event goes out with its task and its position in the task's log, so a panel can
    // tell a repeat from a gap and resynchronise with `get_status`.
    let sink = {
        let events = events.clone();
        let task_id = JsValue::from_str(&task_id);
        move |event: AgentEvent| {
            let seq = events.borrow().len();
            events.borrow_mut().push(event.clone());
            // A closed panel makes the call throw; the task goes on and the event is kept.
            let _ = broadcast.call3(&JsValue::NULL, &to_js(&event), &JsValue::from(seq as u32), &task_id);
        }
    };
    let ports = Ports {
        browser: ChromeBrowser::new(tab_id, settings.page),
        transport: FetchTransport { timeout_ms: LLM_TIMEOUT_MS },
        events: sink,
        clock: WallClock,
    };
    let agent = Agent::new(task_id, task, settings, ports, stop).with_output_schema(output_schema.as_ref());
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

/// Reads and checks the settings and picks the tab, or says why the task cannot start.
async fn prepare(tab_id: Option<i32>, start_url: Option<&str>) -> Result<(crate::settings::Settings, i32), String> {
    let raw = chrome::stored_settings()
        .await
        .map_err(|e| format!("The settings could not be read ({e}). Reload the extension."))?;
    let settings = StoredSettings::from_json(raw).and_then(|s| s.validate()).map_err(|e| e.to_string())?;
    let tab_id = pick_tab(tab_id, start_url).await?;
    Ok((settings, tab_id))
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
