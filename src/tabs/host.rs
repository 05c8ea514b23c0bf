//! The port the tab browser works through: the browser's tabs, the content scripts in their
//! frames, the debugger, files, and time. The extension implements it over chrome.* (`ext::tabs`),
//! one call per method and no decision; native tests over a scripted browser.

use crate::agent::Clock;
use crate::protocol::{ContentReply, ContentRequest};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

/// A tab as far as Tabwright cares (Chrome's `tabs.Tab`, the fields read).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    pub id: Option<i32>,
    #[serde(default)]
    pub url: Option<String>,
    /// The URL being loaded, before `url` switches to it.
    #[serde(default)]
    pub pending_url: Option<String>,
    /// `loading` or `complete`.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    /// The tab whose page opened this one (a link with target=_blank, window.open).
    #[serde(default)]
    pub opener_tab_id: Option<i32>,
    #[serde(default)]
    pub window_id: Option<i32>,
    /// Whether it is the shown tab of its window.
    #[serde(default)]
    pub active: bool,
    /// The tab group it is in; -1 (or absent) when none.
    #[serde(default)]
    pub group_id: Option<i32>,
}

impl Tab {
    pub fn is_complete(&self) -> bool {
        self.status.as_deref() == Some("complete")
    }

    /// Where the tab is going: the address being loaded, else the one it shows ("" for none).
    pub fn destination(&self) -> &str {
        self.pending_url.as_deref().or(self.url.as_deref()).unwrap_or("")
    }
}

/// What a frame's content script answered.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameAnswer {
    Reply(ContentReply),
    /// The script answered nothing.
    Nothing,
    /// The script answered something that is no reply.
    Unreadable(String),
}

/// What the person answers while the task waits on them: `Some((id, None))` while the thing
/// numbered `id` waits, `Some((id, Some(answer)))` once delivered. Shared by the task's browser,
/// which asks and waits, and the worker, which delivers what the side panel sent.
pub struct Waiting<T>(Rc<RefCell<Option<Open<T>>>>);

/// What waits, by its id, and the answer once given.
type Open<T> = (u32, Option<T>);

/// The answer to the task's open question (`ask_human`; its id is always 0).
pub type Answers = Waiting<String>;
/// The answer to the task's open consent (`crate::guard`).
pub type Consents = Waiting<crate::guard::ConsentAnswer>;

impl<T> Clone for Waiting<T> {
    fn clone(&self) -> Self {
        Waiting(self.0.clone())
    }
}

impl<T> Default for Waiting<T> {
    fn default() -> Self {
        Waiting(Rc::default())
    }
}

impl<T: Clone> Waiting<T> {
    /// Hands the person's answer to what waits as `id`; false when nothing does.
    pub fn deliver(&self, id: u32, answer: T) -> bool {
        let mut slot = self.0.borrow_mut();
        match &*slot {
            Some((open, None)) if *open == id => {
                *slot = Some((id, Some(answer)));
                true
            }
            _ => false,
        }
    }

    /// Whether something waits for the person's answer now.
    pub fn is_open(&self) -> bool {
        matches!(&*self.0.borrow(), Some((_, None)))
    }

    pub(crate) fn open(&self, id: u32) {
        *self.0.borrow_mut() = Some((id, None));
    }

    pub(crate) fn answer(&self) -> Option<T> {
        self.0.borrow().as_ref().and_then(|(_, answer)| answer.clone())
    }

    pub(crate) fn close(&self) {
        *self.0.borrow_mut() = None;
    }
}

/// A future that does not borrow what made it.
pub type Later<T> = Pin<Box<dyn Future<Output = T>>>;

/// How a tab is changed.
#[derive(Debug, Clone, PartialEq)]
pub enum TabChange {
    /// Shown in its window.
    Activate,
    /// Loads this URL.
    Load(String),
}

/// Time comes from the agent's own clock port (`now_ms`, `sleep`).
#[allow(async_fn_in_trait)]
pub trait TabHost: Clock + Clone + 'static {
    /// Runs `work` on its own.
    fn spawn(&self, work: Later<()>);
    fn warn(&self, text: &str);

    // Tabs.
    async fn tab(&self, id: i32) -> Result<Tab, String>;
    /// Every tab of the browser, asked now (the question leaves before the call returns).
    fn all_tabs_now(&self) -> Later<Result<Vec<Tab>, String>>;
    async fn change_tab(&self, id: i32, change: TabChange) -> Result<(), String>;
    /// Opens an active tab at `url` beside `opener`, in `window` when known.
    async fn open_tab(&self, url: &str, opener: i32, window: Option<i32>) -> Result<Tab, String>;
    async fn close_tab(&self, id: i32) -> Result<(), String>;
    /// The browser's own back (`-1`) or forward (`1`) button.
    async fn history_button(&self, id: i32, delta: i32) -> Result<(), String>;
    /// A PNG data URL of what the window shows.
    async fn capture_window(&self, window: i32) -> Result<String, String>;
    /// The tab group titled `title` in the window, if there is one.
    async fn find_group(&self, window: i32, title: &str) -> Result<Option<i32>, String>;
    async fn add_to_group(&self, tab: i32, group: i32) -> Result<(), String>;
    /// Makes a new group of the tab in the window, titled and coloured.
    async fn new_group(&self, tab: i32, window: i32, title: &str, color: &str) -> Result<(), String>;
    /// Which tabs are task `task`'s (content scripts in tabs of no task stay quiet).
    fn set_task_tabs(&self, task: &str, ids: &[i32]);

    // The content scripts.
    /// Sends `request` to a frame's content script (the question leaves before the call returns).
    fn ask_frame(&self, tab: i32, frame: i64, request: &ContentRequest) -> Later<Result<FrameAnswer, String>>;
    /// The frame of `tab` this worker issued `token` to, if it did.
    fn frame_id_of(&self, tab: i32, token: &str) -> Option<i64>;
    /// This worker's instance: tokens issued by an earlier one mean nothing to it.
    fn worker_instance(&self) -> String;
    /// Puts the content scripts into every frame of the tab.
    async fn inject_content_scripts(&self, tab: i32) -> Result<(), String>;
    /// Puts them into the frames that lack them; how many did.
    async fn inject_where_missing(&self, tab: i32) -> Result<u32, String>;
    /// Puts extension files into the tab's top frame.
    async fn inject_files(&self, tab: i32, files: &[&str]) -> Result<(), String>;
    /// Task `task` is over: its pages take the scripts out, and once no task runs, no page
    /// that loads gets them.
    async fn end_page_scripts(&self, task: &str) -> Result<(), String>;
    /// Closes the ports to the content scripts of these tabs (their task is over).
    fn close_content_ports(&self, tabs: &[i32]);

    // Files the person attached (base64; `None` when no longer kept).
    async fn read_task_file(&self, id: &str) -> Result<Option<String>, String>;

    // The debugger (Chrome DevTools Protocol).
    async fn attach_debugger(&self, tab: i32) -> Result<(), String>;
    async fn detach_debugger(&self, tab: i32) -> Result<(), String>;
    async fn debugger_command(
        &self,
        tab: i32,
        method: &str,
        params: &serde_json::Value,
    ) -> Result<serde_json::Value, String>;
    /// Why the debugger was detached from the tab since the last call, if it was.
    fn debugger_detached(&self, tab: i32) -> Option<String>;
}

/// Which running task owns which tab, shared by the worker and every task's browser, and
/// whether a tab is being opened for a task right now. Several tasks run in one browser: a tab
/// that appears while one task's action runs may be another task's (its start tab, one it
/// opened), and must not be taken in as the action's. The worker opens a task's tab and claims
/// it in one piece (`opening`, then `claim`); a browser looking for the tabs its action opened
/// waits while an opening is under way (`opening_now`), then leaves every claimed tab to its
/// owner.
#[derive(Clone, Default)]
pub struct TabClaims(Rc<RefCell<Claims>>);

#[derive(Default)]
struct Claims {
    owner: std::collections::BTreeMap<i32, String>,
    opening: u32,
}

/// An opening under way, until dropped.
pub struct Opening(TabClaims);

impl Drop for Opening {
    fn drop(&mut self) {
        let mut claims = (self.0).0.borrow_mut();
        claims.opening = claims.opening.saturating_sub(1);
    }
}

impl TabClaims {
    /// Tab `tab` is task `task`'s.
    pub fn claim(&self, tab: i32, task: &str) {
        self.0.borrow_mut().owner.insert(tab, task.to_string());
    }

    /// Task `task`'s tabs are exactly these.
    pub fn set(&self, task: &str, tabs: &[i32]) {
        let mut claims = self.0.borrow_mut();
        claims.owner.retain(|_, owner| owner != task);
        for &tab in tabs {
            claims.owner.insert(tab, task.to_string());
        }
    }

    /// Task `task` ended: its tabs are no one's.
    pub fn release(&self, task: &str) {
        self.0.borrow_mut().owner.retain(|_, owner| owner != task);
    }

    /// The task that owns `tab`, if one does.
    pub fn owner(&self, tab: i32) -> Option<String> {
        self.0.borrow().owner.get(&tab).cloned()
    }

    /// A tab is being opened for a task until the `Opening` is dropped (after its claim).
    pub fn opening(&self) -> Opening {
        self.0.borrow_mut().opening += 1;
        Opening(self.clone())
    }

    /// Whether a tab is being opened for a task now.
    pub fn opening_now(&self) -> bool {
        self.0.borrow().opening > 0
    }
}

/// What one task waits for from the person: its open question and its open consent. Each task
/// has its own, held by its browser and by the worker, which hands over what the side panel
/// sent for that task.
#[derive(Clone, Default)]
pub struct PersonWaits {
    pub answers: Answers,
    pub consents: Consents,
}
