//! Bindings to the chrome.* APIs Tabwright uses.
//!
//! No crate covers these, so they are declared here. Each import is `catch`: an exception
//! thrown by Chrome (a closed tab, a restricted page) must become an `Err`, because an uncaught
//! exception inside an async export leaves its promise pending forever.

use js_sys::Promise;
use serde::{de::DeserializeOwned, Serialize};
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
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = sendMessage, catch)]
    fn tabs_send_message(tab_id: i32, message: &JsValue, options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "scripting"], js_name = executeScript, catch)]
    fn scripting_execute_script(injection: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = get, catch)]
    fn storage_local_get(keys: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getPlatformInfo, catch)]
    fn runtime_get_platform_info() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getManifest, catch)]
    fn runtime_get_manifest() -> Result<JsValue, JsValue>;
}

/// A tab as far as Tabwright cares.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    pub id: Option<i32>,
    #[serde(default)]
    pub url: Option<String>,
    /// The URL being loaded, before `url` switches to it.
    #[serde(default)]
    pub pending_url: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
}

/// The text of a thrown JS value: an Error's `message`, or its string form.
pub fn js_error_text(value: &JsValue) -> String {
    if let Some(message) = js_sys::Reflect::get(value, &JsValue::from_str("message")).ok().and_then(|m| m.as_string()) {
        return message;
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).unwrap_or(JsValue::NULL)
}

pub fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())
}

async fn settle(call: Result<Promise, JsValue>) -> Result<JsValue, String> {
    let promise = call.map_err(|e| js_error_text(&e))?;
    JsFuture::from(promise).await.map_err(|e| js_error_text(&e))
}

pub async fn query_tabs(query: &serde_json::Value) -> Result<Vec<Tab>, String> {
    from_js(settle(tabs_query(&to_js(query))).await?)
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

/// Sends a message to the content script of one frame of a tab and returns its reply.
pub async fn send_to_frame<T: Serialize>(tab_id: i32, frame_id: i64, message: &T) -> Result<JsValue, String> {
    let options = to_js(&serde_json::json!({"frameId": frame_id}));
    settle(tabs_send_message(tab_id, &to_js(message), &options)).await
}

/// A group of content scripts the manifest declares: its files, in order, and the world they
/// run in (`ISOLATED` or `MAIN`). The manifest is the one list of them.
pub struct ContentScripts {
    pub files: Vec<String>,
    pub world: String,
}

pub fn content_scripts() -> Result<Vec<ContentScripts>, String> {
    let manifest: serde_json::Value = from_js(runtime_get_manifest().map_err(|e| js_error_text(&e))?)?;
    let groups: Vec<ContentScripts> = manifest
        .get("content_scripts")
        .and_then(|v| v.as_array())
        .map(|groups| {
            groups
                .iter()
                .map(|g| ContentScripts {
                    files: g["js"]
                        .as_array()
                        .map(|f| f.iter().filter_map(|f| f.as_str().map(String::from)).collect())
                        .unwrap_or_default(),
                    world: g["world"].as_str().unwrap_or("ISOLATED").to_string(),
                })
                .filter(|g| !g.files.is_empty())
                .collect()
        })
        .unwrap_or_default();
    if groups.is_empty() {
        return Err("the manifest declares no content scripts".into());
    }
    Ok(groups)
}

/// Injects the content scripts into every frame of the tab (for tabs opened before the
/// extension was installed or reloaded, where the manifest's content scripts never ran).
pub async fn inject_content_scripts(tab_id: i32) -> Result<(), String> {
    for group in content_scripts()? {
        let injection = serde_json::json!({
            "target": {"tabId": tab_id, "allFrames": true},
            "files": group.files,
            "world": group.world,
        });
        settle(scripting_execute_script(&to_js(&injection))).await?;
    }
    Ok(())
}

/// The `settings` object the options page stores, or null.
pub async fn stored_settings() -> Result<serde_json::Value, String> {
    let all: serde_json::Value = from_js(settle(storage_local_get(&JsValue::from_str("settings"))).await?)?;
    Ok(all.get("settings").cloned().unwrap_or(serde_json::Value::Null))
}

/// A cheap extension-API call; made every ~25 s while a task runs, it keeps Chrome from
/// stopping the idle service worker.
pub async fn keep_alive() {
    let _ = settle(runtime_get_platform_info()).await;
}
