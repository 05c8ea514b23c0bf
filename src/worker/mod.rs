//! The worker's tasks: panel requests answered, tasks started on the right tabs, several at
//! once, a queue for the rest, each saved as it goes and continued by a worker that Chrome
//! stopped and started again.
//!
//! # Several tasks at once
//!
//! Up to `Settings::tasks_at_once` tasks run at once, each on its own tabs, in its own tab
//! group (`tabs::group_title_of`), with its own stop signal, question and consent
//! (`tabs::TaskSeat`). They run as futures of the one worker thread: a task waiting for its
//! model or its page lets the others go on, so a slow, failing or paused task never stalls
//! another. A tab belongs to one running task at a time: a task asked to start on a tab that
//! another works in waits in the queue until that task ends. A task that cannot start now (all
//! places taken, or its tab taken) waits in the queue, held here in the worker and saved, and
//! starts by itself when a place frees, whether a panel is open or not.
//!
//! Every request that steers a task (stop, pause, answers, status) names it by `task_id`; one
//! that names none steers the task shown first (`TaskHost::chosen`: the latest running, else the
//! latest), which is what a single-task caller means. Tasks that ended are kept, the latest
//! `KEPT_ENDED`, for panels that open later and for follow-ups.
//!
//! Requests the core answers at once (status, pause, stop, a settings check) are answered by a
//! plain call, `answer_now`; only those that wait on Chrome or the model go through a future
//! (`answer_later`). A cold start's first request (the panel's `get_status`) then runs no future:
//! Chrome compiles the wasm a function at its first call, and that request compiles little more
//! than what it runs.
//!
//! # Other requests of the extension's pages
//!
//! `test_connection` (settings as the options page holds them): `LlmClient::check_connection`
//! asks the agent's model once — no retries, no fallback — for a one-field JSON object with a
//! strict schema, and the reply says how long it took or, refused, the error as a task would
//! meet it. `list_models` (the provider, base URL, key and headers as typed; a model name is
//! not needed): the provider's model list (`llm::models`, a GET through `TaskRuntime::get`),
//! asked by the options page when a model field is first visited and after those fields
//! change, never when the page opens (that would start the worker for nothing).
//! `check_settings`: the settings' check a task would make, without a task. Settings with
//! `keys_in_session` have their API key in `chrome.storage.session` (`session_keys`), put in
//! place by `saved_settings` when the settings are read; when the browser session is over, the
//! check says to enter the key again. The schedules' requests (`list_schedules`,
//! `save_schedule`, `remove_schedule`, `pause_schedule`, `run_schedule_now`), their alarms and
//! their runs are `schedules.rs`'s: a run is started as the panel starts a task.
//!
//! # Surviving the worker being stopped
//!
//! Chrome stops an idle worker, and may stop a busy one. While a task runs a cheap API call
//! every 25 s keeps it alive, but that is not relied on: each task's start is saved to
//! `chrome.storage.session` when it starts, and after every event its log (so a restarted
//! worker's log never ends before what a panel already showed), in pages of eight events, each
//! under keys of its own task (`saved.rs`): a turn rewrites only the page its events fall in,
//! so saving step 90 costs what saving step 1 did, and one task's saving never touches
//! another's. Values are JSON text, built when the write is made, and the writes of one key
//! asked for in one turn of the worker come down to the newest, so saving costs the step almost
//! nothing. When the worker starts again — any event wakes it: the panel reconnecting, a
//! `get_status`, the 30-second alarm set while tasks run — `background.js` looks at session
//! storage as it found it (read while the core loads); when tasks are saved there it calls
//! `resume_interrupted_task`: every task continues from its last completed step with its
//! history, tokens, tabs, pause state and conversation (`task_restored`; the step that was under
//! way is done again), or, if it cannot (settings now invalid, its tabs closed), ends saying
//! why; the queue is taken up again. Nothing recorded is lost. Requests wait while tasks are
//! being restored (they are answered the moment it ends; with nothing saved they do not wait at
//! all), and a panel whose log runs past the restored one resyncs to it.

pub mod clients;
pub mod host;
pub mod saved;
pub(crate) mod schedules;

use crate::agent::skill::{Skill, SkillDraft};
use crate::agent::{Agent, Ports, PreviousTask, StepRecord, StopSignal, TaskState};
use crate::browser::{BrowserError, TaskFile};
use crate::llm::Usage;
use crate::protocol::{AgentEvent, PanelReply, PanelRequest, Refusal, TaskStatus, TaskSummary, PROTOCOL_VERSION as V};
use crate::settings::{Settings, StoredSettings};
use crate::tabs::host::PersonWaits;
use crate::tabs::TaskSeat;
use crate::web::{is_blank_page, is_restricted, is_web_url};
use host::WorkerHost;
use saved::{save_events_page, QueuedTask, SavedTask, EVENTS_PER_PAGE};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

/// The title of a task's tab group: a client's own acts are grouped under its name.
fn group_title(saved: &SavedTask) -> String {
    match &saved.driven_by {
        Some(client) => clients::group_title_of_client(client),
        None => crate::tabs::group_title_of(&saved.task),
    }
}

/// Adds `site` to the sites the person always allows, in the stored settings. Best effort: a
/// task goes on whether or not it could be kept.
async fn always_allow(host: &impl WorkerHost, site: String) {
    let Ok(mut stored) = host.stored_settings().await else { return };
    let Some(object) = stored.as_object_mut() else { return };
    let list = object.entry("always_sites").or_insert_with(|| serde_json::Value::Array(Vec::new()));
    let Some(list) = list.as_array_mut() else { return };
    if list.iter().any(|s| s.as_str() == Some(site.as_str())) {
        return;
    }
    list.push(serde_json::Value::String(site));
    if let Err(e) = host.write_settings(&stored).await {
        host.warn(&format!("Tabwright could not keep an always-allowed site: {e}"));
    }
}

/// Below Chrome's 30 s idle limit for service workers.
pub const KEEP_ALIVE_MS: u32 = 25_000;
/// How long the connection check and the model list wait for the provider.
const CONNECTION_CHECK_MS: u32 = 30_000;
/// Why a restored task's step record says it was interrupted.
const RESTORED_BECAUSE: &str = "Chrome stopped Tabwright's service worker while the task ran";
/// Tasks that ended kept for panels and follow-ups (and in session storage); older ones are in
/// the task history only.
pub const KEPT_ENDED: usize = 10;
/// Tasks that may wait in the queue.
pub const QUEUE_MAX: usize = 20;

/// One task this worker runs or ran lately. Its handles are shared (a clone is the running
/// task's own).
#[derive(Clone)]
struct TaskSlot {
    task_id: String,
    stop: StopSignal,
    events: Rc<RefCell<Vec<AgentEvent>>>,
    /// Every event before this one is trimmed (`saved::trim_log`).
    trimmed_to: Rc<Cell<usize>>,
    /// Where the task stands after its events.
    state: Rc<RefCell<TaskState>>,
    running: Rc<Cell<bool>>,
    /// The conversation so far: earlier tasks, and this one once it ends (for a follow-up).
    conversation: Rc<RefCell<Vec<PreviousTask>>>,
    /// The id of the conversation's first task.
    conversation_id: String,
    /// What the person answers this task.
    waits: PersonWaits,
    /// The tabs it works in, the current one first (none until its tab is picked).
    tabs: Rc<RefCell<Vec<i32>>>,
    scheduled: bool,
}

impl TaskSlot {
    fn summary(&self) -> TaskSummary {
        let state = self.state.borrow();
        let status = match &state.end {
            Some(crate::agent::TaskEnd::Done { success: true, .. }) => TaskStatus::Succeeded,
            Some(crate::agent::TaskEnd::Stopped) => TaskStatus::Stopped,
            Some(_) => TaskStatus::Failed,
            None if !self.running.get() => TaskStatus::Failed,
            None if state.pending_consent.is_some() || self.waits.answers.is_open() => TaskStatus::Waiting,
            None if state.paused || self.stop.is_paused() => TaskStatus::Paused,
            None => TaskStatus::Running,
        };
        let task = crate::llm::excerpt(&state.task, crate::protocol::SUMMARY_TASK_CHARS);
        TaskSummary {
            task_id: self.task_id.clone(),
            task,
            status,
            step: state.step_count,
            cost_usd: state.cost_usd,
            tabs: self.tabs.borrow().clone(),
            queued_at: None,
            scheduled: self.scheduled,
        }
    }
}

/// Whether the list of tasks shows `event` (a step's end, a pause, a wait for the person).
fn changes_summary(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::StepFinished { .. }
            | AgentEvent::TaskPaused { .. }
            | AgentEvent::TaskResumed { .. }
            | AgentEvent::QuestionAsked { .. }
            | AgentEvent::QuestionAnswered { .. }
            | AgentEvent::ConsentAsked { .. }
            | AgentEvent::ConsentAnswered { .. }
    )
}

crate::tagged::tagged_enum! {
tag = "kind", remote = "Start", serde(rename_all = "snake_case");
/// Where a task starts. (Saved with a queued task; read without serde's buffering of tagged
/// enums, `crate::tagged`.)
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Start {
    /// The tab the panel named, or the active tab of the last focused window.
    Tab { tab: Option<i32> },
    /// A new blank tab in the task's group, in the window of the tab the panel named.
    NewTab { beside: Option<i32> },
    /// A new tab at this URL (the headless runner, a replay, a schedule).
    NewTabAt { url: String },
}
}

/// A request that waits on Chrome or the model, taken out of its `PanelRequest`.
pub enum Later {
    Start(Box<QueuedTask>),
    TestConnection(serde_json::Value),
    /// The settings as the options page holds them, or the saved ones.
    ListModels(Option<serde_json::Value>),
    SaveSecret {
        name: String,
        value: String,
        site: String,
    },
    SaveSkill(SkillDraft),
    ListSchedules,
    SaveSchedule {
        id: Option<String>,
        draft: Box<crate::schedule::ScheduleDraft>,
    },
    RemoveSchedule(String),
    PauseSchedule {
        id: String,
        paused: bool,
    },
    RunScheduleNow(String),
    /// The coding agents' book: list, answer, forget, the switch (`clients.rs`).
    Clients(Box<PanelRequest>),
}

/// The worker's tasks and what it answers. One per worker; `Rc`, because a started task's work
/// outlives the request that started it.
pub struct TaskHost<H: WorkerHost> {
    host: Rc<H>,
    /// Running tasks and those that ended lately, oldest first.
    tasks: RefCell<Vec<TaskSlot>>,
    /// Tasks waiting to start, first first.
    queue: RefCell<Vec<QueuedTask>>,
    /// Set while tasks saved by a stopped worker are being restored.
    restoring: Cell<bool>,
    /// How many tasks may run at once, as the settings said when last read.
    tasks_at_once: Cell<usize>,
    /// Set while queued tasks are being started (one at a time).
    starting_queued: Cell<bool>,
    /// Which running task owns which tab, shared with every task's browser.
    claims: crate::tabs::host::TabClaims,
    /// Itself, for answers given at once that start queued work (a setting raised).
    me: std::rc::Weak<Self>,
    /// The schedules' book held by one change at a time, and their runs (`schedules.rs`).
    schedules: schedules::ScheduleRuns,
    /// The coding agents connected over MCP and the person's answers (`clients.rs`).
    clients: clients::ClientDesk,
}

fn refused(reason: impl Into<Refusal>) -> PanelReply {
    PanelReply::refused(&reason.into())
}

impl<H: WorkerHost> TaskHost<H> {
    pub fn new(host: H) -> Rc<Self> {
        Rc::new_cyclic(|me| TaskHost {
            me: me.clone(),
            host: Rc::new(host),
            tasks: RefCell::default(),
            queue: RefCell::default(),
            restoring: Cell::new(false),
            tasks_at_once: Cell::new(crate::settings::DEFAULT_TASKS_AT_ONCE as usize),
            starting_queued: Cell::new(false),
            claims: Default::default(),
            schedules: schedules::ScheduleRuns::default(),
            clients: clients::ClientDesk::default(),
        })
    }

    pub fn host(&self) -> &H {
        &self.host
    }

    /// Whether tasks saved by a stopped worker are being restored (requests wait for it).
    pub fn restoring(&self) -> bool {
        self.restoring.get()
    }

    /// Whether a task runs now.
    pub fn running(&self) -> bool {
        self.running_count() > 0
    }

    /// The running tasks that take a place: a client's own acts call no model and take none.
    fn running_count(&self) -> usize {
        self.tasks.borrow().iter().filter(|s| s.running.get() && !self.is_clients_own(&s.task_id)).count()
    }

    /// The task a request means: the one it names, else the latest running, else the latest.
    fn chosen(&self, task_id: Option<&str>) -> Option<TaskSlot> {
        let tasks = self.tasks.borrow();
        match task_id {
            Some(id) => tasks.iter().find(|s| s.task_id == id).cloned(),
            None => tasks.iter().rev().find(|s| s.running.get()).or(tasks.last()).cloned(),
        }
    }

    /// The running tasks a request means: the one it names, else all of them, the latest
    /// started first (the one `get_status` shows first).
    fn running_chosen(&self, task_id: Option<&str>) -> Vec<TaskSlot> {
        self.tasks
            .borrow()
            .iter()
            .rev()
            .filter(|s| s.running.get() && task_id.is_none_or(|id| s.task_id == id))
            .cloned()
            .collect()
    }

    /// Why a request naming `task_id` found no running task.
    fn not_running(&self, task_id: Option<&str>, otherwise: Refusal) -> PanelReply {
        match task_id {
            Some(id) if !self.tasks.borrow().iter().any(|s| s.task_id == id) => refused(Refusal::NoSuchTask),
            _ => refused(otherwise),
        }
    }

    /// Every task, as the list of tasks shows them: those running or ended lately, in the
    /// order they started, then the queue.
    pub fn summaries(&self) -> Vec<TaskSummary> {
        let mut list: Vec<TaskSummary> = self.tasks.borrow().iter().map(TaskSlot::summary).collect();
        for (at, queued) in self.queue.borrow().iter().enumerate() {
            list.push(TaskSummary {
                task_id: queued.task_id.clone(),
                task: crate::llm::excerpt(&queued.task, crate::protocol::SUMMARY_TASK_CHARS),
                status: TaskStatus::Queued,
                step: 0,
                cost_usd: None,
                tabs: Vec::new(),
                queued_at: Some(at as u32),
                scheduled: queued.scheduled,
            });
        }
        list
    }

    /// Tells the panels the list of tasks changed.
    fn tasks_changed(&self) {
        self.host.broadcast_tasks(&self.summaries());
    }

    /// Saves the queue and tells the panels.
    fn queue_changed(&self) {
        let (host, queue) = (self.host.clone(), self.queue.borrow().clone());
        self.host.spawn(Box::pin(async move { saved::save_queue(&*host, queue).await }));
        self.tasks_changed();
    }

    /// Saves which tasks are kept.
    fn index_changed(&self) {
        // While tasks are restored, the saved index still names those not reached yet: a worker
        // stopped then must find them all. It is written once the restore is over.
        if self.restoring.get() {
            return;
        }
        let (host, ids) = (self.host.clone(), self.tasks.borrow().iter().map(|s| s.task_id.clone()).collect());
        self.host.spawn(Box::pin(async move { saved::save_index(&*host, ids).await }));
    }

    /// The answer to a request the core can give at once, or what to do later (`answer_later`).
    #[inline(never)]
    pub fn answer_now(&self, request: PanelRequest) -> Result<PanelReply, Later> {
        Ok(match request {
            PanelRequest::StartTask {
                task,
                tab_id,
                start_url,
                output_schema,
                follow_up,
                follows,
                new_tab,
                files,
                model,
                ..
            } => {
                let start = match (start_url, new_tab) {
                    (Some(url), _) => Start::NewTabAt { url },
                    (None, true) => Start::NewTab { beside: tab_id },
                    (None, false) => Start::Tab { tab: tab_id },
                };
                return Err(Later::Start(Box::new(QueuedTask {
                    task_id: String::new(),
                    task,
                    start,
                    output_schema,
                    files,
                    script: None,
                    model,
                    follow_up,
                    follows,
                    scheduled: false,
                })));
            }
            PanelRequest::ReplayTask { title, start_url, steps, .. } => {
                if steps.is_empty() {
                    refused(Refusal::EmptyReplay)
                } else {
                    return Err(Later::Start(Box::new(QueuedTask {
                        task_id: String::new(),
                        task: title,
                        start: Start::NewTabAt { url: start_url },
                        output_schema: None,
                        files: Vec::new(),
                        script: Some(steps),
                        model: None,
                        follow_up: false,
                        follows: None,
                        scheduled: false,
                    })));
                }
            }
            PanelRequest::TestConnection { settings, .. } => return Err(Later::TestConnection(settings)),
            PanelRequest::ListModels { settings, .. } => return Err(Later::ListModels(settings)),
            PanelRequest::SaveSkill { draft, .. } => return Err(Later::SaveSkill(draft)),
            PanelRequest::SaveSecret { name, value, site, .. } => return Err(Later::SaveSecret { name, value, site }),
            PanelRequest::ListSchedules { .. } => return Err(Later::ListSchedules),
            PanelRequest::SaveSchedule { id, draft, .. } => {
                return Err(Later::SaveSchedule { id, draft: Box::new(draft) })
            }
            PanelRequest::RemoveSchedule { id, .. } => return Err(Later::RemoveSchedule(id)),
            PanelRequest::PauseSchedule { id, paused, .. } => return Err(Later::PauseSchedule { id, paused }),
            PanelRequest::RunScheduleNow { id, .. } => return Err(Later::RunScheduleNow(id)),
            request @ (PanelRequest::ListClients { .. }
            | PanelRequest::AnswerClient { .. }
            | PanelRequest::ForgetClient { .. }
            | PanelRequest::SetClientOptions { .. }) => return Err(Later::Clients(Box::new(request))),
            PanelRequest::PauseTask { task_id, .. } => match self.chosen(task_id.as_deref()) {
                Some(slot) if slot.running.get() => {
                    slot.stop.pause();
                    self.tasks_changed();
                    PanelReply::Accepted { v: V }
                }
                _ => self.not_running(task_id.as_deref(), Refusal::NoTaskRunning),
            },
            PanelRequest::ResumeTask { task_id, .. } => match self.chosen(task_id.as_deref()) {
                Some(slot) if slot.running.get() && slot.stop.is_paused() => {
                    slot.stop.resume();
                    self.tasks_changed();
                    PanelReply::Accepted { v: V }
                }
                _ => self.not_running(task_id.as_deref(), Refusal::NoTaskPaused),
            },
            PanelRequest::AnswerQuestion { answer, task_id, .. } => {
                if answer.trim().is_empty() {
                    refused(Refusal::EmptyAnswer)
                } else if self
                    .running_chosen(task_id.as_deref())
                    .iter()
                    .any(|s| s.waits.answers.deliver(0, answer.clone()))
                {
                    PanelReply::Accepted { v: V }
                } else {
                    self.not_running(task_id.as_deref(), Refusal::NoQuestion)
                }
            }
            PanelRequest::AnswerConsent { id, answer, task_id, .. } => {
                if self.running_chosen(task_id.as_deref()).iter().any(|s| s.waits.consents.deliver(id, answer)) {
                    PanelReply::Accepted { v: V }
                } else {
                    self.not_running(task_id.as_deref(), Refusal::NoConsent)
                }
            }
            PanelRequest::StopTask { task_id, .. } => {
                let in_queue =
                    task_id.as_deref().and_then(|id| self.queue.borrow().iter().position(|q| q.task_id == id));
                if let Some(at) = in_queue {
                    let request = self.queue.borrow_mut().remove(at);
                    self.queue_changed();
                    // Kept as a task the person stopped before it began (a schedule records
                    // its run so; the history shows it).
                    if let Some(this) = self.me.upgrade() {
                        this.not_started(&request, crate::agent::TaskEnd::Stopped);
                    }
                    PanelReply::Accepted { v: V }
                } else {
                    match self.chosen(task_id.as_deref()) {
                        Some(slot) if slot.running.get() => {
                            slot.stop.stop();
                            PanelReply::Accepted { v: V }
                        }
                        _ => self.not_running(task_id.as_deref(), Refusal::NoTaskRunning),
                    }
                }
            }
            PanelRequest::ReadSettingsLists { extra_headers, prices, .. } => {
                let read = crate::settings::form::read_header_lines(&extra_headers)
                    .and_then(|headers| Ok((headers, crate::settings::form::read_price_lines(&prices)?)));
                match read {
                    Ok((extra_headers, prices)) => PanelReply::SettingsLists { v: V, extra_headers, prices },
                    Err(e) => refused(e),
                }
            }
            PanelRequest::CheckSettings { settings, .. } => {
                match StoredSettings::from_json(settings).and_then(|s| s.validate()) {
                    Ok(settings) => {
                        // The options page asks after each save: more tasks at once start
                        // those waiting now.
                        self.tasks_at_once.set(settings.tasks_at_once);
                        if let Some(this) = self.me.upgrade() {
                            this.start_queued();
                        }
                        PanelReply::Accepted { v: V }
                    }
                    Err(e) => refused(e),
                }
            }
            PanelRequest::DraftSkill { start_url, steps, .. } => match crate::agent::skill::draft(&start_url, steps) {
                Ok((domain, params)) => PanelReply::SkillDraft { v: V, domain, params },
                Err(e) => refused(e),
            },
            PanelRequest::GetStatus { task_id, since, .. } => {
                let tasks = self.summaries();
                let queued = task_id.as_deref().filter(|id| self.queue.borrow().iter().any(|q| q.task_id == *id));
                if let Some(id) = queued {
                    // Waiting in the queue: no events yet, and it will run.
                    return Ok(PanelReply::Status {
                        v: V,
                        task_id: Some(id.to_string()),
                        running: true,
                        from: 0,
                        events: Vec::new(),
                        state: None,
                        task_max_chars: crate::protocol::TASK_MAX_CHARS,
                        tasks,
                        clients_asking: self.clients_asking(),
                    });
                }
                match self.chosen(task_id.as_deref()) {
                    Some(slot) => {
                        // Only what the caller lacks: a follower polling a long task must not
                        // get the whole log (every step's record) again each time.
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
                            state: Some(Box::new(slot.state.borrow().clone())),
                            task_max_chars: crate::protocol::TASK_MAX_CHARS,
                            tasks,
                            clients_asking: self.clients_asking(),
                        }
                    }
                    None => PanelReply::Status {
                        v: V,
                        task_id: None,
                        running: false,
                        from: 0,
                        events: Vec::new(),
                        state: None,
                        task_max_chars: crate::protocol::TASK_MAX_CHARS,
                        tasks,
                        clients_asking: self.clients_asking(),
                    },
                }
            }
        })
    }

    /// The answer to a request that waits on Chrome or the model: starting a task, checking a
    /// connection, saving a skill. Boxed, so its state machine stays out of the dispatch's.
    #[inline(never)]
    pub fn answer_later(self: &Rc<Self>, later: Later) -> Pin<Box<dyn Future<Output = PanelReply>>> {
        let this = self.clone();
        Box::pin(async move {
            match later {
                Later::Start(request) => this.start_task(*request).await,
                Later::TestConnection(settings) => this.test_connection(settings).await,
                Later::ListModels(settings) => this.list_models(settings).await,
                Later::SaveSecret { name, value, site } => this.save_secret(name, value, site).await,
                Later::SaveSkill(draft) => this.save_skill(draft).await,
                Later::ListSchedules => this.list_schedules().await,
                Later::SaveSchedule { id, draft } => this.save_schedule(id, *draft).await,
                Later::RemoveSchedule(id) => this.remove_schedule(id).await,
                Later::PauseSchedule { id, paused } => this.pause_schedule(id, paused).await,
                Later::RunScheduleNow(id) => this.run_schedule_now(id).await,
                Later::Clients(request) => this.answer_clients_request(*request).await,
            }
        })
    }

    /// Makes a skill of the draft and saves it with the others.
    /// Adds a secret for one site to the stored settings, checked as the options page's are
    /// (a name the model can write, a value, a host glob); a name already taken is refused, so
    /// no saved value is ever replaced from here.
    async fn save_secret(&self, name: String, value: String, site: String) -> PanelReply {
        let mut stored = match self.host.stored_settings().await {
            Ok(serde_json::Value::Object(stored)) => stored,
            Ok(serde_json::Value::Null) => serde_json::Map::new(),
            Ok(_) => return refused(Refusal::SettingsUnreadable("not an object".into())),
            Err(e) => return refused(Refusal::SettingsUnreadable(e)),
        };
        let mut secrets: Vec<crate::safety::StoredSecret> =
            match crate::json::read_value(stored.get("secrets").unwrap_or(&serde_json::Value::Null)) {
                Ok(Some(secrets)) => secrets,
                Ok(None) => Vec::new(),
                Err(e) => return refused(Refusal::SettingsUnreadable(e.to_string())),
            };
        let name = name.trim().to_string();
        if secrets.iter().any(|s| s.name == name) {
            return refused(Refusal::SecretExists(name));
        }
        secrets.push(crate::safety::StoredSecret {
            name: name.clone(),
            value,
            domains: vec![site.trim().to_ascii_lowercase()],
        });
        if let Err(e) = crate::safety::Safety::from_settings(&secrets, &[], &[]) {
            return refused(crate::settings::SettingsError::Safety(e));
        }
        match serde_json::to_value(&secrets) {
            Ok(list) => stored.insert("secrets".into(), list),
            Err(e) => return refused(Refusal::SecretNotSaved(e.to_string())),
        };
        match self.host.write_settings(&serde_json::Value::Object(stored)).await {
            Ok(()) => PanelReply::SecretSaved { v: V, name },
            Err(e) => refused(Refusal::SecretNotSaved(e)),
        }
    }

    async fn save_skill(&self, draft: SkillDraft) -> PanelReply {
        let mut saved = match self.host.saved_skills().await {
            Ok(saved) => saved,
            Err(e) => return refused(Refusal::SkillsUnreadable(e)),
        };
        let skill = match Skill::from_draft(draft, &self.readable_skills(&saved)) {
            Ok(skill) => skill,
            Err(e) => return refused(e),
        };
        match serde_json::to_value(&skill) {
            Ok(value) => saved.push(value),
            Err(e) => return refused(Refusal::SkillNotSaved(e.to_string())),
        }
        match self.host.write_skills(&saved).await {
            Ok(()) => PanelReply::SkillSaved { v: V, name: skill.name, action: skill.action, domain: skill.domain },
            Err(e) => refused(Refusal::SkillNotSaved(e)),
        }
    }

    /// The saved skills this version can read. One it cannot (written by a newer version, or
    /// by hand) is left out with a warning rather than failing the task.
    fn readable_skills(&self, saved: &[serde_json::Value]) -> Vec<Skill> {
        saved
            .iter()
            .filter_map(|raw| match crate::json::read_value::<Skill>(raw) {
                Ok(skill) => Some(skill),
                Err(e) => {
                    self.host.warn(&format!("Tabwright left out a saved skill it cannot read: {e}"));
                    None
                }
            })
            .collect()
    }

    /// The saved skills a task may call; none for a replay, and none (with a warning) when
    /// they cannot be read: a task does not fail for want of them.
    async fn skills_for(&self, saved: &SavedTask) -> Vec<Skill> {
        if saved.script.is_some() {
            return Vec::new();
        }
        match self.host.saved_skills().await {
            Ok(list) => self.readable_skills(&list),
            Err(e) => {
                self.host.warn(&format!("Tabwright could not read the saved skills: {e}"));
                Vec::new()
            }
        }
    }

    /// Checks the settings, then asks their model for one small JSON answer
    /// (`LlmClient::check_connection`).
    async fn test_connection(&self, settings: serde_json::Value) -> PanelReply {
        let settings = match StoredSettings::from_json(settings).and_then(|s| s.validate()) {
            Ok(settings) => settings,
            Err(e) => return refused(e),
        };
        let timeout_ms = CONNECTION_CHECK_MS.min(settings.llm.timeout_s.saturating_mul(1000));
        let client = crate::llm::LlmClient::new(settings.llm, self.host.transport(timeout_ms));
        let clock = self.host.clock();
        let started = crate::agent::Clock::now_ms(&clock);
        match client.check_connection().await {
            Ok(completion) => PanelReply::ConnectionWorks {
                v: V,
                model: completion.model,
                ms: (crate::agent::Clock::now_ms(&clock) - started).max(0.0) as u32,
                input_tokens: completion.usage.input_tokens,
                output_tokens: completion.usage.output_tokens,
            },
            Err(e) => refused(e),
        }
    }

    /// Asks the provider of the settings for its models (`llm::models`). The settings need not
    /// be complete: a model name is not needed to list the models.
    async fn list_models(&self, settings: Option<serde_json::Value>) -> PanelReply {
        let stored = match settings {
            Some(settings) => StoredSettings::from_json(settings).map_err(Refusal::from),
            None => self.saved_settings().await,
        };
        let settings = match stored.and_then(|mut stored| {
            if stored.llm.model.trim().is_empty() {
                stored.llm.model = "-".into();
            }
            Ok(stored.validate()?)
        }) {
            Ok(settings) => settings,
            Err(e) => return refused(e),
        };
        let Some(request) = crate::llm::models::build_models_request(&settings.llm) else {
            return PanelReply::Models { v: V, models: Vec::new(), listed: false };
        };
        let timeout_ms = CONNECTION_CHECK_MS.min(settings.llm.timeout_s.saturating_mul(1000));
        let response = match self.host.get(&request, timeout_ms).await {
            Ok(response) => response,
            Err(e) => {
                let url = request.url.split('?').next().unwrap_or_default().to_string();
                return refused(crate::llm::LlmError::Unreachable { url, reason: e.0 });
            }
        };
        match crate::llm::models::parse_models_response(settings.llm.provider, &request.url, &response) {
            Ok(models) => PanelReply::Models { v: V, models, listed: true },
            Err(e) => refused(e),
        }
    }

    /// Checks a task's request and starts it, or queues it when it cannot start now.
    async fn start_task(self: Rc<Self>, mut request: QueuedTask) -> PanelReply {
        request.task = request.task.trim().to_string();
        if request.task.is_empty() {
            return refused(Refusal::EmptyTask);
        }
        let chars = request.task.chars().count();
        if chars > crate::protocol::TASK_MAX_CHARS {
            return refused(Refusal::TaskTooLong { chars, max: crate::protocol::TASK_MAX_CHARS });
        }
        if let Err(why) = TaskFile::check_all(&request.files) {
            return refused(Refusal::BadFiles(why));
        }
        if let Some(schema) = &request.output_schema {
            if !schema.is_object() {
                return refused(Refusal::BadOutputSchema);
            }
            if let Some(keyword) = crate::actions::unsupported_output_keyword(schema) {
                return refused(Refusal::UnsupportedOutputSchema(keyword));
            }
        }
        if self.restoring.get() {
            return refused(Refusal::Restoring);
        }
        // Settings that cannot run a task are said now, not when a queued task's turn comes.
        let settings = match self.task_settings(request.model.as_deref()).await {
            Ok(settings) => settings,
            Err(reason) => return refused(reason),
        };
        request.task_id = self.new_task_id();
        let task_id = request.task_id.clone();
        // From here to the claim in `begin` nothing waits, so two starts cannot both take the
        // last place.
        if !self.can_start_now(&request) {
            if self.queue.borrow().len() >= QUEUE_MAX {
                return refused(Refusal::QueueFull(QUEUE_MAX));
            }
            self.queue.borrow_mut().push(request);
            self.queue_changed();
            return PanelReply::TaskAccepted { v: V, task_id, queued: true };
        }
        match self.begin(request, settings).await {
            Ok(()) => PanelReply::TaskAccepted { v: V, task_id, queued: false },
            Err(reason) => refused(reason),
        }
    }

    /// The settings a task runs with (the model the person chose for it, else the saved one);
    /// they also say how many tasks may run at once.
    async fn task_settings(&self, model: Option<&str>) -> Result<Settings, Refusal> {
        let settings = self.saved_settings().await?.validate()?.with_model(model)?;
        self.tasks_at_once.set(settings.tasks_at_once);
        Ok(settings)
    }

    /// Whether `request` may start now: a place is free, no running task works in the tab it
    /// names, and the task it follows up (if any) has ended: a follow-up is told its result.
    fn can_start_now(&self, request: &QueuedTask) -> bool {
        let follows_running = request.follow_up
            && request
                .follows
                .as_deref()
                .is_some_and(|id| self.tasks.borrow().iter().any(|s| s.task_id == id && s.running.get()));
        self.running_count() < self.tasks_at_once.get()
            && !follows_running
            && match request.start {
                Start::Tab { tab: Some(tab) } => self.task_in_tab(tab, "").is_none(),
                _ => true,
            }
    }

    /// The running task other than `except` that works in `tab`.
    fn task_in_tab(&self, tab: i32, except: &str) -> Option<String> {
        // Every tab of a running task is claimed: the one it starts on before its first await,
        // those it opens as they open, those its browser takes in as it looks.
        let running = |id: &str| self.tasks.borrow().iter().any(|s| s.running.get() && s.task_id == id);
        self.claims.owner(tab).filter(|owner| owner != except && running(owner))
    }

    /// Starts a task now: claims its place (before the first await), picks its tab, and runs it.
    async fn begin(self: &Rc<Self>, request: QueuedTask, settings: Settings) -> Result<(), Refusal> {
        let earlier = if request.follow_up { self.conversation_before(request.follows.as_deref()) } else { None };
        let (earlier, conversation_id) = earlier.unwrap_or_else(|| (Vec::new(), request.task_id.clone()));
        let slot = self.claim_slot(&request.task_id, Vec::new(), earlier.clone(), &conversation_id, request.scheduled);
        // The tab it names is its own from here, before the first await: a start for the same
        // tab that comes meanwhile waits in the queue.
        if let Start::Tab { tab: Some(tab) } = request.start {
            self.claims.claim(tab, &request.task_id);
        }
        let group = crate::tabs::group_title_of(&request.task);
        let tab_id = match self.pick_tab(request.start.clone(), &group, &request.task_id).await {
            Ok(tab) => tab,
            Err(reason) => {
                self.drop_slot(&request.task_id);
                self.claims.release(&request.task_id);
                return Err(reason);
            }
        };
        // Two tasks never act in one tab (the person's tab was free when asked, but another
        // start may have taken it meanwhile).
        if self.task_in_tab(tab_id, &request.task_id).is_some() {
            self.drop_slot(&request.task_id);
            self.claims.release(&request.task_id);
            return Err(Refusal::TabTaken);
        }
        slot.tabs.borrow_mut().push(tab_id);
        self.claims.claim(tab_id, &request.task_id);
        let saved = SavedTask {
            task_id: request.task_id,
            task: request.task,
            start_tab: tab_id,
            output_schema: request.output_schema,
            events: Vec::new(),
            earlier,
            conversation_id,
            script: request.script,
            files: request.files,
            scheduled: request.scheduled,
            driven_by: None,
            guard: None,
        };
        let skills = self.skills_for(&saved).await;
        self.launch(saved, slot, settings, skills, &[tab_id], None, None);
        Ok(())
    }

    /// The conversation a follow-up continues: task `follows`'s, else the latest task's.
    fn conversation_before(&self, follows: Option<&str>) -> Option<(Vec<PreviousTask>, String)> {
        let tasks = self.tasks.borrow();
        let slot = match follows {
            Some(id) => tasks.iter().find(|s| s.task_id == id),
            None => tasks.iter().rev().find(|s| !s.running.get()).or(tasks.last()),
        }?;
        let conversation = slot.conversation.borrow().clone();
        Some((conversation, slot.conversation_id.clone()))
    }

    /// Starts the queued tasks that can start now, first first, one at a time; those that
    /// cannot yet stay in the queue in their order. Runs on its own.
    fn start_queued(self: &Rc<Self>) {
        if self.queue.borrow().is_empty() || self.restoring.get() || self.starting_queued.replace(true) {
            return;
        }
        let this = self.clone();
        self.host.spawn(Box::pin(async move {
            loop {
                let next = {
                    let queue = this.queue.borrow();
                    queue.iter().position(|q| this.can_start_now(q)).map(|at| (at, queue[at].clone()))
                };
                let Some((_, request)) = next else { break };
                let settings = this.task_settings(request.model.as_deref()).await;
                // The settings may have lowered how many run at once, and a start from the panel
                // may have come meanwhile.
                if settings.is_ok() && !this.can_start_now(&request) {
                    continue;
                }
                // Stopped meanwhile, or moved up.
                let Some(at) = this.queue.borrow().iter().position(|q| q.task_id == request.task_id) else { continue };
                this.queue.borrow_mut().remove(at);
                this.queue_changed();
                let started = match settings {
                    Ok(settings) => this.begin(request.clone(), settings).await,
                    Err(reason) => Err(reason),
                };
                match started {
                    // The active tab turned out to be another task's: it waits for that one.
                    Err(Refusal::TabTaken) => {
                        this.queue.borrow_mut().insert(0, request);
                        this.queue_changed();
                        break;
                    }
                    Err(reason) => this.not_started(&request, crate::agent::TaskEnd::error(&reason)),
                    Ok(()) => {}
                }
            }
            this.starting_queued.set(false);
        }));
    }

    /// A queued task that could not start, or that the person stopped before it began: it is
    /// kept as a task that ended so (`end`), in the list, the panels and the history, so
    /// nothing the person asked for vanishes unseen.
    fn not_started(self: &Rc<Self>, request: &QueuedTask, end: crate::agent::TaskEnd) {
        let slot = self.claim_slot(&request.task_id, Vec::new(), Vec::new(), &request.task_id, request.scheduled);
        slot.running.set(false);
        let events = [
            AgentEvent::TaskStarted {
                v: V,
                task_id: request.task_id.clone(),
                task: request.task.clone(),
                max_steps: 0,
                model: request.model.clone().unwrap_or_default(),
                conversation_id: request.task_id.clone(),
                replay: request.script.is_some(),
                scheduled: request.scheduled,
            },
            AgentEvent::TaskFinished { v: V, end, steps: 0, usage: Usage::default(), cost_usd: None },
        ];
        for event in events {
            slot.events.borrow_mut().push(event.clone());
            slot.state.borrow_mut().apply(&event);
            let seq = slot.events.borrow().len() - 1;
            self.host.broadcast(&event, seq as u32, &request.task_id, &slot.state.borrow());
        }
        let (host, id, log, scheduled) =
            (self.host.clone(), request.task_id.clone(), slot.events.clone(), request.scheduled);
        self.host.spawn(Box::pin(async move {
            SavedTask {
                task_id: id.clone(),
                task: String::new(),
                start_tab: -1,
                output_schema: None,
                events: Vec::new(),
                earlier: Vec::new(),
                conversation_id: String::new(),
                script: None,
                files: Vec::new(),
                scheduled,
                driven_by: None,
                guard: None,
            }
            .save(&*host)
            .await;
            save_events_page(&*host, id, log, 0).await;
        }));
        self.task_over();
    }

    /// A task id no earlier task of this browser has: the time, and one more than the last
    /// when two starts fall in the same millisecond.
    fn new_task_id(&self) -> String {
        let now = crate::agent::Clock::now_ms(&self.host.clock()).max(0.0) as u64;
        let number = |id: &str| id.strip_prefix("task-")?.parse::<u64>().ok();
        let last = self
            .tasks
            .borrow()
            .iter()
            .map(|s| s.task_id.clone())
            .chain(self.queue.borrow().iter().map(|q| q.task_id.clone()))
            .filter_map(|id| number(&id))
            .max();
        format!("task-{}", last.map_or(now, |last| now.max(last + 1)))
    }

    /// Claims a place for a task (synchronously, so two claims cannot both pass a check made
    /// just before), with the events it already has.
    fn claim_slot(
        &self,
        task_id: &str,
        mut events: Vec<AgentEvent>,
        earlier: Vec<PreviousTask>,
        conversation_id: &str,
        scheduled: bool,
    ) -> TaskSlot {
        let trimmed_to = saved::trim_log(&mut events, 0);
        let claimed = TaskSlot {
            trimmed_to: Rc::new(Cell::new(trimmed_to)),
            task_id: task_id.to_string(),
            stop: StopSignal::new(),
            state: Rc::new(RefCell::new(TaskState::of(&events))),
            events: Rc::new(RefCell::new(events)),
            running: Rc::new(Cell::new(true)),
            conversation: Rc::new(RefCell::new(earlier)),
            conversation_id: conversation_id.to_string(),
            waits: PersonWaits::default(),
            tabs: Rc::default(),
            scheduled,
        };
        self.tasks.borrow_mut().push(claimed.clone());
        self.index_changed();
        claimed
    }

    /// Gives up a place claimed for a task that did not start.
    fn drop_slot(&self, task_id: &str) {
        self.tasks.borrow_mut().retain(|s| s.task_id != task_id);
        self.index_changed();
    }

    /// A task ended (or never started): tasks that ended long ago are let go, with what was
    /// saved of them; queued tasks take the free place; the panels are told.
    fn task_over(self: &Rc<Self>) {
        let dropped: Vec<(String, usize)> = {
            let mut tasks = self.tasks.borrow_mut();
            let mut ended = tasks.iter().filter(|s| !s.running.get()).count();
            let mut dropped = Vec::new();
            tasks.retain(|s| {
                if ended > KEPT_ENDED && !s.running.get() {
                    ended -= 1;
                    dropped.push((s.task_id.clone(), s.events.borrow().len()));
                    false
                } else {
                    true
                }
            });
            dropped
        };
        if !dropped.is_empty() {
            self.index_changed();
            let host = self.host.clone();
            self.host.spawn(Box::pin(async move {
                let keys = dropped.iter().flat_map(|(id, events)| saved::keys_of(id, *events)).collect();
                host.remove_saved(keys).await;
            }));
        }
        if !self.running() && self.queue.borrow().is_empty() {
            // Looked at again when it runs: a task may have begun meanwhile.
            let this = self.clone();
            self.host.spawn(Box::pin(async move {
                if !this.running() && this.queue.borrow().is_empty() {
                    this.host.tasks_idle().await;
                }
            }));
        }
        self.start_queued();
        self.tasks_changed();
        // A schedule's run that ended: its result is recorded and told.
        self.scheduled_runs_over();
    }

    /// Runs the agent on its own: every event is logged, broadcast and saved; a heartbeat keeps
    /// the worker from being stopped as idle while it runs. `restored` continues a task whose
    /// worker was stopped; `driven`, a client's own acts (`clients.rs`), answered instead of
    /// a model's.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        self: &Rc<Self>,
        saved: SavedTask,
        slot: TaskSlot,
        settings: Settings,
        skills: Vec<Skill>,
        tabs: &[i32],
        restored: Option<(Vec<StepRecord>, Usage)>,
        driven: Option<crate::agent::driven::Asks>,
    ) {
        let TaskSlot { stop, events, state, running, conversation, trimmed_to, waits, tabs: task_tabs, .. } = slot;
        *task_tabs.borrow_mut() = tabs.to_vec();
        // The latest summary of old steps, so a restored task does not condense them again.
        let summary = state.borrow().summary.clone();
        let host = self.host.clone();
        {
            // How the task started; and a restored task's log again in full, for it may have been
            // read from a version that kept it in one piece.
            let (saved, events, host) = (saved.clone(), events.clone(), host.clone());
            self.host.spawn(Box::pin(async move {
                saved.save(&*host).await;
                let kept = events.borrow().len();
                for page in 0..kept.div_ceil(EVENTS_PER_PAGE) {
                    save_events_page(&*host, saved.task_id.clone(), events.clone(), page * EVENTS_PER_PAGE).await;
                }
            }));
        }
        // Each event goes out with its task and its position in the task's log, so a panel can
        // tell a repeat from a gap and resynchronise with `get_status`.
        let sink = {
            let (events, host, task_id, this) =
                (events.clone(), host.clone(), saved.task_id.clone(), Rc::downgrade(self));
            let scheduled = saved.scheduled;
            let task_tabs = task_tabs.clone();
            move |event: AgentEvent| {
                let seq = events.borrow().len();
                // A site the person always allows joins the settings, for later tasks.
                if let AgentEvent::ConsentAnswered { site, answer: crate::guard::ConsentAnswer::Always, .. } = &event {
                    let (writer, site) = (host.clone(), site.clone());
                    host.spawn(Box::pin(async move { always_allow(&*writer, site).await }));
                }
                events.borrow_mut().push(event.clone());
                state.borrow_mut().apply(&event);
                if let AgentEvent::StepFinished { record, .. } = &event {
                    // The tab it works in now comes first in its list.
                    let mut tabs = task_tabs.borrow_mut();
                    if record.tab_id != 0 && tabs.first() != Some(&record.tab_id) {
                        tabs.retain(|t| *t != record.tab_id);
                        tabs.insert(0, record.tab_id);
                    }
                }
                if matches!(event, AgentEvent::StepFinished { .. }) {
                    // The step that fell far behind keeps only what a long task needs of it,
                    // here and in its saved pages.
                    let from = trimmed_to.get();
                    let to = saved::trim_log(&mut events.borrow_mut(), from);
                    trimmed_to.set(to);
                    // A page is written again once all its events are trimmed (one partly
                    // trimmed waits for the rest; a restore trims what is left); this event's
                    // own page is saved below.
                    for page in from / EVENTS_PER_PAGE..to / EVENTS_PER_PAGE {
                        if page != seq / EVENTS_PER_PAGE {
                            let (writer, id, log) = (host.clone(), task_id.clone(), events.clone());
                            host.spawn(Box::pin(async move {
                                save_events_page(&*writer, id, log, page * EVENTS_PER_PAGE).await
                            }));
                        }
                    }
                }
                // Every event is saved, so a restarted worker's log never ends before what a
                // panel already showed: its page is written once the running work waits, with
                // the other events of this turn, and not on the way of the event itself.
                let (writer, id, log) = (host.clone(), task_id.clone(), events.clone());
                host.spawn(Box::pin(async move { save_events_page(&*writer, id, log, seq).await }));
                host.broadcast(&event, seq as u32, &task_id, &state.borrow());
                // The list of tasks shows each task's step, pause and wait.
                if let Some(this) = this.upgrade() {
                    if changes_summary(&event) {
                        this.tasks_changed();
                    }
                    // Nobody watches a scheduled task: a wait for the person is notified.
                    if scheduled {
                        this.scheduled_event(&task_id, &event);
                    }
                }
            }
        };
        self.claims.set(&saved.task_id, tabs);
        let seat = TaskSeat {
            task_id: saved.task_id.clone(),
            group_title: group_title(&saved),
            waits,
            claims: self.claims.clone(),
        };
        let ports = Ports {
            browser: host.browser(seat, tabs[0], tabs, settings.page),
            transport: host.transport(settings.llm.timeout_s.saturating_mul(1000)),
            events: sink,
            clock: host.clock(),
        };
        let mut agent = Agent::new(saved.task_id.clone(), saved.task.clone(), settings, ports, stop)
            .with_output_schema(saved.output_schema.as_ref())
            .following(saved.earlier.clone())
            .in_conversation(saved.conversation_id())
            .scheduled(saved.scheduled)
            .with_skills(skills)
            .with_files(saved.files.clone());
        if let Some((history, usage)) = restored {
            agent = agent
                .restored(history, usage, RESTORED_BECAUSE.into())
                .with_summary(summary)
                .with_guard(saved.guard.clone());
        }
        {
            // The guard's state, for a restarted worker: written once the running work waits
            // (writes of one key come down to the newest).
            let (host, task_id) = (host.clone(), saved.task_id.clone());
            agent = agent.keeping_guard(move |kept| {
                let (writer, task_id) = (host.clone(), task_id.clone());
                host.spawn(Box::pin(async move {
                    // Whole: what was added before is in it, so the added pieces start again.
                    let (key, text, added) = match kept {
                        crate::guard::Kept::Whole(text) => (saved::guard_key(&task_id), text, Some("[]".to_string())),
                        crate::guard::Kept::Added(text) => (saved::guard_added_key(&task_id), text, None),
                    };
                    let id = task_id.clone();
                    writer.write_saved(key, Box::new(move || Ok(saved::guard_text(&id, &text)))).await;
                    if let Some(none) = added {
                        let key = saved::guard_added_key(&task_id);
                        let text = move || Ok(saved::guard_text(&task_id, &none));
                        writer.write_saved(key, Box::new(text)).await;
                    }
                }));
            });
        }
        if let Some(script) = saved.script.clone() {
            agent = agent.replaying(script);
        }
        let tabs = tabs.to_vec();
        {
            let (host, running, this, task_id) = (host.clone(), running.clone(), self.clone(), saved.task_id.clone());
            self.host.spawn(Box::pin(async move {
                host.task_began(&task_id, &tabs).await;
                let history = match (driven, saved.driven_by.as_deref()) {
                    (Some(asks), Some(client)) => agent.drive(asks, client).await,
                    _ => agent.run().await,
                };
                conversation.borrow_mut().push(history.as_previous());
                running.set(false);
                this.claims.release(&task_id);
                this.task_over();
            }));
        }
        self.tasks_changed();
        self.host.spawn(Box::pin(async move {
            let clock = host.clock();
            while running.get() {
                crate::agent::Clock::sleep(&clock, KEEP_ALIVE_MS).await;
                host.keep_alive().await;
            }
        }));
    }

    /// Continues the tasks that were running when Chrome stopped the worker, each from its
    /// last completed step, and takes up the queue; a task that cannot go on ends with a
    /// message saying why. Tasks that had ended are restored too, so a panel opened later
    /// still shows them. Called whenever the worker starts (and on the wake-up alarm); does
    /// nothing when this worker already has tasks. True when a task goes on running.
    pub async fn restore(self: &Rc<Self>) -> bool {
        if self.restoring.get() || !self.tasks.borrow().is_empty() || !self.queue.borrow().is_empty() {
            return false;
        }
        self.restoring.set(true);
        let resumed = self.clone().restore_saved().await;
        self.restoring.set(false);
        self.index_changed();
        // As after any task's end: the wake-up alarm goes when nothing runs, the queue is taken
        // up, the runs of schedules that ended are recorded, and the panels told.
        self.task_over();
        resumed
    }

    async fn restore_saved(self: Rc<Self>) -> bool {
        let items = match self.host.read_saved().await {
            Ok(items) => items,
            Err(e) => {
                self.host.warn(&format!("Tabwright could not read the saved tasks: {e}"));
                return false;
            }
        };
        *self.queue.borrow_mut() = saved::read_queue(&items);
        let mut resumed = false;
        for id in saved::read_index(&items) {
            if self.tasks.borrow().iter().any(|s| s.task_id == id) {
                continue;
            }
            if let Some(saved) = SavedTask::read(&items, &id) {
                resumed |= self.restore_one(saved).await;
            }
        }
        resumed
    }

    /// Restores one saved task (see `restore`).
    async fn restore_one(self: &Rc<Self>, mut saved: SavedTask) -> bool {
        // The log lives in the slot from here on, not also in the saved task.
        let events = std::mem::take(&mut saved.events);
        let slot =
            self.claim_slot(&saved.task_id, events, saved.earlier.clone(), saved.conversation_id(), saved.scheduled);
        // Every completed step's record is in the log.
        let history: Vec<StepRecord> = slot
            .events
            .borrow()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::StepFinished { record, .. } => Some((**record).clone()),
                _ => None,
            })
            .collect();
        {
            let mut tabs = vec![saved.start_tab];
            for record in history.iter().rev() {
                if record.tab_id != 0 && !tabs.contains(&record.tab_id) {
                    tabs.push(record.tab_id);
                }
            }
            *slot.tabs.borrow_mut() = tabs;
        }
        // Where the task stands, as its events say (what the history and the panels are told).
        let state = slot.state.borrow().clone();
        // A finished task: kept for panels that open later, and for a follow-up.
        if let Some(end) = state.end {
            let finished = crate::agent::TaskHistory {
                task: saved.task.clone(),
                model: state.model,
                steps: history,
                end,
                usage: state.usage,
                cost_usd: state.cost_usd,
            };
            slot.conversation.borrow_mut().push(finished.as_previous());
            slot.running.set(false);
            return false;
        }
        let usage = state.usage;
        // A client's own acts end with its connection, which the stopped worker's end closed.
        let prepared = match &saved.driven_by {
            Some(client) => Err(Refusal::ClientActsEnded(client.clone())),
            None => self.prepare_restore(&saved, &history, &state.model).await,
        };
        match prepared {
            Ok((settings, tabs)) => {
                self.tasks_at_once.set(settings.tasks_at_once);
                if state.paused {
                    slot.stop.pause();
                }
                let skills = self.skills_for(&saved).await;
                self.launch(saved, slot, settings, skills, &tabs, Some((history, usage)), None);
                true
            }
            Err(reason) => {
                // Nothing recorded is lost: the steps so far stay, and the task ends saying why.
                let end = crate::agent::TaskEnd::not_resumed(&reason);
                let cost_usd = crate::agent::total_cost(&history);
                let event = AgentEvent::TaskFinished { v: V, end, steps: history.len() as u32, usage, cost_usd };
                slot.events.borrow_mut().push(event.clone());
                slot.state.borrow_mut().apply(&event);
                slot.running.set(false);
                // The stopped worker's registration goes with the task.
                self.host.end_page_scripts(&saved.task_id).await;
                let seq = slot.events.borrow().len() - 1;
                save_events_page(&*self.host, saved.task_id.clone(), slot.events.clone(), seq).await;
                self.host.broadcast(&event, seq as u32, &saved.task_id, &slot.state.borrow());
                false
            }
        }
    }

    /// The settings a restored task goes on with (the model it started with) and its tabs that
    /// are still open, the one it worked in last first.
    async fn prepare_restore(
        &self,
        saved: &SavedTask,
        history: &[StepRecord],
        started_with: &str,
    ) -> Result<(Settings, Vec<i32>), Refusal> {
        // The task goes on with the model it started with, chosen in the panel or saved then.
        let settings = self.saved_settings().await?.validate()?.with_model(Some(started_with))?;
        // The task's tabs: the one it started on and every tab a step worked in, those still open.
        let mut tabs = vec![saved.start_tab];
        for record in history {
            if record.tab_id != 0 && !tabs.contains(&record.tab_id) {
                tabs.push(record.tab_id);
            }
        }
        let mut open = Vec::new();
        for id in tabs {
            if self.host.tab(id).await.is_ok() {
                open.push(id);
            }
        }
        let current = history.iter().rev().map(|r| r.tab_id).find(|id| open.contains(id)).or(open.first().copied());
        let current = current.ok_or(BrowserError::TabClosed)?;
        open.retain(|id| *id != current);
        open.insert(0, current);
        Ok((settings, open))
    }

    /// The settings as saved, with the API key kept only for the browser session put in place
    /// (none after the browser closed: their check then says to enter it again).
    async fn saved_settings(&self) -> Result<StoredSettings, Refusal> {
        let raw = self.host.stored_settings().await.map_err(Refusal::SettingsUnreadable)?;
        let mut stored = StoredSettings::from_json(raw)?;
        if stored.keys_in_session {
            stored.llm.api_key = self.host.session_api_key().await.ok().flatten().unwrap_or_default();
        }
        Ok(stored)
    }

    /// The active tab of the last focused window.
    async fn active_tab(&self) -> Result<crate::tabs::host::Tab, Refusal> {
        self.host.active_tab().await.map_err(Refusal::CurrentTabUnknown)?.ok_or(Refusal::NoOpenTab)
    }

    /// A task's new tab joins the task's group (`group`) before the task starts, so the user
    /// sees it there at once; a failure only leaves it ungrouped.
    async fn group_new_tab(&self, id: i32, group: &str) {
        if let Err(e) = self.host.group_tab(id, group).await {
            self.host.warn(&format!("Tabwright could not group its new tab: {e}"));
        }
    }

    /// The tab task `task_id` runs on (see `Start`). A tab opened for it is claimed as it
    /// opens, so no other task's action takes it for one it opened.
    async fn pick_tab(&self, start: Start, group: &str, task_id: &str) -> Result<i32, Refusal> {
        let tab_id = match start {
            Start::NewTabAt { url } => {
                if !is_web_url(&url) {
                    return Err(Refusal::BadStartUrl(url));
                }
                let opening = self.claims.opening();
                let tab = self
                    .host
                    .open_tab(&url, None)
                    .await
                    .map_err(|reason| Refusal::TabNotOpenedAt { url: url.clone(), reason })?;
                let id = tab.id.ok_or(Refusal::TabWithoutId)?;
                self.claims.claim(id, task_id);
                drop(opening);
                self.group_new_tab(id, group).await;
                return Ok(id);
            }
            Start::NewTab { beside } => {
                let window = match beside {
                    Some(id) => self.host.tab(id).await.ok(),
                    None => self.active_tab().await.ok(),
                }
                .and_then(|t| t.window_id);
                let opening = self.claims.opening();
                let tab = self.host.open_tab("about:blank", window).await.map_err(Refusal::NewTabNotOpened)?;
                let id = tab.id.ok_or(Refusal::TabWithoutId)?;
                self.claims.claim(id, task_id);
                drop(opening);
                self.group_new_tab(id, group).await;
                return Ok(id);
            }
            Start::Tab { tab } => tab,
        };
        let tab = match tab_id {
            Some(id) => self.host.tab(id).await.map_err(|_| BrowserError::TabClosed)?,
            None => self.active_tab().await?,
        };
        // Where the tab is or is about to be.
        let url = tab.destination().to_string();
        if is_restricted(&url) && !is_blank_page(&url) {
            return Err(Refusal::RestrictedStart { url });
        }
        tab.id.ok_or(Refusal::TabWithoutId)
    }
}
