//! The worker's task policy, natively (`tabwright::worker`): a task started from a panel
//! request, the worker stopped at every await point of the task and a new worker started on
//! what the first one saved, a tab closed while no worker ran, a pause that outlives the worker,
//! and the start's refusals.
//!
//! The host is memory: a store that outlives a worker (as chrome.storage.session does), the
//! fake site, tabs, and a gate every await of the task passes through. A worker is "stopped" at
//! await `k` the way Chrome stops an idle one: the task waits there forever, everything else
//! that was ready finishes, and then the worker and all its work are dropped.

mod support;

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use support::*;
use tabwright::browser::{ActionEffect, Browser, BrowserError, PageMarkdown, PageState, Screenshot};
use tabwright::llm::{HttpRequest, HttpResponse, LlmTransport, TransportError};
use tabwright::protocol::{AgentEvent, PanelReply, PanelRequest};
use tabwright::settings::PageOptions;
use tabwright::tabs::host::Tab;
use tabwright::worker::host::{SavedItems, SettingsStore, Tabs, TaskRuntime, TaskStore, Work};
use tabwright::worker::TaskHost;

const START_URL: &str = "https://app.example.com/";
const TAB: i32 = 1;

/// Every await of a worker's task passes here; at the `stop_at`-th it waits forever, and so
/// does every later one.
#[derive(Default)]
struct Gate {
    passed: Cell<usize>,
    stop_at: Option<usize>,
    /// Or stop at this look at the page (the first is 1).
    stop_at_look: Cell<Option<usize>>,
    looks: Cell<usize>,
    stopped: Cell<bool>,
}

impl Gate {
    async fn pass(&self) {
        let n = self.passed.get() + 1;
        self.passed.set(n);
        if self.stopped.get() || self.stop_at == Some(n) {
            self.stopped.set(true);
            std::future::pending::<()>().await;
        }
    }
}

/// A browser a worker made for its task: the tab it works in, and the task's tabs.
type BrowserMade = (i32, Vec<i32>);

/// What outlives a worker: the saved items, the site, the tabs, the settings, the model.
#[derive(Clone)]
struct World {
    saved: Rc<RefCell<BTreeMap<String, String>>>,
    /// How many times an item was written.
    writes: Rc<Cell<usize>>,
    /// Writes of the guard's state (once a step, twice when it is saved whole).
    guard_writes: Rc<Cell<usize>>,
    site: FakeSite,
    tabs: Rc<RefCell<BTreeMap<i32, Tab>>>,
    settings: Rc<RefCell<Value>>,
    /// The API key kept for the browser session (settings with `keys_in_session`).
    session_key: Rc<RefCell<Option<String>>>,
    requests: Recorded,
    keys_sent: Rc<RefCell<Vec<String>>>,
    /// The tab the site is shown in, which each look reports.
    shown_in: Rc<Cell<i32>>,
    /// Each browser a worker made for its task.
    browsers: Rc<RefCell<Vec<BrowserMade>>>,
    /// The model's policy, when not the log-in one.
    policy: Rc<RefCell<Option<Policy>>>,
}

impl World {
    fn new() -> Self {
        let tab = Tab { id: Some(TAB), window_id: Some(7), url: Some(START_URL.into()), ..Tab::default() };
        World {
            saved: Rc::default(),
            writes: Rc::default(),
            guard_writes: Rc::default(),
            site: FakeSite::at(START_URL),
            tabs: Rc::new(RefCell::new(BTreeMap::from([(TAB, tab)]))),
            settings: Rc::new(RefCell::new(
                json!({"llm": {"base_url": "http://127.0.0.1:9/v1", "model": "scripted", "api_key": "sk-test"}, "max_steps": 8, "vision": "off"}),
            )),
            session_key: Rc::default(),
            requests: Rc::default(),
            keys_sent: Rc::default(),
            shown_in: Rc::new(Cell::new(TAB)),
            browsers: Rc::default(),
            policy: Rc::default(),
        }
    }

    fn open_tab(&self, id: i32) {
        let tab = Tab { id: Some(id), window_id: Some(7), url: Some(START_URL.into()), ..Tab::default() };
        self.tabs.borrow_mut().insert(id, tab);
    }
}

/// A scripted model's way of answering (see `ScriptedLlm::new`).
type Policy = Rc<dyn Fn(&str, &Value) -> Reply>;

/// One worker's ports over the world.
struct MemoryHost {
    world: World,
    gate: Rc<Gate>,
    spawner: futures::executor::LocalSpawner,
    broadcast: Rc<RefCell<Vec<(AgentEvent, u32)>>>,
}

struct GatedSite {
    site: FakeSite,
    gate: Rc<Gate>,
    shown_in: Rc<Cell<i32>>,
}

impl Browser for GatedSite {
    async fn observe(&mut self) -> Result<PageState, BrowserError> {
        let look = self.gate.looks.get() + 1;
        self.gate.looks.set(look);
        if self.gate.stop_at_look.get() == Some(look) {
            self.gate.stopped.set(true);
        }
        self.gate.pass().await;
        let state = self.site.observe().await?;
        Ok(PageState { tab_id: self.shown_in.get(), ..state })
    }
    async fn navigate(&mut self, url: &str) -> Result<ActionEffect, BrowserError> {
        self.gate.pass().await;
        self.site.navigate(url).await
    }
    async fn click(&mut self, index: u32) -> Result<ActionEffect, BrowserError> {
        self.gate.pass().await;
        self.site.click(index).await
    }
    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError> {
        self.gate.pass().await;
        self.site.input(index, text, clear).await
    }
    async fn page_markdown(&mut self) -> Result<PageMarkdown, BrowserError> {
        self.gate.pass().await;
        self.site.page_markdown().await
    }
    async fn screenshot(&mut self) -> Result<Screenshot, BrowserError> {
        self.gate.pass().await;
        self.site.screenshot().await
    }
    async fn new_elements_appeared(&mut self) -> bool {
        self.gate.pass().await;
        self.site.new_elements_appeared().await
    }
    fn look_follows(&mut self) {
        self.site.look_follows()
    }
    async fn ask_consent(
        &mut self,
        consent: &tabwright::guard::Consent,
    ) -> Result<tabwright::guard::ConsentAnswer, BrowserError> {
        self.gate.pass().await;
        self.site.ask_consent(consent).await
    }
    async fn finish(&mut self) {
        self.gate.pass().await;
    }
}

struct GatedModel {
    llm: ScriptedLlm,
    gate: Rc<Gate>,
    /// The `authorization` header of each request, as sent.
    keys_sent: Rc<RefCell<Vec<String>>>,
}

impl LlmTransport for GatedModel {
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.gate.pass().await;
        let key = request.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("authorization"));
        self.keys_sent.borrow_mut().push(key.map(|(_, value)| value.clone()).unwrap_or_default());
        self.llm.post(request).await
    }
}

impl TaskStore for MemoryHost {
    async fn read_saved(&self) -> Result<SavedItems, String> {
        let saved = self.world.saved.borrow().clone();
        Ok(Box::new(move |key: &str| Ok(saved.get(key).cloned())))
    }
    async fn write_saved(&self, key: String, text: Box<dyn FnOnce() -> Result<String, String>>) {
        if let Ok(text) = text() {
            let guard_keys = [tabwright::worker::saved::GUARD_KEY, tabwright::worker::saved::GUARD_ADDED_KEY];
            let counter =
                if guard_keys.contains(&key.as_str()) { &self.world.guard_writes } else { &self.world.writes };
            counter.set(counter.get() + 1);
            self.world.saved.borrow_mut().insert(key, text);
        }
    }
}

impl SettingsStore for MemoryHost {
    async fn stored_settings(&self) -> Result<Value, String> {
        self.gate.pass().await;
        Ok(self.world.settings.borrow().clone())
    }
    async fn session_api_key(&self) -> Result<Option<String>, String> {
        Ok(self.world.session_key.borrow().clone())
    }
    async fn saved_skills(&self) -> Result<Vec<Value>, String> {
        self.gate.pass().await;
        Ok(Vec::new())
    }
    async fn write_skills(&self, _skills: &[Value]) -> Result<(), String> {
        Ok(())
    }
    async fn write_settings(&self, settings: &Value) -> Result<(), String> {
        *self.world.settings.borrow_mut() = settings.clone();
        Ok(())
    }
}

impl Tabs for MemoryHost {
    async fn tab(&self, id: i32) -> Result<Tab, String> {
        self.gate.pass().await;
        self.world.tabs.borrow().get(&id).cloned().ok_or_else(|| format!("No tab with id: {id}."))
    }
    async fn active_tab(&self) -> Result<Option<Tab>, String> {
        self.gate.pass().await;
        Ok(self.world.tabs.borrow().values().next().cloned())
    }
    async fn open_tab(&self, url: &str, window: Option<i32>) -> Result<Tab, String> {
        self.gate.pass().await;
        let mut tabs = self.world.tabs.borrow_mut();
        let id = tabs.keys().max().copied().unwrap_or(0) + 1;
        let tab = Tab { id: Some(id), window_id: window.or(Some(7)), url: Some(url.into()), ..Tab::default() };
        tabs.insert(id, tab.clone());
        Ok(tab)
    }
    async fn group_tab(&self, _id: i32) -> Result<(), String> {
        Ok(())
    }
}

impl TaskRuntime for MemoryHost {
    type Browser = GatedSite;
    type Transport = GatedModel;
    type Clock = fn() -> f64;

    fn browser(&self, tab: i32, tabs: &[i32], _options: PageOptions) -> GatedSite {
        self.world.browsers.borrow_mut().push((tab, tabs.to_vec()));
        GatedSite { site: self.world.site.clone(), gate: self.gate.clone(), shown_in: self.world.shown_in.clone() }
    }
    fn transport(&self, _timeout_ms: u32) -> GatedModel {
        let mut llm = match self.world.policy.borrow().clone() {
            Some(policy) => ScriptedLlm::new(move |state, body| policy(state, body)),
            None => ScriptedLlm::new(login_policy),
        };
        llm.requests = self.world.requests.clone();
        GatedModel { llm, gate: self.gate.clone(), keys_sent: self.world.keys_sent.clone() }
    }
    async fn get(&self, _request: &HttpRequest, _timeout_ms: u32) -> Result<HttpResponse, TransportError> {
        Err(TransportError("no model list here".into()))
    }
    fn clock(&self) -> fn() -> f64 {
        || 1_000.0
    }
    fn spawn(&self, work: Work) {
        self.spawner.spawn_local(work).expect("the pool runs");
    }
    fn broadcast(&self, event: &AgentEvent, seq: u32, _task_id: &str, _state: &tabwright::agent::TaskState) {
        self.broadcast.borrow_mut().push((event.clone(), seq));
    }
    fn deliver_answer(&self, _answer: String) -> bool {
        false
    }
    fn deliver_consent(&self, _id: u32, _answer: tabwright::guard::ConsentAnswer) -> bool {
        false
    }
    async fn task_began(&self, _tabs: &[i32]) {}
    async fn task_ended(&self) {}
    async fn end_page_scripts(&self) {}
    async fn keep_alive(&self) {}
    fn warn(&self, _text: &str) {}
}

/// One worker: its task host, the pool its work runs in, what it broadcast, its gate.
struct Worker {
    tasks: Rc<TaskHost<MemoryHost>>,
    pool: LocalPool,
    broadcast: Rc<RefCell<Vec<(AgentEvent, u32)>>>,
    gate: Rc<Gate>,
}

impl Worker {
    fn start(world: &World, stop_at: Option<usize>) -> Worker {
        let pool = LocalPool::new();
        let gate = Rc::new(Gate { stop_at, ..Gate::default() });
        let broadcast = Rc::default();
        let host = MemoryHost {
            world: world.clone(),
            gate: gate.clone(),
            spawner: pool.spawner(),
            broadcast: Rc::clone(&broadcast),
        };
        Worker { tasks: TaskHost::new(host), pool, broadcast, gate }
    }

    /// Sends a panel request; its reply as soon as it is there (`None` when it never comes:
    /// the worker stopped before).
    fn ask(&mut self, request: Value) -> Option<PanelReply> {
        let request = PanelRequest::from_json_text(&request.to_string()).expect("a well-formed request");
        match self.tasks.answer_now(request) {
            Ok(reply) => Some(reply),
            Err(later) => {
                let reply = Rc::new(RefCell::new(None));
                let future = self.tasks.answer_later(later);
                let slot = reply.clone();
                self.pool.spawner().spawn_local(async move { *slot.borrow_mut() = Some(future.await) }).unwrap();
                while reply.borrow().is_none() && self.pool.try_run_one() {}
                let answer = reply.borrow_mut().take();
                answer
            }
        }
    }

    /// Restores what a stopped worker saved, and runs until nothing can.
    fn restore(&mut self) -> bool {
        let resumed = Rc::new(Cell::new(false));
        let (tasks, out) = (self.tasks.clone(), resumed.clone());
        self.pool.spawner().spawn_local(async move { out.set(tasks.restore().await) }).unwrap();
        self.pool.run_until_stalled();
        resumed.get()
    }

    /// Where the task stands, as the core says it with its status.
    fn state(&mut self) -> Option<tabwright::agent::TaskState> {
        match self.ask(json!({"v": 1, "type": "get_status"})) {
            Some(PanelReply::Status { state, .. }) => state.map(|s| *s),
            other => panic!("a status, not {other:?}"),
        }
    }

    /// The task's whole log and whether it runs, as a panel asking for it gets them.
    fn status(&mut self) -> (Option<String>, bool, Vec<AgentEvent>) {
        match self.ask(json!({"v": 1, "type": "get_status"})) {
            Some(PanelReply::Status { task_id, running, events, .. }) => (task_id, running, events),
            other => panic!("a status, not {other:?}"),
        }
    }
}

fn start_request() -> Value {
    json!({"v": 1, "type": "start_task", "task": "Sign in as alice with password hunter2", "tab_id": TAB})
}

fn finished_steps(events: &[AgentEvent]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::StepFinished { record, .. } => Some(record.step),
            _ => None,
        })
        .collect()
}

fn end_of(events: &[AgentEvent]) -> Option<&tabwright::agent::TaskEnd> {
    events.iter().rev().find_map(|e| match e {
        AgentEvent::TaskFinished { end, .. } => Some(end),
        _ => None,
    })
}

trait Succeeded {
    fn is_success(&self) -> bool;
}

impl Succeeded for tabwright::agent::TaskEnd {
    fn is_success(&self) -> bool {
        matches!(self, tabwright::agent::TaskEnd::Done { success: true, .. })
    }
}

fn json_of(event: &AgentEvent) -> String {
    serde_json::to_string(event).unwrap()
}

#[test]
fn a_task_runs_to_its_end_in_one_worker() {
    let world = World::new();
    let mut worker = Worker::start(&world, None);
    assert!(matches!(worker.ask(start_request()), Some(PanelReply::Accepted { .. })));
    worker.pool.run_until_stalled();
    let (task_id, running, events) = worker.status();
    assert!(task_id.is_some_and(|id| id.starts_with("task-")));
    assert!(!running);
    assert_eq!(finished_steps(&events), vec![1, 2, 3]);
    let end = end_of(&events).expect("the task ended");
    assert!(end.is_success(), "{end:?}");
    assert_eq!(world.site.state.borrow().logged_in_as.as_deref(), Some("alice"));
    // What a panel was sent is the log, in order, each event with its position.
    let sent: Vec<u32> = worker.broadcast.borrow().iter().map(|(_, seq)| *seq).collect();
    assert_eq!(sent, (0..events.len() as u32).collect::<Vec<_>>());
    assert!(worker.gate.passed.get() > 10, "the task passes the gate at each await");
    // The core says where the task stands: what the task history keeps.
    let state = worker.state().expect("a task");
    assert_eq!((state.step_count, state.running, state.paused), (3, false, false));
    assert_eq!(state.task, "Sign in as alice with password hunter2");
    assert_eq!(state.usage.input_tokens, 300, "three steps of 100 input tokens");
    assert!(state.end.as_ref().is_some_and(|end| end.is_success()));
    assert_eq!(state.model, "scripted");
}

/// The worker is stopped at every await point of the task in turn, and a new worker restores
/// what the first saved: the task ends as it would have, no event a panel saw is lost, no
/// completed step is done again, and nothing on the site is done twice.
#[test]
fn a_worker_stopped_at_any_await_is_continued_by_the_next() {
    let awaits = {
        let world = World::new();
        let mut worker = Worker::start(&world, None);
        worker.ask(start_request());
        worker.pool.run_until_stalled();
        worker.gate.passed.get()
    };
    let (mut continued, mut never_began, mut had_ended) = (0, 0, 0);
    // One past the last await: the task ends in the first worker.
    for stop_at in 1..=awaits + 1 {
        let world = World::new();
        let (seen, started) = {
            let mut first = Worker::start(&world, Some(stop_at));
            let reply = first.ask(start_request());
            first.pool.run_until_stalled();
            assert_eq!(first.gate.stopped.get(), stop_at <= awaits, "await {stop_at}: the first worker stopped there");
            let seen: Vec<AgentEvent> = first.broadcast.borrow().iter().map(|(e, _)| e.clone()).collect();
            (seen, reply)
        }; // the first worker and all its work are gone
        let mut second = Worker::start(&world, None);
        let resumed = second.restore();
        let (task_id, running, events) = second.status();
        if world.saved.borrow().get("task").is_none() {
            // Stopped before the task began: nothing to continue, and nothing half-made.
            assert!(started.is_none() && !resumed && task_id.is_none() && seen.is_empty(), "await {stop_at}");
            never_began += 1;
            continue;
        }
        if resumed {
            continued += 1;
        } else {
            had_ended += 1;
        }
        assert!(resumed || end_of(&seen).is_some(), "await {stop_at}: the task goes on");
        assert!(!running, "await {stop_at}: the task ended");
        let end = end_of(&events).unwrap_or_else(|| panic!("await {stop_at}: no end in {events:?}"));
        assert!(end.is_success(), "await {stop_at}: {end:?}");
        // Nothing a panel was shown is lost: the restored log begins with it.
        assert!(events.len() >= seen.len(), "await {stop_at}");
        for (i, (kept, shown)) in events.iter().zip(&seen).enumerate() {
            assert_eq!(json_of(kept), json_of(shown), "await {stop_at}: event {i} changed");
        }
        // What the core says of the task is what its log says, across the restart.
        let state = second.state().expect("a task");
        assert_eq!(state, tabwright::agent::TaskState::of(&events), "await {stop_at}");
        assert_eq!(state.step_count, 3, "await {stop_at}");
        // Each step is recorded once, numbered on from the last completed one; the answer is
        // given once, by step 3, however the task was cut.
        assert_eq!(finished_steps(&events), vec![1, 2, 3], "await {stop_at}");
        let state = world.site.state.borrow();
        assert_eq!(state.logged_in_as.as_deref(), Some("alice"), "await {stop_at}");
        for (what, index) in [("the link", 9), ("the button", 58)] {
            let clicks = state.clicks.iter().filter(|&&i| i == index).count();
            assert_eq!(clicks, 1, "await {stop_at}: {what} clicked {clicks} times");
        }
        if resumed {
            let restored = events.iter().find_map(|e| match e {
                AgentEvent::TaskRestored { step, steps_kept, .. } => Some((*step, *steps_kept)),
                _ => None,
            });
            let kept = finished_steps(&seen).len() as u32;
            assert_eq!(restored, Some((kept + 1, kept)), "await {stop_at}");
        }
    }
    // Every kind of stop was met: before the task began, while it ran, after its end.
    assert!(never_began > 0 && continued > 5 && had_ended > 0, "{never_began} {continued} {had_ended} of {awaits}");
}

/// A worker stopped at the task's `look`-th look at the page (step `look` - 1 completed).
fn stopped_at_look(world: &World, look: usize) -> Vec<AgentEvent> {
    let mut first = Worker::start(world, None);
    first.gate.stop_at_look.set(Some(look));
    first.ask(start_request());
    first.pool.run_until_stalled();
    assert!(first.gate.stopped.get());
    let seen = first.broadcast.borrow().iter().map(|(e, _)| e.clone()).collect();
    seen
}

/// The person's guard is saved with the task: a restored task still knows the sites it started
/// with and those the person allowed, and asks nothing again.
#[test]
fn a_restored_task_keeps_its_guard_and_asks_nothing_again() {
    let world = World::new();
    let other = "https://other.example/page";
    let policy: Policy = Rc::new(move |state: &str, _: &Value| {
        if state.contains("URL: https://other.example/") {
            output("Back to the app", json!([{"navigate": {"url": START_URL}}]))
        } else if state.contains("Step 1:") {
            output("Finish", json!([{"done": {"text": "Back home.", "success": true}}]))
        } else {
            output("Look elsewhere", json!([{"navigate": {"url": other}}]))
        }
    });
    *world.policy.borrow_mut() = Some(policy);
    world.site.state.borrow_mut().consent_answers = [tabwright::guard::ConsentAnswer::AllowForTask].into();
    let seen = stopped_at_look(&world, 2);
    assert_eq!(finished_steps(&seen), vec![1]);
    assert_eq!(world.site.state.borrow().consents.len(), 1, "other.example was asked for");
    assert!(world.saved.borrow().get(tabwright::worker::saved::GUARD_KEY).is_some_and(|g| g.contains("other.example")));
    // Saved whole at the answer: nothing read since.
    let added = world.saved.borrow().get(tabwright::worker::saved::GUARD_ADDED_KEY).cloned().unwrap_or_default();
    assert!(added.ends_with("\"guard\":[]}"), "{added}");
    let mut second = Worker::start(&world, None);
    assert!(second.restore());
    let (_, running, events) = second.status();
    assert!(!running && end_of(&events).is_some_and(|end| end.is_success()), "{events:?}");
    // Back on the site the task started on: a guard made anew at the restore would have
    // started on other.example and asked for it.
    let consents: Vec<String> = world.site.state.borrow().consents.iter().map(|c| c.site.clone()).collect();
    assert_eq!(consents, ["other.example"]);
}

#[test]
fn a_task_whose_tabs_closed_while_no_worker_ran_ends_with_its_steps_kept() {
    let world = World::new();
    let seen = stopped_at_look(&world, 2);
    assert_eq!(finished_steps(&seen), vec![1]);
    world.tabs.borrow_mut().clear();
    let mut second = Worker::start(&world, None);
    assert!(!second.restore(), "nothing to go on with");
    let (_, running, events) = second.status();
    assert!(!running);
    assert_eq!(finished_steps(&events), vec![1], "the step done is kept");
    let end = end_of(&events).expect("the task ended");
    assert!(!end.is_success());
    assert!(format!("{end:?}").to_lowercase().contains("closed"), "{end:?}");
    // The end is saved and sent at its place in the log.
    assert_eq!(second.broadcast.borrow().last().map(|(_, seq)| *seq), Some(events.len() as u32 - 1));
    let mut third = Worker::start(&world, None);
    assert!(!third.restore());
    assert_eq!(third.status().2.len(), events.len(), "a later worker reads the same ended task");
}

#[test]
fn a_start_tab_reopened_under_another_id_is_not_the_tasks() {
    let world = World::new();
    stopped_at_look(&world, 2);
    // The task's tab is gone, and it worked in no other: a tab open on the same page under
    // another id is not the task's.
    world.open_tab(5);
    world.tabs.borrow_mut().remove(&TAB);
    let mut second = Worker::start(&world, None);
    assert!(!second.restore());
    assert!(!end_of(&second.status().2).expect("ended").is_success());
}

/// The task started in tab 1 and worked in tab 4 (its page opened it): a new worker goes on in
/// tab 4, with both as the task's; with tab 4 closed meanwhile, in tab 1.
#[test]
fn a_restored_task_goes_on_in_the_tab_it_worked_in_last_or_else_in_another_of_its_tabs() {
    for (close, goes_on_in, tabs) in [(None, 4, vec![4, 1]), (Some(4), 1, vec![1])] {
        let world = World::new();
        world.open_tab(4);
        world.shown_in.set(4);
        stopped_at_look(&world, 2);
        if let Some(id) = close {
            world.tabs.borrow_mut().remove(&id);
        }
        world.browsers.borrow_mut().clear();
        let mut second = Worker::start(&world, None);
        assert!(second.restore(), "goes on");
        assert_eq!(world.browsers.borrow().first(), Some(&(goes_on_in, tabs.clone())), "with tab {close:?} closed");
        assert!(end_of(&second.status().2).expect("ended").is_success());
    }
}

#[test]
fn a_paused_task_stays_paused_in_the_next_worker_until_resumed() {
    let world = World::new();
    {
        // Paused as soon as the task is under way; the worker is stopped while the task waits.
        let mut first = Worker::start(&world, None);
        first.ask(start_request());
        assert!(matches!(first.ask(json!({"v": 1, "type": "pause_task"})), Some(PanelReply::Accepted { .. })));
        first.pool.run_until_stalled();
        assert!(first.status().1, "waiting, paused");
    }
    let mut second = Worker::start(&world, None);
    assert!(second.restore());
    let (_, running, events) = second.status();
    assert!(running);
    let last_pause = events.iter().rev().find_map(|e| match e {
        AgentEvent::TaskPaused { .. } => Some(true),
        AgentEvent::TaskResumed { .. } => Some(false),
        _ => None,
    });
    assert_eq!(last_pause, Some(true), "still paused: {:?}", events.iter().map(json_of).collect::<Vec<_>>());
    assert!(second.state().is_some_and(|s| s.paused && s.running), "the core says it is paused");
    let requests = world.requests.borrow().len();
    second.pool.run_until_stalled();
    assert_eq!(world.requests.borrow().len(), requests, "nothing is asked of the model while paused");
    assert!(matches!(second.ask(json!({"v": 1, "type": "resume_task"})), Some(PanelReply::Accepted { .. })));
    second.pool.run_until_stalled();
    let (_, running, events) = second.status();
    assert!(!running);
    assert!(end_of(&events).expect("ended").is_success());
}

#[test]
fn a_follow_up_after_a_restart_knows_the_task_before_it() {
    let world = World::new();
    {
        let mut first = Worker::start(&world, None);
        first.ask(start_request());
        first.pool.run_until_stalled();
    }
    let mut second = Worker::start(&world, None);
    assert!(!second.restore(), "a finished task is shown, not run");
    let (first_id, running, _) = second.status();
    assert!(!running);
    let follow_up = json!({"v": 1, "type": "start_task", "task": "Now log out", "tab_id": TAB, "follow_up": true});
    assert!(matches!(second.ask(follow_up), Some(PanelReply::Accepted { .. })));
    second.pool.run_until_stalled();
    let (second_id, _, events) = second.status();
    assert_ne!(second_id, first_id, "a new task");
    let last = world.requests.borrow().last().cloned().expect("the model was asked");
    let text = last.to_string();
    assert!(text.contains("Sign in as alice"), "the earlier task is in the follow-up's request");
    assert!(events.iter().any(|e| matches!(e, AgentEvent::TaskStarted { .. })));
}

#[test]
fn a_start_is_refused_with_what_to_do() {
    let world = World::new();
    let mut worker = Worker::start(&world, None);
    let refusal = |reply: Option<PanelReply>| match reply {
        Some(PanelReply::Refused { message, .. }) => message,
        other => panic!("a refusal, not {other:?}"),
    };
    let blank = json!({"v": 1, "type": "start_task", "task": "   ", "tab_id": TAB});
    assert!(refusal(worker.ask(blank)).contains("task"));
    // A task longer than the limit, counted in characters (not bytes): refused with both counts.
    let long = json!({"v": 1, "type": "start_task", "task": "好".repeat(20_001), "tab_id": TAB});
    let said = refusal(worker.ask(long));
    assert!(said.contains("20001 characters") && said.contains("at most 20000"), "{said}");
    world
        .tabs
        .borrow_mut()
        .insert(2, Tab { id: Some(2), window_id: Some(7), url: Some("chrome://settings/".into()), ..Tab::default() });
    let restricted = json!({"v": 1, "type": "start_task", "task": "Read it", "tab_id": 2});
    assert!(refusal(worker.ask(restricted)).contains("chrome://settings/"));
    let closed = json!({"v": 1, "type": "start_task", "task": "Read it", "tab_id": 99});
    assert!(!refusal(worker.ask(closed)).is_empty());
    let not_web = json!({"v": 1, "type": "start_task", "task": "Read it", "start_url": "javascript:alert(1)"});
    assert!(refusal(worker.ask(not_web)).contains("javascript:"));
    assert_eq!(world.tabs.borrow().len(), 2, "no tab opened for a refused start");
    // One task at a time: a second start while one runs is refused, the first goes on.
    world.site.state.borrow_mut().url = START_URL.into();
    let mut slow = Worker::start(&world, None);
    slow.gate.stop_at_look.set(Some(2));
    assert!(matches!(slow.ask(start_request()), Some(PanelReply::Accepted { .. })));
    assert!(refusal(slow.ask(start_request())).to_lowercase().contains("running"));
    // No settings: the start says to set the model up.
    let unset = World::new();
    *unset.settings.borrow_mut() = Value::Null;
    let mut worker = Worker::start(&unset, None);
    assert!(!refusal(worker.ask(start_request())).is_empty());
    assert!(unset.saved.borrow().is_empty(), "nothing saved for a task that never began");
}

#[test]
fn a_replay_starts_in_a_new_tab_at_its_address() {
    let world = World::new();
    let mut worker = Worker::start(&world, None);
    let empty = json!({"v": 1, "type": "replay_task", "title": "Sign in", "start_url": START_URL, "steps": []});
    assert!(matches!(worker.ask(empty), Some(PanelReply::Refused { .. })));
    let steps = json!([{"goal": "Open the sign-in page", "actions": [{"name": "click", "params": {"index": 9}}]}]);
    let replay = json!({"v": 1, "type": "replay_task", "title": "Sign in", "start_url": START_URL, "steps": steps});
    let reply = worker.ask(replay);
    assert!(matches!(reply, Some(PanelReply::Accepted { .. })), "{reply:?}");
    assert_eq!(world.tabs.borrow().len(), 2, "a new tab for the replay");
}

/// A key kept only for the browser session is put in place when the saved settings are read;
/// once the browser closed it is gone, and a start says to enter it again.
#[test]
fn a_key_kept_for_the_browser_session_is_used_and_its_absence_is_told() {
    let world = World::new();
    *world.settings.borrow_mut() = json!({"llm": {"base_url": "http://127.0.0.1:9/v1", "model": "scripted", "api_key": ""}, "keys_in_session": true, "vision": "off"});
    let mut worker = Worker::start(&world, None);
    match worker.ask(start_request()) {
        Some(PanelReply::Refused { message, .. }) => assert!(message.contains("until the browser closed"), "{message}"),
        other => panic!("a refusal, not {other:?}"),
    }
    *world.session_key.borrow_mut() = Some("sk-session".into());
    assert!(matches!(worker.ask(start_request()), Some(PanelReply::Accepted { .. })));
    worker.pool.run_until_stalled();
    assert!(end_of(&worker.status().2).expect("ended").is_success());
    assert!(!world.keys_sent.borrow().is_empty());
    assert!(world.keys_sent.borrow().iter().all(|key| key == "Bearer sk-session"), "{:?}", world.keys_sent.borrow());
}

#[test]
fn a_secret_for_a_replay_is_added_to_the_settings_checked_and_never_replacing_one() {
    let world = World::new();
    let mut worker = Worker::start(&world, None);
    let save = |name: &str, value: &str| json!({"v": 1, "type": "save_secret", "name": name, "value": value, "site": "Bank.example"});
    assert!(
        matches!(worker.ask(save(" bank_password ", "hunter2")), Some(PanelReply::SecretSaved { name, .. }) if name == "bank_password")
    );
    let stored = world.settings.borrow().clone();
    assert_eq!(stored["secrets"], json!([{"name": "bank_password", "value": "hunter2", "domains": ["bank.example"]}]));
    assert_eq!(stored["llm"]["model"], "scripted", "the rest of the settings is kept");
    let refusal = |reply: Option<PanelReply>| match reply {
        Some(PanelReply::Refused { message, .. }) => message,
        other => panic!("a refusal, not {other:?}"),
    };
    assert!(refusal(worker.ask(save("bank_password", "other"))).contains("already"), "a saved value is never replaced");
    assert!(!refusal(worker.ask(save("bank password", "x"))).is_empty(), "a name the model could not write");
    assert!(!refusal(worker.ask(save("pin", ""))).is_empty(), "a secret without a value");
    assert_eq!(world.settings.borrow()["secrets"].as_array().unwrap().len(), 1, "nothing refused was kept");
}

/// A 1,000-step task whose model writes long texts every step (thinking, memory, evaluation,
/// goal) stopped after step 900: what it saved for the next worker stays under 2 MB however
/// long the texts, the next worker goes on at step 901 with the plan the model gave at step 3
/// and the memory of its early steps in the request, and the task ends.
#[test]
fn a_long_task_saves_a_bounded_log_and_is_restored_after_step_900_with_its_plan_and_memory() {
    const STEPS: u32 = 1_000;
    let world = World::new();
    world.settings.borrow_mut()["max_steps"] = json!(STEPS);
    let seen_at_901: Rc<RefCell<Option<String>>> = Rc::default();
    let requests = world.requests.clone();
    let seen = seen_at_901.clone();
    let policy = move |state: &str, body: &Value| {
        // Only the request at hand is kept: a thousand would hold the test's memory.
        let _ = requests.borrow_mut().drain(..);
        if schema_name(body) == Some("history_summary") {
            return Reply::Output(json!({"summary": "Steps condensed."}));
        }
        let step = step_of(state);
        if step == 901 {
            *seen.borrow_mut() = Some(state.to_string());
        }
        let long = |what: &str| format!("{what} at step {step}: {}", "lorem ipsum dolor sit amet ".repeat(60));
        let plan = match step {
            3 => json!([{"text": "Type the name a thousand times", "done": false}, {"text": "Report", "done": false}]),
            _ => Value::Null,
        };
        let action = if step == STEPS {
            json!([{"done": {"text": "Typed it a thousand times.", "success": true}}])
        } else if let Some(user) = index_of(state, "placeholder=Username") {
            json!([{"input": {"index": user, "text": format!("alice {step}"), "clear": true}}])
        } else {
            json!([{"click": {"index": index_of(state, ">Sign in").expect("the sign-in link")}}])
        };
        Reply::Output(json!({
            "thinking": long("thinking"),
            "evaluation_previous_goal": long("evaluation"),
            "memory": format!("typed so far: {step}. {}", long("memory")),
            "next_goal": long("goal"),
            "plan": plan,
            "action": action,
        }))
    };
    *world.policy.borrow_mut() = Some(Rc::new(policy));
    world.settings.borrow_mut()["thinking"] = json!(true);

    let seen = stopped_at_look(&world, 901).len();
    // Each event's page once, and each page once more when its steps are trimmed: no page is
    // written again for nothing.
    let pages = seen.div_ceil(tabwright::worker::saved::EVENTS_PER_PAGE);
    assert!(world.writes.get() <= seen + pages + 2, "{} writes for {seen} events", world.writes.get());
    // The guard: what its ledger added, once a step; whole (and the added pieces emptied) every
    // twenty steps.
    assert!(
        world.guard_writes.get() <= 900 + 2 * 900 / 20 + 2,
        "{} writes of the guard in 900 steps",
        world.guard_writes.get()
    );
    let whole = world.saved.borrow().get(tabwright::worker::saved::GUARD_KEY).map_or(0, String::len);
    assert!(whole < 300_000, "the guard saved whole holds {whole} bytes");
    let saved_bytes: usize = world.saved.borrow().values().map(String::len).sum();
    assert!(saved_bytes < 2_000_000, "session storage holds {saved_bytes} bytes after 900 long steps");
    // Whole records for the last steps; the rest trimmed, 900 of them in well under 2 KB each.
    assert!(saved_bytes > 900 * 300, "{saved_bytes} bytes: every step is kept in some form");

    let mut second = Worker::start(&world, None);
    assert!(second.restore(), "the task goes on");
    let (_, running, events) = second.status();
    assert!(!running);
    assert!(end_of(&events).is_some_and(|end| end.is_success()), "{:?}", end_of(&events));
    let steps = finished_steps(&events);
    assert_eq!(steps.len(), STEPS as usize, "every step once");
    assert_eq!(steps.last(), Some(&STEPS));
    let state = seen_at_901.borrow().clone().expect("step 901 was asked for");
    assert!(
        state.contains("<plan>\n[ ] 1. Type the name a thousand times\n[ ] 2. Report\n</plan>"),
        "the plan of step 3 survives the restore"
    );
    assert!(state.contains("  memory: typed so far: 900."), "the last step whole");
    // Texts this long go over the request budget, so the steps before the last few are
    // condensed (the model's summary, here the scripted one's).
    assert!(state.contains("<summary of steps 1–") && state.contains("Steps condensed."), "the summary is shown");
    // What the restored worker keeps of the log is bounded too.
    let kept: usize = events.iter().map(|e| json_of(e).len()).sum();
    assert!(kept < 2_500_000, "the log in memory holds {kept} bytes");
}
