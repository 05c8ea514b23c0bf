//! The tab browser's rules (`tabwright::tabs`), natively: a scripted browser behind the
//! `TabHost` port, on virtual time. Pages are snapshots the content script recorded from
//! fixture pages (`tests/fixtures/snapshots/`); tabs load for as long as a test says; frames
//! answer, or never do; the debugger can be closed by the person.
//!
//! Time is simulated: a wait registers a timer, everything that can run runs, then the clock
//! jumps to the earliest timer. Waits that overlap in Chrome overlap here too, so budgets and
//! timeouts are measured as they would be in the worker.

use futures::executor::{LocalPool, LocalSpawner};
use futures::task::LocalSpawnExt;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::task::{Poll, Waker};
use tabwright::agent::Clock;
use tabwright::browser::{Browser, BrowserError};
use tabwright::protocol::{ContentReply, ContentRequest, RealClickMade};
use tabwright::settings::PageOptions;
use tabwright::tabs::host::{Answers, FrameAnswer, Later, Tab, TabChange, TabHost};
use tabwright::tabs::TabBrowser;

/// A PNG of one pixel (its header is what the core reads).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// What a click on an element does in the scripted browser.
#[derive(Clone)]
enum OnClick {
    /// The page navigates to the URL, which loads for `ms`.
    Navigate(String, f64),
    /// The page opens a tab at the URL (`target=_blank`), loading for `ms`.
    OpenTab(String, f64),
    /// The page closes its own tab (a popup done with its work).
    CloseTab,
    /// The page ignores script clicks (it checks `isTrusted`); a trusted click at the element
    /// navigates to the URL. `covered`: another element covers it everywhere.
    TrustedOnly { to: String, covered: bool },
    /// The page ignores script clicks; a trusted click changes it in place (a list opens).
    TrustedOnlyInPlace,
    /// Nothing comes of any click: neither a script's nor a real one.
    Inert,
    /// The click changes the page in place; meanwhile the worker opens a tab at the URL for
    /// another task (no opener, the same window), claimed for it `claim_after_ms` later.
    AnotherTaskOpens { to: String, claims: tabwright::tabs::host::TabClaims, claim_after_ms: u32 },
}

#[derive(Default)]
struct BrowserState {
    now: f64,
    timers: Vec<(f64, u64, Waker)>,
    next_timer: u64,
    tabs: BTreeMap<i32, Tab>,
    /// When each loading tab finishes.
    loads_until: BTreeMap<i32, f64>,
    /// The top frame's snapshot by URL; child frames' by `(url, frame id)`.
    pages: BTreeMap<String, Value>,
    frames: BTreeMap<(String, i64), Value>,
    /// Child frames that never answer (a frame blocked by a dialog), by frame id.
    hung_frames: Vec<i64>,
    /// Child frames that answer only after this many milliseconds, by frame id.
    slow_frames: BTreeMap<i64, u32>,
    /// Requests each frame got: (url, frame id, request type).
    asked: Vec<(String, i64, String)>,
    on_click: BTreeMap<(String, u32), OnClick>,
    attached: Vec<i32>,
    /// Why the debugger was detached, to be told once.
    detached: BTreeMap<i32, String>,
    commands: Vec<String>,
    answers: Answers,
    /// Tab groups: id → (window, title).
    groups: BTreeMap<i32, (i32, String)>,
    /// The page's requests: busy (in flight) until this time, then quiet.
    network_busy_until: f64,
    /// When the page last started a request.
    last_request_at: f64,
    /// The element a trusted click would land on next (from the last `point` asked), and
    /// where it goes.
    trusted_target: Option<String>,
    /// Whether the next trusted click changes the page in place, and whether one did since the
    /// content script last began watching (what `late_click_effect` answers).
    trusted_changes_in_place: bool,
    /// The dropdown opens, and takes a choice, only with real clicks.
    stubborn_dropdown: bool,
    changed_in_place: bool,
    /// The top frame has no content script until the scripts are injected (a tab that
    /// predates the task).
    scripts_missing: bool,
    /// What the page's dialogs said since the last look (the snapshot reply carries them).
    dialogs: Vec<Value>,
    /// Trusted clicks the debugger made, at these points.
    trusted_clicks: Vec<(f64, f64)>,
    /// Every request a frame got, as sent: (frame id, request).
    sent: Vec<(i64, Value)>,
    /// What a frame answers to a request of this type, by type (else an empty result).
    replies: BTreeMap<String, ContentReply>,
    /// The bytes (base64) of the task's files the panel kept, by id.
    files: BTreeMap<String, String>,
    /// Scripts put into the page, one list per injection.
    injected: Vec<Vec<String>>,
    /// How an injection of scripts goes.
    injection: Injection,
}

/// How the browser takes scripts the core puts into a page.
#[derive(Default, Clone)]
enum Injection {
    #[default]
    Done,
    Refused(String),
    /// The page never lets the script run (a dialog, a script that never ends).
    Hangs,
}

#[derive(Clone)]
struct ScriptedBrowser {
    state: Rc<RefCell<BrowserState>>,
    spawner: LocalSpawner,
}

/// A wait on the simulated clock.
struct Sleep {
    state: Rc<RefCell<BrowserState>>,
    until: f64,
    id: Option<u64>,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        let mut state = self.state.borrow_mut();
        if state.now >= self.until {
            return Poll::Ready(());
        }
        let id = match self.id {
            Some(id) => id,
            None => {
                state.next_timer += 1;
                state.next_timer
            }
        };
        state.timers.retain(|(_, t, _)| *t != id);
        let until = self.until;
        state.timers.push((until, id, cx.waker().clone()));
        drop(state);
        self.id = Some(id);
        Poll::Pending
    }
}

fn snapshot_of(url: &str, title: &str, nodes: Value) -> Value {
    json!({"version": 3, "doc": format!("doc-{}", url.len()), "url": url, "title": title, "viewport": [1280, 900], "nodes": nodes})
}

fn recorded(name: &str, url: &str) -> Value {
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/snapshots/{name}.json", env!("CARGO_MANIFEST_DIR")))
        .unwrap();
    let mut value: Value = tabwright::json::from_text(&text).unwrap();
    value["url"] = url.into();
    value
}

fn reply(result: Value) -> FrameAnswer {
    FrameAnswer::Reply(ContentReply { ok: true, snapshot_json: None, code: None, message: None, result: Some(result) })
}

fn kind_of(request: &ContentRequest) -> String {
    serde_json::to_value(request).unwrap()["type"].as_str().unwrap_or_default().to_string()
}

impl ScriptedBrowser {
    fn tab_url(&self, tab: i32) -> String {
        self.state.borrow().tabs.get(&tab).and_then(|t| t.url.clone()).unwrap_or_default()
    }

    /// Points the tab at `url`, loading for `ms`.
    fn load(&self, tab: i32, url: &str, ms: f64) {
        let mut s = self.state.borrow_mut();
        let until = s.now + ms;
        let page_title = s.pages.get(url).and_then(|p| p["title"].as_str()).unwrap_or("").to_string();
        if let Some(t) = s.tabs.get_mut(&tab) {
            t.url = Some(url.into());
            t.title = Some(page_title);
            t.status = Some(if ms > 0.0 { "loading" } else { "complete" }.into());
        }
        s.loads_until.insert(tab, until);
    }

    fn refresh_loads(&self) {
        let mut s = self.state.borrow_mut();
        let now = s.now;
        let done: Vec<i32> = s.loads_until.iter().filter(|(_, &until)| until <= now).map(|(&id, _)| id).collect();
        for id in done {
            s.loads_until.remove(&id);
            if let Some(t) = s.tabs.get_mut(&id) {
                t.status = Some("complete".into());
            }
        }
    }

    fn answer(&self, tab: i32, frame: i64, request: &ContentRequest) -> Option<FrameAnswer> {
        let url = self.tab_url(tab);
        self.state.borrow_mut().asked.push((url.clone(), frame, kind_of(request)));
        self.state.borrow_mut().sent.push((frame, serde_json::to_value(request).unwrap()));
        if frame != 0 && self.state.borrow().hung_frames.contains(&frame) {
            return None;
        }
        if let Some(reply) = self.state.borrow().replies.get(&kind_of(request)) {
            return Some(FrameAnswer::Reply(reply.clone()));
        }
        Some(match request {
            ContentRequest::Snapshot { .. } => {
                let mut s = self.state.borrow_mut();
                let dialogs = if frame == 0 { std::mem::take(&mut s.dialogs) } else { Vec::new() };
                let page = if frame == 0 { s.pages.get(&url) } else { s.frames.get(&(url.clone(), frame)) };
                match page {
                    Some(page) => FrameAnswer::Reply(ContentReply {
                        ok: true,
                        snapshot_json: Some(page.to_string()),
                        code: None,
                        message: None,
                        result: Some(json!({"can_go_back": false, "can_go_forward": false, "dialogs": dialogs})),
                    }),
                    None => FrameAnswer::Unreadable("no page here".into()),
                }
            }
            ContentRequest::Network { .. } => {
                let s = self.state.borrow();
                let quiet = (s.now - s.network_busy_until).max(0.0);
                reply(json!({"quiet_ms": quiet, "last_request_at": s.last_request_at}))
            }
            ContentRequest::Point { .. } => {
                let covered = matches!(
                    self.state.borrow().on_click.values().next(),
                    Some(OnClick::TrustedOnly { covered: true, .. })
                );
                reply(json!({"x": 40.0, "y": 60.0, "covered": covered}))
            }
            ContentRequest::LateClickEffect { again, .. } => {
                let mut s = self.state.borrow_mut();
                let effect = s.changed_in_place;
                if *again {
                    s.changed_in_place = false;
                }
                reply(json!({"effect": effect}))
            }
            ContentRequest::Click { index, .. } => {
                let action = self.state.borrow().on_click.get(&(url.clone(), *index)).cloned();
                match action {
                    Some(OnClick::Navigate(to, ms)) => {
                        self.load(tab, &to, ms);
                        reply(json!({"effect": true, "navigating": true}))
                    }
                    Some(OnClick::OpenTab(to, ms)) => {
                        let id = {
                            let mut s = self.state.borrow_mut();
                            let id = s.tabs.keys().max().unwrap() + 1;
                            let window = s.tabs[&tab].window_id;
                            s.tabs.insert(
                                id,
                                Tab { id: Some(id), window_id: window, opener_tab_id: Some(tab), ..Tab::default() },
                            );
                            id
                        };
                        self.load(id, &to, ms);
                        reply(json!({"effect": true, "navigating": false}))
                    }
                    Some(OnClick::TrustedOnly { to, .. }) => {
                        self.state.borrow_mut().trusted_target = Some(to);
                        reply(json!({"effect": false}))
                    }
                    Some(OnClick::TrustedOnlyInPlace) => {
                        self.state.borrow_mut().trusted_changes_in_place = true;
                        reply(json!({"effect": false}))
                    }
                    Some(OnClick::Inert) => reply(json!({"effect": false})),
                    Some(OnClick::AnotherTaskOpens { to, claims, claim_after_ms }) => {
                        let opening = claims.opening();
                        let id = {
                            let mut s = self.state.borrow_mut();
                            let id = s.tabs.keys().max().unwrap() + 1;
                            let window = s.tabs[&tab].window_id;
                            s.tabs.insert(id, Tab { id: Some(id), window_id: window, ..Tab::default() });
                            id
                        };
                        self.load(id, &to, 100.0);
                        let host = self.clone();
                        self.spawn(Box::pin(async move {
                            host.sleep(claim_after_ms).await;
                            claims.claim(id, "another task");
                            drop(opening);
                        }));
                        reply(json!({"effect": true, "navigating": false}))
                    }
                    Some(OnClick::CloseTab) => {
                        // The tab goes, and the channel to its page with it (see `ask_frame`).
                        self.state.borrow_mut().tabs.remove(&tab);
                        reply(json!({}))
                    }
                    None => reply(json!({"effect": true, "navigating": false})),
                }
            }
            ContentRequest::ElementsAdded { .. } => reply(json!({"added": false})),
            ContentRequest::SelectOption { text, then, .. } if self.state.borrow().stubborn_dropdown => match then {
                // Opened by no script's click; its option takes no script's click either.
                None => reply(json!({"real_click": "open"})),
                Some(RealClickMade::Opened) => {
                    reply(json!({"real_click": "option", "x": 10.0, "y": 20.0, "text": "Porto"}))
                }
                Some(RealClickMade::Chose) => reply(json!({"selected": text})),
            },
            _ => reply(json!({})),
        })
    }
}

impl Clock for ScriptedBrowser {
    fn now_ms(&self) -> f64 {
        self.state.borrow().now
    }
    async fn sleep(&self, ms: u32) {
        let until = self.state.borrow().now + f64::from(ms);
        Sleep { state: self.state.clone(), until, id: None }.await
    }
}

impl TabHost for ScriptedBrowser {
    fn spawn(&self, work: Later<()>) {
        self.spawner.spawn_local(work).unwrap();
    }
    fn warn(&self, _text: &str) {}
    async fn tab(&self, id: i32) -> Result<Tab, String> {
        self.refresh_loads();
        self.state.borrow().tabs.get(&id).cloned().ok_or_else(|| format!("No tab with id: {id}."))
    }
    fn all_tabs_now(&self) -> Later<Result<Vec<Tab>, String>> {
        self.refresh_loads();
        let all = self.state.borrow().tabs.values().cloned().collect();
        Box::pin(async move { Ok(all) })
    }
    async fn change_tab(&self, id: i32, change: TabChange) -> Result<(), String> {
        match change {
            TabChange::Activate => {}
            TabChange::Load(url) => self.load(id, &url, 300.0),
        }
        Ok(())
    }
    async fn open_tab(&self, url: &str, opener: i32, window: Option<i32>) -> Result<Tab, String> {
        let id = self.state.borrow().tabs.keys().max().unwrap() + 1;
        let tab = Tab {
            id: Some(id),
            window_id: window,
            opener_tab_id: Some(opener),
            url: Some("about:blank".into()),
            ..Tab::default()
        };
        self.state.borrow_mut().tabs.insert(id, tab.clone());
        self.load(id, url, 300.0);
        Ok(tab)
    }
    async fn close_tab(&self, id: i32) -> Result<(), String> {
        self.state.borrow_mut().tabs.remove(&id).map(|_| ()).ok_or_else(|| "no such tab".into())
    }
    async fn history_button(&self, _id: i32, _delta: i32) -> Result<(), String> {
        Err("no history".into())
    }
    async fn capture_window(&self, _window: i32) -> Result<String, String> {
        Err("not shown".into())
    }
    async fn find_group(&self, window: i32, title: &str) -> Result<Option<i32>, String> {
        Ok(self.state.borrow().groups.iter().find(|(_, (w, t))| *w == window && t == title).map(|(&id, _)| id))
    }
    async fn add_to_group(&self, tab: i32, group: i32) -> Result<(), String> {
        let mut s = self.state.borrow_mut();
        s.tabs.get_mut(&tab).ok_or("no such tab")?.group_id = Some(group);
        Ok(())
    }
    async fn new_group(&self, tab: i32, window: i32, title: &str, _color: &str) -> Result<(), String> {
        let mut s = self.state.borrow_mut();
        let id = 100 + s.groups.len() as i32;
        s.groups.insert(id, (window, title.to_string()));
        s.tabs.get_mut(&tab).ok_or("no such tab")?.group_id = Some(id);
        Ok(())
    }
    fn set_task_tabs(&self, _task: &str, _ids: &[i32]) {}
    fn ask_frame(&self, tab: i32, frame: i64, request: &ContentRequest) -> Later<Result<FrameAnswer, String>> {
        if !self.state.borrow().tabs.contains_key(&tab) {
            return Box::pin(async { Err("No tab with id.".to_string()) });
        }
        if frame == 0 && self.state.borrow().scripts_missing {
            return Box::pin(async {
                Err("Could not establish connection. Receiving end does not exist.".to_string())
            });
        }
        let answer = self.answer(tab, frame, request);
        if !self.state.borrow().tabs.contains_key(&tab) {
            return Box::pin(async { Err("The message port closed before a response was received.".to_string()) });
        }
        let delay = self.state.borrow().slow_frames.get(&frame).copied();
        match (answer, delay) {
            (Some(answer), Some(ms)) => {
                let host = self.clone();
                Box::pin(async move {
                    host.sleep(ms).await;
                    Ok(answer)
                })
            }
            (Some(answer), None) => Box::pin(async move { Ok(answer) }),
            (None, _) => Box::pin(std::future::pending()),
        }
    }
    fn frame_id_of(&self, _tab: i32, token: &str) -> Option<i64> {
        token.strip_prefix("frame")?.parse().ok()
    }
    fn worker_instance(&self) -> String {
        "worker-1".into()
    }
    async fn inject_content_scripts(&self, _tab: i32) -> Result<(), String> {
        self.state.borrow_mut().scripts_missing = false;
        Ok(())
    }
    async fn inject_where_missing(&self, _tab: i32) -> Result<u32, String> {
        Ok(0)
    }
    async fn inject_files(&self, _tab: i32, files: &[&str]) -> Result<(), String> {
        self.state.borrow_mut().injected.push(files.iter().map(|f| f.to_string()).collect());
        let injection = self.state.borrow().injection.clone();
        match injection {
            Injection::Done => Ok(()),
            Injection::Refused(reason) => Err(reason),
            Injection::Hangs => std::future::pending().await,
        }
    }
    async fn end_page_scripts(&self, _task: &str) -> Result<(), String> {
        Ok(())
    }
    fn close_content_ports(&self, _tabs: &[i32]) {}
    async fn read_task_file(&self, id: &str) -> Result<Option<String>, String> {
        Ok(self.state.borrow().files.get(id).cloned())
    }
    async fn attach_debugger(&self, tab: i32) -> Result<(), String> {
        self.state.borrow_mut().attached.push(tab);
        Ok(())
    }
    async fn detach_debugger(&self, tab: i32) -> Result<(), String> {
        self.state.borrow_mut().attached.retain(|&t| t != tab);
        Ok(())
    }
    async fn debugger_command(&self, tab: i32, method: &str, params: &Value) -> Result<Value, String> {
        if !self.state.borrow().attached.contains(&tab) {
            return Err("Debugger is not attached to the tab".into());
        }
        self.state.borrow_mut().commands.push(method.to_string());
        if method == "Input.dispatchMouseEvent" && params["type"] == "mouseReleased" {
            let point = (params["x"].as_f64().unwrap_or(-1.0), params["y"].as_f64().unwrap_or(-1.0));
            self.state.borrow_mut().trusted_clicks.push(point);
            let target = self.state.borrow_mut().trusted_target.take();
            let mut s = self.state.borrow_mut();
            s.changed_in_place |= std::mem::take(&mut s.trusted_changes_in_place);
            drop(s);
            if let Some(to) = target {
                self.load(tab, &to, 200.0);
            }
        }
        Ok(match method {
            "Page.captureScreenshot" => json!({"data": PNG}),
            _ => json!({}),
        })
    }
    fn debugger_detached(&self, tab: i32) -> Option<String> {
        self.state.borrow_mut().detached.remove(&tab)
    }
}

impl ScriptedBrowser {
    /// The person's answers to the task's question, as the worker holds them.
    fn answers(&self) -> Answers {
        self.state.borrow().answers.clone()
    }
}

/// A browser with one tab (id 1) showing `url`, and the pool its work runs in.
struct Sim {
    pool: LocalPool,
    host: ScriptedBrowser,
}

impl Sim {
    fn new(url: &str, page: Value) -> Sim {
        let pool = LocalPool::new();
        let host = ScriptedBrowser { state: Rc::default(), spawner: pool.spawner() };
        {
            let mut s = host.state.borrow_mut();
            // Time as Chrome counts it, ms since the epoch: nothing happened at 0.
            s.now = START_MS;
            s.pages.insert(url.into(), page);
            s.tabs.insert(1, Tab { id: Some(1), window_id: Some(9), active: true, ..Tab::default() });
        }
        host.load(1, url, 0.0);
        Sim { pool, host }
    }

    fn browser(&self) -> TabBrowser<ScriptedBrowser> {
        let seat = tabwright::tabs::TaskSeat {
            waits: tabwright::tabs::host::PersonWaits { answers: self.host.answers(), ..Default::default() },
            ..Default::default()
        };
        TabBrowser::new(self.host.clone(), 1, PageOptions { highlights: true, ..PageOptions::default() }).for_task(seat)
    }

    /// Runs `work` to its end on simulated time: whenever nothing can run, the clock moves to
    /// the next timer. Panics if nothing is left to wake it.
    fn run<T: 'static>(&mut self, work: impl Future<Output = T> + 'static) -> T {
        let out = Rc::new(RefCell::new(None));
        let slot = out.clone();
        self.pool.spawner().spawn_local(async move { *slot.borrow_mut() = Some(work.await) }).unwrap();
        loop {
            self.pool.run_until_stalled();
            if let Some(value) = out.borrow_mut().take() {
                return value;
            }
            let mut s = self.host.state.borrow_mut();
            s.timers.sort_by(|a, b| a.0.total_cmp(&b.0));
            assert!(!s.timers.is_empty(), "the work waits on nothing that will come");
            let (until, _, waker) = s.timers.remove(0);
            s.now = s.now.max(until);
            drop(s);
            waker.wake();
        }
    }

    /// Milliseconds since the browser was made.
    fn now(&self) -> f64 {
        self.host.state.borrow().now - START_MS
    }
}

/// When a scripted browser's clock starts.
const START_MS: f64 = 1_750_000_000_000.0;

const HOME: &str = "https://shop.example/";
const NEXT: &str = "https://shop.example/next";

fn home_page() -> Value {
    snapshot_of(HOME, "Shop", json!([{"d": 0, "i": 1, "tag": "a", "attrs": {"href": "/next"}, "text": "Next page"}]))
}

fn texts(state: &tabwright::browser::PageState) -> Vec<String> {
    state.snapshot.elements().map(|e| e.text.clone()).collect()
}

#[test]
fn a_click_that_navigates_waits_for_the_new_page_and_the_next_look_reads_it() {
    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().pages.insert(NEXT.into(), recorded("login", NEXT));
    sim.host.state.borrow_mut().on_click.insert((HOME.into(), 1), OnClick::Navigate(NEXT.into(), 1_200.0));
    let mut browser = sim.browser();
    let (first, effect, second, browser) = sim.run(async move {
        let first = browser.observe().await.unwrap();
        let link = first.snapshot.elements().find(|e| e.text == "Next page").unwrap().index;
        let effect = browser.click(link).await.unwrap();
        let second = browser.observe().await.unwrap();
        (first, effect, second, browser)
    });
    drop(browser);
    assert_eq!(texts(&first), vec!["Next page"]);
    assert_eq!(effect.navigated_to.as_deref(), Some(NEXT));
    assert!(sim.now() >= 1_200.0, "the click waited for the page to load ({} ms)", sim.now());
    assert!(sim.now() < 5_000.0, "and not much longer ({} ms)", sim.now());
    assert_eq!(second.snapshot.url, NEXT);
    assert!(texts(&second).contains(&"Submit".to_string()), "{:?}", texts(&second));
}

#[test]
fn a_page_still_loading_when_looked_at_is_waited_for_up_to_its_limit() {
    let mut sim = Sim::new(HOME, home_page());
    sim.host.load(1, HOME, 60_000.0); // a stuck resource: the page never finishes
    let mut browser = sim.browser();
    let state = sim.run(async move { browser.observe().await });
    let state = state.unwrap();
    assert_eq!(texts(&state), vec!["Next page"], "observed as it is");
    assert!((20_000.0..25_000.0).contains(&sim.now()), "waited the load limit: {} ms", sim.now());
}

#[test]
fn a_tab_the_page_opens_becomes_the_tasks_and_one_it_closes_hands_the_task_back() {
    let mut sim = Sim::new(HOME, home_page());
    let popup = "https://pay.example/popup";
    sim.host
        .state
        .borrow_mut()
        .pages
        .insert(popup.into(), snapshot_of(popup, "Pay", json!([{"d": 0, "i": 4, "tag": "button", "text": "Pay now"}])));
    sim.host.state.borrow_mut().on_click.insert((HOME.into(), 1), OnClick::OpenTab(popup.into(), 500.0));
    sim.host.state.borrow_mut().on_click.insert((popup.into(), 4), OnClick::CloseTab);
    let mut browser = sim.browser();
    let (opened, in_popup, closed, back) = sim.run(async move {
        browser.observe().await.unwrap();
        let opened = browser.click(1).await.unwrap();
        let in_popup = browser.observe().await.unwrap();
        let pay = in_popup.snapshot.elements().find(|e| e.text == "Pay now").unwrap().index;
        let closed = browser.click(pay).await.unwrap();
        let back = browser.observe().await.unwrap();
        (opened, in_popup, closed, back)
    });
    assert_eq!(opened.opened_tab.as_ref().map(|t| t.url.as_str()), Some(popup));
    assert_eq!(in_popup.tab_id, 2);
    assert_eq!(in_popup.tabs.len(), 2, "both tabs are the task's");
    assert_eq!(closed.tab_closed_to.as_ref().map(|t| t.id), Some(1), "{closed:?}");
    assert_eq!(back.tab_id, 1);
    assert_eq!(back.tabs.len(), 1);
    assert_eq!(texts(&back), vec!["Next page"]);
}

/// Several tasks in one browser: a tab the worker opens for another task while this task's
/// click runs, in the same window and with no opener, is that task's, not the click's, even
/// when it is claimed only after the click's look at the tabs began.
#[test]
fn a_tab_opened_for_another_task_during_a_click_is_not_taken_for_the_clicks() {
    // Claimed at once, soon, or only long after (the tab is then no one's while the click's
    // look at the tabs runs, and another task works in the window: it is left alone too).
    for claim_after_ms in [0, 300, 10_000] {
        let mut sim = Sim::new(HOME, home_page());
        if claim_after_ms > 2_000 {
            let window = sim.host.state.borrow().tabs[&1].window_id;
            sim.host.state.borrow_mut().tabs.insert(50, Tab { id: Some(50), window_id: window, ..Tab::default() });
        }
        let other = "https://shop.example/start";
        sim.host.state.borrow_mut().pages.insert(other.into(), snapshot_of(other, "Shop", json!([])));
        let claims = tabwright::tabs::host::TabClaims::default();
        let to = OnClick::AnotherTaskOpens { to: other.into(), claims: claims.clone(), claim_after_ms };
        sim.host.state.borrow_mut().on_click.insert((HOME.into(), 1), to);
        if claim_after_ms > 2_000 {
            claims.claim(50, "another task");
        }
        let seat =
            tabwright::tabs::TaskSeat { task_id: "this task".into(), claims: claims.clone(), ..Default::default() };
        let mut browser = TabBrowser::new(sim.host.clone(), 1, PageOptions::default()).for_task(seat);
        let (clicked, after) = sim.run(async move {
            browser.observe().await.unwrap();
            let clicked = browser.click(1).await.unwrap();
            (clicked, browser.observe().await.unwrap())
        });
        assert!(clicked.opened_tab.is_none(), "{claim_after_ms} ms: {clicked:?}");
        assert_eq!((after.tab_id, after.tabs.len()), (1, 1), "{claim_after_ms} ms: the task stays in its tab");
        assert_eq!(claims.owner(1).as_deref(), Some("this task"));
        if claim_after_ms < 2_000 {
            assert_eq!(claims.owner(2).as_deref(), Some("another task"));
        }
    }
}

#[test]
fn the_tasks_only_tab_closed_by_the_person_ends_the_look_with_tab_closed() {
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let result = sim.run(async move {
        browser.observe().await.unwrap();
        host.state.borrow_mut().tabs.clear();
        browser.observe().await
    });
    assert!(matches!(result, Err(BrowserError::TabClosed)), "{result:?}");
}

#[test]
fn a_debugger_bar_closed_by_the_person_is_respected_until_the_task_ends() {
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let keys = tabwright::actions::keys::parse_keys("Enter").unwrap();
    let (sent, after, refused, browser) = sim.run(async move {
        let sent = browser.send_keys(&keys).await;
        host.state.borrow_mut().detached.insert(1, "canceled_by_user".into());
        host.state.borrow_mut().attached.clear();
        let after = browser.observe().await.unwrap();
        let refused = browser.send_keys(&keys).await;
        (sent, after, refused, browser)
    });
    assert!(sent.is_ok(), "{sent:?}");
    assert!(sim.host.state.borrow().commands.iter().any(|c| c == "Input.dispatchKeyEvent"));
    assert!(!after.debugger_available, "the next look says the debugger is off for this tab");
    match refused {
        Err(BrowserError::Debugger { reason, .. }) => {
            assert!(reason.contains("closed Chrome's debugging bar"), "{reason}")
        }
        other => panic!("a refusal, not {other:?}"),
    }
    assert!(sim.host.state.borrow().attached.is_empty(), "not attached again on its own");
    let mut browser = browser;
    sim.run(async move { browser.finish().await });
    // The next task may use the debugger on the tab again.
    let mut next = sim.browser();
    let keys = tabwright::actions::keys::parse_keys("Enter").unwrap();
    let sent = sim.run(async move { next.send_keys(&keys).await });
    assert!(sent.is_ok(), "{sent:?}");
    assert_eq!(sim.host.state.borrow().attached, vec![1]);
}

#[test]
fn a_debugger_detached_by_a_navigation_is_attached_again_once() {
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let shot = sim.run(async move {
        browser.screenshot().await.unwrap();
        // A cross-site navigation detaches it without telling.
        host.state.borrow_mut().attached.clear();
        let shot = browser.screenshot().await;
        browser.finish().await;
        shot
    });
    assert_eq!(shot.map(|s| (s.width, s.height)).ok(), Some((1, 1)));
    assert!(sim.host.state.borrow().attached.is_empty(), "detached when the task ends");
}

/// A page with child frames: two answer, two are blocked and never do, one is inside a
/// blocked one. The look ends within the frames' budget, shows what answered, and the
/// blocked frames are not waited for again on the next look.
#[test]
fn frames_that_never_answer_cost_one_timeout_once_and_the_rest_of_the_page_is_read() {
    let frame = |id: i64, x: f64| json!({"d": 0, "token": format!("frame{id}"), "at": [x, 0.0]});
    let top = snapshot_of(
        HOME,
        "Shop",
        json!([
            {"d": 0, "i": 1, "tag": "a", "attrs": {"href": "/next"}, "text": "Next page"},
            frame(11, 0.0), frame(12, 100.0), frame(13, 200.0), frame(14, 300.0)
        ]),
    );
    let mut sim = Sim::new(HOME, top);
    {
        let mut s = sim.host.state.borrow_mut();
        for (id, text) in [(11, "Card number"), (12, "Expiry")] {
            let child = snapshot_of(
                "https://pay.example/field",
                "",
                json!([{"d": 0, "i": 1, "tag": "input", "attrs": {"placeholder": text}}]),
            );
            s.frames.insert((HOME.into(), id), child);
        }
        s.hung_frames = vec![13, 14];
    }
    let mut browser = sim.browser();
    let (first, first_ms, second, second_ms) = {
        let host = sim.host.clone();
        sim.run(async move {
            let t0 = host.now_ms();
            let first = browser.observe().await.unwrap();
            let t1 = host.now_ms();
            let second = browser.observe().await.unwrap();
            (first, t1 - t0, second, host.now_ms() - t1)
        })
    };
    let placeholders: Vec<String> =
        first.snapshot.elements().filter_map(|e| e.attributes.get("placeholder").cloned()).collect();
    assert_eq!(placeholders, vec!["Card number", "Expiry"], "the frames that answered are read");
    assert!(texts(&first).contains(&"Next page".to_string()));
    assert!((5_000.0..=8_000.0).contains(&first_ms), "the blocked frames cost one timeout together: {first_ms} ms");
    assert!(second_ms < 1_000.0, "and are not waited for again: {second_ms} ms");
    let asked = |frame: i64| {
        sim.host.state.borrow().asked.iter().filter(|(_, f, kind)| *f == frame && kind == "snapshot").count()
    };
    assert_eq!((asked(11), asked(13)), (2, 1), "answering frames are read every look, a blocked one once");
    assert_eq!(second.snapshot.elements().count(), first.snapshot.elements().count());
}

#[test]
fn a_question_waits_for_the_persons_answer() {
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    let answers = sim.host.answers();
    assert!(!answers.deliver(0, "too early".into()), "no question is open");
    let host = sim.host.clone();
    let delivered = Rc::new(Cell::new(false));
    let flag = delivered.clone();
    sim.pool
        .spawner()
        .spawn_local(async move {
            host.sleep(3_000).await;
            flag.set(host.answers().deliver(0, "blue".into()));
        })
        .unwrap();
    let answer = sim.run(async move { browser.ask_human("Which colour?").await });
    assert!(delivered.get());
    assert_eq!(answer.unwrap(), "blue");
    assert!(!answers.deliver(0, "again".into()), "the question is closed once answered");
}

/// All child frames of a look share one budget: a frame that answers late leaves its own
/// blocked child only what is left of it, and the look ends when the budget does.
#[test]
fn the_frames_budget_bounds_a_look_however_deep_the_slow_frames_go() {
    let top = snapshot_of(HOME, "Shop", json!([{"d": 0, "token": "frame21", "at": [0.0, 0.0]}]));
    let mut sim = Sim::new(HOME, top);
    {
        let mut s = sim.host.state.borrow_mut();
        let slow = snapshot_of(
            "https://ads.example/",
            "",
            json!([{"d": 0, "i": 1, "tag": "button", "text": "Close ad"}, {"d": 0, "token": "frame22", "at": [0.0, 50.0]}]),
        );
        s.frames.insert((HOME.into(), 21), slow);
        s.slow_frames.insert(21, 4_000);
        s.hung_frames = vec![22];
    }
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let (state, took) = sim.run(async move {
        let t0 = host.now_ms();
        let state = browser.observe().await.unwrap();
        (state, host.now_ms() - t0)
    });
    assert_eq!(texts(&state), vec!["Close ad"], "the slow frame is read");
    assert!((7_900.0..=8_100.0).contains(&took), "the look ends with the budget, not 4 + 5 s later: {took} ms");
}

/// Tabs the task opens gather in one "Tabwright" group per window; a tab the browser already
/// put in a group (opened from a grouped tab) stays there.
#[test]
fn tabs_the_task_opens_gather_in_one_group_per_window() {
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    sim.run(async move {
        browser.open_tab(NEXT).await.unwrap();
        browser.open_tab(HOME).await.unwrap();
    });
    let host = sim.host.clone();
    {
        let mut s = host.state.borrow_mut();
        s.tabs.insert(7, Tab { id: Some(7), window_id: Some(9), group_id: Some(55), ..Tab::default() });
        s.tabs.insert(8, Tab { id: Some(8), window_id: Some(4), ..Tab::default() });
        s.tabs.insert(9, Tab { id: Some(9), window_id: Some(4), ..Tab::default() });
    }
    let h = host.clone();
    let other_task = tabwright::tabs::group_title_of("Watch the price of   the blue kettle and tell me");
    assert_eq!(other_task, "Tabwright · Watch the price of the…");
    let other = other_task.clone();
    sim.run(async move {
        tabwright::tabs::join_task_group(&h, 7, "Tabwright").await.unwrap();
        tabwright::tabs::join_task_group(&h, 8, "Tabwright").await.unwrap();
        tabwright::tabs::join_task_group(&h, 9, &other).await.unwrap();
    });
    let s = host.state.borrow();
    assert_eq!(s.groups.len(), 3, "one group in each window, and another task's of its own: {:?}", s.groups);
    assert_eq!(s.tabs[&2].group_id, s.tabs[&3].group_id, "the task's new tabs share their group");
    assert!(s.tabs[&2].group_id.is_some());
    assert_eq!(s.tabs[&7].group_id, Some(55), "a tab in another group stays there");
    assert_ne!(s.tabs[&8].group_id, s.tabs[&9].group_id, "two tasks in one window have two groups");
    assert_eq!(s.groups.values().filter(|(_, title)| *title == other_task).count(), 1);
    assert!(s.groups.values().all(|(_, title)| title == "Tabwright" || *title == other_task));
    assert_eq!(s.tabs[&1].group_id, None, "the tab the task started in is the person's and is left alone");
}

/// After an action that started requests, the look waits for them to be quiet for a moment,
/// and no longer than the cap however busy the page stays; requests the page started before
/// the action (a page still loading when the task began) are not waited for.
#[test]
fn a_network_the_action_made_busy_is_waited_for_up_to_its_cap() {
    for (busy_for, started_by_click, least, most) in
        [(1_200.0, true, 1_700.0, 2_300.0), (60_000.0, true, 3_000.0, 3_600.0), (1_200.0, false, 0.0, 450.0)]
    {
        let mut sim = Sim::new(HOME, home_page());
        let mut browser = sim.browser();
        let host = sim.host.clone();
        let took = sim.run(async move {
            browser.observe().await.unwrap();
            let t0 = host.now_ms();
            {
                let mut state = host.state.borrow_mut();
                state.network_busy_until = t0 + busy_for;
                state.last_request_at = if started_by_click { t0 + 1.0 } else { t0 - 100.0 };
            }
            browser.click(1).await.unwrap();
            host.now_ms() - t0
        });
        assert!(
            (least..=most).contains(&took),
            "busy for {busy_for} ms, by the click: {started_by_click}: the click took {took} ms"
        );
    }
}

/// A page that ignores script clicks gets a trusted click at an uncovered point of the element,
/// once nothing else came of the script click; a covered element is refused, not clicked
/// through; a click that started a request is not repeated.
#[test]
fn a_click_the_page_ignores_is_made_again_as_a_person_would_unless_something_came_of_it() {
    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().pages.insert(NEXT.into(), recorded("login", NEXT));
    sim.host
        .state
        .borrow_mut()
        .on_click
        .insert((HOME.into(), 1), OnClick::TrustedOnly { to: NEXT.into(), covered: false });
    let mut browser = sim.browser();
    let effect = sim.run(async move {
        browser.observe().await.unwrap();
        browser.click(1).await
    });
    let effect = effect.unwrap();
    assert!(effect.trusted_fallback, "{effect:?}");
    assert_eq!(effect.navigated_to.as_deref(), Some(NEXT));
    assert_eq!(sim.host.state.borrow().trusted_clicks, vec![(40.0, 60.0)], "at the point the page gave");

    let mut covered = Sim::new(HOME, home_page());
    covered
        .host
        .state
        .borrow_mut()
        .on_click
        .insert((HOME.into(), 1), OnClick::TrustedOnly { to: NEXT.into(), covered: true });
    let mut browser = covered.browser();
    let refused = covered.run(async move {
        browser.observe().await.unwrap();
        browser.click(1).await
    });
    match refused {
        Err(BrowserError::ElementUnsuitable { reason, .. }) => assert!(reason.contains("covers it"), "{reason}"),
        other => panic!("a refusal, not {other:?}"),
    }
    assert!(covered.host.state.borrow().trusted_clicks.is_empty(), "nothing clicked through what covers it");

    let mut requested = Sim::new(HOME, home_page());
    requested
        .host
        .state
        .borrow_mut()
        .on_click
        .insert((HOME.into(), 1), OnClick::TrustedOnly { to: NEXT.into(), covered: false });
    let mut browser = requested.browser();
    let host = requested.host.clone();
    let effect = requested.run(async move {
        browser.observe().await.unwrap();
        // A slow handler: the page sent a request after the click.
        host.state.borrow_mut().last_request_at = host.now_ms() + 1.0;
        browser.click(1).await
    });
    assert!(!effect.unwrap().trusted_fallback);
    assert!(requested.host.state.borrow().trusted_clicks.is_empty(), "its work is not done twice");
}

/// A real click that changed the page in place worked; one after which nothing changed at all
/// says so (`unchanged`), whether it followed a script click or came first.
#[test]
fn a_real_click_that_changed_nothing_is_told_apart_from_one_that_worked() {
    let click = |on_click: OnClick, trusted: bool| {
        let mut sim = Sim::new(HOME, home_page());
        sim.host.state.borrow_mut().trusted_changes_in_place = matches!(on_click, OnClick::TrustedOnlyInPlace);
        sim.host.state.borrow_mut().on_click.insert((HOME.into(), 1), on_click);
        let mut browser = sim.browser();
        let effect = sim.run(async move {
            browser.observe().await.unwrap();
            if trusted {
                browser.click_trusted(1).await
            } else {
                browser.click(1).await
            }
        });
        let clicks = sim.host.state.borrow().trusted_clicks.len();
        (effect.unwrap(), clicks)
    };
    let (worked, clicks) = click(OnClick::TrustedOnlyInPlace, false);
    assert!(worked.trusted_fallback && !worked.unchanged, "{worked:?}");
    assert_eq!(clicks, 1);
    let (nothing, clicks) = click(OnClick::Inert, false);
    assert!(nothing.trusted_fallback && nothing.unchanged, "{nothing:?}");
    assert_eq!(clicks, 1, "one real click, not more");
    let (repeated, _) = click(OnClick::Inert, true);
    assert!(repeated.trusted && repeated.unchanged, "{repeated:?}");
    let (repeated, _) = click(OnClick::TrustedOnlyInPlace, true);
    assert!(repeated.trusted && !repeated.unchanged, "{repeated:?}");

    // A real click that sent a request (a save that answers later) changed something.
    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().on_click.insert((HOME.into(), 1), OnClick::Inert);
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let effect = sim.run(async move {
        browser.observe().await.unwrap();
        host.state.borrow_mut().last_request_at = host.now_ms() + 1.0;
        browser.click_trusted(1).await
    });
    let effect = effect.unwrap();
    assert!(effect.trusted && !effect.unchanged, "{effect:?}");
}

#[test]
fn a_tab_without_the_scripts_gets_them_and_is_read() {
    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().scripts_missing = true;
    let mut browser = sim.browser();
    let state = sim.run(async move { browser.observe().await }).unwrap();
    assert_eq!(texts(&state), vec!["Next page"]);
    assert!(!sim.host.state.borrow().scripts_missing, "injected once");
}

#[test]
fn browser_pages_blank_pages_and_unreadable_pages_are_told_apart() {
    let mut restricted = Sim::new("chrome://settings/", home_page());
    let mut browser = restricted.browser();
    let seen = restricted.run(async move { browser.observe().await });
    assert!(matches!(seen, Err(BrowserError::RestrictedPage { .. })), "{seen:?}");

    let mut blank = Sim::new("about:blank", home_page());
    let mut browser = blank.browser();
    let seen = blank.run(async move { browser.observe().await }).unwrap();
    assert_eq!(seen.snapshot.elements().count(), 0);
    assert!(seen.notice.is_none(), "a new tab is not an error");

    // A page whose script cannot be reached (an error page): shown empty, saying why.
    let mut broken = Sim::new(HOME, home_page());
    broken.host.state.borrow_mut().pages.clear();
    let mut browser = broken.browser();
    let seen = broken.run(async move { browser.observe().await }).unwrap();
    assert_eq!(seen.snapshot.elements().count(), 0);
    assert!(seen.notice.is_some_and(|n| n.contains("no page here")));
}

#[test]
fn dialogs_the_page_opened_are_told_at_the_next_look_escaped() {
    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().dialogs = vec![
        json!({"kind": "confirm", "message": "Delete <all>?"}),
        json!({"kind": "prompt", "message": "Name", "answer": "ada"}),
    ];
    let mut browser = sim.browser();
    let (first, second) = sim.run(async move { (browser.observe().await.unwrap(), browser.observe().await.unwrap()) });
    let notice = first.notice.expect("the dialogs are told");
    assert!(notice.contains("asked to confirm") && notice.contains("Tabwright accepted"), "{notice}");
    assert!(!notice.contains("<all>"), "the page's text is escaped: {notice}");
    assert!(notice.contains("answered \"ada\""), "{notice}");
    assert!(second.notice.is_none(), "told once");
}

#[test]
fn the_tasks_last_tab_is_not_closed_and_a_blocked_page_is_left() {
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let (last, left) = sim.run(async move {
        browser.observe().await.unwrap();
        let last = browser.close_tab(1).await;
        // A blocked page with nothing to go back to, in the task's only tab: the tab goes blank.
        browser.leave_blocked_page().await;
        (last, host.state.borrow().tabs[&1].url.clone())
    });
    assert!(matches!(last, Err(BrowserError::LastTab { tab_id: 1 })), "{last:?}");
    assert_eq!(left.as_deref(), Some("about:blank"));

    // With another task tab, the tab that opened straight onto the blocked site is closed.
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let tabs = sim.run(async move {
        browser.open_tab("https://blocked.example/").await.unwrap();
        browser.leave_blocked_page().await;
        let state = browser.observe().await.unwrap();
        (host.state.borrow().tabs.keys().copied().collect::<Vec<_>>(), state.tab_id)
    });
    assert_eq!(tabs, (vec![1], 1), "the blocked tab closed, the task back in its first tab");
}

/// A shop page whose board sits in a frame 100 px right and 200 px down of the top left: a
/// card, a column to drop it on, a file field and a dropdown, each numbered by its frame.
fn page_with_a_board() -> Sim {
    let top = snapshot_of(
        HOME,
        "Shop",
        json!([
            {"d": 0, "i": 1, "tag": "a", "attrs": {"href": "/next"}, "text": "Next page"},
            {"d": 0, "token": "frame11", "at": [100.0, 200.0]}
        ]),
    );
    let board = snapshot_of(
        "https://board.example/",
        "Board",
        json!([
            {"d": 0, "i": 1, "tag": "div", "attrs": {"draggable": "true"}, "text": "Card"},
            {"d": 0, "i": 2, "tag": "div", "attrs": {"role": "listitem"}, "text": "Done column"},
            {"d": 0, "i": 3, "tag": "input", "attrs": {"type": "file", "aria-label": "Attachment"}},
            {"d": 0, "i": 4, "tag": "select", "attrs": {"aria-label": "Colour"}}
        ]),
    );
    let sim = Sim::new(HOME, top);
    sim.host.state.borrow_mut().frames.insert((HOME.into(), 11), board);
    sim
}

fn answered(result: Value) -> ContentReply {
    ContentReply { ok: true, snapshot_json: None, code: None, message: None, result: Some(result) }
}

fn refused(code: &str, message: &str) -> ContentReply {
    ContentReply {
        ok: false,
        snapshot_json: None,
        code: Some(code.into()),
        message: Some(message.into()),
        result: None,
    }
}

/// The page-wide index of the element whose text or label is `name`.
fn index_of(state: &tabwright::browser::PageState, name: &str) -> u32 {
    state
        .snapshot
        .elements()
        .find(|e| e.text == name || e.attributes.get("aria-label").map(String::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no element {name:?} in {:?}", texts(state)))
        .index
}

/// The requests of this type the frames got: (frame id, request).
fn sent(sim: &Sim, kind: &str) -> Vec<(i64, Value)> {
    sim.host.state.borrow().sent.iter().filter(|(_, r)| r["type"] == kind).cloned().collect()
}

#[test]
fn a_drag_is_made_in_the_elements_own_frame_with_its_indices_and_a_point_made_local_to_it() {
    use tabwright::browser::DropPoint;
    let mut sim = page_with_a_board();
    sim.host.state.borrow_mut().replies.insert("drag".into(), answered(json!({"effect": true})));
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let (onto_column, onto_point, unchanged, across_frames) = sim.run(async move {
        let state = browser.observe().await.unwrap();
        let (card, column, link) =
            (index_of(&state, "Card"), index_of(&state, "Done column"), index_of(&state, "Next page"));
        assert!(card != 1 && column != 2, "page-wide indices differ from the frame's own");
        let onto_column = browser.drag_and_drop(card, DropPoint::Element(column)).await.unwrap();
        let onto_point = browser.drag_and_drop(card, DropPoint::Point(150.0, 260.0)).await.unwrap();
        host.state.borrow_mut().replies.remove("drag");
        let unchanged = browser.drag_and_drop(card, DropPoint::Element(column)).await.unwrap();
        let across_frames = browser.drag_and_drop(card, DropPoint::Element(link)).await.unwrap_err();
        (onto_column, onto_point, unchanged, across_frames)
    });
    let drags = sent(&sim, "drag");
    assert_eq!(drags.len(), 3, "a drag across frames is not tried: {drags:?}");
    assert!(drags.iter().all(|(frame, _)| *frame == 11), "asked of the card's frame: {drags:?}");
    assert_eq!((drags[0].1["index"].clone(), drags[0].1["to_index"].clone()), (json!(1), json!(2)));
    assert_eq!(drags[1].1["to_point"], json!([50.0, 60.0]), "the top window's point, in the frame's own terms");
    assert!(drags[1].1["to_index"].is_null());
    assert!(onto_column.changed && onto_point.changed);
    assert!(!unchanged.changed, "a page that did not answer that it changed did not");
    match across_frames {
        BrowserError::ElementUnsuitable { reason, .. } => assert!(reason.contains("different frames"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_upload_sends_the_kept_bytes_to_the_field_and_says_what_took_them() {
    use tabwright::browser::{TaskFile, UploadTarget};
    let mut sim = page_with_a_board();
    sim.host.state.borrow_mut().files.insert("f1".into(), "JVBERi0xLjQ=".into());
    let file = |id: &str| TaskFile { id: id.into(), name: "cv.pdf".into(), mime: "application/pdf".into(), size: 8 };
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let (removed, into_field, dropped, gone) = sim.run(async move {
        let state = browser.observe().await.unwrap();
        let field = index_of(&state, "Attachment");
        let removed = browser.upload_file(field, &file("f0")).await.unwrap_err();
        let reply = answered(json!({"target": "input", "accepted": true}));
        host.state.borrow_mut().replies.insert("upload".into(), reply);
        let into_field = browser.upload_file(field, &file("f1")).await.unwrap();
        let reply = answered(json!({"target": "drop", "accepted": false}));
        host.state.borrow_mut().replies.insert("upload".into(), reply);
        let dropped = browser.upload_file(field, &file("f1")).await.unwrap();
        let reply = refused("element_gone", "no element 3");
        host.state.borrow_mut().replies.insert("upload".into(), reply);
        let gone = browser.upload_file(field, &file("f1")).await.unwrap_err();
        (removed, into_field, dropped, gone)
    });
    match removed {
        BrowserError::FileMissing { name, reason } => {
            assert_eq!(name, "cv.pdf");
            assert!(reason.contains("removed"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let uploads = sent(&sim, "upload");
    assert_eq!(uploads.len(), 3, "a missing file is not sent: {uploads:?}");
    let (frame, first) = &uploads[0];
    assert_eq!(*frame, 11);
    assert_eq!(
        (&first["index"], &first["name"], &first["mime"], &first["data"]),
        (&json!(3), &json!("cv.pdf"), &json!("application/pdf"), &json!("JVBERi0xLjQ="))
    );
    assert_eq!((into_field.target, into_field.accepted), (UploadTarget::Input, true));
    assert_eq!((dropped.target, dropped.accepted), (UploadTarget::Drop, false));
    assert!(matches!(gone, BrowserError::ElementGone { .. }), "{gone:?}");
}

#[test]
fn a_dropdowns_options_are_read_and_the_chosen_one_is_the_one_the_page_selected() {
    let mut sim = page_with_a_board();
    let options = json!({"options": [
        {"index": 0, "text": "Red", "value": "r"},
        {"index": 1, "text": "Green", "selected": true, "group": "Cool"}
    ]});
    sim.host.state.borrow_mut().replies.insert("dropdown_options".into(), answered(options));
    let mut browser = sim.browser();
    let host = sim.host.clone();
    let (options, unreadable, chosen, as_asked, not_a_dropdown) = sim.run(async move {
        let state = browser.observe().await.unwrap();
        let colour = index_of(&state, "Colour");
        let options = browser.dropdown_options(colour).await.unwrap();
        let bad = answered(json!({"options": [{"index": 0, "text": 5}]}));
        host.state.borrow_mut().replies.insert("dropdown_options".into(), bad);
        let unreadable = browser.dropdown_options(colour).await.unwrap_err();
        let reply = answered(json!({"selected": "Green"}));
        host.state.borrow_mut().replies.insert("select_option".into(), reply);
        let (chosen, _) = browser.select_option(colour, "green").await.unwrap();
        host.state.borrow_mut().replies.insert("select_option".into(), answered(json!({})));
        let (as_asked, _) = browser.select_option(colour, "Red").await.unwrap();
        let reply = refused("not_a_dropdown", "it is a div, not a dropdown");
        host.state.borrow_mut().replies.insert("select_option".into(), reply);
        let not_a_dropdown = browser.select_option(colour, "Red").await.unwrap_err();
        (options, unreadable, chosen, as_asked, not_a_dropdown)
    });
    let read: Vec<(&str, bool, Option<&str>)> =
        options.iter().map(|o| (o.text.as_str(), o.selected, o.group.as_deref())).collect();
    assert_eq!(read, vec![("Red", false, None), ("Green", true, Some("Cool"))]);
    assert_eq!(options[0].value, "r");
    match unreadable {
        BrowserError::ContentScript { reason } => {
            assert!(reason.contains("dropdown options") && reason.contains("[0].text"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(chosen, "Green", "the page's own text of the option it selected");
    assert_eq!(as_asked, "Red", "else the text asked for");
    match not_a_dropdown {
        BrowserError::ElementUnsuitable { reason, .. } => assert!(reason.contains("not a dropdown"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let selects = sent(&sim, "select_option");
    assert!(selects.iter().all(|(frame, r)| *frame == 11 && r["index"] == 4), "{selects:?}");
    assert_eq!(selects[0].1["text"], "green");
}

#[test]
fn the_markdown_converter_is_put_into_the_page_before_it_is_asked_and_a_page_that_never_runs_it_times_out() {
    let mut sim = Sim::new(HOME, home_page());
    let reply = answered(json!({"markdown": "# Shop\n\n[Next page](/next)", "title": "Shop", "url": HOME}));
    sim.host.state.borrow_mut().replies.insert("markdown".into(), reply);
    let mut browser = sim.browser();
    let page = sim.run(async move { browser.page_markdown().await });
    let page = page.unwrap();
    assert_eq!((page.markdown.as_str(), page.title.as_str()), ("# Shop\n\n[Next page](/next)", "Shop"));
    assert_eq!(
        sim.host.state.borrow().injected,
        vec![vec!["vendor/turndown.js", "vendor/turndown-plugin-gfm.js", "content/markdown.js"]],
        "the converter, its tables plugin, then the script that uses them"
    );
    assert_eq!(sent(&sim, "markdown").len(), 1);

    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().injection = Injection::Refused("Cannot access contents of the page.".into());
    let mut browser = sim.browser();
    let refused = sim.run(async move { browser.page_markdown().await }).unwrap_err();
    match refused {
        BrowserError::ContentScript { reason } => {
            assert!(reason.contains("could not be loaded: Cannot access contents"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(sent(&sim, "markdown").is_empty(), "not asked of a page without the converter");

    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().injection = Injection::Hangs;
    let mut browser = sim.browser();
    let hung = sim.run(async move { browser.page_markdown().await }).unwrap_err();
    assert!(matches!(hung, BrowserError::Timeout { seconds: 15, .. }), "{hung:?}");
    assert!((15_000.0..16_000.0).contains(&sim.now()), "waited its limit: {} ms", sim.now());
    assert!(sent(&sim, "markdown").is_empty());
}

/// Keys go one at a time: between two keys the page is let draw a frame (a type-ahead list
/// redraws after each key), and after the last one nothing is waited for but the settling.
#[test]
fn each_key_waits_for_the_page_to_catch_up_with_the_last() {
    let mut sim = Sim::new(HOME, home_page());
    let mut browser = sim.browser();
    let keys = tabwright::actions::keys::parse_keys("p o ArrowDown Enter").unwrap();
    let sent = sim.run(async move { browser.send_keys(&keys).await });
    assert!(sent.is_ok(), "{sent:?}");
    let commands = sim.host.state.borrow().commands.clone();
    let order: Vec<&str> = commands
        .iter()
        .filter(|c| *c == "Input.dispatchKeyEvent" || *c == "Runtime.evaluate")
        .map(|c| if c == "Runtime.evaluate" { "wait" } else { "key" })
        .collect();
    // Each key is a down and an up.
    assert_eq!(order, ["key", "key", "wait", "key", "key", "wait", "key", "key", "wait", "key", "key"], "{commands:?}");
}

/// A dropdown no script's click opens, whose option takes no script's click either, is opened
/// and chosen with real clicks where the page says, and the choice is the option's own text.
#[test]
fn a_dropdown_that_takes_only_real_clicks_is_opened_and_chosen_with_them() {
    let mut sim = Sim::new(HOME, home_page());
    sim.host.state.borrow_mut().stubborn_dropdown = true;
    let mut browser = sim.browser();
    let chosen = sim.run(async move {
        browser.observe().await.unwrap();
        browser.select_option(1, "porto").await
    });
    let (text, _) = chosen.unwrap();
    assert_eq!(text, "Porto");
    assert_eq!(
        sim.host.state.borrow().trusted_clicks,
        vec![(40.0, 60.0), (10.0, 20.0)],
        "the control where the page said, then the option"
    );
}
