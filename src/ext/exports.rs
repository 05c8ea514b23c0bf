//! The functions the background module calls, and the one running task.
//!
//! The background module forwards every side-panel request here with a broadcast function; the
//! core answers with a `PanelReply` and reports a running task's progress through that function.
//! Only one task runs at a time; its events are kept so a panel that (re)opens mid-task can
//! show everything so far.

use super::browser::ChromeBrowser;
use super::chrome::{self, to_js};
use super::transport::FetchTransport;
use crate::agent::{Agent, Ports, PreviousTask, StopSignal};
use crate::browser::BrowserError;
use crate::protocol::{AgentEvent, PanelReply, PanelRequest, ProtocolError, Refusal, PROTOCOL_VERSION as V};
use crate::settings::StoredSettings;
use crate::web::{is_blank_page, is_restricted, is_web_url};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// Below Chrome's 30 s idle limit for service workers.
const KEEP_ALIVE_MS: u32 = 25_000;

struct TaskSlot {
    task_id: String,
    stop: StopSignal,
    events: Rc<RefCell<Vec<AgentEvent>>>,
    running: Rc<Cell<bool>>,
    /// The conversation so far: earlier tasks, and this one once it ends (for a follow-up).
    conversation: Rc<RefCell<Vec<PreviousTask>>>,
    /// The id of the conversation's first task.
    conversation_id: String,
}

thread_local! {
    static CURRENT: RefCell<Option<TaskSlot>> = const { RefCell::new(None) };
    /// Set while a task saved by a stopped worker is being restored: a promise that settles
    /// when the restore is over (what requests that came meanwhile await), and its resolve.
    static RESTORING: RefCell<Option<(js_sys::Promise, js_sys::Function)>> = const { RefCell::new(None) };
}

/// Where the running (or last) task is saved for a restarted worker (chrome.storage.session:
/// kept while the browser runs): how it started under this key, written when it starts; its
/// events in pages of `EVENTS_PER_PAGE` under `events_key(n)`. A turn's new events rewrite only
/// the page they fall in, so saving a step costs the same at step 90 as at step 1, where one
/// value holding the whole log would be written out again, longer, after every event.
const SAVED_TASK_KEY: &str = "task";
const EVENTS_PER_PAGE: usize = 8;

fn events_key(page: usize) -> String {
    format!("task_events_{page}")
}

/// One page of a saved task's events, with its task: a page left over from an earlier, longer
/// task is not read as this one's.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedEvents {
    task_id: String,
    events: Vec<AgentEvent>,
}
/// How long a request waits for a task being restored.
const RESTORE_WAIT_MS: u32 = 10_000;
/// The alarm that wakes a stopped worker while a task runs.
const WAKE_ALARM: &str = "tabwright-task";

/// What a restarted worker needs to continue a task: how it started, and its events so far
/// (every completed step's record is in them). Saved without its events, which are saved in
/// pages (`SAVED_TASK_KEY`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct SavedTask {
    task_id: String,
    task: String,
    start_tab: i32,
    output_schema: Option<serde_json::Value>,
    /// Empty as saved; a version that kept the whole log here is still read.
    #[serde(default)]
    events: Vec<AgentEvent>,
    /// The earlier tasks of the conversation, for a follow-up.
    #[serde(default)]
    earlier: Vec<PreviousTask>,
    /// The conversation the task belongs to; empty (saved by an older version) means its own.
    #[serde(default)]
    conversation_id: String,
    /// A replay's saved steps (all of them; a restored replay skips those it completed).
    #[serde(default)]
    script: Option<Vec<crate::agent::replay::ReplayStep>>,
    /// The files the person attached (names and where their bytes are kept).
    #[serde(default)]
    files: Vec<crate::browser::TaskFile>,
}

impl SavedTask {
    /// Saves how the task started; its events are saved by `save_events_page`.
    async fn save(&self) {
        let header = SavedTask { events: Vec::new(), ..self.clone() };
        let _ = chrome::session_set_with(SAVED_TASK_KEY, || serde_json::to_string(&header).map_err(|e| e.to_string()))
            .await;
    }

    /// The saved task, with its events gathered from their pages; `None` when none is saved or
    /// it cannot be read.
    async fn load() -> Option<SavedTask> {
        let items = chrome::session_items().await.ok()?;
        let mut saved = serde_json::from_value::<SavedTask>(chrome::session_item(&items, SAVED_TASK_KEY).ok()?).ok()?;
        for page in 0.. {
            let Ok(raw) = chrome::session_item(&items, &events_key(page)) else { break };
            match serde_json::from_value::<SavedEvents>(raw) {
                Ok(part) if part.task_id == saved.task_id => saved.events.extend(part.events),
                _ => break,
            }
        }
        Some(saved)
    }

    fn conversation_id(&self) -> &str {
        if self.conversation_id.is_empty() {
            &self.task_id
        } else {
            &self.conversation_id
        }
    }
}

/// The event without its step's screenshot: session storage is small (10 MB), and a restarted
/// task does not need the images (history keeps them).
fn without_screenshot(event: &AgentEvent) -> AgentEvent {
    match event {
        AgentEvent::StepFinished { v, record } if record.screenshot.is_some() => {
            AgentEvent::StepFinished { v: *v, record: crate::agent::StepRecord { screenshot: None, ..record.clone() } }
        }
        other => other.clone(),
    }
}

/// Saves the page of `events` that holds event `seq`, as the log is when the write is made
/// (writes of one page asked for in the same turn come down to one).
async fn save_events_page(task_id: String, events: Rc<RefCell<Vec<AgentEvent>>>, seq: usize) {
    let page = seq / EVENTS_PER_PAGE;
    let _ = chrome::session_set_with(&events_key(page), || {
        let events = events.borrow();
        let start = (page * EVENTS_PER_PAGE).min(events.len());
        let end = (start + EVENTS_PER_PAGE).min(events.len());
        let part = SavedEvents { task_id, events: events[start..end].iter().map(without_screenshot).collect() };
        serde_json::to_string(&part).map_err(|e| e.to_string())
    })
    .await;
}

/// Whether a task saved by a stopped worker is being restored.
fn restoring() -> bool {
    RESTORING.with_borrow(Option::is_some)
}

fn refused(reason: impl Into<Refusal>) -> PanelReply {
    PanelReply::refused(&reason.into())
}

/// Answers one request from the side panel (or the headless runner, through the panel page):
/// with the reply itself when the core can answer at once (status, pause, stop, a settings
/// check...), else with a promise of it, for a request that waits on Chrome or the model and
/// for any request while a stopped worker's task is being restored. `broadcast` receives every
/// event of a task this request starts.
///
/// A plain call, not an async one: a cold start's first request (the panel's `get_status`)
/// then runs no future and no promise queue. Chrome compiles the wasm lazily, a function when
/// it is first called, and reading the request, answering it and writing the reply are
/// separate functions, with the requests that wait answered by a boxed future of their own
/// (`answer_later`): that first request compiles about 150 small functions (about 40 of them
/// read the request through a `serde_json::Value`, see `crate::tagged`; it was 200 when every
/// request went through a future), not every request's code folded into one state machine
/// (that one function took 4 ms to compile on each cold start; scripts/build keeps wasm-opt
/// from folding them again).
#[wasm_bindgen]
pub fn answer_panel_message(message: JsValue, broadcast: js_sys::Function) -> JsValue {
    // A worker that just started may be restoring the task its predecessor ran: answer once
    // that is done, so the panel sees the task (bounded, in case restoring hangs). This is on
    // the cold-start path: the answer follows the restore at once.
    if let Some(restored) = RESTORING.with_borrow(|r| r.as_ref().map(|(promise, _)| promise.clone())) {
        return promise_of(async move {
            let _ = super::timeout::within(RESTORE_WAIT_MS, JsFuture::from(restored)).await;
            answer_request(message, broadcast)
        });
    }
    answer_request(message, broadcast)
}

/// The reply to a request, or a promise of it (see `answer_panel_message`).
fn answer_request(message: JsValue, broadcast: js_sys::Function) -> JsValue {
    match read_request(message) {
        Err(e) => write_reply(&refused(e)),
        Ok(request) => match answer_now(request) {
            Ok(reply) => write_reply(&reply),
            Err(later) => promise_of(async move { write_reply(&answer_later(later, broadcast).await) }),
        },
    }
}

/// A JS promise of what `value` comes to (a promise it comes to is followed in JS).
fn promise_of(value: impl std::future::Future<Output = JsValue> + 'static) -> JsValue {
    wasm_bindgen_futures::future_to_promise(async move { Ok(value.await) }).into()
}

/// The request, checked. Its own function, compiled on its own (see `answer_panel_message`).
#[inline(never)]
fn read_request(message: JsValue) -> Result<PanelRequest, ProtocolError> {
    chrome::json_text(&message).map_err(ProtocolError::Unreadable).and_then(|text| PanelRequest::from_json_text(&text))
}

/// The reply as the panel reads it. Its own function, compiled on its own (see
/// `answer_panel_message`).
#[inline(never)]
fn write_reply(reply: &PanelReply) -> JsValue {
    chrome::to_js_as_json(reply)
}

/// A request that waits on Chrome or the model, taken out of its `PanelRequest`.
enum Later {
    Start {
        task: String,
        start: Start,
        output_schema: Option<serde_json::Value>,
        follow_up: bool,
        files: Vec<crate::browser::TaskFile>,
        model: Option<String>,
    },
    Replay {
        title: String,
        start_url: String,
        steps: Vec<crate::agent::replay::ReplayStep>,
    },
    TestConnection(serde_json::Value),
    /// The settings as the options page holds them, or the saved ones.
    ListModels(Option<serde_json::Value>),
    SaveSkill(crate::agent::skill::SkillDraft),
}

/// The answer to a request the core can give at once, or what to do later (`answer_later`).
#[inline(never)]
fn answer_now(request: PanelRequest) -> Result<PanelReply, Later> {
    Ok(match request {
        PanelRequest::StartTask {
            task, tab_id, start_url, output_schema, follow_up, new_tab, files, model, ..
        } => {
            let start = match (start_url, new_tab) {
                (Some(url), _) => Start::NewTabAt(url),
                (None, true) => Start::NewTab { beside: tab_id },
                (None, false) => Start::Tab(tab_id),
            };
            return Err(Later::Start { task, start, output_schema, follow_up, files, model });
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
        PanelRequest::PauseTask { .. } => CURRENT.with_borrow(|slot| match slot {
            Some(slot) if slot.running.get() => {
                slot.stop.pause();
                PanelReply::Accepted { v: V }
            }
            _ => refused(Refusal::NoTaskRunning),
        }),
        PanelRequest::ResumeTask { .. } => CURRENT.with_borrow(|slot| match slot {
            Some(slot) if slot.running.get() && slot.stop.is_paused() => {
                slot.stop.resume();
                PanelReply::Accepted { v: V }
            }
            _ => refused(Refusal::NoTaskPaused),
        }),
        PanelRequest::AnswerQuestion { answer, .. } => {
            if answer.trim().is_empty() {
                refused(Refusal::EmptyAnswer)
            } else if super::browser::deliver_answer(answer) {
                PanelReply::Accepted { v: V }
            } else {
                refused(Refusal::NoQuestion)
            }
        }
        PanelRequest::StopTask { .. } => CURRENT.with_borrow(|slot| match slot {
            Some(slot) if slot.running.get() => {
                slot.stop.stop();
                PanelReply::Accepted { v: V }
            }
            _ => refused(Refusal::NoTaskRunning),
        }),
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
        PanelRequest::GetStatus { task_id, since, .. } => CURRENT.with_borrow(|slot| match slot {
            Some(slot) => {
                // Only what the caller lacks: a follower polling a long task must not get the
                // whole log (every step's record) again each time.
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
                }
            }
            None => PanelReply::Status { v: V, task_id: None, running: false, from: 0, events: Vec::new() },
        }),
    })
}

/// The answer to a request that waits on Chrome or the model: starting a task, checking a
/// connection, saving a skill. Boxed, so its state machine stays out of the dispatch's.
#[inline(never)]
fn answer_later(
    later: Later,
    broadcast: js_sys::Function,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = PanelReply>>> {
    Box::pin(async move {
        match later {
            Later::Start { task, start, output_schema, follow_up, files, model } => {
                let earlier = if follow_up {
                    CURRENT.with_borrow(|slot| {
                        slot.as_ref().map(|s| (s.conversation.borrow().clone(), s.conversation_id.clone()))
                    })
                } else {
                    None
                };
                start_task(TaskRequest { task, start, output_schema, files, script: None, model }, earlier, broadcast)
                    .await
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
                start_task(request, None, broadcast).await
            }
            Later::TestConnection(settings) => test_connection(settings).await,
            Later::ListModels(settings) => list_models(settings).await,
            Later::SaveSkill(draft) => save_skill(draft).await,
        }
    })
}

/// Makes a skill of the draft and saves it with the others.
async fn save_skill(draft: crate::agent::skill::SkillDraft) -> PanelReply {
    let mut saved = match chrome::saved_skills().await {
        Ok(saved) => saved,
        Err(e) => return refused(Refusal::SkillsUnreadable(e.to_string())),
    };
    let skill = match crate::agent::skill::Skill::from_draft(draft, &chrome::readable_skills(&saved)) {
        Ok(skill) => skill,
        Err(e) => return refused(e),
    };
    match chrome::save_skills(&mut saved, &skill).await {
        Ok(()) => PanelReply::SkillSaved { v: V, name: skill.name, action: skill.action, domain: skill.domain },
        Err(e) => refused(Refusal::SkillNotSaved(e.to_string())),
    }
}

/// How long the connection check waits for the model.
const CONNECTION_CHECK_MS: u32 = 30_000;

/// Checks the settings, then asks their model for one small JSON answer (`LlmClient::check_connection`).
async fn test_connection(settings: serde_json::Value) -> PanelReply {
    let settings = match StoredSettings::from_json(settings).and_then(|s| s.validate()) {
        Ok(settings) => settings,
        Err(e) => return refused(e),
    };
    let timeout_ms = CONNECTION_CHECK_MS.min(settings.llm.timeout_s.saturating_mul(1000));
    let client = crate::llm::LlmClient::new(settings.llm, FetchTransport { timeout_ms });
    let started = js_sys::Date::now();
    match client.check_connection().await {
        Ok(completion) => PanelReply::ConnectionWorks {
            v: V,
            model: completion.model,
            ms: (js_sys::Date::now() - started) as u32,
            input_tokens: completion.usage.input_tokens,
            output_tokens: completion.usage.output_tokens,
        },
        Err(e) => refused(e),
    }
}

/// Asks the provider of the settings for its models (`llm::models`). The settings need not
/// be complete: a model name is not needed to list the models.
async fn list_models(settings: Option<serde_json::Value>) -> PanelReply {
    let mut settings = match settings {
        Some(settings) => settings,
        None => match chrome::stored_settings().await {
            Ok(raw) => raw,
            Err(e) => return refused(Refusal::SettingsUnreadable(e.to_string())),
        },
    };
    if let Some(llm) = settings.get_mut("llm").and_then(serde_json::Value::as_object_mut) {
        if llm.get("model").and_then(serde_json::Value::as_str).is_none_or(|m| m.trim().is_empty()) {
            llm.insert("model".into(), serde_json::Value::from("-"));
        }
    }
    let settings = match StoredSettings::from_json(settings).and_then(|s| s.validate()) {
        Ok(settings) => settings,
        Err(e) => return refused(e),
    };
    let Some(request) = crate::llm::models::build_models_request(&settings.llm) else {
        return PanelReply::Models { v: V, models: Vec::new(), listed: false };
    };
    let transport = FetchTransport { timeout_ms: CONNECTION_CHECK_MS.min(settings.llm.timeout_s.saturating_mul(1000)) };
    let response = match transport.get(&request).await {
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

/// The worker's clock: wall time for timings, timers for action timeouts.
struct WallClock;

impl crate::agent::Clock for WallClock {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    async fn sleep(&self, ms: u32) {
        gloo_timers::future::TimeoutFuture::new(ms).await;
    }
}

/// Where a task starts.
enum Start {
    /// The tab the panel named, or the active tab of the last focused window.
    Tab(Option<i32>),
    /// A new blank tab in the "Tabwright" group, in the window of the tab the panel named.
    NewTab { beside: Option<i32> },
    /// A new tab at this URL (the headless runner).
    NewTabAt(String),
}

/// What a task is asked to do: its text, where it starts, the shape of its answer, the files
/// attached to it, or (a replay) the saved steps that stand in for the model.
struct TaskRequest {
    task: String,
    start: Start,
    output_schema: Option<serde_json::Value>,
    files: Vec<crate::browser::TaskFile>,
    script: Option<Vec<crate::agent::replay::ReplayStep>>,
    /// The model the person chose for this task in the side panel.
    model: Option<String>,
}

async fn start_task(
    request: TaskRequest,
    earlier: Option<(Vec<PreviousTask>, String)>,
    broadcast: js_sys::Function,
) -> PanelReply {
    let TaskRequest { task, start, output_schema, files, script, model } = request;
    let task = task.trim().to_string();
    if task.is_empty() {
        return refused(Refusal::EmptyTask);
    }
    if let Err(why) = crate::browser::TaskFile::check_all(&files) {
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
    if restoring() {
        return refused(Refusal::Restoring);
    }
    // Claim the slot before the first await, so two start requests cannot both pass the check.
    let task_id = format!("task-{}", js_sys::Date::now() as u64);
    let (earlier, conversation_id) = earlier.unwrap_or_else(|| (Vec::new(), task_id.clone()));
    let Some(slot) = claim_slot(&task_id, Vec::new(), earlier.clone(), &conversation_id) else {
        return refused(Refusal::TaskRunning);
    };
    let (settings, tab_id) = match prepare(start, model.as_deref()).await {
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
    };
    let skills = skills_for(&saved).await;
    let browser = ChromeBrowser::new(tab_id, settings.page);
    launch(saved, slot, settings, skills, browser, None, broadcast);
    PanelReply::Accepted { v: V }
}

/// The handles of a claimed task slot.
struct Claimed {
    stop: StopSignal,
    events: Rc<RefCell<Vec<AgentEvent>>>,
    running: Rc<Cell<bool>>,
    conversation: Rc<RefCell<Vec<PreviousTask>>>,
}

/// Claims the one task slot (synchronously, so two claims cannot both pass), with the events
/// the task already has; `None` while another task runs.
fn claim_slot(
    task_id: &str,
    events: Vec<AgentEvent>,
    earlier: Vec<PreviousTask>,
    conversation_id: &str,
) -> Option<Claimed> {
    CURRENT.with_borrow_mut(|slot| {
        if slot.as_ref().is_some_and(|s| s.running.get()) {
            return None;
        }
        let claimed = TaskSlot {
            task_id: task_id.to_string(),
            stop: StopSignal::new(),
            events: Rc::new(RefCell::new(events)),
            running: Rc::new(Cell::new(true)),
            conversation: Rc::new(RefCell::new(earlier)),
            conversation_id: conversation_id.to_string(),
        };
        let handles = Claimed {
            stop: claimed.stop.clone(),
            events: claimed.events.clone(),
            running: claimed.running.clone(),
            conversation: claimed.conversation.clone(),
        };
        *slot = Some(claimed);
        Some(handles)
    })
}

/// Runs the agent in the background: every event is logged, broadcast and (when it changes
/// what a restart needs) saved; a heartbeat and an alarm keep or bring the worker back while
/// it runs. `restored` continues a task whose worker was stopped.
fn launch(
    saved: SavedTask,
    slot: Claimed,
    settings: crate::settings::Settings,
    skills: Vec<crate::agent::skill::Skill>,
    browser: ChromeBrowser,
    restored: Option<(Vec<crate::agent::StepRecord>, crate::llm::Usage, String)>,
    broadcast: js_sys::Function,
) {
    let Claimed { stop, events, running, conversation } = slot;
    {
        // How the task started; and a restored task's log again in full, for it may have been
        // read from a version that kept it in one piece.
        let (saved, events) = (saved.clone(), events.clone());
        wasm_bindgen_futures::spawn_local(async move {
            saved.save().await;
            let kept = events.borrow().len();
            for page in 0..kept.div_ceil(EVENTS_PER_PAGE) {
                save_events_page(saved.task_id.clone(), events.clone(), page * EVENTS_PER_PAGE).await;
            }
        });
    }
    // Each event goes out with its task and its position in the task's log, so a panel can
    // tell a repeat from a gap and resynchronise with `get_status`.
    let sink = {
        let events = events.clone();
        let task_id = JsValue::from_str(&saved.task_id);
        let id = saved.task_id.clone();
        move |event: AgentEvent| {
            let seq = events.borrow().len();
            events.borrow_mut().push(event.clone());
            // Every event is saved, so a restarted worker's log never ends before what a panel
            // already showed: its page is written once the running work waits, with the other
            // events of this turn, and not on the way of the event itself.
            wasm_bindgen_futures::spawn_local(save_events_page(id.clone(), events.clone(), seq));
            // A closed panel makes the call throw; the task goes on and the event is kept.
            let _ = broadcast.call3(&JsValue::NULL, &to_js(&event), &JsValue::from(seq as u32), &task_id);
        }
    };
    let tabs = browser.task_tabs().to_vec();
    let ports = Ports {
        browser,
        transport: FetchTransport { timeout_ms: settings.llm.timeout_s.saturating_mul(1000) },
        events: sink,
        clock: WallClock,
    };
    let mut agent = Agent::new(saved.task_id.clone(), saved.task.clone(), settings, ports, stop)
        .with_output_schema(saved.output_schema.as_ref())
        .following(saved.earlier.clone())
        .in_conversation(saved.conversation_id())
        .with_skills(skills)
        .with_files(saved.files.clone());
    if let Some((history, usage, why)) = restored {
        // The latest summary of old steps, so a restored task does not condense them again.
        let summary = saved.events.iter().rev().find_map(|e| match e {
            AgentEvent::HistoryCompacted { summary, .. } => Some(summary.clone()),
            _ => None,
        });
        agent = agent.restored(history, usage, why).with_summary(summary);
    }
    if let Some(script) = saved.script.clone() {
        agent = agent.replaying(script);
    }
    {
        let running = running.clone();
        wasm_bindgen_futures::spawn_local(async move {
            chrome::start_alarm(WAKE_ALARM, 0.5).await;
            // Pages get the content scripts only while the task runs (its end takes them out:
            // `ChromeBrowser::finish`). Without the registration, each page gets them when the
            // task first looks at it, later than its own scripts.
            if let Err(e) = chrome::begin_page_scripts(&tabs).await {
                web_sys::console::warn_1(&format!("Tabwright could not register its page scripts: {e}").into());
            }
            let history = agent.run().await;
            conversation.borrow_mut().push(history.as_previous());
            running.set(false);
            chrome::stop_alarm(WAKE_ALARM).await;
        });
    }
    wasm_bindgen_futures::spawn_local(async move {
        while running.get() {
            gloo_timers::future::TimeoutFuture::new(KEEP_ALIVE_MS).await;
            chrome::keep_alive().await;
        }
    });
}

/// Continues the task that was running when Chrome stopped the service worker, from its last
/// completed step; or, when it cannot, ends it with a message saying why. A finished task is
/// restored too, so a panel opened later still shows it. Called whenever the worker starts
/// (and on the wake-up alarm); does nothing when this worker already has a task.
#[wasm_bindgen]
pub async fn resume_interrupted_task(broadcast: js_sys::Function) -> JsValue {
    if restoring() || CURRENT.with_borrow(|slot| slot.is_some()) {
        return JsValue::FALSE;
    }
    let mut settle = None;
    let promise = js_sys::Promise::new(&mut |resolve, _| settle = Some(resolve));
    RESTORING.set(settle.map(|settle| (promise, settle)));
    let resumed = restore(broadcast).await;
    if let Some((_, settle)) = RESTORING.take() {
        let _ = settle.call0(&JsValue::NULL);
    }
    JsValue::from_bool(resumed)
}

async fn restore(broadcast: js_sys::Function) -> bool {
    let Some(saved) = SavedTask::load().await else { return false };
    let Some(slot) = claim_slot(&saved.task_id, saved.events.clone(), saved.earlier.clone(), saved.conversation_id())
    else {
        return false;
    };
    // Every completed step's record is in the log.
    let history: Vec<crate::agent::StepRecord> = saved
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::StepFinished { record, .. } => Some(record.clone()),
            _ => None,
        })
        .collect();
    let mut usage = crate::llm::Usage::default();
    for record in &history {
        usage += record.usage;
    }
    // A finished task (its log ends with its end): kept for panels that open later, and for a
    // follow-up.
    if let Some(AgentEvent::TaskFinished { end, cost_usd, .. }) = saved.events.last() {
        let finished = crate::agent::TaskHistory {
            task: saved.task.clone(),
            model: String::new(),
            steps: history,
            end: end.clone(),
            usage,
            cost_usd: *cost_usd,
        };
        slot.conversation.borrow_mut().push(finished.as_previous());
        slot.running.set(false);
        return false;
    }
    let paused = saved.events.iter().rev().find_map(|e| match e {
        AgentEvent::TaskPaused { .. } => Some(true),
        AgentEvent::TaskResumed { .. } | AgentEvent::TaskRestored { .. } | AgentEvent::TaskStarted { .. } => {
            Some(false)
        }
        _ => None,
    });
    let prepared = async {
        let raw = chrome::stored_settings().await.map_err(|e| Refusal::SettingsUnreadable(e.to_string()))?;
        // The task goes on with the model it started with, chosen in the panel or saved then.
        let started_with = saved.events.iter().find_map(|e| match e {
            AgentEvent::TaskStarted { model, .. } => Some(model.as_str()),
            _ => None,
        });
        let settings = StoredSettings::from_json(raw).and_then(|s| s.validate())?.with_model(started_with)?;
        // The task's tabs: the one it started on and every tab a step worked in, those still open.
        let mut tabs = vec![saved.start_tab];
        for record in &history {
            if record.tab_id != 0 && !tabs.contains(&record.tab_id) {
                tabs.push(record.tab_id);
            }
        }
        let mut open = Vec::new();
        for id in tabs {
            if chrome::get_tab(id).await.is_ok() {
                open.push(id);
            }
        }
        let current = history.iter().rev().map(|r| r.tab_id).find(|id| open.contains(id)).or(open.first().copied());
        let current = current.ok_or(BrowserError::TabClosed)?;
        Ok::<_, Refusal>((settings, current, open))
    };
    match prepared.await {
        Ok((settings, current, tabs)) => {
            if paused == Some(true) {
                slot.stop.pause();
            }
            let skills = skills_for(&saved).await;
            let browser = ChromeBrowser::new(current, settings.page).with_tabs(tabs);
            let why = "Chrome stopped Tabwright's service worker while the task ran".to_string();
            launch(saved, slot, settings, skills, browser, Some((history, usage, why)), broadcast);
            true
        }
        Err(reason) => {
            // Nothing recorded is lost: the steps so far stay, and the task ends saying why.
            let end = crate::agent::TaskEnd::not_resumed(&reason);
            let cost_usd = crate::agent::total_cost(&history);
            let event = AgentEvent::TaskFinished { v: V, end, steps: history.len() as u32, usage, cost_usd };
            slot.events.borrow_mut().push(event.clone());
            slot.running.set(false);
            // The stopped worker's registration goes with the task.
            let _ = chrome::end_page_scripts().await;
            let seq = slot.events.borrow().len() - 1;
            save_events_page(saved.task_id.clone(), slot.events.clone(), seq).await;
            let _ = broadcast.call3(
                &JsValue::NULL,
                &to_js(&event),
                &JsValue::from(seq as u32),
                &JsValue::from_str(&saved.task_id),
            );
            false
        }
    }
}

/// Reads and checks the settings and picks the tab, or says why the task cannot start.
async fn prepare(start: Start, model: Option<&str>) -> Result<(crate::settings::Settings, i32), Refusal> {
    let raw = chrome::stored_settings().await.map_err(|e| Refusal::SettingsUnreadable(e.to_string()))?;
    let settings = StoredSettings::from_json(raw).and_then(|s| s.validate())?.with_model(model)?;
    let tab_id = pick_tab(start).await?;
    Ok((settings, tab_id))
}

/// The saved skills a task may call; none for a replay, and none (with a warning) when they
/// cannot be read: a task does not fail for want of them.
async fn skills_for(saved: &SavedTask) -> Vec<crate::agent::skill::Skill> {
    if saved.script.is_some() {
        return Vec::new();
    }
    match chrome::saved_skills().await {
        Ok(saved) => chrome::readable_skills(&saved),
        Err(e) => {
            web_sys::console::warn_1(&format!("Tabwright could not read the saved skills: {e}").into());
            Vec::new()
        }
    }
}

/// The active tab of the last focused window.
async fn current_tab() -> Result<chrome::Tab, Refusal> {
    chrome::query_tabs(&serde_json::json!({"active": true, "lastFocusedWindow": true}))
        .await
        .map_err(|e| Refusal::CurrentTabUnknown(e.to_string()))?
        .into_iter()
        .next()
        .ok_or(Refusal::NoOpenTab)
}

/// A task's new tab joins the "Tabwright" group before the task starts, so the user sees it
/// there at once; a failure only leaves it ungrouped.
async fn group_new_tab(id: i32) {
    if let Err(e) = chrome::add_to_task_group(id).await {
        web_sys::console::warn_1(&format!("Tabwright could not group its new tab: {e}").into());
    }
}

/// The tab the task runs on (see `Start`).
async fn pick_tab(start: Start) -> Result<i32, Refusal> {
    let tab_id = match start {
        Start::NewTabAt(url) => {
            if !is_web_url(&url) {
                return Err(Refusal::BadStartUrl(url));
            }
            let tab = chrome::create_tab(&serde_json::json!({"url": url, "active": true}))
                .await
                .map_err(|e| Refusal::TabNotOpenedAt { url: url.clone(), reason: e.to_string() })?;
            let id = tab.id.ok_or(Refusal::TabWithoutId)?;
            group_new_tab(id).await;
            return Ok(id);
        }
        Start::NewTab { beside } => {
            let window = match beside {
                Some(id) => chrome::get_tab(id).await.ok(),
                None => current_tab().await.ok(),
            }
            .and_then(|t| t.window_id);
            let mut props = serde_json::json!({"url": "about:blank", "active": true});
            if let Some(window) = window {
                props["windowId"] = window.into();
            }
            let tab = chrome::create_tab(&props).await.map_err(|e| Refusal::NewTabNotOpened(e.to_string()))?;
            let id = tab.id.ok_or(Refusal::TabWithoutId)?;
            group_new_tab(id).await;
            return Ok(id);
        }
        Start::Tab(tab_id) => tab_id,
    };
    let tab = match tab_id {
        Some(id) => chrome::get_tab(id).await.map_err(|_| BrowserError::TabClosed)?,
        None => current_tab().await?,
    };
    let url = tab.pending_url.or(tab.url).unwrap_or_default();
    if is_restricted(&url) && !is_blank_page(&url) {
        return Err(Refusal::RestrictedStart { url });
    }
    tab.id.ok_or(Refusal::TabWithoutId)
}
