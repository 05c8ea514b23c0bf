//! `ChromeHost`: the worker's ports (`crate::worker::host`) over chrome.*: session storage for
//! the saved tasks and queue, local storage for settings, skills and schedules, tabs, timers, the alarms,
//! notifications, and the background module's broadcast to the panels.

use super::chrome::{self, to_js};
use super::tabs::ChromeTabs;
use super::transport::FetchTransport;
use crate::agent::TaskState;
use crate::llm::{HttpRequest, HttpResponse, TransportError};
use crate::protocol::{AgentEvent, TaskSummary};
use crate::settings::PageOptions;
use crate::tabs::host::Tab;
use crate::tabs::TabBrowser;
use crate::worker::host::{NoticeText, SavedItems, SettingsStore, Tabs, TaskRuntime, TaskStore, Work};
use std::cell::RefCell;
use wasm_bindgen::JsValue;

/// The alarm that wakes a stopped worker while tasks run.
const WAKE_ALARM: &str = "tabwright-task";

#[derive(Default)]
pub struct ChromeHost {
    /// The background module's function that hands an event to the open panels and the task
    /// history (the same function on every call; the latest is kept).
    pub broadcast: RefCell<Option<js_sys::Function>>,
}

fn warn(text: &str) {
    web_sys::console::warn_1(&text.into());
}

impl TaskStore for ChromeHost {
    async fn read_saved(&self) -> Result<SavedItems, String> {
        let items = chrome::session_items().await?;
        Ok(Box::new(move |key: &str| chrome::session_item_text(&items, key)))
    }

    async fn write_saved(&self, key: String, text: Box<dyn FnOnce() -> Result<String, String>>) {
        // A task goes on without it; a developer should see that a restart would lose it.
        if let Err(e) = chrome::session_set_with(&key, text).await {
            warn(&format!("Tabwright could not save {key} for a restarted worker: {e}"));
        }
    }

    async fn remove_saved(&self, keys: Vec<String>) {
        if let Err(e) = chrome::session_remove(keys).await {
            warn(&format!("Tabwright could not let go of a task it no longer keeps: {e}"));
        }
    }
}

impl SettingsStore for ChromeHost {
    async fn stored_settings(&self) -> Result<serde_json::Value, String> {
        chrome::stored_settings().await
    }

    async fn session_api_key(&self) -> Result<Option<String>, String> {
        chrome::session_api_key().await
    }

    async fn saved_skills(&self) -> Result<Vec<serde_json::Value>, String> {
        chrome::saved_skills().await
    }

    async fn write_skills(&self, skills: &[serde_json::Value]) -> Result<(), String> {
        chrome::write_skills(skills).await
    }

    async fn write_settings(&self, settings: &serde_json::Value) -> Result<(), String> {
        chrome::write_settings(settings).await
    }

    async fn stored_schedules(&self) -> Result<Vec<serde_json::Value>, String> {
        chrome::stored_schedules().await
    }

    async fn write_schedules(&self, schedules: &[serde_json::Value]) -> Result<(), String> {
        chrome::write_schedules(schedules).await
    }

    async fn stored_clients(&self) -> Result<serde_json::Value, String> {
        chrome::stored_clients().await
    }

    async fn write_clients(&self, book: &serde_json::Value) -> Result<(), String> {
        chrome::write_clients(book).await
    }
}

impl Tabs for ChromeHost {
    async fn tab(&self, id: i32) -> Result<Tab, String> {
        chrome::get_tab(id).await
    }

    async fn active_tab(&self) -> Result<Option<Tab>, String> {
        let tabs = chrome::query_tabs(&serde_json::json!({"active": true, "lastFocusedWindow": true})).await?;
        Ok(tabs.into_iter().next())
    }

    async fn open_tab(&self, url: &str, window: Option<i32>) -> Result<Tab, String> {
        let mut props = serde_json::json!({"url": url, "active": true});
        if let Some(window) = window {
            props["windowId"] = window.into();
        }
        chrome::create_tab(&props).await
    }

    async fn group_tab(&self, id: i32, group: &str) -> Result<(), String> {
        crate::tabs::join_task_group(&ChromeTabs, id, group).await
    }

    async fn all_tabs(&self) -> Result<Vec<Tab>, String> {
        chrome::query_tabs(&serde_json::json!({"windowType": "normal"})).await
    }
}

impl TaskRuntime for ChromeHost {
    type Browser = TabBrowser<ChromeTabs>;
    type Transport = FetchTransport;
    type Clock = ChromeTabs;

    fn browser(
        &self,
        seat: crate::tabs::TaskSeat,
        tab: i32,
        tabs: &[i32],
        options: PageOptions,
    ) -> TabBrowser<ChromeTabs> {
        TabBrowser::new(ChromeTabs, tab, options).with_tabs(tabs.to_vec()).for_task(seat)
    }

    fn transport(&self, timeout_ms: u32) -> FetchTransport {
        FetchTransport { timeout_ms }
    }

    async fn get(&self, request: &HttpRequest, timeout_ms: u32) -> Result<HttpResponse, TransportError> {
        FetchTransport { timeout_ms }.get(request).await
    }

    fn clock(&self) -> ChromeTabs {
        ChromeTabs
    }

    fn spawn(&self, work: Work) {
        wasm_bindgen_futures::spawn_local(work);
    }

    fn broadcast(&self, event: &AgentEvent, seq: u32, task_id: &str, state: &TaskState) {
        if let Some(broadcast) = self.broadcast.borrow().as_ref() {
            let args =
                js_sys::Array::of4(&to_js(event), &JsValue::from(seq), &JsValue::from_str(task_id), &to_js(state));
            // A closed panel makes the call throw; the task goes on and the event is kept.
            let _ = broadcast.apply(&JsValue::NULL, &args);
        }
    }

    fn broadcast_clients(&self, asking: &[crate::protocol::ClientAsking]) {
        chrome::clients_asking(asking);
    }

    fn broadcast_tasks(&self, tasks: &[TaskSummary]) {
        chrome::tasks_changed(tasks);
    }

    async fn task_began(&self, task_id: &str, tabs: &[i32]) {
        chrome::start_alarm(WAKE_ALARM, 0.5).await;
        // Pages get the content scripts only while a task runs (its end takes them out:
        // `TabBrowser::finish`). Without the registration, each page gets them when the
        // task first looks at it, later than its own scripts.
        if let Err(e) = chrome::begin_page_scripts(task_id, tabs).await {
            warn(&format!("Tabwright could not register its page scripts: {e}"));
        }
    }

    async fn tasks_idle(&self) {
        // Each task took its own scripts out as it ended; what a restore could not attribute
        // (tasks that could not go on) goes now.
        chrome::tasks_idle(WAKE_ALARM).await;
    }

    async fn end_page_scripts(&self, task_id: &str) {
        let _ = chrome::end_page_scripts(task_id).await;
    }

    async fn keep_alive(&self) {
        chrome::keep_alive().await;
    }

    async fn set_alarm(&self, name: &str, when_ms: f64) {
        if let Err(e) = chrome::alarm_at(name, when_ms).await {
            warn(&format!("Tabwright could not set the alarm {name}: {e}"));
        }
    }

    async fn clear_alarm(&self, name: &str) {
        chrome::stop_alarm(name).await;
    }

    async fn clear_alarms_except(&self, prefix: &str, keep: &[String]) {
        match chrome::alarm_names().await {
            Ok(names) => {
                for name in names.iter().filter(|n| n.starts_with(prefix) && !keep.contains(n)) {
                    chrome::stop_alarm(name).await;
                }
            }
            Err(e) => warn(&format!("Tabwright could not list its alarms: {e}")),
        }
    }

    fn local_offset_minutes(&self, utc_ms: f64) -> i32 {
        chrome::local_offset_minutes(utc_ms)
    }

    async fn notify(&self, id: &str, title: &NoticeText, message: &NoticeText) {
        if let Err(e) = chrome::notify(id, title, message).await {
            warn(&format!("Tabwright could not show a notification: {e}"));
        }
    }

    async fn clear_notification(&self, id: &str) {
        let _ = chrome::clear_notification(id).await;
    }

    fn warn(&self, text: &str) {
        warn(text);
    }
}
