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
    /// From this look on, looks at the page never end (a page that hangs), while the rest of
    /// the worker goes on.
    hold_from_look: Cell<Option<usize>>,
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
    /// The site shown in each other tab, by tab (the first tab shows `site`).
    sites: Rc<RefCell<BTreeMap<i32, FakeSite>>>,
    /// The model does not answer a task while its text holds one of these words.
    held: Rc<Hold>,
    /// The lists of tasks the worker told the panels, newest last.
    task_lists: Rc<RefCell<Vec<Vec<tabwright::protocol::TaskSummary>>>>,
    /// The time every worker reads (ms since the epoch).
    now: Rc<Cell<f64>>,
    /// What chrome.storage.local keeps of schedules and skills, as stored.
    schedules: Rc<RefCell<Vec<Value>>>,
    skills: Rc<RefCell<Vec<Value>>>,
    /// The alarms set, by name: when each rings.
    alarms: Rc<RefCell<BTreeMap<String, f64>>>,
    /// The notifications shown, by id: their title and text, in English.
    notices: Rc<RefCell<BTreeMap<String, (String, String)>>>,
    /// Every notification ever shown, by id, in order.
    notified: Rc<RefCell<Vec<String>>>,
    /// The coding agents' book as stored.
    clients: Rc<RefCell<Value>>,
    /// The coding agents asking, each time the panels were told, newest last.
    asking: Rc<RefCell<Vec<Vec<tabwright::protocol::ClientAsking>>>>,
}

/// Words that hold the model's answers back until let go (a slow model, on simulated time).
#[derive(Default)]
struct Hold {
    words: RefCell<Vec<String>>,
    wakers: RefCell<Vec<std::task::Waker>>,
}

impl Hold {
    fn hold(&self, word: &str) {
        self.words.borrow_mut().push(word.into());
    }
    fn let_go(&self, word: &str) {
        self.words.borrow_mut().retain(|w| w != word);
        for waker in self.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }
    async fn wait(&self, body: &str) {
        std::future::poll_fn(|cx| {
            if self.words.borrow().iter().any(|w| body.contains(w.as_str())) {
                self.wakers.borrow_mut().push(cx.waker().clone());
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(())
            }
        })
        .await
    }
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
            sites: Rc::default(),
            held: Rc::default(),
            task_lists: Rc::default(),
            now: Rc::new(Cell::new(1_000.0)),
            schedules: Rc::default(),
            skills: Rc::default(),
            alarms: Rc::default(),
            notices: Rc::default(),
            notified: Rc::default(),
            clients: Rc::new(RefCell::new(Value::Null)),
            asking: Rc::default(),
        }
    }

    fn open_tab(&self, id: i32) {
        let tab = Tab { id: Some(id), window_id: Some(7), url: Some(START_URL.into()), ..Tab::default() };
        self.tabs.borrow_mut().insert(id, tab);
    }

    /// The site shown in tab `tab`: the world's own in the first tab, one of its own in
    /// each other.
    fn site_in(&self, tab: i32) -> FakeSite {
        if tab == TAB {
            return self.site.clone();
        }
        self.sites.borrow_mut().entry(tab).or_insert_with(|| FakeSite::at(START_URL)).clone()
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
    /// Holds the person's answers (to a question, to a consent) while `PERSON_AWAY` is held.
    held: Rc<Hold>,
}

/// Held in `World::held`, the person answers nothing (they are away from the browser).
const PERSON_AWAY: &str = "«the person is away»";

impl Browser for GatedSite {
    fn current_tab_id(&self) -> i32 {
        self.shown_in.get()
    }
    async fn observe(&mut self) -> Result<PageState, BrowserError> {
        let look = self.gate.looks.get() + 1;
        self.gate.looks.set(look);
        if self.gate.stop_at_look.get() == Some(look) {
            self.gate.stopped.set(true);
        }
        if self.gate.hold_from_look.get().is_some_and(|from| look >= from) {
            std::future::pending::<()>().await;
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
        self.held.wait(PERSON_AWAY).await;
        self.site.ask_consent(consent).await
    }
    async fn ask_human(&mut self, question: &str) -> Result<String, BrowserError> {
        self.gate.pass().await;
        self.held.wait(PERSON_AWAY).await;
        self.site.ask_human(question).await
    }
    async fn finish(&mut self) {
        self.gate.pass().await;
    }
}

struct GatedModel {
    llm: ScriptedLlm,
    gate: Rc<Gate>,
    held: Rc<Hold>,
    /// The `authorization` header of each request, as sent.
    keys_sent: Rc<RefCell<Vec<String>>>,
}

impl LlmTransport for GatedModel {
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.gate.pass().await;
        self.held.wait(&request.body).await;
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
            let counter = if key.starts_with("task_guard") { &self.world.guard_writes } else { &self.world.writes };
            counter.set(counter.get() + 1);
            self.world.saved.borrow_mut().insert(key, text);
        }
    }
    async fn remove_saved(&self, keys: Vec<String>) {
        let mut saved = self.world.saved.borrow_mut();
        for key in keys {
            saved.remove(&key);
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
        Ok(self.world.skills.borrow().clone())
    }
    async fn write_skills(&self, skills: &[Value]) -> Result<(), String> {
        *self.world.skills.borrow_mut() = skills.to_vec();
        Ok(())
    }
    async fn write_settings(&self, settings: &Value) -> Result<(), String> {
        *self.world.settings.borrow_mut() = settings.clone();
        Ok(())
    }
    async fn stored_schedules(&self) -> Result<Vec<Value>, String> {
        self.gate.pass().await;
        Ok(self.world.schedules.borrow().clone())
    }
    async fn write_schedules(&self, schedules: &[Value]) -> Result<(), String> {
        self.gate.pass().await;
        *self.world.schedules.borrow_mut() = schedules.to_vec();
        Ok(())
    }
    async fn stored_clients(&self) -> Result<Value, String> {
        self.gate.pass().await;
        Ok(self.world.clients.borrow().clone())
    }
    async fn write_clients(&self, book: &Value) -> Result<(), String> {
        self.gate.pass().await;
        *self.world.clients.borrow_mut() = book.clone();
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
    async fn group_tab(&self, _id: i32, _group: &str) -> Result<(), String> {
        Ok(())
    }
    async fn all_tabs(&self) -> Result<Vec<Tab>, String> {
        self.gate.pass().await;
        Ok(self.world.tabs.borrow().values().cloned().collect())
    }
}

impl TaskRuntime for MemoryHost {
    type Browser = GatedSite;
    type Transport = GatedModel;
    type Clock = Box<dyn Fn() -> f64>;

    fn browser(&self, _seat: tabwright::tabs::TaskSeat, tab: i32, tabs: &[i32], _options: PageOptions) -> GatedSite {
        self.world.browsers.borrow_mut().push((tab, tabs.to_vec()));
        let shown_in = if tab == TAB { self.world.shown_in.clone() } else { Rc::new(Cell::new(tab)) };
        GatedSite { site: self.world.site_in(tab), gate: self.gate.clone(), shown_in, held: self.world.held.clone() }
    }
    fn transport(&self, _timeout_ms: u32) -> GatedModel {
        let mut llm = match self.world.policy.borrow().clone() {
            Some(policy) => ScriptedLlm::new(move |state, body| policy(state, body)),
            None => ScriptedLlm::new(login_policy),
        };
        llm.requests = self.world.requests.clone();
        GatedModel {
            llm,
            gate: self.gate.clone(),
            held: self.world.held.clone(),
            keys_sent: self.world.keys_sent.clone(),
        }
    }
    async fn get(&self, _request: &HttpRequest, _timeout_ms: u32) -> Result<HttpResponse, TransportError> {
        Err(TransportError("no model list here".into()))
    }
    fn clock(&self) -> Box<dyn Fn() -> f64> {
        let now = self.world.now.clone();
        Box::new(move || now.get())
    }
    fn spawn(&self, work: Work) {
        self.spawner.spawn_local(work).expect("the pool runs");
    }
    fn broadcast(&self, event: &AgentEvent, seq: u32, _task_id: &str, _state: &tabwright::agent::TaskState) {
        self.broadcast.borrow_mut().push((event.clone(), seq));
    }
    fn broadcast_tasks(&self, tasks: &[tabwright::protocol::TaskSummary]) {
        self.world.task_lists.borrow_mut().push(tasks.to_vec());
    }
    fn broadcast_clients(&self, asking: &[tabwright::protocol::ClientAsking]) {
        self.world.asking.borrow_mut().push(asking.to_vec());
    }
    async fn task_began(&self, _task_id: &str, _tabs: &[i32]) {}
    async fn tasks_idle(&self) {}
    async fn end_page_scripts(&self, _task_id: &str) {}
    async fn keep_alive(&self) {}
    async fn set_alarm(&self, name: &str, when_ms: f64) {
        self.world.alarms.borrow_mut().insert(name.into(), when_ms);
    }
    async fn clear_alarm(&self, name: &str) {
        self.world.alarms.borrow_mut().remove(name);
    }
    async fn clear_alarms_except(&self, prefix: &str, keep: &[String]) {
        self.world.alarms.borrow_mut().retain(|name, _| !name.starts_with(prefix) || keep.contains(name));
    }
    fn local_offset_minutes(&self, _utc_ms: f64) -> i32 {
        0
    }
    async fn notify(
        &self,
        id: &str,
        title: &tabwright::worker::host::NoticeText,
        message: &tabwright::worker::host::NoticeText,
    ) {
        self.world.notices.borrow_mut().insert(id.into(), (title.message.clone(), message.message.clone()));
        self.world.notified.borrow_mut().push(id.into());
    }
    async fn clear_notification(&self, id: &str) {
        self.world.notices.borrow_mut().remove(id);
    }
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

/// The guard a task saved under the key beginning `prefix` (whole, or what was added since).
fn saved_guard(world: &World, prefix: &str) -> Option<String> {
    world.saved.borrow().iter().find(|(key, _)| key.starts_with(prefix)).map(|(_, text)| text.clone())
}

fn json_of(event: &AgentEvent) -> String {
    serde_json::to_string(event).unwrap()
}

#[test]
fn a_task_runs_to_its_end_in_one_worker() {
    let world = World::new();
    let mut worker = Worker::start(&world, None);
    assert!(matches!(worker.ask(start_request()), Some(PanelReply::TaskAccepted { queued: false, .. })));
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
        if !world.saved.borrow().keys().any(|key| key.starts_with("task:")) {
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
    assert!(saved_guard(&world, "task_guard:").is_some_and(|g| g.contains("other.example")));
    // Saved whole at the answer: nothing read since.
    let added = saved_guard(&world, "task_guard_added:").unwrap_or_default();
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
    assert!(matches!(second.ask(follow_up), Some(PanelReply::TaskAccepted { queued: false, .. })));
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
    // One task to a tab: a second start in the tab a task works in waits for it in the queue.
    world.site.state.borrow_mut().url = START_URL.into();
    let mut slow = Worker::start(&world, None);
    slow.gate.hold_from_look.set(Some(2));
    assert!(matches!(slow.ask(start_request()), Some(PanelReply::TaskAccepted { queued: false, .. })));
    assert!(matches!(slow.ask(start_request()), Some(PanelReply::TaskAccepted { queued: true, .. })));
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
    assert!(matches!(reply, Some(PanelReply::TaskAccepted { queued: false, .. })), "{reply:?}");
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
    assert!(matches!(worker.ask(start_request()), Some(PanelReply::TaskAccepted { queued: false, .. })));
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
    let whole = saved_guard(&world, "task_guard:").map_or(0, |g| g.len());
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

// Several tasks at once.

const ALICE: &str = "Sign in as alice with password hunter2";
const SECOND: &str = "Also sign in as alice in the second tab";

impl Worker {
    /// A task's whole log and whether it runs.
    fn status_of(&mut self, task_id: &str) -> (bool, Vec<AgentEvent>) {
        match self.ask(json!({"v": 1, "type": "get_status", "task_id": task_id})) {
            Some(PanelReply::Status { task_id: Some(id), running, events, .. }) if id == task_id => (running, events),
            other => panic!("the status of {task_id}, not {other:?}"),
        }
    }

    /// The list of tasks, as `get_status` gives it.
    fn tasks(&mut self) -> Vec<tabwright::protocol::TaskSummary> {
        match self.ask(json!({"v": 1, "type": "get_status"})) {
            Some(PanelReply::Status { tasks, .. }) => tasks,
            other => panic!("a status, not {other:?}"),
        }
    }

    /// Starts `task` in `tab`; its id, and whether it was queued.
    fn start_in(&mut self, task: &str, tab: i32) -> (String, bool) {
        match self.ask(json!({"v": 1, "type": "start_task", "task": task, "tab_id": tab})) {
            Some(PanelReply::TaskAccepted { task_id, queued, .. }) => (task_id, queued),
            other => panic!("a start, not {other:?}"),
        }
    }
}

fn status_in(list: &[tabwright::protocol::TaskSummary], task_id: &str) -> tabwright::protocol::TaskStatus {
    list.iter().find(|t| t.task_id == task_id).map(|t| t.status).unwrap_or_else(|| panic!("{task_id} in {list:?}"))
}

fn two_tab_world() -> World {
    let world = World::new();
    world.open_tab(2);
    world
}

#[test]
fn two_tasks_run_at_once_and_a_slow_one_never_stalls_the_other() {
    use tabwright::protocol::TaskStatus;
    let world = two_tab_world();
    let mut worker = Worker::start(&world, None);
    world.held.hold("hunter2");
    let (slow, queued) = worker.start_in(ALICE, TAB);
    assert!(!queued);
    let (fast, queued) = worker.start_in(SECOND, 2);
    assert!(!queued, "a second place is free");
    assert_ne!(slow, fast);
    worker.pool.run_until_stalled();
    // The fast task finished while the slow one still waits for its model.
    let (running, events) = worker.status_of(&fast);
    assert!(!running && end_of(&events).is_some_and(Succeeded::is_success), "{events:?}");
    let (running, events) = worker.status_of(&slow);
    assert!(running && end_of(&events).is_none());
    let list = worker.tasks();
    assert_eq!((status_in(&list, &slow), status_in(&list, &fast)), (TaskStatus::Running, TaskStatus::Succeeded));
    assert_eq!(list.iter().find(|t| t.task_id == fast).unwrap().tabs, vec![2], "each task in its own tab");
    // Each log holds its own task only.
    assert!(events.iter().all(|e| !json_of(e).contains(SECOND)));
    world.held.let_go("hunter2");
    worker.pool.run_until_stalled();
    let (running, events) = worker.status_of(&slow);
    assert!(!running && end_of(&events).is_some_and(Succeeded::is_success), "{events:?}");
    assert!(world.task_lists.borrow().last().is_some_and(|list| list.len() == 2), "the panels heard of both");
}

#[test]
fn stopping_one_task_leaves_the_other_running_and_requests_name_their_task() {
    use tabwright::protocol::TaskStatus;
    let world = two_tab_world();
    let mut worker = Worker::start(&world, None);
    world.held.hold("alice");
    let (first, _) = worker.start_in(ALICE, TAB);
    let (second, _) = worker.start_in(SECOND, 2);
    worker.pool.run_until_stalled();
    let stop = worker.ask(json!({"v": 1, "type": "stop_task", "task_id": first}));
    assert!(matches!(stop, Some(PanelReply::Accepted { .. })));
    let pause = worker.ask(json!({"v": 1, "type": "pause_task", "task_id": "task-404"}));
    assert!(
        matches!(pause, Some(PanelReply::Refused { ref message, .. }) if message.contains("over or unknown")),
        "{pause:?}"
    );
    world.held.let_go("alice");
    worker.pool.run_until_stalled();
    let list = worker.tasks();
    assert_eq!(status_in(&list, &first), TaskStatus::Stopped);
    assert_eq!(status_in(&list, &second), TaskStatus::Succeeded, "the other went on to its end");
}

#[test]
fn a_queued_task_starts_by_itself_when_a_place_frees_and_one_in_a_taken_tab_waits_for_it() {
    use tabwright::protocol::TaskStatus;
    let world = two_tab_world();
    world.settings.borrow_mut()["max_parallel_tasks"] = json!(1);
    let mut worker = Worker::start(&world, None);
    world.held.hold("hunter2");
    let (first, queued) = worker.start_in(ALICE, TAB);
    assert!(!queued);
    let (second, queued) = worker.start_in(SECOND, 2);
    assert!(queued, "one at a time, as set");
    worker.pool.run_until_stalled();
    let list = worker.tasks();
    assert_eq!(status_in(&list, &second), TaskStatus::Queued);
    assert_eq!(list.iter().find(|t| t.task_id == second).unwrap().queued_at, Some(0));
    assert!(world.saved.borrow().get(tabwright::worker::saved::QUEUE_KEY).is_some_and(|q| q.contains(SECOND)));
    // Nothing asks for it: the worker starts it once the first ends.
    world.held.let_go("hunter2");
    worker.pool.run_until_stalled();
    let list = worker.tasks();
    assert_eq!((status_in(&list, &first), status_in(&list, &second)), (TaskStatus::Succeeded, TaskStatus::Succeeded));
    assert!(world.saved.borrow().get(tabwright::worker::saved::QUEUE_KEY).is_some_and(|q| q == "[]"));
    // With places free, a task for a tab another task works in waits for that task.
    world.settings.borrow_mut()["max_parallel_tasks"] = json!(3);
    world.held.hold("hunter2");
    let (third, queued) = worker.start_in(ALICE, TAB);
    assert!(!queued);
    let (fourth, queued) = worker.start_in("Then read the page", TAB);
    assert!(queued, "the tab is taken");
    let stop_queued = worker.ask(json!({"v": 1, "type": "stop_task", "task_id": fourth}));
    assert!(matches!(stop_queued, Some(PanelReply::Accepted { .. })));
    assert_eq!(
        status_in(&worker.tasks(), &fourth),
        TaskStatus::Stopped,
        "a stopped queued task leaves the queue, stopped"
    );
    world.held.let_go("hunter2");
    worker.pool.run_until_stalled();
    assert_eq!(status_in(&worker.tasks(), &third), TaskStatus::Succeeded);
}

#[test]
fn a_stopped_worker_restores_every_task_and_the_queue() {
    let world = two_tab_world();
    world.open_tab(3);
    world.settings.borrow_mut()["max_parallel_tasks"] = json!(2);
    let (first, second, third) = {
        let mut worker = Worker::start(&world, None);
        world.held.hold("alice");
        let (first, _) = worker.start_in(ALICE, TAB);
        let (second, _) = worker.start_in(SECOND, 2);
        let (third, queued) = worker.start_in("A third sign-in, as alice", 3);
        assert!(queued);
        worker.pool.run_until_stalled();
        (first, second, third)
    }; // the worker and all its work are gone, mid-way through both tasks
    world.held.let_go("alice");
    let mut next = Worker::start(&world, None);
    assert!(next.restore(), "the tasks go on");
    next.pool.run_until_stalled();
    for id in [&first, &second, &third] {
        let (running, events) = next.status_of(id);
        assert!(!running && end_of(&events).is_some_and(Succeeded::is_success), "{id}: {events:?}");
        let started = events.iter().filter(|e| matches!(e, AgentEvent::TaskStarted { .. })).count();
        assert_eq!(started, 1, "{id}: its own log, whole");
    }
}

// Schedules: a run is a task like any other, started by the worker when its alarm rings.

use tabwright::schedule::{alarm_name, Schedule};

const MINUTE: f64 = 60_000.0;
/// Monday 10 June 2024, 08:00 UTC (the memory host's local time is UTC).
const MONDAY_8AM: f64 = 1_718_006_400_000.0;

impl Worker {
    /// Alarm `name` rings; the worker runs until nothing can.
    fn ring(&mut self, name: &str) {
        let (tasks, name) = (self.tasks.clone(), name.to_string());
        self.pool.spawner().spawn_local(async move { tasks.schedule_alarm(&name).await }).unwrap();
        self.pool.run_until_stalled();
    }

    /// The worker (or the browser) starts: the schedules are looked at.
    fn wake(&mut self) {
        let tasks = self.tasks.clone();
        self.pool.spawner().spawn_local(async move { tasks.wake_schedules().await }).unwrap();
        self.pool.run_until_stalled();
    }

    /// The schedules after `request`, or its refusal's message.
    fn schedules_after(&mut self, request: Value) -> Result<Vec<Schedule>, String> {
        match self.ask(request) {
            Some(PanelReply::Schedules { schedules, .. }) => Ok(schedules),
            Some(PanelReply::Refused { message, .. }) => Err(message),
            other => panic!("the schedules or a refusal, not {other:?}"),
        }
    }

    /// Adds a schedule made of `draft`; its id.
    fn add_schedule(&mut self, draft: Value) -> String {
        let schedules = self.schedules_after(json!({"v": 1, "type": "save_schedule", "draft": draft})).expect("saved");
        schedules.last().expect("added").id.clone()
    }
}

/// Schedule `id` as stored.
fn stored_schedule(world: &World, id: &str) -> Schedule {
    let stored = world.schedules.borrow();
    let raw = stored.iter().find(|s| s["id"] == id).unwrap_or_else(|| panic!("{id} in {stored:?}"));
    tabwright::json::read_value(raw).expect("a schedule")
}

/// A schedule of the sign-in task, every five minutes, on the app's start page.
fn sign_in_every_five_minutes() -> Value {
    json!({
        "title": "Sign in",
        "what": {"kind": "task", "task": "Sign in as alice with password hunter2", "start_url": START_URL},
        "when": {"every": "minutes", "n": 5},
    })
}

fn schedule_world() -> World {
    let world = World::new();
    world.now.set(MONDAY_8AM);
    world
}

#[test]
fn a_due_schedule_starts_a_scheduled_task_that_runs_like_any_and_records_its_result_and_next_run() {
    let world = schedule_world();
    let mut worker = Worker::start(&world, None);
    let id = worker.add_schedule(sign_in_every_five_minutes());
    let alarm = alarm_name(&id);
    assert_eq!(world.alarms.borrow().get(&alarm), Some(&(MONDAY_8AM + 5.0 * MINUTE)), "its alarm is set");
    // Rung early (or by another wake-up): nothing runs.
    worker.ring(&alarm);
    assert!(worker.tasks().is_empty());

    world.now.set(MONDAY_8AM + 5.0 * MINUTE);
    worker.ring(&alarm);
    let tasks = worker.tasks();
    assert_eq!(tasks.len(), 1, "one run: {tasks:?}");
    let run = &tasks[0];
    assert!(run.scheduled && run.status == tabwright::protocol::TaskStatus::Succeeded, "{run:?}");
    assert_eq!(run.tabs, vec![2], "in a new tab at its start page");
    assert_eq!(world.site_in(2).state.borrow().logged_in_as.as_deref(), Some("alice"), "the page's effect");
    let (_, events) = worker.status_of(&run.task_id);
    assert!(
        matches!(events.first(), Some(AgentEvent::TaskStarted { scheduled: true, .. })),
        "the history marks it: {:?}",
        events.first()
    );
    assert!(worker.state().is_some_and(|s| s.scheduled), "and so does the task's state");
    assert_eq!(world.requests.borrow().len(), 3, "the model ran it, as it runs any task");
    let kept = stored_schedule(&world, &id);
    let result = kept.last_result.expect("its result");
    assert!(result.ok && result.task_id == run.task_id, "{result:?}");
    assert_eq!(result.summary, "Logged in as alice.");
    assert_eq!(kept.run_task_id, None);
    assert_eq!(kept.next_run_ms, Some(MONDAY_8AM + 10.0 * MINUTE));
    assert_eq!(world.alarms.borrow().get(&alarm), Some(&(MONDAY_8AM + 10.0 * MINUTE)), "the next alarm");
    assert!(world.notified.borrow().is_empty(), "a success is told only when asked for");
    // The list the options page shows.
    let listed = worker.schedules_after(json!({"v": 1, "type": "list_schedules"})).unwrap();
    assert_eq!(listed[0].last_result.as_ref().map(|r| r.ok), Some(true));
}

#[test]
fn a_schedule_whose_run_is_still_going_is_not_started_again() {
    let world = schedule_world();
    let mut worker = Worker::start(&world, None);
    let id = worker.add_schedule(sign_in_every_five_minutes());
    world.held.hold("hunter2");
    world.now.set(MONDAY_8AM + 5.0 * MINUTE);
    worker.ring(&alarm_name(&id));
    let run = worker.tasks()[0].task_id.clone();
    assert_eq!(stored_schedule(&world, &id).run_task_id.as_deref(), Some(run.as_str()));
    // Its next time comes while the run waits for its model: no second run, the time moves on.
    world.now.set(MONDAY_8AM + 10.0 * MINUTE);
    worker.ring(&alarm_name(&id));
    worker.wake();
    assert_eq!(worker.tasks().len(), 1, "still the one run");
    assert_eq!(stored_schedule(&world, &id).next_run_ms, Some(MONDAY_8AM + 15.0 * MINUTE));
    let now = worker.schedules_after(json!({"v": 1, "type": "run_schedule_now", "id": id}));
    assert!(now.as_ref().is_err_and(|why| why.contains("has not ended yet")), "{now:?}");
    // A worker stopped and started again still knows the run (it is in the stored book).
    drop(worker);
    let mut next = Worker::start(&world, None);
    assert!(next.restore(), "the run goes on");
    next.wake();
    assert_eq!(next.tasks().len(), 1, "not started again by the new worker");
    world.held.let_go("hunter2");
    next.pool.run_until_stalled();
    let kept = stored_schedule(&world, &id);
    assert_eq!(kept.last_result.map(|r| (r.ok, r.task_id)), Some((true, run)));
    assert_eq!(kept.run_task_id, None, "free to run again");
    // Run now starts one at once; its times stay.
    let listed = next.schedules_after(json!({"v": 1, "type": "run_schedule_now", "id": id})).unwrap();
    assert!(listed[0].run_task_id.is_some());
    next.pool.run_until_stalled();
    assert_eq!(next.tasks().iter().filter(|t| t.scheduled).count(), 2);
    assert_eq!(stored_schedule(&world, &id).next_run_ms, Some(MONDAY_8AM + 15.0 * MINUTE));
}

#[test]
fn runs_missed_while_the_browser_was_closed_run_once_and_a_run_cut_off_is_told() {
    let world = schedule_world();
    let id = {
        let mut worker = Worker::start(&world, None);
        let id = worker.add_schedule(sign_in_every_five_minutes());
        world.held.hold("hunter2");
        world.now.set(MONDAY_8AM + 5.0 * MINUTE);
        worker.ring(&alarm_name(&id));
        assert_eq!(worker.tasks().len(), 1);
        id
    };
    // The browser closes mid-run (what the worker saved goes with it) and opens three days later:
    // 864 five-minute times passed.
    world.held.let_go("hunter2");
    world.saved.borrow_mut().clear();
    world.alarms.borrow_mut().clear();
    let three_days_later = MONDAY_8AM + 3.0 * 24.0 * 60.0 * MINUTE + 2.0 * MINUTE;
    world.now.set(three_days_later);
    let mut worker = Worker::start(&world, None);
    assert!(!worker.restore());
    worker.wake();
    let runs = worker.tasks();
    assert_eq!(runs.len(), 1, "one run for all the missed times: {runs:?}");
    assert!(runs[0].scheduled && runs[0].status == tabwright::protocol::TaskStatus::Succeeded);
    // The run the closing cut off was told as one that did not finish.
    let told = world.notices.borrow().get(&format!("tabwright-schedule-result:{id}")).cloned();
    assert!(
        told.as_ref().is_some_and(
            |(title, text)| title.contains("\"Sign in\" did not succeed") && text.contains("did not finish")
        ),
        "{told:?}"
    );
    let kept = stored_schedule(&world, &id);
    assert!(kept.last_result.as_ref().is_some_and(|r| r.ok && r.task_id == runs[0].task_id), "{kept:?}");
    assert_eq!(kept.next_run_ms, Some(MONDAY_8AM + (3.0 * 24.0 * 60.0 + 5.0) * MINUTE), "the first time after now");
    assert_eq!(world.alarms.borrow().get(&alarm_name(&id)), kept.next_run_ms.as_ref(), "its alarm set again");
    // Woken again at once (the browser's start and the worker's): nothing more runs.
    worker.wake();
    worker.ring(&alarm_name(&id));
    assert_eq!(worker.tasks().len(), 1);
}

#[test]
fn a_failing_run_is_always_told_and_a_succeeding_one_only_when_asked() {
    let world = schedule_world();
    let mut worker = Worker::start(&world, None);
    let policy: Policy = Rc::new(|state: &str, _: &Value| {
        if state.contains("Report the weather") {
            output("Give up", json!([{"done": {"text": "No weather here.", "success": false}}]))
        } else {
            output("Report", json!([{"done": {"text": "All quiet.", "success": true}}]))
        }
    });
    *world.policy.borrow_mut() = Some(policy);
    let draft = |title: &str, task: &str, notify_success: bool| {
        json!({"title": title, "what": {"kind": "task", "task": task, "start_url": START_URL},
            "when": {"every": "hourly", "minute": 30}, "notify_success": notify_success})
    };
    let failing = worker.add_schedule(draft("Weather", "Report the weather", false));
    let quiet = worker.add_schedule(draft("Quiet", "Report what is new", false));
    let told = worker.add_schedule(draft("Told", "Report what is new, and tell me", true));
    world.now.set(MONDAY_8AM + 30.0 * MINUTE);
    for id in [&failing, &quiet, &told] {
        worker.ring(&alarm_name(id));
    }
    assert_eq!(worker.tasks().len(), 3);
    let notices = world.notices.borrow().clone();
    let of = |id: &str| notices.get(&format!("tabwright-schedule-result:{id}")).cloned();
    assert_eq!(
        of(&failing),
        Some(("Scheduled task \"Weather\" did not succeed".into(), "No weather here.".into())),
        "{notices:?}"
    );
    assert_eq!(of(&quiet), None, "a success is not told unasked");
    assert_eq!(of(&told), Some(("Scheduled task \"Told\" is done".into(), "All quiet.".into())));
    assert!(!stored_schedule(&world, &failing).last_result.unwrap().ok);
    // A run that cannot start (no settings to run a task with) is a failure too, told so.
    *world.settings.borrow_mut() = Value::Null;
    world.now.set(MONDAY_8AM + 90.0 * MINUTE);
    worker.ring(&alarm_name(&quiet));
    let result = stored_schedule(&world, &quiet).last_result.unwrap();
    assert!(!result.ok && result.summary.starts_with("The run could not start: "), "{result:?}");
    assert_eq!(result.summary_locale_text.as_ref().map(|t| t.key.as_str()), Some("schedule_run_not_started"));
    assert!(world.notices.borrow().contains_key(&format!("tabwright-schedule-result:{quiet}")));
    assert_eq!(worker.tasks().len(), 3, "no task began");
}

#[test]
fn a_replay_schedule_and_a_skill_schedule_ask_the_model_nothing() {
    let world = schedule_world();
    let mut worker = Worker::start(&world, None);
    let steps = json!([{"goal": "Open the sign-in page", "actions": [{"name": "click", "params": {"index": 9}}]}]);
    let replay = worker.add_schedule(json!({"title": "Open sign-in", "when": {"every": "daily", "at": "09:00"},
        "what": {"kind": "replay", "start_url": START_URL, "steps": steps}}));
    *world.skills.borrow_mut() = vec![json!({
        "name": "Type a name", "action": "skill_type_a_name", "description": "", "domain": "app.example.com",
        "start_url": START_URL, "params": [{"name": "user", "example": "alice"}],
        "steps": [
            {"goal": "Open the sign-in page", "actions": [{"name": "click", "params": {"index": 9}}]},
            {"goal": "Type {{user}}", "actions": [{"name": "input", "params": {"index": 41, "text": "{{user}}"}}]},
        ],
    })];
    let skill = worker.add_schedule(json!({"title": "Type bob", "when": {"every": "weekdays", "at": "09:00"},
        "what": {"kind": "skill", "name": "Type a name", "params": {"user": "bob"}}}));
    world.now.set(MONDAY_8AM + 60.0 * MINUTE);
    worker.ring(&alarm_name(&replay));
    worker.ring(&alarm_name(&skill));
    assert!(world.requests.borrow().is_empty(), "no model was asked");
    let tasks = worker.tasks();
    assert_eq!(tasks.len(), 2);
    assert!(tasks.iter().all(|t| t.scheduled && t.status == tabwright::protocol::TaskStatus::Succeeded), "{tasks:?}");
    assert_eq!(world.site_in(2).state.borrow().clicks, vec![9], "the replay's click");
    assert_eq!(world.site_in(3).state.borrow().fields.get(&41).map(String::as_str), Some("bob"), "the skill typed bob");
    for id in [&replay, &skill] {
        assert!(stored_schedule(&world, id).last_result.is_some_and(|r| r.ok), "{id}");
    }
    let (_, events) = worker.status_of(&tasks[0].task_id);
    assert!(matches!(events.first(), Some(AgentEvent::TaskStarted { replay: true, scheduled: true, .. })));
}

#[test]
fn a_schedule_that_cannot_run_is_refused_with_what_to_fix_and_a_broken_stored_one_is_kept() {
    let world = schedule_world();
    let mut worker = Worker::start(&world, None);
    let save = |draft: Value| json!({"v": 1, "type": "save_schedule", "draft": draft});
    let mut refusal = |draft: Value| worker.schedules_after(save(draft)).expect_err("refused");
    let when = json!({"every": "daily", "at": "07:00"});
    assert!(refusal(json!({"title": " ", "what": {"kind": "task", "task": "x"}, "when": when})).contains("title"));
    let bad_time =
        refusal(json!({"title": "T", "what": {"kind": "task", "task": "x"}, "when": {"every": "daily", "at": "7.30"}}));
    assert!(bad_time.contains("\"7.30\" is not a time of day"), "{bad_time}");
    let bad_steps = refusal(
        json!({"title": "T", "when": when, "what": {"kind": "replay", "start_url": START_URL, "steps": [{"goal": 3}]}}),
    );
    assert!(bad_steps.starts_with("The saved steps cannot be replayed (step 1: "), "{bad_steps}");
    let no_skill = refusal(json!({"title": "T", "when": when, "what": {"kind": "skill", "name": "Nothing"}}));
    assert!(no_skill.contains("no saved skill named \"Nothing\""), "{no_skill}");
    assert!(worker.schedules_after(json!({"v": 1, "type": "remove_schedule", "id": "nope"})).is_err());
    assert!(world.schedules.borrow().is_empty(), "nothing refused was kept");
    // A stored entry this version cannot read is listed as left out, never run, and kept.
    let broken =
        json!({"id": "x", "title": "From a newer version", "what": {"kind": "dance"}, "when": when, "created_ms": 1.0});
    world.schedules.borrow_mut().push(broken.clone());
    let id = worker.add_schedule(sign_in_every_five_minutes());
    match worker.ask(json!({"v": 1, "type": "list_schedules"})) {
        Some(PanelReply::Schedules { schedules, left_out, .. }) => {
            assert_eq!(schedules.len(), 1);
            assert_eq!(left_out.len(), 1);
            assert!(left_out[0].contains("From a newer version") && left_out[0].contains("dance"), "{left_out:?}");
        }
        other => panic!("{other:?}"),
    }
    let paused = worker.schedules_after(json!({"v": 1, "type": "pause_schedule", "id": id, "paused": true})).unwrap();
    assert!(paused[0].paused && paused[0].next_run_ms.is_none());
    assert!(world.alarms.borrow().is_empty(), "a paused schedule has no alarm");
    assert!(world.schedules.borrow().contains(&broken), "the entry it cannot read is kept as it was");
    let left = worker.schedules_after(json!({"v": 1, "type": "remove_schedule", "id": id})).unwrap();
    assert!(left.is_empty());
    assert_eq!(*world.schedules.borrow(), vec![broken]);
}

#[test]
fn a_scheduled_task_that_meets_an_act_needing_a_yes_waits_says_so_and_never_acts_without_it() {
    let world = schedule_world();
    let other = "https://other.example/page";
    let policy: Policy = Rc::new(move |state: &str, _: &Value| {
        if state.contains("URL: https://other.example/") {
            output("Report", json!([{"done": {"text": "At the other site.", "success": true}}]))
        } else if state.contains("Step 1:") {
            output("Report", json!([{"done": {"text": "Stayed: the person said no.", "success": false}}]))
        } else {
            output("Look elsewhere", json!([{"navigate": {"url": other}}]))
        }
    });
    *world.policy.borrow_mut() = Some(policy);
    let mut worker = Worker::start(&world, None);
    let id = worker.add_schedule(json!({"title": "Compare prices", "when": {"every": "minutes", "n": 30},
        "what": {"kind": "task", "task": "Compare the prices with the other site", "start_url": START_URL}}));
    // The person is away when the run comes.
    world.held.hold(PERSON_AWAY);
    world.site_in(2).state.borrow_mut().consent_answers = [tabwright::guard::ConsentAnswer::Deny].into();
    world.now.set(MONDAY_8AM + 30.0 * MINUTE);
    worker.ring(&alarm_name(&id));
    let run = worker.tasks()[0].clone();
    assert_eq!(run.status, tabwright::protocol::TaskStatus::Waiting, "the run waits for the person's yes");
    let waits = format!("tabwright-schedule-waits:{}", run.task_id);
    let shown = world.notices.borrow().get(&waits).cloned();
    let (title, act) = shown.expect("the wait is told by a notification");
    assert_eq!(title, "Scheduled task \"Compare prices\" waits for you");
    assert!(act.contains("other.example"), "{act}");
    let site = world.site_in(2);
    assert_eq!(site.state.borrow().url, START_URL, "the act has not happened");
    let asked = world.requests.borrow().len();
    worker.pool.run_until_stalled();
    assert_eq!(world.requests.borrow().len(), asked, "nothing goes on while it waits");
    // The person comes back and says no: the act never happens.
    world.held.let_go(PERSON_AWAY);
    worker.pool.run_until_stalled();
    assert_eq!(site.state.borrow().consents.len(), 1);
    assert_eq!(site.state.borrow().url, START_URL, "never done without the yes");
    assert!(!world.notices.borrow().contains_key(&waits), "the wait's notification is taken away");
    let result = stored_schedule(&world, &id).last_result.unwrap();
    assert!(!result.ok && result.summary == "Stayed: the person said no.", "{result:?}");
    assert!(world.notices.borrow().contains_key(&format!("tabwright-schedule-result:{id}")), "its failure told");
}

#[test]
fn a_scheduled_tasks_question_is_told_until_answered() {
    let world = schedule_world();
    let policy: Policy = Rc::new(|state: &str, _: &Value| {
        if state.contains("Step 1:") {
            output("Report", json!([{"done": {"text": "Blue it is.", "success": true}}]))
        } else {
            output("Ask", json!([{"ask_human": {"question": "Which colour?"}}]))
        }
    });
    *world.policy.borrow_mut() = Some(policy);
    let mut worker = Worker::start(&world, None);
    let id = worker.add_schedule(json!({"title": "Order mugs", "when": {"every": "minutes", "n": 30},
        "what": {"kind": "task", "task": "Order a mug", "start_url": START_URL}}));
    world.held.hold(PERSON_AWAY);
    world.now.set(MONDAY_8AM + 30.0 * MINUTE);
    worker.ring(&alarm_name(&id));
    let run = worker.tasks()[0].task_id.clone();
    let waits = format!("tabwright-schedule-waits:{run}");
    let shown = world.notices.borrow().get(&waits).cloned();
    assert_eq!(shown, Some(("Scheduled task \"Order mugs\" waits for you".into(), "Which colour?".into())));
    world.site_in(2).state.borrow_mut().answer = "Blue".into();
    world.held.let_go(PERSON_AWAY);
    worker.pool.run_until_stalled();
    assert!(!world.notices.borrow().contains_key(&waits), "answered: the notification goes");
    assert!(stored_schedule(&world, &id).last_result.is_some_and(|r| r.ok));
}

#[test]
fn a_queued_task_has_a_status_of_its_own_before_it_starts() {
    let world = two_tab_world();
    world.settings.borrow_mut()["max_parallel_tasks"] = json!(1);
    let mut worker = Worker::start(&world, None);
    world.held.hold("hunter2");
    worker.start_in(ALICE, TAB);
    let (waiting, queued) = worker.start_in(SECOND, 2);
    assert!(queued);
    let (running, events) = worker.status_of(&waiting);
    assert!(running && events.is_empty(), "it waits, and will run");
    world.held.let_go("hunter2");
    worker.pool.run_until_stalled();
    let (running, events) = worker.status_of(&waiting);
    assert!(!running && end_of(&events).is_some_and(Succeeded::is_success));
}

#[test]
fn a_worker_stopped_while_restoring_several_tasks_leaves_every_one_for_the_next() {
    for stop_at in 1..=10 {
        let world = two_tab_world();
        world.open_tab(3);
        let ids = {
            let mut worker = Worker::start(&world, None);
            world.held.hold("alice");
            let ids: Vec<String> = [(ALICE, TAB), (SECOND, 2), ("A third sign-in, as alice", 3)]
                .into_iter()
                .map(|(task, tab)| worker.start_in(task, tab).0)
                .collect();
            worker.pool.run_until_stalled();
            ids
        };
        {
            // This worker stops somewhere in its restore.
            let mut halted = Worker::start(&world, Some(stop_at));
            halted.restore();
        }
        world.held.let_go("alice");
        let mut last = Worker::start(&world, None);
        last.restore();
        last.pool.run_until_stalled();
        for id in &ids {
            let (running, events) = last.status_of(id);
            assert!(!running && end_of(&events).is_some_and(Succeeded::is_success), "stopped at {stop_at}: {id}");
        }
    }
}

#[test]
fn a_follow_up_of_a_running_task_waits_for_its_end_and_two_starts_for_one_tab_queue_the_second() {
    use tabwright::protocol::TaskStatus;
    let world = two_tab_world();
    let mut worker = Worker::start(&world, None);
    world.held.hold("hunter2");
    let (first, _) = worker.start_in(ALICE, TAB);
    // A follow-up in a new tab would start at once, but the task it follows has not ended.
    let follow_up = json!({"v": 1, "type": "start_task", "task": "Now log out", "tab_id": 2, "new_tab": true,
        "follow_up": true, "follows": first});
    let queued = match worker.ask(follow_up) {
        Some(PanelReply::TaskAccepted { task_id, queued: true, .. }) => task_id,
        other => panic!("queued, not {other:?}"),
    };
    world.held.let_go("hunter2");
    worker.pool.run_until_stalled();
    assert_eq!(status_in(&worker.tasks(), &queued), TaskStatus::Succeeded);
    let asked =
        world.requests.borrow().iter().map(|body| body.to_string()).filter(|b| b.contains("Now log out")).count();
    assert!(asked > 0);
    let told = world.requests.borrow().iter().any(|body| {
        let text = body.to_string();
        text.contains("Now log out") && text.contains("Sign in as alice")
    });
    assert!(told, "the follow-up is told the task it follows");
}

// Coding agents over MCP (`worker::clients`, `agent::driven`).

use tabwright::bridge::{ClientReply, RefusedBecause, WorkerMessage};

impl Worker {
    /// Sends client `client`'s request as the bridge would; the worker's reply.
    fn client(&mut self, client: u32, request: Value) -> ClientReply {
        let reply = self.client_later(client, request);
        Self::reply_of(&reply, client).expect("a reply")
    }

    /// Sends client `client`'s request and runs the worker until it waits; where the reply
    /// comes.
    fn client_later(&mut self, client: u32, request: Value) -> Rc<RefCell<Option<String>>> {
        let text = json!({"v": 1, "client": client, "id": 5, "request": request}).to_string();
        let reply = Rc::new(RefCell::new(None));
        let future = self.tasks.answer_client(text);
        let slot = reply.clone();
        self.pool.spawner().spawn_local(async move { *slot.borrow_mut() = Some(future.await) }).unwrap();
        while reply.borrow().is_none() && self.pool.try_run_one() {}
        reply
    }

    fn reply_of(reply: &Rc<RefCell<Option<String>>>, client: u32) -> Option<ClientReply> {
        let text = reply.borrow_mut().take()?;
        let message = WorkerMessage::from_json_text(&text).unwrap();
        assert_eq!((message.client, message.id), (client, 5), "the reply goes to whom asked");
        Some(message.reply)
    }

    fn allowed(world: &World, name: &str, stop_on_disconnect: bool) -> Worker {
        *world.clients.borrow_mut() = json!({
            "stop_on_disconnect": stop_on_disconnect,
            "clients": [{"name": name, "title": null, "allowed": true}],
        });
        let mut worker = Worker::start(world, None);
        assert_eq!(worker.client(1, json!({"type": "hello", "name": name})), ClientReply::Welcome { allowed: true });
        worker
    }
}

fn refused_why(reply: &ClientReply) -> Option<RefusedBecause> {
    match reply {
        ClientReply::Refused { why, .. } => Some(*why),
        _ => None,
    }
}

#[test]
fn a_coding_agent_gets_nothing_until_the_person_allows_it_and_nothing_once_denied() {
    let world = World::new();
    let mut worker = Worker::start(&world, None);
    let hello = json!({"type": "hello", "name": "claude-code", "title": "Claude Code", "version": "2.1"});
    assert_eq!(worker.client(1, hello.clone()), ClientReply::Welcome { allowed: false });
    assert_eq!(world.asking.borrow().last().unwrap()[0].name, "claude-code", "the panels are asked");
    assert!(world.notices.borrow().values().any(|(_, text)| text.contains("Claude Code wants to use Tabwright")));
    match worker.ask(json!({"v": 1, "type": "get_status"})) {
        Some(PanelReply::Status { clients_asking, .. }) => {
            assert_eq!(clients_asking[0].title.as_deref(), Some("Claude Code"))
        }
        other => panic!("{other:?}"),
    }
    // Unanswered, a request waits for the person's answer.
    let waiting = worker.client_later(1, json!({"type": "tabs"}));
    worker.pool.run_until_stalled();
    assert!(waiting.borrow().is_none(), "it waits");

    let allowed = worker.ask(json!({"v": 1, "type": "answer_client", "name": "claude-code", "allow": true}));
    assert!(
        matches!(&allowed, Some(PanelReply::Clients { clients, asking, .. }) if clients[0].allowed && asking.is_empty()),
        "{allowed:?}"
    );
    assert!(world.asking.borrow().last().unwrap().is_empty(), "the card goes");
    assert!(world.notices.borrow().is_empty(), "the notification goes");
    assert_eq!(world.clients.borrow()["clients"][0]["name"], "claude-code", "the answer is kept");
    worker.pool.run_until_stalled();
    match Worker::reply_of(&waiting, 1).expect("the waiting request goes on once allowed") {
        ClientReply::Tabs { tabs } => assert_eq!(tabs[0].tab_id, TAB),
        other => panic!("{other:?}"),
    }
    match worker.client(1, json!({"type": "tabs"})) {
        ClientReply::Tabs { tabs } => assert_eq!(tabs[0].tab_id, TAB),
        other => panic!("{other:?}"),
    }

    // Denied: nothing, in this worker and the next; the options' switch off: nothing either.
    worker.ask(json!({"v": 1, "type": "answer_client", "name": "claude-code", "allow": false}));
    assert_eq!(refused_why(&worker.client(1, json!({"type": "tabs"}))), Some(RefusedBecause::Denied));
    let mut next = Worker::start(&world, None);
    assert_eq!(refused_why(&next.client(3, hello)), Some(RefusedBecause::Denied));
    assert_eq!(refused_why(&next.client(3, json!({"type": "observe"}))), Some(RefusedBecause::Denied));
    next.ask(json!({"v": 1, "type": "forget_client", "name": "claude-code"}));
    next.ask(json!({"v": 1, "type": "set_client_options", "enabled": false, "stop_on_disconnect": false}));
    assert_eq!(refused_why(&next.client(3, json!({"type": "tabs"}))), Some(RefusedBecause::Off));
    assert_eq!(world.clients.borrow()["enabled"], false);

    // A message that cannot be read is refused to whom it names.
    let text = json!({"v": 1, "client": 4, "id": 9, "request": {"type": "act"}}).to_string();
    let reply = futures::executor::block_on(next.tasks.answer_client(text));
    let reply = WorkerMessage::from_json_text(&reply).unwrap();
    assert_eq!((reply.client, reply.id, refused_why(&reply.reply)), (4, 9, Some(RefusedBecause::BadRequest)));
}

/// The index of the element whose text is `text`, as the state text lists it.
fn index_in(state: &str, text: &str) -> u32 {
    let line = state.lines().find(|l| l.contains(text)).unwrap_or_else(|| panic!("{text} in {state}"));
    line[line.find('[').unwrap() + 1..line.find(']').unwrap()].parse().unwrap()
}

#[test]
fn a_coding_agent_observes_and_acts_through_a_task_of_its_own_and_a_stale_index_is_refused() {
    let world = World::new();
    let mut worker = Worker::allowed(&world, "cursor", false);
    let state = match worker.client(1, json!({"type": "observe", "tab_id": TAB})) {
        ClientReply::Observed(seen) => {
            assert_eq!((seen.tab_id, seen.url.as_str()), (TAB, START_URL));
            assert!(seen.actions.iter().any(|a| a == "click"), "{:?}", seen.actions);
            assert!(seen.state.starts_with("<browser_state>"), "the text the model reads: {}", seen.state);
            seen.state
        }
        other => panic!("{other:?}"),
    };
    let sign_in = index_in(&state, "Sign in");
    let made_up = worker.client(1, json!({"type": "act", "action": {"click": {"index": sign_in + 500}}}));
    assert_eq!(refused_why(&made_up), Some(RefusedBecause::Stale), "{made_up:?}");
    let unknown = worker.client(1, json!({"type": "act", "action": {"fly": {"to": "moon"}}}));
    assert!(format!("{unknown:?}").contains("not available on this page"), "{unknown:?}");
    let wrong = worker.client(1, json!({"type": "act", "action": {"click": {"index": "first"}}}));
    assert!(format!("{wrong:?}").contains("invalid parameters"), "{wrong:?}");

    match worker.client(1, json!({"type": "act", "action": {"click": {"index": sign_in}}})) {
        ClientReply::Acted(outcome) => assert!(!outcome.is_error && outcome.look_again, "{outcome:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(world.site.state.borrow().url, LOGIN_URL, "the click reached the page");
    let again = worker.client(1, json!({"type": "act", "action": {"click": {"index": sign_in}}}));
    assert_eq!(refused_why(&again), Some(RefusedBecause::Stale), "the page changed: {again:?}");
    let state = match worker.client(1, json!({"type": "observe"})) {
        ClientReply::Observed(seen) => seen.state,
        other => panic!("{other:?}"),
    };
    let user = index_in(&state, "Username");
    let typed = worker.client(1, json!({"type": "act", "action": {"input": {"index": user, "text": "alice"}}}));
    assert!(matches!(typed, ClientReply::Acted(ref o) if !o.is_error && !o.look_again), "{typed:?}");

    // It is a task like the panel's: listed, its steps logged and shown.
    let list = worker.tasks();
    let own = list.iter().find(|t| t.task.contains("cursor")).expect("the client's task is listed");
    assert_eq!(own.status, tabwright::protocol::TaskStatus::Running);
    let (_, events) = worker.status_of(&own.task_id.clone());
    assert_eq!(finished_steps(&events), vec![1, 2], "each act is a step");
    assert!(json_of(&events[events.len() - 1]).contains("cursor asked for this"));

    // The client leaves: its task ends; another connection begins another.
    assert_eq!(worker.client(1, json!({"type": "gone"})), ClientReply::Done);
    worker.pool.run_until_stalled();
    let (running, events) = worker.status_of(&own.task_id.clone());
    assert!(!running && format!("{:?}", end_of(&events)).contains("disconnected"), "{events:?}");
    assert_eq!(worker.client(2, json!({"type": "hello", "name": "cursor"})), ClientReply::Welcome { allowed: true });
    let first = worker.client(2, json!({"type": "act", "action": {"click": {"index": sign_in}}}));
    assert_eq!(refused_why(&first), Some(RefusedBecause::Stale), "observe first: {first:?}");
    assert_eq!(worker.tasks().iter().filter(|t| t.task.contains("cursor")).count(), 1, "nothing started for it");
    assert!(matches!(worker.client(2, json!({"type": "observe", "tab_id": TAB})), ClientReply::Observed(_)));
    assert_eq!(worker.tasks().iter().filter(|t| t.task.contains("cursor")).count(), 2, "an observe begins again");
}

#[test]
fn a_coding_agents_task_runs_as_the_panels_and_stops_when_it_leaves_if_the_person_said_so() {
    let world = World::new();
    let mut worker = Worker::allowed(&world, "codex", true);
    world.held.hold("hunter2");
    let task_id = match worker.client(1, json!({"type": "run_task", "task": ALICE, "tab_id": TAB})) {
        ClientReply::TaskAccepted { task_id, queued: false } => task_id,
        other => panic!("{other:?}"),
    };
    worker.pool.run_until_stalled();
    match worker.client(1, json!({"type": "task_status", "task_id": task_id})) {
        ClientReply::Task(report) => {
            assert_eq!(report.status, tabwright::protocol::TaskStatus::Running);
            assert!(report.end.is_none() && report.next > 0);
        }
        other => panic!("{other:?}"),
    }
    // Another client neither sees nor stops it.
    *world.clients.borrow_mut() = json!({"stop_on_disconnect": true, "clients": [
        {"name": "codex", "allowed": true}, {"name": "other", "allowed": true}]});
    let mut worker = worker;
    worker.ask(json!({"v": 1, "type": "forget_client", "name": "nobody"}));
    assert_eq!(worker.client(2, json!({"type": "hello", "name": "codex"})), ClientReply::Welcome { allowed: true });
    assert_eq!(
        refused_why(&worker.client(9, json!({"type": "stop_task", "task_id": task_id}))),
        Some(RefusedBecause::BadRequest),
        "a client that never said hello"
    );
    // Its connection closes: the person said to stop its tasks then.
    worker.client(1, json!({"type": "gone"}));
    world.held.let_go("hunter2");
    worker.pool.run_until_stalled();
    let (running, events) = worker.status_of(&task_id);
    assert!(!running && matches!(end_of(&events), Some(tabwright::agent::TaskEnd::Stopped)), "{events:?}");
}

#[test]
fn a_coding_agents_task_that_ran_on_through_a_disconnect_reports_its_answer() {
    let world = World::new();
    let mut worker = Worker::allowed(&world, "codex", false);
    let task_id = match worker.client(1, json!({"type": "run_task", "task": ALICE, "tab_id": TAB})) {
        ClientReply::TaskAccepted { task_id, .. } => task_id,
        other => panic!("{other:?}"),
    };
    worker.client(1, json!({"type": "gone"}));
    worker.pool.run_until_stalled();
    // The same client, connected again, reads how it ended.
    worker.client(2, json!({"type": "hello", "name": "codex"}));
    match worker.client(2, json!({"type": "task_status", "task_id": task_id, "since": 0})) {
        ClientReply::Task(report) => {
            assert!(matches!(report.end, Some(tabwright::agent::TaskEnd::Done { success: true, .. })), "{report:?}");
            assert!(!report.steps.is_empty() && report.steps.iter().all(|s| !s.actions.is_empty()));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_coding_agents_own_acts_take_no_place_of_the_panels_tasks() {
    let world = two_tab_world();
    world.settings.borrow_mut()["max_parallel_tasks"] = json!(1);
    let mut worker = Worker::allowed(&world, "cursor", false);
    assert!(matches!(worker.client(1, json!({"type": "observe", "tab_id": TAB})), ClientReply::Observed(_)));
    let (_, queued) = worker.start_in(SECOND, 2);
    assert!(!queued, "the one place is free: the client's acts call no model");
    let taken = worker.ask(json!({"v": 1, "type": "start_task", "task": ALICE, "tab_id": TAB}));
    assert!(matches!(taken, Some(PanelReply::TaskAccepted { queued: true, .. })), "its tab is the client's: {taken:?}");
}

#[test]
fn the_agents_book_written_elsewhere_is_what_the_next_request_meets() {
    let world = World::new();
    let mut worker = Worker::allowed(&world, "cursor", false);
    assert!(matches!(worker.client(1, json!({"type": "tabs"})), ClientReply::Tabs { .. }));
    *world.clients.borrow_mut() = json!({"clients": [{"name": "cursor", "allowed": false}]});
    assert_eq!(refused_why(&worker.client(1, json!({"type": "tabs"}))), Some(RefusedBecause::Denied));
    *world.clients.borrow_mut() = json!("not a book");
    assert_eq!(refused_why(&worker.client(1, json!({"type": "tabs"}))), Some(RefusedBecause::Denied), "the one kept");
}
