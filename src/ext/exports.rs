//! The functions the background module calls: panel requests, the restore of a stopped
//! worker's tasks, and the schedules' alarms and wake-ups, handed to the worker's `TaskHost`
//! (`crate::worker`), which decides everything.
//!
//! `answer_panel_message` is a plain call, not an async one: a cold start's first request (the
//! panel's `get_status`) then runs no future and no promise queue. Chrome compiles the wasm
//! lazily, a function when it is first called, and reading the request, answering it and
//! writing the reply are separate functions, with the requests that wait answered by a boxed
//! future of their own (`TaskHost::answer_later`): that first request compiles about 150 small
//! functions, not every request's code folded into one state machine (scripts/build keeps
//! wasm-opt from folding them again).

use super::chrome;
use super::host::ChromeHost;
use crate::protocol::{PanelReply, PanelRequest, ProtocolError};
use crate::worker::TaskHost;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// How long a request waits for a task being restored.
const RESTORE_WAIT_MS: u32 = 10_000;

thread_local! {
    static WORKER: Rc<TaskHost<ChromeHost>> = TaskHost::new(ChromeHost::default());
    /// While the tasks saved by a stopped worker are being restored: a promise that settles
    /// when the restore is over (what requests that came meanwhile await), and its resolve.
    static RESTORING: RefCell<Option<(js_sys::Promise, js_sys::Function)>> = const { RefCell::new(None) };
}

/// The worker, with the background module's broadcast function kept for the events of the
/// tasks it starts.
fn worker(broadcast: js_sys::Function) -> Rc<TaskHost<ChromeHost>> {
    let worker = WORKER.with(Rc::clone);
    *worker.host().broadcast.borrow_mut() = Some(broadcast);
    worker
}

/// Answers one request from the side panel (or the headless runner, through the panel page):
/// with the reply itself when the core can answer at once, else with a promise of it, for a
/// request that waits on Chrome or the model and for any request while a stopped worker's task
/// is being restored. `broadcast` receives every event of a task this request starts.
#[wasm_bindgen]
pub fn answer_panel_message(message: JsValue, broadcast: js_sys::Function) -> JsValue {
    // A worker that just started may be restoring the task its predecessor ran: answer once
    // that is done, so the panel sees the task (bounded, in case restoring hangs).
    if let Some(restored) = RESTORING.with_borrow(|r| r.as_ref().map(|(promise, _)| promise.clone())) {
        return promise_of(async move {
            let _ =
                crate::tabs::wait::within(&super::tabs::ChromeTabs, RESTORE_WAIT_MS, JsFuture::from(restored)).await;
            answer_request(message, broadcast)
        });
    }
    answer_request(message, broadcast)
}

/// The reply to a request, or a promise of it (see `answer_panel_message`).
fn answer_request(message: JsValue, broadcast: js_sys::Function) -> JsValue {
    match read_request(message) {
        Err(e) => write_reply(&PanelReply::refused(&e.into())),
        Ok(request) => {
            let worker = worker(broadcast);
            match worker.answer_now(request) {
                Ok(reply) => write_reply(&reply),
                Err(later) => {
                    let reply = worker.answer_later(later);
                    promise_of(async move { write_reply(&reply.await) })
                }
            }
        }
    }
}

/// A JS promise of what `value` comes to (a promise it comes to is followed in JS).
fn promise_of(value: impl std::future::Future<Output = JsValue> + 'static) -> JsValue {
    wasm_bindgen_futures::future_to_promise(async move { Ok(value.await) }).into()
}

/// The request, checked. Its own function, compiled on its own (see the module's doc).
#[inline(never)]
fn read_request(message: JsValue) -> Result<PanelRequest, ProtocolError> {
    chrome::json_text(&message).map_err(ProtocolError::Unreadable).and_then(|text| PanelRequest::from_json_text(&text))
}

/// The reply as the panel reads it. Its own function, compiled on its own.
#[inline(never)]
fn write_reply(reply: &PanelReply) -> JsValue {
    chrome::to_js(reply)
}

/// Continues the tasks that were running when Chrome stopped the service worker, and its
/// queue (`TaskHost::restore`); requests that come meanwhile wait for it. Called whenever the
/// worker starts (and on the wake-up alarm).
#[wasm_bindgen]
pub async fn resume_interrupted_task(broadcast: js_sys::Function) -> JsValue {
    let worker = worker(broadcast);
    if worker.restoring() || RESTORING.with_borrow(Option::is_some) {
        return JsValue::FALSE;
    }
    let mut settle = None;
    let promise = js_sys::Promise::new(&mut |resolve, _| settle = Some(resolve));
    RESTORING.set(settle.map(|settle| (promise, settle)));
    let resumed = worker.restore().await;
    if let Some((_, settle)) = RESTORING.take() {
        let _ = settle.call0(&JsValue::NULL);
    }
    JsValue::from_bool(resumed)
}

/// Waits (bounded) for a restore under way: a schedule's run must not start before the tasks
/// it could find running are back.
async fn restored() {
    if let Some(restored) = RESTORING.with_borrow(|r| r.as_ref().map(|(promise, _)| promise.clone())) {
        let _ = crate::tabs::wait::within(&super::tabs::ChromeTabs, RESTORE_WAIT_MS, JsFuture::from(restored)).await;
    }
}

/// The schedules' one way in (one export: each async export costs the module its own copy of
/// the promise glue). With `alarm`, that alarm rang: a schedule's (`tabwright-schedule:<id>`)
/// starts its run when its time has come (`TaskHost::schedule_alarm`). Without, the worker,
/// the browser or the extension (installed, updated) started: the schedules whose time passed
/// run once, and every schedule's alarm is set again (`TaskHost::wake_schedules`); called after
/// the restore. `broadcast` receives the events of the runs.
#[wasm_bindgen]
pub async fn wake_schedules(alarm: Option<String>, broadcast: js_sys::Function) {
    let worker = worker(broadcast);
    restored().await;
    match alarm {
        Some(name) => worker.schedule_alarm(&name).await,
        None => worker.wake_schedules().await,
    }
}

/// One message of the bridge to coding agents (`crate::bridge`, `worker::clients`): a promise
/// of the reply's JSON text, which background.js posts back on the native port (it always
/// settles with a reply; a restore under way is waited for, bounded). `broadcast` receives the
/// events of the tasks it starts.
#[wasm_bindgen]
pub fn answer_bridge_message(text: String, broadcast: js_sys::Function) -> JsValue {
    let worker = worker(broadcast);
    promise_of(async move {
        restored().await;
        JsValue::from_str(&worker.answer_client(text).await)
    })
}

/// The native port closed (the bridge ended, or the switch was turned off): every coding agent
/// is gone.
#[wasm_bindgen]
pub fn bridge_closed() {
    WORKER.with(Rc::clone).bridge_closed();
}
