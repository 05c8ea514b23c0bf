//! `ChromeTabs`: the tab browser's port (`crate::tabs::host::TabHost`) over chrome.tabs,
//! chrome.scripting, chrome.debugger, the content scripts' ports and the attached files. One
//! call per method; every decision is the core's (`crate::tabs`).

use super::chrome::{self, from_js};
use crate::protocol::{ContentReply, ContentRequest};
use crate::tabs::host::{FrameAnswer, Later, Tab, TabChange, TabHost};
use wasm_bindgen::{JsCast, JsValue};

#[derive(Clone, Copy, Default)]
pub struct ChromeTabs;

/// A content script's reply. A snapshot (`snapshot_json`, JSON text of up to megabytes, every
/// step) is taken as the string it is; the rest of the reply, small, is read through its JSON
/// text, which would otherwise escape the snapshot and read it back once more.
fn reply_of(value: JsValue) -> FrameAnswer {
    if value.is_undefined() || value.is_null() {
        return FrameAnswer::Nothing;
    }
    let key = JsValue::from_str("snapshot_json");
    let snapshot_json = js_sys::Reflect::get(&value, &key).ok().and_then(|v| v.as_string());
    let rest = match snapshot_json {
        Some(_) => {
            let copy = js_sys::Object::assign(&js_sys::Object::new(), &value.unchecked_into());
            let _ = js_sys::Reflect::delete_property(&copy, &key);
            copy.into()
        }
        None => value,
    };
    match from_js::<ContentReply>(rest) {
        Ok(reply) => FrameAnswer::Reply(ContentReply { snapshot_json, ..reply }),
        Err(e) => FrameAnswer::Unreadable(e),
    }
}

/// The worker's clock: wall time for timings, timers for waits (the agent's and the tabs').
impl crate::agent::Clock for ChromeTabs {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    async fn sleep(&self, ms: u32) {
        gloo_timers::future::TimeoutFuture::new(ms).await;
    }
}

impl TabHost for ChromeTabs {
    fn spawn(&self, work: Later<()>) {
        wasm_bindgen_futures::spawn_local(work);
    }

    fn warn(&self, text: &str) {
        web_sys::console::warn_1(&text.into());
    }

    async fn tab(&self, id: i32) -> Result<Tab, String> {
        chrome::get_tab(id).await
    }

    fn all_tabs_now(&self) -> Later<Result<Vec<Tab>, String>> {
        Box::pin(chrome::query_tabs_now(&serde_json::json!({})))
    }

    async fn change_tab(&self, id: i32, change: TabChange) -> Result<(), String> {
        let props = match change {
            TabChange::Activate => serde_json::json!({"active": true}),
            TabChange::Load(url) => serde_json::json!({"url": url}),
        };
        chrome::update_tab(id, &props).await
    }

    async fn open_tab(&self, url: &str, opener: i32, window: Option<i32>) -> Result<Tab, String> {
        let mut props = serde_json::json!({"url": url, "active": true, "openerTabId": opener});
        if let Some(window) = window {
            props["windowId"] = window.into();
        }
        chrome::create_tab(&props).await
    }

    async fn close_tab(&self, id: i32) -> Result<(), String> {
        chrome::remove_tab(id).await
    }

    async fn history_button(&self, id: i32, delta: i32) -> Result<(), String> {
        if delta < 0 {
            chrome::go_back(id).await
        } else {
            chrome::go_forward(id).await
        }
    }

    async fn capture_window(&self, window: i32) -> Result<String, String> {
        chrome::capture_visible_tab(window).await
    }

    async fn find_group(&self, window: i32, title: &str) -> Result<Option<i32>, String> {
        chrome::find_group(window, title).await
    }

    async fn add_to_group(&self, tab: i32, group: i32) -> Result<(), String> {
        chrome::add_to_group(tab, group).await
    }

    async fn new_group(&self, tab: i32, window: i32, title: &str, color: &str) -> Result<(), String> {
        chrome::new_group(tab, window, title, color).await
    }

    fn set_task_tabs(&self, task: &str, ids: &[i32]) {
        chrome::set_task_tabs(task, ids);
    }

    fn ask_frame(&self, tab: i32, frame: i64, request: &ContentRequest) -> Later<Result<FrameAnswer, String>> {
        let sent = chrome::ask_frame_now(tab, frame, request);
        Box::pin(async move { sent.await.map(reply_of) })
    }

    fn frame_id_of(&self, tab: i32, token: &str) -> Option<i64> {
        chrome::frame_id_of(tab, token)
    }

    fn worker_instance(&self) -> String {
        chrome::worker_instance()
    }

    async fn inject_content_scripts(&self, tab: i32) -> Result<(), String> {
        chrome::inject_content_scripts(tab).await
    }

    async fn inject_where_missing(&self, tab: i32) -> Result<u32, String> {
        chrome::inject_where_missing(tab).await
    }

    async fn inject_files(&self, tab: i32, files: &[&str]) -> Result<(), String> {
        chrome::inject_files(tab, files).await
    }

    async fn end_page_scripts(&self, task: &str) -> Result<(), String> {
        chrome::end_page_scripts(task).await
    }

    fn close_content_ports(&self, tabs: &[i32]) {
        chrome::close_content_ports(tabs);
    }

    async fn read_task_file(&self, id: &str) -> Result<Option<String>, String> {
        chrome::read_task_file(id).await
    }

    async fn attach_debugger(&self, tab: i32) -> Result<(), String> {
        chrome::attach_debugger(tab).await
    }

    async fn detach_debugger(&self, tab: i32) -> Result<(), String> {
        chrome::detach_debugger(tab).await
    }

    async fn debugger_command(
        &self,
        tab: i32,
        method: &str,
        params: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        chrome::debugger_command(tab, method, params).await
    }

    fn debugger_detached(&self, tab: i32) -> Option<String> {
        chrome::debugger_detached(tab)
    }
}
