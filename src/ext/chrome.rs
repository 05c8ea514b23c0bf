//! Bindings to the chrome.* APIs Tabwright uses.
//!
//! No crate covers these, so they are declared here. Each import is `catch`: an exception
//! thrown by Chrome (a closed tab, a restricted page) must become an `Err`, because an uncaught
//! exception inside an async export leaves its promise pending forever.

use js_sys::Promise;
use serde::{de::DeserializeOwned, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query, catch)]
    fn tabs_query(query_info: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = get, catch)]
    fn tabs_get(tab_id: i32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update, catch)]
    fn tabs_update(tab_id: i32, props: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = create, catch)]
    fn tabs_create(props: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "scripting"], js_name = executeScript, catch)]
    fn scripting_execute_script(injection: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = get, catch)]
    fn storage_local_get(keys: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = set, catch)]
    fn storage_local_set(items: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getPlatformInfo, catch)]
    fn runtime_get_platform_info() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "session"], js_name = get, catch)]
    fn storage_session_get(keys: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "session"], js_name = set, catch)]
    fn storage_session_set(items: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "session"], js_name = remove, catch)]
    fn storage_session_remove(keys: Vec<String>) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "alarms"], js_name = create, catch)]
    fn alarms_create(name: &str, info: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "alarms"], js_name = clear, catch)]
    fn alarms_clear(name: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "alarms"], js_name = getAll, catch)]
    fn alarms_get_all() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = captureVisibleTab, catch)]
    fn tabs_capture_visible_tab(window_id: i32, options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = group, catch)]
    fn tabs_group(options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabGroups"], js_name = query, catch)]
    fn tab_groups_query(query: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabGroups"], js_name = update, catch)]
    fn tab_groups_update(group_id: i32, props: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = remove, catch)]
    fn tabs_remove(tab_id: i32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = goBack, catch)]
    fn tabs_go_back(tab_id: i32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = goForward, catch)]
    fn tabs_go_forward(tab_id: i32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = attach, catch)]
    fn debugger_attach(target: &JsValue, version: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = detach, catch)]
    fn debugger_detach(target: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = sendCommand, catch)]
    fn debugger_send_command(target: &JsValue, method: &str, params: &JsValue) -> Result<Promise, JsValue>;
    // Kept by the background module (listeners must be registered there): why Chrome detached
    // the debugger from a tab.
    #[wasm_bindgen(js_namespace = tabwrightDebugger, js_name = detachReason, catch)]
    fn debugger_detach_reason(tab_id: i32) -> Result<JsValue, JsValue>;
    // Requests to a frame's content script over the port kept open to it (content-channel.js).
    #[wasm_bindgen(js_namespace = tabwrightContent, js_name = ask, catch)]
    fn content_ask(tab_id: i32, frame_id: f64, message: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = tabwrightContent, js_name = closeTabs, catch)]
    fn content_close_tabs(tab_ids: Vec<i32>) -> Result<(), JsValue>;
    // The open panels, told of the list of tasks (background.js).
    #[wasm_bindgen(js_namespace = tabwrightPanels, js_name = tasksChanged, catch)]
    fn panels_tasks_changed(tasks: &JsValue) -> Result<(), JsValue>;
    // The open panels, told of the coding agents asking (background.js).
    #[wasm_bindgen(js_namespace = tabwrightPanels, js_name = clientsAsking, catch)]
    fn panels_clients_asking(asking: &JsValue) -> Result<(), JsValue>;
    // The files attached to a task, kept by the panel (extension/files-store.js).
    #[wasm_bindgen(js_namespace = tabwrightFiles, js_name = read, catch)]
    fn files_read(id: &str) -> Result<Promise, JsValue>;
    // The tokens the worker issued to frames' content scripts (extension/content/frames.js).
    #[wasm_bindgen(js_namespace = tabwrightFrames, js_name = workerInstance, catch)]
    fn frames_worker_instance() -> Result<String, JsValue>;
    #[wasm_bindgen(js_namespace = tabwrightFrames, js_name = frameIdOf, catch)]
    fn frames_frame_id_of(tab_id: i32, token: &str) -> Result<f64, JsValue>;
    // What goes into web pages, only while a task runs (extension/page-scripts.js).
    #[wasm_bindgen(js_namespace = tabwrightPageScripts, js_name = begin, catch)]
    fn page_scripts_begin(task_id: &str, tab_ids: Vec<i32>) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = tabwrightPageScripts, js_name = setTabs, catch)]
    fn page_scripts_set_tabs(task_id: &str, tab_ids: Vec<i32>) -> Result<(), JsValue>;
    #[wasm_bindgen(js_namespace = tabwrightPageScripts, js_name = end, catch)]
    fn page_scripts_end(task_id: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = tabwrightPageScripts, js_name = inject, catch)]
    fn page_scripts_inject(tab_id: i32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = tabwrightPageScripts, js_name = injectWhereMissing, catch)]
    fn page_scripts_inject_where_missing(tab_id: i32) -> Result<Promise, JsValue>;
    // The person's notifications, shown as the waits' are (extension/attention.js).
    #[wasm_bindgen(js_namespace = tabwrightNotices, js_name = show, catch)]
    fn notices_show(id: &str, title: &JsValue, message: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = tabwrightNotices, js_name = clear, catch)]
    fn notices_clear(id: &str) -> Result<Promise, JsValue>;
}

pub use crate::tabs::host::Tab;

/// The text of a thrown JS value: an Error's `message`, or its string form.
pub fn js_error_text(value: &JsValue) -> String {
    if let Some(message) = js_sys::Reflect::get(value, &JsValue::from_str("message")).ok().and_then(|m| m.as_string()) {
        return message;
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

/// `value` as a JS value, made by `JSON.parse` of its JSON text: one reader and one writer of
/// JSON in the core (serde_json), none of its types compiled again for another, and one parse
/// in JS where building the object property by property would cost more.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    serde_json::to_string(value).ok().and_then(|text| js_sys::JSON::parse(&text).ok()).unwrap_or(JsValue::NULL)
}

/// `value` as JSON text (`JSON.stringify`); `undefined` reads as `null`.
pub fn json_text(value: &JsValue) -> Result<String, String> {
    let text = js_sys::JSON::stringify(value).map_err(|e| js_error_text(&e))?;
    Ok(JsValue::from(text).as_string().unwrap_or_else(|| "null".into()))
}

/// A JS value read as a `T`, through its JSON text (`JSON.stringify`).
pub fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    crate::json::read(&json_text(&value)?).map_err(|e| e.to_string())
}

async fn settle(call: Result<Promise, JsValue>) -> Result<JsValue, String> {
    let promise = call.map_err(|e| js_error_text(&e))?;
    JsFuture::from(promise).await.map_err(|e| js_error_text(&e))
}

pub async fn query_tabs(query: &serde_json::Value) -> Result<Vec<Tab>, String> {
    from_js(settle(tabs_query(&to_js(query))).await?)
}

/// `query_tabs` asked of Chrome now, answered when awaited: the question leaves before whatever
/// the caller sends next.
pub fn query_tabs_now(query: &serde_json::Value) -> impl std::future::Future<Output = Result<Vec<Tab>, String>> {
    let call = tabs_query(&to_js(query));
    async move { from_js(settle(call).await?) }
}

pub async fn get_tab(tab_id: i32) -> Result<Tab, String> {
    from_js(settle(tabs_get(tab_id)).await?)
}

pub async fn update_tab(tab_id: i32, props: &serde_json::Value) -> Result<(), String> {
    settle(tabs_update(tab_id, &to_js(props))).await.map(|_| ())
}

pub async fn create_tab(props: &serde_json::Value) -> Result<Tab, String> {
    from_js(settle(tabs_create(&to_js(props))).await?)
}

/// The visible part of the window's shown tab, as a `data:image/png;base64,…` URL.
pub async fn capture_visible_tab(window_id: i32) -> Result<String, String> {
    let url = settle(tabs_capture_visible_tab(window_id, &to_js(&serde_json::json!({"format": "png"})))).await?;
    url.as_string().ok_or_else(|| "Chrome returned no image".to_string())
}

/// The group titled `title` in the window, if there is one.
pub async fn find_group(window: i32, title: &str) -> Result<Option<i32>, String> {
    #[derive(serde::Deserialize)]
    struct Group {
        id: i32,
    }
    let query = serde_json::json!({"windowId": window, "title": title});
    let groups: Vec<Group> = from_js(settle(tab_groups_query(&to_js(&query))).await?)?;
    Ok(groups.first().map(|g| g.id))
}

/// Puts the tab into the group.
pub async fn add_to_group(tab_id: i32, group: i32) -> Result<(), String> {
    settle(tabs_group(&to_js(&serde_json::json!({"tabIds": [tab_id], "groupId": group})))).await.map(|_| ())
}

/// Makes a new group of the tab in the window, titled and coloured.
pub async fn new_group(tab_id: i32, window: i32, title: &str, color: &str) -> Result<(), String> {
    let options = serde_json::json!({"tabIds": [tab_id], "createProperties": {"windowId": window}});
    let id = settle(tabs_group(&to_js(&options))).await?.as_f64().ok_or("Chrome returned no group id")? as i32;
    let props = serde_json::json!({"title": title, "color": color, "collapsed": false});
    settle(tab_groups_update(id, &to_js(&props))).await.map(|_| ())
}

pub async fn remove_tab(tab_id: i32) -> Result<(), String> {
    settle(tabs_remove(tab_id)).await.map(|_| ())
}

pub async fn go_back(tab_id: i32) -> Result<(), String> {
    settle(tabs_go_back(tab_id)).await.map(|_| ())
}

pub async fn go_forward(tab_id: i32) -> Result<(), String> {
    settle(tabs_go_forward(tab_id)).await.map(|_| ())
}

fn debuggee(tab_id: i32) -> JsValue {
    to_js(&serde_json::json!({"tabId": tab_id}))
}

pub async fn attach_debugger(tab_id: i32) -> Result<(), String> {
    settle(debugger_attach(&debuggee(tab_id), "1.3")).await.map(|_| ())
}

pub async fn detach_debugger(tab_id: i32) -> Result<(), String> {
    settle(debugger_detach(&debuggee(tab_id))).await.map(|_| ())
}

/// Sends one Chrome DevTools Protocol command to an attached tab and returns its result.
pub async fn debugger_command(
    tab_id: i32,
    method: &str,
    params: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    let result = settle(debugger_send_command(&debuggee(tab_id), method, &to_js(params))).await?;
    if result.is_undefined() || result.is_null() {
        return Ok(serde_json::Value::Null);
    }
    from_js(result)
}

/// Why Chrome last detached the debugger from the tab (`canceled_by_user`, `target_closed`),
/// if it did since the last ask.
pub fn debugger_detached(tab_id: i32) -> Option<String> {
    debugger_detach_reason(tab_id).ok().and_then(|r| r.as_string())
}

/// Injects extension files into the top frame of a tab (ISOLATED world).
pub async fn inject_files(tab_id: i32, files: &[&str]) -> Result<(), String> {
    let injection = serde_json::json!({"target": {"tabId": tab_id, "frameIds": [0]}, "files": files});
    settle(scripting_execute_script(&to_js(&injection))).await.map(|_| ())
}

/// Sends a message to the content script of one frame of a tab (now) and returns its reply
/// (over the port kept open to the frame: see extension/content-channel.js).
pub fn ask_frame_now<T: Serialize>(
    tab_id: i32,
    frame_id: i64,
    message: &T,
) -> impl std::future::Future<Output = Result<JsValue, String>> + 'static {
    let call = content_ask(tab_id, frame_id as f64, &to_js(message));
    async move { settle(call).await }
}

/// The bytes of a file attached to the task, as base64; `Ok(None)` when it is no longer kept.
pub async fn read_task_file(id: &str) -> Result<Option<String>, String> {
    let value = settle(files_read(id)).await?;
    Ok(value.as_string())
}

/// This worker's instance: frame tokens issued by an earlier one mean nothing to it.
pub fn worker_instance() -> String {
    frames_worker_instance().unwrap_or_default()
}

/// The frame of tab `tab_id` the worker issued `token` to, if it did.
pub fn frame_id_of(tab_id: i32, token: &str) -> Option<i64> {
    let id = frames_frame_id_of(tab_id, token).ok()?;
    (id.is_finite() && id > 0.0).then_some(id as i64)
}

/// Closes the ports to the content scripts of these tabs (their task is over).
pub fn close_content_ports(tab_ids: &[i32]) {
    let _ = content_close_tabs(tab_ids.to_vec());
}

/// Task `task_id` starts, or continues after a worker restart, in these tabs: every document
/// that loads from now on gets the content scripts (extension/page-scripts.js says which, and
/// why only while a task runs).
pub async fn begin_page_scripts(task_id: &str, tab_ids: &[i32]) -> Result<(), String> {
    settle(page_scripts_begin(task_id, tab_ids.to_vec())).await.map(|_| ())
}

/// The task's tabs changed: frames loading in them keep the scripts, frames in no task's tab
/// take them out.
pub fn set_task_tabs(task_id: &str, tab_ids: &[i32]) {
    let _ = page_scripts_set_tabs(task_id, tab_ids.to_vec());
}

/// Task `task_id` is over: its pages take the scripts out; once no task runs, documents that
/// load from now on get nothing.
pub async fn end_page_scripts(task_id: &str) -> Result<(), String> {
    settle(page_scripts_end(task_id)).await.map(|_| ())
}

/// Injects the content scripts into every frame of the tab: its pages loaded before the task
/// began (or before the extension was loaded), and have none.
pub async fn inject_content_scripts(tab_id: i32) -> Result<(), String> {
    settle(page_scripts_inject(tab_id)).await.map(|_| ())
}

/// Injects the content scripts into the frames of the tab that have none (a document a script
/// wrote into a blank frame); how many did.
pub async fn inject_where_missing(tab_id: i32) -> Result<u32, String> {
    let count = settle(page_scripts_inject_where_missing(tab_id)).await?;
    Ok(count.as_f64().unwrap_or(0.0) as u32)
}

/// The `settings` object the options page stores, or null.
pub async fn stored_settings() -> Result<serde_json::Value, String> {
    let all: serde_json::Value = from_js(settle(storage_local_get(&JsValue::from_str("settings"))).await?)?;
    Ok(all.get("settings").cloned().unwrap_or(serde_json::Value::Null))
}

/// The API key kept only for the browser session (`{api_key}`, written by the options page),
/// if there is one.
pub async fn session_api_key() -> Result<Option<String>, String> {
    let keys = session_get(SESSION_KEYS).await?;
    Ok(keys.get("api_key").and_then(serde_json::Value::as_str).map(str::to_string))
}

/// Where the saved skills are kept in chrome.storage.local (a list; the options page lists and
/// deletes them there).
const SKILLS_KEY: &str = "skills";

/// The saved skills as stored: each is read by the worker, and kept as it is when the list is
/// written again.
pub async fn saved_skills() -> Result<Vec<serde_json::Value>, String> {
    let all: serde_json::Value = from_js(settle(storage_local_get(&JsValue::from_str(SKILLS_KEY))).await?)?;
    Ok(match all.get(SKILLS_KEY) {
        Some(serde_json::Value::Array(list)) => list.clone(),
        _ => Vec::new(),
    })
}

/// Replaces the saved skills.
pub async fn write_settings(settings: &serde_json::Value) -> Result<(), String> {
    let items = to_js(&serde_json::json!({ "settings": settings }));
    settle(storage_local_set(&items)).await.map(|_| ())
}

pub async fn write_skills(skills: &[serde_json::Value]) -> Result<(), String> {
    let items = to_js(&serde_json::json!({ SKILLS_KEY: skills }));
    settle(storage_local_set(&items)).await.map(|_| ())
}

/// The schedules as stored (`crate::schedule::STORAGE_KEY`); none when nothing is. Anything
/// but a list is an error, not an empty list: writing over it would lose it.
pub async fn stored_schedules() -> Result<Vec<serde_json::Value>, String> {
    let key = crate::schedule::STORAGE_KEY;
    let all: serde_json::Value = from_js(settle(storage_local_get(&JsValue::from_str(key))).await?)?;
    match all.get(key) {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        Some(serde_json::Value::Array(list)) => Ok(list.clone()),
        Some(_) => Err(format!("\"{key}\" in the extension's storage is not a list")),
    }
}

/// The coding agents' book as stored (`worker::clients::STORAGE_KEY`), `Null` when none is.
pub async fn stored_clients() -> Result<serde_json::Value, String> {
    let key = crate::worker::clients::STORAGE_KEY;
    let all: serde_json::Value = from_js(settle(storage_local_get(&JsValue::from_str(key))).await?)?;
    Ok(all.get(key).cloned().unwrap_or(serde_json::Value::Null))
}

pub async fn write_clients(book: &serde_json::Value) -> Result<(), String> {
    let items = to_js(&serde_json::json!({ crate::worker::clients::STORAGE_KEY: book }));
    settle(storage_local_set(&items)).await.map(|_| ())
}

pub async fn write_schedules(schedules: &[serde_json::Value]) -> Result<(), String> {
    let items = to_js(&serde_json::json!({ crate::schedule::STORAGE_KEY: schedules }));
    settle(storage_local_set(&items)).await.map(|_| ())
}

/// The chrome.storage.session key holding `{api_key}` when the user keeps keys only for the
/// browser session (see the options page).
const SESSION_KEYS: &str = "session_keys";

/// Reads one key of chrome.storage.session (kept while the browser runs, across service-worker
/// restarts); null when absent.
pub async fn session_get(key: &str) -> Result<serde_json::Value, String> {
    let all = match session_at_start() {
        Some(all) => all,
        None => settle(storage_session_get(&JsValue::from_str(key))).await?,
    };
    session_item(&all, key)
}

/// Every item of chrome.storage.session, for reading several with `session_item`.
pub async fn session_items() -> Result<JsValue, String> {
    match session_at_start() {
        Some(all) => Ok(all),
        None => settle(storage_session_get(&JsValue::NULL)).await,
    }
}

/// One item of what `session_items` read, as JSON text: `None` when there is none.
pub fn session_item_text(all: &JsValue, key: &str) -> Result<Option<String>, String> {
    let value = js_sys::Reflect::get(all, &JsValue::from_str(key)).map_err(|e| js_error_text(&e))?;
    match value.as_string() {
        // Written by `session_set_with`: the value as JSON text.
        Some(text) => Ok(Some(text)),
        None if value.is_undefined() || value.is_null() => Ok(None),
        // Written as an object by an older version.
        None => json_text(&value).map(Some),
    }
}

/// One item of what `session_items` read: `Null` when there is none.
pub fn session_item(all: &JsValue, key: &str) -> Result<serde_json::Value, String> {
    match session_item_text(all, key)? {
        Some(text) => crate::json::from_text(&text).map_err(|e| e.to_string()),
        None => Ok(serde_json::Value::Null),
    }
}

thread_local! {
    /// The newest write asked for, per key of chrome.storage.session, by its number.
    static SESSION_WRITES: RefCell<(u64, HashMap<String, u64>)> = RefCell::new((0, HashMap::new()));
}

/// All of chrome.storage.session as background.js read it while the core loaded (a worker that
/// starts looks for a task to continue at once, and need not wait for Chrome to answer then).
/// Taken once, and only while this worker has written nothing there.
fn session_at_start() -> Option<JsValue> {
    let global = js_sys::global();
    let name = JsValue::from_str("tabwrightSessionAtStart");
    let items = js_sys::Reflect::get(&global, &name).ok().filter(JsValue::is_object)?;
    let _ = js_sys::Reflect::delete_property(&global, &name);
    SESSION_WRITES.with_borrow(|(count, _)| *count == 0).then_some(items)
}

/// Writes one key of chrome.storage.session, with the JSON text `text` makes. The value is
/// stored as JSON text: Chrome copies a string at once, where a nested object is converted value
/// by value on the worker's thread and again in the browser, whose queue the task's own tab and
/// message calls wait behind. Writes of the same key asked for in the same turn (several events
/// at once) come down to the newest, which holds what the older ones would have written; its
/// text is made only then, off the path of whatever asked for the write.
pub async fn session_set_with(key: &str, text: impl FnOnce() -> Result<String, String>) -> Result<(), String> {
    let ticket = SESSION_WRITES.with_borrow_mut(|(count, newest)| {
        *count += 1;
        newest.insert(key.to_string(), *count);
        *count
    });
    let _ = JsFuture::from(Promise::resolve(&JsValue::UNDEFINED)).await;
    if SESSION_WRITES.with_borrow(|(_, newest)| newest.get(key) != Some(&ticket)) {
        return Ok(());
    }
    // This write is the newest of its key: once made, the key is forgotten here (a long run of
    // tasks writes thousands of keys, each once or a few times).
    SESSION_WRITES.with_borrow_mut(|(_, newest)| newest.remove(key));
    let text = text()?;
    let items = js_sys::Object::new();
    js_sys::Reflect::set(&items, &JsValue::from_str(key), &JsValue::from_str(&text)).map_err(|e| js_error_text(&e))?;
    settle(storage_session_set(&items)).await.map(|_| ())
}

/// Hands the coding agents asking to the open panels (a closed panel is no error).
pub fn clients_asking(asking: &[crate::protocol::ClientAsking]) {
    let _ = panels_clients_asking(&to_js(&asking));
}

/// Hands the list of tasks to the open panels (a closed panel is no error).
pub fn tasks_changed(tasks: &[crate::protocol::TaskSummary]) {
    let _ = panels_tasks_changed(&to_js(&tasks));
}

/// Removes items of chrome.storage.session.
pub async fn session_remove(keys: Vec<String>) -> Result<(), String> {
    settle(storage_session_remove(keys)).await.map(|_| ())
}

/// A repeating alarm: its event wakes a stopped service worker.
pub async fn start_alarm(name: &str, period_minutes: f64) {
    let info = to_js(&serde_json::json!({"periodInMinutes": period_minutes, "delayInMinutes": period_minutes}));
    let _ = settle(alarms_create(name, &info)).await;
}

pub async fn stop_alarm(name: &str) {
    let _ = settle(alarms_clear(name)).await;
}

/// No task runs: the wake-up alarm `alarm` goes, and so does what pages get while a task runs.
/// Both are asked of Chrome at once, before anything else can run here (a task that begins
/// next registers them again after).
pub async fn tasks_idle(alarm: &str) {
    let cleared = alarms_clear(alarm);
    let ended = page_scripts_end("");
    let _ = settle(cleared).await;
    let _ = settle(ended).await;
}

/// An alarm that rings once, at `when_ms` (ms since the epoch), in place of any of that name.
pub async fn alarm_at(name: &str, when_ms: f64) -> Result<(), String> {
    settle(alarms_create(name, &to_js(&serde_json::json!({ "when": when_ms })))).await.map(|_| ())
}

/// The names of the alarms set.
pub async fn alarm_names() -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct Alarm {
        name: String,
    }
    let alarms: Vec<Alarm> = from_js(settle(alarms_get_all()).await?)?;
    Ok(alarms.into_iter().map(|a| a.name).collect())
}

/// The local time zone's offset from UTC at `utc_ms`, in minutes east of Greenwich.
pub fn local_offset_minutes(utc_ms: f64) -> i32 {
    let minutes_west = js_sys::Date::new(&JsValue::from_f64(utc_ms)).get_timezone_offset();
    if minutes_west.is_finite() {
        -(minutes_west as i32)
    } else {
        0
    }
}

/// Shows notification `id` with words as the pages read a core message (`{message,
/// locale_text}`), in the person's language.
pub async fn notify(id: &str, title: &impl Serialize, message: &impl Serialize) -> Result<(), String> {
    settle(notices_show(id, &to_js(title), &to_js(message))).await.map(|_| ())
}

pub async fn clear_notification(id: &str) -> Result<(), String> {
    settle(notices_clear(id)).await.map(|_| ())
}

/// A cheap extension-API call; made every ~25 s while a task runs, it keeps Chrome from
/// stopping the idle service worker.
pub async fn keep_alive() {
    let _ = settle(runtime_get_platform_info()).await;
}
