//! The ports a worker's task runs through, named for what they are. The extension implements
//! them over chrome.* (`ext::host`); native tests over memory, with a worker that can be
//! stopped at any await and started again on the same saved state.

use crate::agent::Clock;
use crate::agent::TaskState;
use crate::browser::Browser;
use crate::llm::{HttpRequest, HttpResponse, LlmTransport, TransportError};
use crate::protocol::{AgentEvent, TaskSummary};
use crate::settings::PageOptions;
use crate::tabs::host::Tab;
use std::future::Future;
use std::pin::Pin;

/// Work that runs on its own once started (a save, the task itself, a heartbeat).
pub type Work = Pin<Box<dyn Future<Output = ()>>>;

/// What is saved for a restarted worker, read at once: one item's JSON text by its key (`None`
/// when there is none).
pub type SavedItems = Box<dyn Fn(&str) -> Result<Option<String>, String>>;

/// Where a running task is kept while the browser runs (chrome.storage.session): across
/// restarts of the worker, gone with the browser.
#[allow(async_fn_in_trait)]
pub trait TaskStore {
    /// Everything saved, read at once.
    async fn read_saved(&self) -> Result<SavedItems, String>;
    /// Saves one item as the JSON text `text` makes. Writes of one key asked for together may
    /// come down to the newest (it holds what the older would have written), so `text` is made
    /// only when the write is done.
    async fn write_saved(&self, key: String, text: Box<dyn FnOnce() -> Result<String, String>>);
    /// Removes these items (a task no longer kept).
    async fn remove_saved(&self, keys: Vec<String>);
}

/// What the person configured (chrome.storage.local): the settings and the saved skills.
#[allow(async_fn_in_trait)]
pub trait SettingsStore {
    /// The stored settings object, or `Null` when none are saved.
    async fn stored_settings(&self) -> Result<serde_json::Value, String>;
    /// The API key kept only for the browser session (settings with `keys_in_session`), if one
    /// is: gone once the browser closed.
    async fn session_api_key(&self) -> Result<Option<String>, String>;
    /// The saved skills as stored, each read by `agent::skill::readable`.
    async fn saved_skills(&self) -> Result<Vec<serde_json::Value>, String>;
    /// Replaces the saved skills.
    async fn write_skills(&self, skills: &[serde_json::Value]) -> Result<(), String>;
    /// Replaces the stored settings object.
    async fn write_settings(&self, settings: &serde_json::Value) -> Result<(), String>;
    /// The schedules as stored (`crate::schedule::STORAGE_KEY`), each read by
    /// `schedule::ScheduleBook::from_stored`; none when nothing is stored.
    async fn stored_schedules(&self) -> Result<Vec<serde_json::Value>, String>;
    /// Replaces the stored schedules.
    async fn write_schedules(&self, schedules: &[serde_json::Value]) -> Result<(), String>;
    /// The coding agents' book as stored (`worker::clients::STORAGE_KEY`): the switch and the
    /// person's answers; `Null` when nothing is stored.
    async fn stored_clients(&self) -> Result<serde_json::Value, String>;
    /// Replaces the coding agents' book.
    async fn write_clients(&self, book: &serde_json::Value) -> Result<(), String>;
}

/// The browser's tabs, as a task's start needs them.
#[allow(async_fn_in_trait)]
pub trait Tabs {
    async fn tab(&self, id: i32) -> Result<Tab, String>;
    /// The active tab of the last focused window, if any.
    async fn active_tab(&self) -> Result<Option<Tab>, String>;
    /// Opens an active tab at `url`, in `window` when given.
    async fn open_tab(&self, url: &str, window: Option<i32>) -> Result<Tab, String>;
    /// Puts the tab into the task's tab group, titled `group`.
    async fn group_tab(&self, id: i32, group: &str) -> Result<(), String>;
    /// Every tab of the browser's normal windows.
    async fn all_tabs(&self) -> Result<Vec<Tab>, String>;
}

/// Where the task runs: the pages, the model, time, and the world outside the core.
#[allow(async_fn_in_trait)]
pub trait TaskRuntime {
    type Browser: Browser + 'static;
    type Transport: LlmTransport + 'static;
    type Clock: Clock + 'static;

    /// The browser task `seat` works in: `tab` now, and the task's `tabs` (the current one
    /// among them).
    fn browser(&self, seat: crate::tabs::TaskSeat, tab: i32, tabs: &[i32], options: PageOptions) -> Self::Browser;
    /// The model's transport, giving up on a call after `timeout_ms`.
    fn transport(&self, timeout_ms: u32) -> Self::Transport;
    /// One GET (a provider's model list), given up after `timeout_ms`.
    async fn get(&self, request: &HttpRequest, timeout_ms: u32) -> Result<HttpResponse, TransportError>;
    fn clock(&self) -> Self::Clock;
    /// Runs `work` on its own.
    fn spawn(&self, work: Work);
    /// Hands an event of task `task_id` (its position `seq` in the task's log), and where the
    /// task stands after it, to the panels and the task history; no panel may be open.
    fn broadcast(&self, event: &AgentEvent, seq: u32, task_id: &str, state: &TaskState);
    /// Hands the list of tasks to the panels, after it changed (a task queued, started, paused,
    /// waiting for the person, ended).
    fn broadcast_tasks(&self, tasks: &[TaskSummary]);
    /// Hands the panels the coding agents waiting for the person's answer, after that changed.
    fn broadcast_clients(&self, asking: &[crate::protocol::ClientAsking]);
    /// Task `task_id` begins running on `tabs`: keep or bring the worker back while tasks run,
    /// and let its pages get the content scripts.
    async fn task_began(&self, task_id: &str, tabs: &[i32]);
    /// No task runs any more (each task's browser already cleaned up its pages).
    async fn tasks_idle(&self);
    /// A saved task that cannot go on: take out the page scripts its worker put in.
    async fn end_page_scripts(&self, task_id: &str);
    /// Called every `KEEP_ALIVE_MS` while a task runs, so the worker is not stopped as idle.
    async fn keep_alive(&self);
    /// Rings alarm `name` once at `when_ms` (ms since the epoch), in place of any alarm of
    /// that name; it wakes a stopped worker.
    async fn set_alarm(&self, name: &str, when_ms: f64);
    async fn clear_alarm(&self, name: &str);
    /// Clears every alarm whose name begins with `prefix`, except those named in `keep`.
    async fn clear_alarms_except(&self, prefix: &str, keep: &[String]);
    /// The local time zone's offset from UTC at `utc_ms`, in minutes east of Greenwich
    /// (`schedule::LocalOffset`).
    fn local_offset_minutes(&self, utc_ms: f64) -> i32;
    /// Shows the person a notification `id` (in place of one with that id), even with no
    /// extension page open; a click on it opens the side panel.
    async fn notify(&self, id: &str, title: &NoticeText, message: &NoticeText);
    /// Takes notification `id` away, if it is shown.
    async fn clear_notification(&self, id: &str);
    /// Something went wrong that costs nothing but should be seen by a developer.
    fn warn(&self, text: &str);
}

/// Words of a notification, as the pages read a core message: in English, and where they find
/// it in the person's language (none: shown as they are, such as the task's own answer).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NoticeText {
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale_text: Option<crate::message::LocaleText>,
}

/// Every port a worker needs.
pub trait WorkerHost: TaskStore + SettingsStore + Tabs + TaskRuntime + 'static {}

impl<H: TaskStore + SettingsStore + Tabs + TaskRuntime + 'static> WorkerHost for H {}
