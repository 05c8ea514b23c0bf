//! The worker's one task: panel requests answered, a task started on the right tab, saved as it
//! goes, and continued by a worker that Chrome stopped and started again.
//!
//! Only one task runs at a time; its events are kept so a panel that (re)opens mid-task can show
//! everything so far, and saved (`saved.rs`) so a restarted worker continues from the last
//! completed step. Everything here is decided in plain Rust behind the ports of `host.rs`; the
//! extension implements them over chrome.* and native tests over memory, stopping a worker at
//! each await and starting a new one on what it saved.
//!
//! Requests the core answers at once (status, pause, stop, a settings check) are answered by a
//! plain call, `answer_now`; only those that wait on Chrome or the model go through a future
//! (`answer_later`). A cold start's first request (the panel's `get_status`) then runs no future:
//! Chrome compiles the wasm a function at its first call, and that request compiles little more
//! than what it runs.
//!
//! # Other requests of the extension's pages
//!
//! **Other requests of the extension's pages.** `test_connection` (settings as the options page
//! holds them): `LlmClient::check_connection` asks the agent's model once — no retries, no
//! fallback — for a one-field JSON object with a strict schema, and the reply says how long it
//! took or, refused, the error as a task would meet it. `list_models` (the provider, base URL,
//! key and headers as typed; a model name is not needed): the provider's model list
//! (`llm::models`, a GET through `TaskRuntime::get`), asked by the options page when a model
//! field is first visited and after those fields change, never when the page opens (that would
//! start the worker for nothing). `check_settings`: the settings' check a
//! task would make, without a task. Settings with `keys_in_session` have their API key in
//! `chrome.storage.session` (`session_keys`), put in place by `saved_settings` when the settings are read; when the
//! browser session is over, the check says to enter the key again.
//!
//! # Surviving the worker being stopped
//!
//! **Surviving the worker being stopped.** Chrome stops an idle worker, and may stop a busy one.
//! While a task runs a cheap API call every 25 s keeps it alive, but that is not relied on: the
//! task's start is saved to `chrome.storage.session` (`task`) when it starts, and after every event
//! its log (so a restarted worker's log never ends before what a panel already showed), in pages of
//! eight events (`task_events_<n>`, each naming its task): a turn rewrites only the page its events
//! fall in, so saving step 90 costs what saving step 1 did. Values are JSON text, built when the
//! write is made, and the writes of one key asked for in one turn of the worker come down to the
//! newest, so saving costs the step almost nothing. When the worker starts again — any event wakes it: the
//! panel reconnecting, a `get_status`, the 30-second alarm a running task sets — `background.js`
//! looks at session storage as it found it (read while the core loads); when a task is saved there it
//! calls `resume_interrupted_task`: the task continues from its last completed step with its
//! history, tokens, tabs, pause state and conversation (`task_restored`; the step that was under
//! way is done again), or, if it cannot (settings now invalid, its tabs closed), ends saying why.
//! Nothing recorded is lost. Requests wait while a task is being restored (they are answered the
//! moment it ends; with no task saved they do not wait at all), and a panel whose log runs past the
//! restored one resyncs to it.

pub mod host;
pub mod saved;

use crate::agent::skill::{Skill, SkillDraft};
use crate::agent::{Agent, Ports, PreviousTask, StepRecord, StopSignal, TaskState};
use crate::browser::{BrowserError, TaskFile};
use crate::llm::Usage;
use crate::protocol::{AgentEvent, PanelReply, PanelRequest, Refusal, PROTOCOL_VERSION as V};
use crate::settings::{Settings, StoredSettings};
use crate::web::{is_blank_page, is_restricted, is_web_url};
use host::WorkerHost;
use saved::{save_events_page, SavedTask, EVENTS_PER_PAGE};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

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

/// The task this worker runs, or ran last. Its handles are shared (a clone is the running
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
}

/// Where a task starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// The tab the panel named, or the active tab of the last focused window.
    Tab(Option<i32>),
    /// A new blank tab in the "Tabwright" group, in the window of the tab the panel named.
    NewTab { beside: Option<i32> },
    /// A new tab at this URL (the headless runner, a replay).
    NewTabAt(String),
}

/// What a task is asked to do: its text, where it starts, the shape of its answer, the files
/// attached to it, or (a replay) the saved steps that stand in for the model.
pub struct TaskRequest {
    task: String,
    start: Start,
    output_schema: Option<serde_json::Value>,
    files: Vec<TaskFile>,
    script: Option<Vec<crate::agent::replay::ReplayStep>>,
    /// The model the person chose for this task in the side panel.
    model: Option<String>,
}

/// A request that waits on Chrome or the model, taken out of its `PanelRequest`.
pub enum Later {
    Start {
        request: Box<TaskRequest>,
        follow_up: bool,
    },
    Replay {
        title: String,
        start_url: String,
        steps: Vec<crate::agent::replay::ReplayStep>,
    },
    TestConnection(serde_json::Value),
    /// The settings as the options page holds them, or the saved ones.
    ListModels(Option<serde_json::Value>),
    SaveSecret {
        name: String,
        value: String,
        site: String,
    },
    SaveSkill(SkillDraft),
}

/// The worker's task and what it answers. One per worker; `Rc`, because a started task's work
/// outlives the request that started it.
pub struct TaskHost<H: WorkerHost> {
    host: Rc<H>,
    slot: RefCell<Option<TaskSlot>>,
    /// Set while a task saved by a stopped worker is being restored.
    restoring: Cell<bool>,
}

fn refused(reason: impl Into<Refusal>) -> PanelReply {
    PanelReply::refused(&reason.into())
}

impl<H: WorkerHost> TaskHost<H> {
    pub fn new(host: H) -> Rc<Self> {
        Rc::new(TaskHost { host: Rc::new(host), slot: RefCell::new(None), restoring: Cell::new(false) })
    }

    pub fn host(&self) -> &H {
        &self.host
    }

    /// Whether a task saved by a stopped worker is being restored (requests wait for it).
    pub fn restoring(&self) -> bool {
        self.restoring.get()
    }

    /// Whether a task runs now.
    pub fn running(&self) -> bool {
        self.slot.borrow().as_ref().is_some_and(|s| s.running.get())
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
                new_tab,
                files,
                model,
                ..
            } => {
                let start = match (start_url, new_tab) {
                    (Some(url), _) => Start::NewTabAt(url),
                    (None, true) => Start::NewTab { beside: tab_id },
                    (None, false) => Start::Tab(tab_id),
                };
                let request = TaskRequest { task, start, output_schema, files, script: None, model };
                return Err(Later::Start { request: Box::new(request), follow_up });
            }
            PanelRequest::ReplayTask { title, start_url, steps, .. } => {
                if steps.is_empty() {
                    refused(Refusal::EmptyReplay)
                } else {
                    return Err(Later::Replay { title, start_url, steps });
                }
            }
            PanelRequest::TestConnection { settings, .. } => return Err(Later::TestConnection(settings)),
            PanelRequest::ListModels { settings, .. } => return Err(Later::ListModels(settings)),
            PanelRequest::SaveSkill { draft, .. } => return Err(Later::SaveSkill(draft)),
            PanelRequest::SaveSecret { name, value, site, .. } => return Err(Later::SaveSecret { name, value, site }),
            PanelRequest::PauseTask { .. } => match &*self.slot.borrow() {
                Some(slot) if slot.running.get() => {
                    slot.stop.pause();
                    PanelReply::Accepted { v: V }
                }
                _ => refused(Refusal::NoTaskRunning),
            },
            PanelRequest::ResumeTask { .. } => match &*self.slot.borrow() {
                Some(slot) if slot.running.get() && slot.stop.is_paused() => {
                    slot.stop.resume();
                    PanelReply::Accepted { v: V }
                }
                _ => refused(Refusal::NoTaskPaused),
            },
            PanelRequest::AnswerQuestion { answer, .. } => {
                if answer.trim().is_empty() {
                    refused(Refusal::EmptyAnswer)
                } else if self.host.deliver_answer(answer) {
                    PanelReply::Accepted { v: V }
                } else {
                    refused(Refusal::NoQuestion)
                }
            }
            PanelRequest::AnswerConsent { id, answer, .. } => {
                if self.host.deliver_consent(id, answer) {
                    PanelReply::Accepted { v: V }
                } else {
                    refused(Refusal::NoConsent)
                }
            }
            PanelRequest::StopTask { .. } => match &*self.slot.borrow() {
                Some(slot) if slot.running.get() => {
                    slot.stop.stop();
                    PanelReply::Accepted { v: V }
                }
                _ => refused(Refusal::NoTaskRunning),
            },
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
                    Ok(_) => PanelReply::Accepted { v: V },
                    Err(e) => refused(e),
                }
            }
            PanelRequest::DraftSkill { start_url, steps, .. } => match crate::agent::skill::draft(&start_url, steps) {
                Ok((domain, params)) => PanelReply::SkillDraft { v: V, domain, params },
                Err(e) => refused(e),
            },
            PanelRequest::GetStatus { task_id, since, .. } => match &*self.slot.borrow() {
                Some(slot) => {
                    // Only what the caller lacks: a follower polling a long task must not get
                    // the whole log (every step's record) again each time.
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
                },
            },
        })
    }

    /// The answer to a request that waits on Chrome or the model: starting a task, checking a
    /// connection, saving a skill. Boxed, so its state machine stays out of the dispatch's.
    #[inline(never)]
    pub fn answer_later(self: &Rc<Self>, later: Later) -> Pin<Box<dyn Future<Output = PanelReply>>> {
        let this = self.clone();
        Box::pin(async move {
            match later {
                Later::Start { request, follow_up } => {
                    let earlier = if follow_up {
                        this.slot
                            .borrow()
                            .as_ref()
                            .map(|s| (s.conversation.borrow().clone(), s.conversation_id.clone()))
                    } else {
                        None
                    };
                    this.start_task(*request, earlier).await
                }
                Later::Replay { title, start_url, steps } => {
                    let request = TaskRequest {
                        task: title,
                        start: Start::NewTabAt(start_url),
                        output_schema: None,
                        files: Vec::new(),
                        script: Some(steps),
                        model: None,
                    };
                    this.start_task(request, None).await
                }
                Later::TestConnection(settings) => this.test_connection(settings).await,
                Later::ListModels(settings) => this.list_models(settings).await,
                Later::SaveSecret { name, value, site } => this.save_secret(name, value, site).await,
                Later::SaveSkill(draft) => this.save_skill(draft).await,
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

    async fn start_task(
        self: Rc<Self>,
        request: TaskRequest,
        earlier: Option<(Vec<PreviousTask>, String)>,
    ) -> PanelReply {
        let TaskRequest { task, start, output_schema, files, script, model } = request;
        let task = task.trim().to_string();
        if task.is_empty() {
            return refused(Refusal::EmptyTask);
        }
        let chars = task.chars().count();
        if chars > crate::protocol::TASK_MAX_CHARS {
            return refused(Refusal::TaskTooLong { chars, max: crate::protocol::TASK_MAX_CHARS });
        }
        if let Err(why) = TaskFile::check_all(&files) {
            return refused(Refusal::BadFiles(why));
        }
        if let Some(schema) = &output_schema {
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
        // Claim the slot before the first await, so two start requests cannot both pass the check.
        let task_id = self.new_task_id();
        let (earlier, conversation_id) = earlier.unwrap_or_else(|| (Vec::new(), task_id.clone()));
        let Some(slot) = self.claim_slot(&task_id, Vec::new(), earlier.clone(), &conversation_id) else {
            return refused(Refusal::TaskRunning);
        };
        let (settings, tab_id) = match self.prepare(start, model.as_deref()).await {
            Ok(ready) => ready,
            Err(reason) => {
                slot.running.set(false);
                return refused(reason);
            }
        };
        let saved = SavedTask {
            task_id,
            task,
            start_tab: tab_id,
            output_schema,
            events: Vec::new(),
            earlier,
            conversation_id,
            script,
            files,
            guard: None,
        };
        let skills = self.skills_for(&saved).await;
        self.launch(saved, slot, settings, skills, &[tab_id], None);
        PanelReply::Accepted { v: V }
    }

    /// A task id no earlier task of this browser has: the time, and one more than the last
    /// when two starts fall in the same millisecond.
    fn new_task_id(&self) -> String {
        let now = crate::agent::Clock::now_ms(&self.host.clock()).max(0.0) as u64;
        let last = self.slot.borrow().as_ref().and_then(|s| s.task_id.strip_prefix("task-")?.parse::<u64>().ok());
        format!("task-{}", last.map_or(now, |last| now.max(last + 1)))
    }

    /// Claims the one task slot (synchronously, so two claims cannot both pass), with the
    /// events the task already has; `None` while another task runs.
    fn claim_slot(
        &self,
        task_id: &str,
        mut events: Vec<AgentEvent>,
        earlier: Vec<PreviousTask>,
        conversation_id: &str,
    ) -> Option<TaskSlot> {
        let mut slot = self.slot.borrow_mut();
        if slot.as_ref().is_some_and(|s| s.running.get()) {
            return None;
        }
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
        };
        *slot = Some(claimed.clone());
        Some(claimed)
    }

    /// Runs the agent on its own: every event is logged, broadcast and saved; a heartbeat keeps
    /// the worker from being stopped as idle while it runs. `restored` continues a task whose
    /// worker was stopped.
    fn launch(
        &self,
        saved: SavedTask,
        slot: TaskSlot,
        settings: Settings,
        skills: Vec<Skill>,
        tabs: &[i32],
        restored: Option<(Vec<StepRecord>, Usage)>,
    ) {
        let TaskSlot { stop, events, state, running, conversation, trimmed_to, .. } = slot;
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
            let (events, host, task_id) = (events.clone(), host.clone(), saved.task_id.clone());
            move |event: AgentEvent| {
                let seq = events.borrow().len();
                // A site the person always allows joins the settings, for later tasks.
                if let AgentEvent::ConsentAnswered { site, answer: crate::guard::ConsentAnswer::Always, .. } = &event {
                    let (writer, site) = (host.clone(), site.clone());
                    host.spawn(Box::pin(async move { always_allow(&*writer, site).await }));
                }
                events.borrow_mut().push(event.clone());
                state.borrow_mut().apply(&event);
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
            }
        };
        let ports = Ports {
            browser: host.browser(tabs[0], tabs, settings.page),
            transport: host.transport(settings.llm.timeout_s.saturating_mul(1000)),
            events: sink,
            clock: host.clock(),
        };
        let mut agent = Agent::new(saved.task_id.clone(), saved.task.clone(), settings, ports, stop)
            .with_output_schema(saved.output_schema.as_ref())
            .following(saved.earlier.clone())
            .in_conversation(saved.conversation_id())
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
                        crate::guard::Kept::Whole(text) => (saved::GUARD_KEY, text, Some("[]".to_string())),
                        crate::guard::Kept::Added(text) => (saved::GUARD_ADDED_KEY, text, None),
                    };
                    let id = task_id.clone();
                    writer.write_saved(key.into(), Box::new(move || Ok(saved::guard_text(&id, &text)))).await;
                    if let Some(none) = added {
                        let text = move || Ok(saved::guard_text(&task_id, &none));
                        writer.write_saved(saved::GUARD_ADDED_KEY.into(), Box::new(text)).await;
                    }
                }));
            });
        }
        if let Some(script) = saved.script.clone() {
            agent = agent.replaying(script);
        }
        let tabs = tabs.to_vec();
        {
            let (host, running) = (host.clone(), running.clone());
            self.host.spawn(Box::pin(async move {
                host.task_began(&tabs).await;
                let history = agent.run().await;
                conversation.borrow_mut().push(history.as_previous());
                running.set(false);
                host.task_ended().await;
            }));
        }
        self.host.spawn(Box::pin(async move {
            let clock = host.clock();
            while running.get() {
                crate::agent::Clock::sleep(&clock, KEEP_ALIVE_MS).await;
                host.keep_alive().await;
            }
        }));
    }

    /// Continues the task that was running when Chrome stopped the worker, from its last
    /// completed step; or, when it cannot, ends it with a message saying why. A finished task
    /// is restored too, so a panel opened later still shows it. Called whenever the worker
    /// starts (and on the wake-up alarm); does nothing when this worker already has a task.
    /// True when a task goes on running.
    pub async fn restore(self: &Rc<Self>) -> bool {
        if self.restoring.get() || self.slot.borrow().is_some() {
            return false;
        }
        self.restoring.set(true);
        let resumed = self.clone().restore_saved().await;
        self.restoring.set(false);
        resumed
    }

    async fn restore_saved(self: Rc<Self>) -> bool {
        let saved = match self.host.read_saved().await {
            Ok(items) => SavedTask::read(&items),
            Err(e) => {
                self.host.warn(&format!("Tabwright could not read the saved task: {e}"));
                None
            }
        };
        let Some(mut saved) = saved else { return false };
        // The log lives in the slot from here on, not also in the saved task.
        let events = std::mem::take(&mut saved.events);
        let Some(slot) = self.claim_slot(&saved.task_id, events, saved.earlier.clone(), saved.conversation_id()) else {
            return false;
        };
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
        match self.prepare_restore(&saved, &history, &state.model).await {
            Ok((settings, tabs)) => {
                if state.paused {
                    slot.stop.pause();
                }
                let skills = self.skills_for(&saved).await;
                self.launch(saved, slot, settings, skills, &tabs, Some((history, usage)));
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
                self.host.end_page_scripts().await;
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

    /// Reads and checks the settings and picks the tab, or says why the task cannot start.
    async fn prepare(&self, start: Start, model: Option<&str>) -> Result<(Settings, i32), Refusal> {
        let settings = self.saved_settings().await?.validate()?.with_model(model)?;
        let tab_id = self.pick_tab(start).await?;
        Ok((settings, tab_id))
    }

    /// The active tab of the last focused window.
    async fn active_tab(&self) -> Result<crate::tabs::host::Tab, Refusal> {
        self.host.active_tab().await.map_err(Refusal::CurrentTabUnknown)?.ok_or(Refusal::NoOpenTab)
    }

    /// A task's new tab joins the "Tabwright" group before the task starts, so the user sees
    /// it there at once; a failure only leaves it ungrouped.
    async fn group_new_tab(&self, id: i32) {
        if let Err(e) = self.host.group_tab(id).await {
            self.host.warn(&format!("Tabwright could not group its new tab: {e}"));
        }
    }

    /// The tab the task runs on (see `Start`).
    async fn pick_tab(&self, start: Start) -> Result<i32, Refusal> {
        let tab_id = match start {
            Start::NewTabAt(url) => {
                if !is_web_url(&url) {
                    return Err(Refusal::BadStartUrl(url));
                }
                let tab = self
                    .host
                    .open_tab(&url, None)
                    .await
                    .map_err(|reason| Refusal::TabNotOpenedAt { url: url.clone(), reason })?;
                let id = tab.id.ok_or(Refusal::TabWithoutId)?;
                self.group_new_tab(id).await;
                return Ok(id);
            }
            Start::NewTab { beside } => {
                let window = match beside {
                    Some(id) => self.host.tab(id).await.ok(),
                    None => self.active_tab().await.ok(),
                }
                .and_then(|t| t.window_id);
                let tab = self.host.open_tab("about:blank", window).await.map_err(Refusal::NewTabNotOpened)?;
                let id = tab.id.ok_or(Refusal::TabWithoutId)?;
                self.group_new_tab(id).await;
                return Ok(id);
            }
            Start::Tab(tab_id) => tab_id,
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
