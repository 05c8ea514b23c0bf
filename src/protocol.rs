//! The messages that cross the seam between the side panel (or the headless runner) and the
//! service worker, defined once and versioned.
//!
//! JSON on the wire is `{"v": 1, "type": "...", ...}`. The panel only sends [`PanelRequest`]s;
//! the worker answers each with a [`PanelReply`] and broadcasts [`AgentEvent`]s while a task
//! runs. Anything else — an unknown type, a missing field, another version — is refused with a
//! message that says so.

use serde::{Deserialize, Serialize};

// What a running task reports is the agent's to say; it crosses the seam as it is.
pub use crate::agent::events::{AgentEvent, PlannedAction, PROTOCOL_VERSION};

crate::tagged::tagged_enum! {
tag = "type", remote = "PanelRequest", serde(rename_all = "snake_case", deny_unknown_fields);
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub enum PanelRequest {
    /// Start a task on `tab_id`, first opening `start_url` in it when given. With
    /// `output_schema` (a JSON Schema), the task's result is data of that shape.
    StartTask {
        v: u32,
        task: String,
        tab_id: Option<i32>,
        start_url: Option<String>,
        #[serde(default)]
        output_schema: Option<serde_json::Value>,
        /// Continue the conversation: the task is told the earlier tasks since the last new one.
        #[serde(default)]
        follow_up: bool,
        /// The task a follow-up continues the conversation of (while it runs, the follow-up
        /// waits in the queue for its end); when absent, the latest task that ended, else the
        /// latest.
        #[serde(default)]
        follows: Option<String>,
        /// Start in a new tab (in the task's own tab group) instead of the user's tab.
        #[serde(default)]
        new_tab: bool,
        /// The files the person attached (their bytes are kept by the panel: files-store.js).
        #[serde(default)]
        files: Vec<crate::browser::TaskFile>,
        /// The model for this task, chosen in the side panel; the saved model when absent.
        #[serde(default)]
        model: Option<String>,
    },
    /// The user's answer to task `task_id`'s `ask_human` question. Every request that steers
    /// a task names it by `task_id`; without one, pause, resume and stop steer the task
    /// `get_status` shows first (`worker::TaskHost::chosen`), and an answer goes to the latest
    /// started task that waits for one.
    AnswerQuestion {
        v: u32,
        answer: String,
        #[serde(default)]
        task_id: Option<String>,
    },
    /// The person's answer to the task's consent `id` (`consent_asked`).
    AnswerConsent {
        v: u32,
        id: u32,
        answer: crate::guard::ConsentAnswer,
        #[serde(default)]
        task_id: Option<String>,
    },
    /// Stop the task; a queued one leaves the queue.
    StopTask {
        v: u32,
        #[serde(default)]
        task_id: Option<String>,
    },
    /// Pause the task at its next step or action; `ResumeTask` lets it go on.
    PauseTask {
        v: u32,
        #[serde(default)]
        task_id: Option<String>,
    },
    ResumeTask {
        v: u32,
        #[serde(default)]
        task_id: Option<String>,
    },
    /// Ask for a task's events, e.g. when the panel reopens: task `task_id`'s, else the task
    /// shown first (the latest running, else the latest). A caller that already holds the
    /// first `since` events of task `task_id` gets only the rest. The reply lists every task.
    GetStatus {
        v: u32,
        #[serde(default)]
        task_id: Option<String>,
        #[serde(default)]
        since: Option<u32>,
    },
    /// Ask the model named by these settings (as the options page holds them, saved or not)
    /// for one small JSON answer: does the connection work?
    TestConnection {
        v: u32,
        settings: serde_json::Value,
    },
    /// The models the provider of these settings offers (as the options page holds them,
    /// saved or not; the saved settings when absent), for a model field: `Models`, or
    /// `Refused` saying why.
    ListModels {
        v: u32,
        #[serde(default)]
        settings: Option<serde_json::Value>,
    },

    /// Replay a saved task's steps without the model, in a new tab at `start_url` (see
    /// `agent::replay`). `title` is what the panel shows as the task.
    ReplayTask {
        v: u32,
        title: String,
        start_url: String,
        steps: Vec<crate::agent::replay::ReplayStep>,
    },
    /// Read the options page's two typed lists, as typed: extra headers (one `Name: value` per
    /// line) and prices (one `model input output [cached]` per line). `SettingsLists`, or
    /// `Refused` naming the line and why (`settings::form`).
    ReadSettingsLists {
        v: u32,
        extra_headers: String,
        prices: String,
    },
    /// Check settings as a task would (`Accepted`, or `Refused` saying what to fix), without
    /// starting one: the options page asks after each save.
    CheckSettings {
        v: u32,
        settings: serde_json::Value,
    },
    /// Which site a skill made of these saved steps (begun on `start_url`) would belong to, and
    /// what it would take as parameters (`SkillDraft`); or why they cannot make one.
    DraftSkill {
        v: u32,
        start_url: String,
        steps: Vec<crate::agent::replay::ReplayStep>,
    },
    /// Save a skill (see `agent::skill`); `SkillSaved`, or `Refused` saying what to change.
    SaveSkill {
        v: u32,
        draft: crate::agent::skill::SkillDraft,
    },
    /// Keep `value` as the secret `name` for the site `site` (a host) in the settings: what a
    /// replay types where the task it repeats typed a password, which the history never keeps.
    SaveSecret {
        v: u32,
        name: String,
        value: String,
        site: String,
    },
    /// The schedules (`crate::schedule`), with why stored entries that cannot run were left
    /// out: `Schedules`.
    ListSchedules {
        v: u32,
    },
    /// Add a schedule (`id` absent), or change schedule `id` to `draft`: `Schedules`, or
    /// `Refused` saying what to change.
    SaveSchedule {
        v: u32,
        #[serde(default)]
        id: Option<String>,
        draft: crate::schedule::ScheduleDraft,
    },
    RemoveSchedule {
        v: u32,
        id: String,
    },
    /// Pause schedule `id` (no run until resumed), or resume it from its next time on.
    PauseSchedule {
        v: u32,
        id: String,
        paused: bool,
    },
    /// Start a run of schedule `id` now, whatever its times; refused while its last run is
    /// under way.
    RunScheduleNow {
        v: u32,
        id: String,
    },
    /// The coding agents the person answered (allowed or denied) and those asking now:
    /// `Clients` (`crate::bridge`).
    ListClients {
        v: u32,
    },
    /// The person's answer to client `name`'s asking to use Tabwright (the panel's card), or
    /// a change of it (the options' list): `Clients`.
    AnswerClient {
        v: u32,
        name: String,
        allow: bool,
    },
    /// Forget client `name`'s answer: it asks again when it next connects. `Clients`.
    ForgetClient {
        v: u32,
        name: String,
    },
    /// The options' switch (`enabled`: coding agents may connect at all) and what becomes of a
    /// client's running tasks when it disconnects (`stop_on_disconnect`, else they go on):
    /// `Clients`.
    SetClientOptions {
        v: u32,
        enabled: bool,
        stop_on_disconnect: bool,
    },
}
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProtocolError {
    #[error("unreadable message from the side panel ({0}); reload the side panel")]
    Unreadable(String),
    #[error(
        "the side panel speaks protocol version {found} but the core speaks {PROTOCOL_VERSION}; reload the extension"
    )]
    Version { found: u32 },
}

/// Why the core did not do what a page asked; each says what to do instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("No task is running.")]
    NoTaskRunning,
    #[error("No task is paused.")]
    NoTaskPaused,
    #[error("Type an answer first.")]
    EmptyAnswer,
    #[error("No question is waiting for an answer.")]
    NoQuestion,
    #[error("The task is not waiting for that answer any more.")]
    NoConsent,
    #[error("Type a task first.")]
    EmptyTask,
    #[error("The task is {chars} characters long; a task may have at most {max}. Shorten it: the model reads the whole task at every step.")]
    TaskTooLong { chars: usize, max: usize },
    #[error("The saved task has no actions to replay.")]
    EmptyReplay,
    #[error("The output schema must be a JSON Schema object, e.g. {{\"type\": \"object\", \"properties\": {{…}}}}.")]
    BadOutputSchema,
    #[error("The output schema uses {0}, which Tabwright cannot check; describe the shape without it (a check the schema cannot say can go in the task's words).")]
    UnsupportedOutputSchema(String),
    #[error("The attached files cannot be used: {0}.")]
    BadFiles(String),
    #[error("Tabwright is restoring the task that was running; try again in a moment.")]
    Restoring,
    #[error("Another task is working in this tab. Start this one in a new tab (tick \"New tab\" beside Run), or stop the other first.")]
    TabTaken,
    #[error("{0} tasks are waiting already. Let some finish, or stop those you no longer need.")]
    QueueFull(usize),
    #[error("That task is over or unknown; the list of tasks shows those that run.")]
    NoSuchTask,
    #[error("The settings could not be read ({0}). Reload the extension.")]
    SettingsUnreadable(String),
    #[error("The saved skills could not be read ({0}). Reload the extension.")]
    SkillsUnreadable(String),
    #[error("The skill could not be saved ({0}).")]
    SkillNotSaved(String),
    #[error("A secret named \"{0}\" is already in Tabwright's settings. Choose another name.")]
    SecretExists(String),
    #[error("The secret could not be saved ({0}).")]
    SecretNotSaved(String),
    #[error("Could not find the current tab: {0}")]
    CurrentTabUnknown(String),
    #[error("There is no open tab to work in. Open a web page and try again.")]
    NoOpenTab,
    #[error("The start URL \"{0}\" is not an http(s) URL.")]
    BadStartUrl(String),
    #[error("Could not open a tab for {url}: {reason}")]
    TabNotOpenedAt { url: String, reason: String },
    #[error("Could not open a new tab: {0}")]
    NewTabNotOpened(String),
    #[error("Chrome gave the tab no id. Try again.")]
    TabWithoutId,
    #[error("{} To start here anyway, tick \"New tab\" beside Run: the task then begins in a new tab.", crate::browser::BrowserError::RestrictedPage { url: url.clone() })]
    RestrictedStart { url: String },
    #[error("{0}'s acts ended: Chrome stopped Tabwright's service worker, which closed its connection. It begins again at its next observe.")]
    ClientActsEnded(String),
    #[error(transparent)]
    Browser(#[from] crate::browser::BrowserError),
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// A line of the options page's headers or prices that cannot be read.
    #[error(transparent)]
    SettingsList(#[from] crate::settings::form::ListError),
    #[error(transparent)]
    Skill(#[from] crate::agent::skill::SkillError),
    #[error(transparent)]
    Llm(#[from] crate::llm::LlmError),
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    #[error(transparent)]
    Schedule(#[from] crate::schedule::ScheduleError),
}

impl crate::message::Localize for Refusal {
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        use crate::message::LocaleText as L;
        Some(match self {
            Refusal::NoTaskRunning => L::plain("no_task_running"),
            Refusal::NoTaskPaused => L::plain("no_task_paused"),
            Refusal::EmptyAnswer => L::plain("empty_answer"),
            Refusal::NoQuestion => L::plain("no_question"),
            Refusal::NoConsent => L::plain("no_consent"),
            Refusal::EmptyTask => L::plain("empty_task"),
            Refusal::TaskTooLong { chars, max } => L::new("task_too_long", [chars, max]),
            Refusal::EmptyReplay => L::plain("empty_replay"),
            Refusal::BadOutputSchema => L::plain("bad_output_schema"),
            Refusal::UnsupportedOutputSchema(keyword) => L::new("unsupported_output_schema", [keyword]),
            Refusal::BadFiles(why) => L::new("bad_files", [why]),
            Refusal::Restoring => L::plain("restoring"),
            Refusal::TabTaken => L::plain("tab_taken"),
            Refusal::ClientActsEnded(client) => L::new("client_acts_ended", [client]),
            Refusal::QueueFull(count) => L::new("queue_full", [count]),
            Refusal::NoSuchTask => L::plain("no_such_task"),
            Refusal::SettingsUnreadable(why) => L::new("settings_not_read", [why]),
            Refusal::SkillsUnreadable(why) => L::new("skills_not_read", [why]),
            Refusal::SkillNotSaved(why) => L::new("skill_not_saved", [why]),
            Refusal::SecretExists(name) => L::new("secret_exists", [name]),
            Refusal::SecretNotSaved(why) => L::new("secret_not_saved", [why]),
            Refusal::CurrentTabUnknown(why) => L::new("current_tab_unknown", [why]),
            Refusal::NoOpenTab => L::plain("no_open_tab"),
            Refusal::BadStartUrl(url) => L::new("bad_start_url", [url]),
            Refusal::TabNotOpenedAt { url, reason } => L::new("tab_not_opened_at", [url, reason]),
            Refusal::NewTabNotOpened(why) => L::new("new_tab_not_opened", [why]),
            Refusal::TabWithoutId => L::plain("tab_without_id"),
            Refusal::RestrictedStart { url } => L::new("restricted_start", [url]),
            Refusal::Browser(e) => return e.locale_text(),
            Refusal::Settings(e) => return e.locale_text(),
            Refusal::SettingsList(e) => return e.locale_text(),
            Refusal::Skill(e) => return e.locale_text(),
            Refusal::Llm(e) => return e.locale_text(),
            Refusal::Protocol(e) => return e.locale_text(),
            Refusal::Schedule(e) => return e.locale_text(),
        })
    }
}

impl crate::message::Localize for ProtocolError {
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        use crate::message::LocaleText as L;
        Some(match self {
            ProtocolError::Unreadable(why) => L::new("protocol_unreadable", [why]),
            ProtocolError::Version { found } => L::new("protocol_version", [*found, PROTOCOL_VERSION]),
        })
    }
}

impl PanelRequest {
    /// A request from its JSON text, as the worker hands it over (`JSON.stringify` of the
    /// message). The version is checked first, so a newer panel's request says to reload
    /// instead of failing on what this core does not know.
    pub fn from_json_text(text: &str) -> Result<Self, ProtocolError> {
        let value: serde_json::Value =
            crate::json::from_text(text).map_err(|e| ProtocolError::Unreadable(e.to_string()))?;
        match value.get("v").and_then(serde_json::Value::as_u64) {
            Some(found) if found != u64::from(PROTOCOL_VERSION) => {
                return Err(ProtocolError::Version { found: u32::try_from(found).unwrap_or(u32::MAX) })
            }
            _ => {}
        }
        PanelRequest::deserialize(value).map_err(|e| ProtocolError::Unreadable(e.to_string()))
    }
}

/// The direct answer to a request.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PanelReply {
    Accepted {
        v: u32,
    },
    /// A task was taken: it runs now, or (`queued`) waits for one of the running tasks to end
    /// and then starts by itself, panel open or not.
    TaskAccepted {
        v: u32,
        task_id: String,
        queued: bool,
    },
    /// `message` in English; `locale_text` names it in the pages' languages.
    Refused {
        v: u32,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locale_text: Option<crate::message::LocaleText>,
        /// The stored setting at fault (`llm.model`), when a setting is: the options page
        /// marks its field.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        setting: Option<String>,
    },
    /// One task (the one asked for, else the one shown first) and its events from seq `from`
    /// on; `events[n]` was broadcast with seq `from + n`. A task waiting in the queue has no
    /// events yet and counts as running (it will run). `tasks` lists every task the worker
    /// holds: running, waiting in the queue, and those that ended lately.
    Status {
        v: u32,
        task_id: Option<String>,
        running: bool,
        from: u32,
        events: Vec<AgentEvent>,
        /// Where the task stands after all its events (none without a task).
        #[serde(skip_serializing_if = "Option::is_none")]
        state: Option<Box<crate::agent::TaskState>>,
        /// The longest task text the core takes, for the task box's count.
        task_max_chars: usize,
        tasks: Vec<TaskSummary>,
        /// Coding agents waiting for the person's answer (`crate::bridge`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        clients_asking: Vec<ClientAsking>,
    },
    /// The model answered the connection check as asked, in `ms` milliseconds.
    ConnectionWorks {
        v: u32,
        model: String,
        ms: u32,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The models the provider offers, sorted (`ListModels`); `listed` is false where the
    /// provider has no list to ask (Azure OpenAI's deployments, named in its portal).
    Models {
        v: u32,
        models: Vec<String>,
        listed: bool,
    },
    /// The options page's typed lists, read (`ReadSettingsLists`), as they are stored.
    SettingsLists {
        v: u32,
        extra_headers: std::collections::BTreeMap<String, String>,
        prices: Vec<crate::llm::pricing::ModelPrice>,
    },
    /// The site a skill would be offered on, and the texts its steps typed, each with a
    /// suggested parameter name.
    SkillDraft {
        v: u32,
        domain: String,
        params: Vec<crate::agent::skill::Suggested>,
    },
    /// A skill was saved: the model can call it as `action` on `domain`.
    SkillSaved {
        v: u32,
        name: String,
        action: String,
        domain: String,
    },
    /// The secret is in the settings, under this name.
    SecretSaved {
        v: u32,
        name: String,
    },
    /// The coding agents the person answered, and those asking now (`ListClients`).
    Clients {
        v: u32,
        /// Coding agents may connect (the options' switch; on unless turned off).
        enabled: bool,
        /// A client's running tasks stop when it disconnects (else they go on in the panel).
        stop_on_disconnect: bool,
        clients: Vec<ClientEntry>,
        asking: Vec<ClientAsking>,
    },
    /// Every schedule, in the order they were added, and why stored entries that cannot run
    /// were left out (they are kept as they are, and do not run).
    Schedules {
        v: u32,
        schedules: Vec<crate::schedule::Schedule>,
        left_out: Vec<String>,
    },
}

impl PanelReply {
    pub fn refused(reason: &Refusal) -> Self {
        use crate::message::Localize;
        let setting = match reason {
            Refusal::Settings(e) => e.setting().map(str::to_string),
            _ => None,
        };
        PanelReply::Refused {
            v: PROTOCOL_VERSION,
            message: reason.to_string(),
            locale_text: reason.locale_text(),
            setting,
        }
    }
}

/// A coding agent the person answered, as the options list it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientEntry {
    /// The name the client gives itself (MCP's `clientInfo.name`).
    pub name: String,
    /// The name a person reads, when the client gives one.
    #[serde(default)]
    pub title: Option<String>,
    pub allowed: bool,
    /// When the person answered (ms since the epoch).
    #[serde(default)]
    pub answered_ms: f64,
}

/// A coding agent connected now that waits for the person's answer (the panel asks).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ClientAsking {
    pub name: String,
    pub title: Option<String>,
}

/// One task as the list of tasks shows it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TaskSummary {
    pub task_id: String,
    /// The task's text, cut to `SUMMARY_TASK_CHARS`.
    pub task: String,
    pub status: TaskStatus,
    /// Steps finished.
    pub step: u32,
    pub cost_usd: Option<f64>,
    /// The tabs it works in (the current one first); none while queued.
    pub tabs: Vec<i32>,
    /// Its place in the queue (0 first) while queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_at: Option<u32>,
    /// Whether a schedule started it.
    #[serde(default)]
    pub scheduled: bool,
}

/// Where a task stands, for the list of tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Queued,
    Running,
    Paused,
    /// Waiting for the person: a question or a yes.
    Waiting,
    Succeeded,
    Failed,
    Stopped,
}

/// How much of a task's text the list of tasks carries.
pub const SUMMARY_TASK_CHARS: usize = 160;

/// The longest task text a start may have, in characters: the model reads the task at every
/// step, so a pasted book would fill every request (and its bill) until the task ends.
pub const TASK_MAX_CHARS: usize = 20_000;

/// The real (debugger) click the worker made on a dropdown, as the content script asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RealClickMade {
    /// On the control: its list should be open now.
    Opened,
    /// On the option: the control should show it.
    Chose,
}

/// Requests the worker sends to the content script of one frame. Indices are the frame's own
/// (local) indices.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentRequest {
    /// Index the frame; the reply carries a `dom::FrameSnapshot`. `viewport_expansion` is in CSS
    /// pixels, -1 for the whole page. For a child frame, `screen` is the top window's screen in
    /// the frame's own coordinates, so "in view" means on the person's screen, not merely inside
    /// the frame. `worker` names this worker's instance: frame tokens the frame learned under
    /// another (extension/content/frames.js) are forgotten.
    Snapshot {
        v: u32,
        viewport_expansion: i32,
        screen: Option<ScreenRegion>,
        worker: String,
    },
    /// Drag element `index` and let go on element `to_index`, or at `to_point` (this frame's
    /// viewport coordinates): pointer and mouse events, and HTML5 drag events when it is
    /// draggable. The reply says whether the page changed (`effect`).
    Drag {
        v: u32,
        index: u32,
        to_index: Option<u32>,
        to_point: Option<(f64, f64)>,
    },
    /// Give element `index` a file: into the file field it is (or holds, or labels), else
    /// dropped on it. `data` is the file's bytes as base64.
    Upload {
        v: u32,
        index: u32,
        name: String,
        mime: String,
        data: String,
    },
    /// Draw numbered boxes: `(local index, page-wide index)` pairs. The frame draws them a
    /// moment later (extension/content/highlight.js) and answers once they are painted, or
    /// once a snapshot or other boxes came first and they never will be.
    Highlight {
        v: u32,
        labels: Vec<(u32, u32)>,
    },
    /// Draw the boxes asked for now, for a screenshot; answered once they are painted.
    DrawHighlightsNow {
        v: u32,
    },
    ClearHighlights {
        v: u32,
    },
    /// No task runs any more: the frame's scripts take themselves out, the page's own
    /// functions and dialogs back in place. Sent to every tab by extension/page-scripts.js
    /// when a task ends.
    TaskOver {
        v: u32,
    },
    /// With `read_after`, the frame reads itself as soon as a click that changed the page in
    /// place is done, for the snapshot request that comes next (the top frame only).
    Click {
        v: u32,
        index: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        read_after: Option<ReadAfter>,
        /// The element's facts as checked (`act_facts`' JSON text): the page refuses the click
        /// if they changed, and sends no other form while it runs (`crate::guard`).
        #[serde(skip_serializing_if = "Option::is_none")]
        expect: Option<String>,
    },
    Input {
        v: u32,
        index: u32,
        text: String,
        clear: bool,
    },
    /// Scroll the element into view and tell where to click it (for a trusted click).
    Point {
        v: u32,
        index: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        expect: Option<String>,
    },
    /// What the page says of element `index`, of the element at `point` (viewport
    /// coordinates), or of the focused one, for the guard: `{facts_json}` (`guard::ActFacts`).
    ActFacts {
        v: u32,
        index: Option<u32>,
        point: Option<(f64, f64)>,
    },
    Scroll {
        v: u32,
        down: bool,
        pages: f64,
        index: Option<u32>,
    },
    FindText {
        v: u32,
        text: String,
    },
    /// The options of a dropdown, opened with a person's click when closed. The reply
    /// `{real_click: "open"}` says a script's click showed none (listing makes no real click).
    DropdownOptions {
        v: u32,
        index: u32,
    },
    /// Choose the option `text` of a dropdown, opening it with a person's click. The reply may
    /// ask for a real click first: on the control (`{real_click: "open"}`), or on the option at
    /// a point (`{real_click: "option", x, y, text}`, `text` the option's own); `then` says the
    /// worker made it, and the next answer is the choice or why it did not take.
    SelectOption {
        v: u32,
        index: u32,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        then: Option<RealClickMade>,
    },
    SearchPage {
        v: u32,
        pattern: String,
        regex: bool,
        max_matches: u32,
        context: u32,
    },
    /// Whether elements were added to the frame since its last snapshot.
    ElementsAdded {
        v: u32,
    },
    /// How the page's requests are doing (the top frame only): how long since one last started
    /// or ended, 0 while one is in flight or the page is loading, and when one last started
    /// (ms since the epoch): `{quiet_ms, last_request_at}`.
    Network {
        v: u32,
    },
    /// Whether the page reacted late to the last script click on this element (which at first
    /// showed no effect); asked before repeating it as a trusted click, and after it. With
    /// `again`, the element is watched afresh from then on, so the answer after the trusted
    /// click says whether that one changed anything.
    LateClickEffect {
        v: u32,
        index: u32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        again: bool,
    },
    /// Go back (-1) or forward (1) in the tab's history, as the page's own `history.go`: unlike
    /// the browser's back button, it does not skip pages that were left without a user gesture
    /// (which is how script clicks leave them).
    HistoryGo {
        v: u32,
        delta: i32,
    },
    /// The page as markdown (the converter is injected first).
    Markdown {
        v: u32,
    },
}

/// How a frame reads itself after a click, for the snapshot request that follows: as that
/// request will ask.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadAfter {
    pub viewport_expansion: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScreenRegion {
    pub top: f64,
    pub left: f64,
    pub bottom: f64,
    pub right: f64,
}

/// The content script's answer. `code` says what kind of failure it was, so the worker can map
/// it to a typed error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ContentReply {
    pub ok: bool,
    /// A frame's snapshot, as JSON text: one string crosses from the page to the worker at
    /// once, where an object of a thousand nodes is converted field by field twice on the way.
    #[serde(default)]
    pub snapshot_json: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    /// What the request produced, in the request's own shape.
    #[serde(default)]
    pub result: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;
    use serde_json::json;

    /// A request as the worker hands it over: the JSON text of the panel's message.
    fn read(message: serde_json::Value) -> Result<PanelRequest, ProtocolError> {
        PanelRequest::from_json_text(&message.to_string())
    }

    #[test]
    fn start_task_parses() {
        let r = read(json!({"v": 1, "type": "start_task", "task": "t", "tab_id": 4, "start_url": null})).unwrap();
        assert_eq!(
            r,
            PanelRequest::StartTask {
                v: 1,
                task: "t".into(),
                tab_id: Some(4),
                start_url: None,
                output_schema: None,
                follow_up: false,
                follows: None,
                new_tab: false,
                files: Vec::new(),
                model: None,
            }
        );
        let r = read(json!({"v": 1, "type": "start_task", "task": "t", "tab_id": null,
            "start_url": null, "follow_up": true, "new_tab": true}))
        .unwrap();
        assert!(matches!(r, PanelRequest::StartTask { follow_up: true, new_tab: true, .. }));
    }

    #[test]
    fn a_request_is_read_from_its_json_text() {
        let r = PanelRequest::from_json_text(r#"{"v":1,"type":"get_status","since":3}"#).unwrap();
        assert_eq!(r, PanelRequest::GetStatus { v: 1, task_id: None, since: Some(3) });
        // What JSON.stringify makes of `undefined` reaches the core as null: refused, not a crash.
        assert!(matches!(PanelRequest::from_json_text("null"), Err(ProtocolError::Unreadable(_))));
        // Text after the request is refused.
        assert!(matches!(
            PanelRequest::from_json_text(r#"{"v":1,"type":"stop_task"} {}"#),
            Err(ProtocolError::Unreadable(_))
        ));
        let Err(ProtocolError::Unreadable(why)) =
            PanelRequest::from_json_text(r#"{"v":1,"type":"get_status","since":"soon"}"#)
        else {
            panic!("a string for `since` must be refused")
        };
        assert!(why.contains("invalid type: string \"soon\""), "{why}");
        assert!(matches!(
            PanelRequest::from_json_text(r#"{"v":2,"type":"stop_task"}"#),
            Err(ProtocolError::Version { found: 2 })
        ));
    }

    #[test]
    fn get_status_may_name_what_the_caller_already_has() {
        let r = read(json!({"v": 1, "type": "get_status", "task_id": "task-1", "since": 7})).unwrap();
        assert_eq!(r, PanelRequest::GetStatus { v: 1, task_id: Some("task-1".into()), since: Some(7) });
        let r = read(json!({"v": 1, "type": "get_status"})).unwrap();
        assert_eq!(r, PanelRequest::GetStatus { v: 1, task_id: None, since: None });
    }

    #[test]
    fn unknown_types_fields_and_versions_are_refused() {
        assert!(matches!(read(json!({"v": 1, "type": "click"})), Err(ProtocolError::Unreadable(_))));
        assert!(read(json!({"v": 1, "type": "stop_task", "extra": 1})).is_err());
        assert_eq!(read(json!({"v": 9, "type": "stop_task"})), Err(ProtocolError::Version { found: 9 }));
        // A newer panel's request says to reload, whatever it holds that this core does not know.
        assert_eq!(read(json!({"v": 2, "type": "take_over", "how": {}})), Err(ProtocolError::Version { found: 2 }));
        assert!(read(json!("start")).is_err());
    }

    #[test]
    fn schedule_requests_parse_and_refuse_what_does_not_fit() {
        let saved = read(json!({"v": 1, "type": "save_schedule", "draft": {
            "title": "Mail", "what": {"kind": "task", "task": "Read my mail"}, "when": {"every": "daily", "at": "07:00"}}}))
        .unwrap();
        match saved {
            PanelRequest::SaveSchedule { id: None, draft, .. } => assert_eq!(draft.title, "Mail"),
            other => panic!("{other:?}"),
        }
        let paused = read(json!({"v": 1, "type": "pause_schedule", "id": "18f", "paused": true})).unwrap();
        assert_eq!(paused, PanelRequest::PauseSchedule { v: 1, id: "18f".into(), paused: true });
        assert!(read(json!({"v": 1, "type": "run_schedule_now"})).is_err(), "an id is needed");
        let Err(ProtocolError::Unreadable(why)) = read(json!({"v": 1, "type": "save_schedule", "draft": {
            "title": "Mail", "what": {"kind": "task", "task": "x"}, "when": {"every": "monthly"}}}))
        else {
            panic!("an unknown repeat must be refused")
        };
        assert!(why.contains("monthly"), "{why}");
    }

    #[test]
    fn events_carry_version_and_type() {
        let e = AgentEvent::StepStarted { v: PROTOCOL_VERSION, step: 2, max_steps: 10 };
        assert_eq!(
            serde_json::to_value(e).unwrap(),
            json!({"type": "step_started", "v": 1, "step": 2, "max_steps": 10})
        );
    }

    #[test]
    fn saved_events_read_back_as_written() {
        use crate::agent::TaskEnd;
        let usage = Usage::new(5, 7);
        for end in [
            TaskEnd::Done { text: "ok".into(), success: true, data: Some(json!({"n": 1})) },
            TaskEnd::Stopped,
            TaskEnd::StepLimit { max_steps: 3 },
        ] {
            let event = AgentEvent::TaskFinished { v: 1, end, steps: 3, usage, cost_usd: None };
            let written = serde_json::to_value(&event).unwrap();
            assert!(written["end"]["kind"].is_string(), "{written}");
            assert_eq!(crate::json::read_value::<AgentEvent>(&written).unwrap(), event);
        }
        let unknown = crate::json::read_value::<AgentEvent>(&json!({"type": "task_vanished", "v": 1})).unwrap_err();
        assert!(unknown.to_string().contains("unknown variant `task_vanished`"), "{unknown}");
    }
}
