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
use tabwright::protocol::{ContentReply, ContentRequest};
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
    /// The top frame has no content script until the scripts are injected (a tab that
    /// predates the task).
    scripts_missing: bool,
    /// What the page's dialogs said since the last look (the snapshot reply carries them).
    dialogs: Vec<Value>,
    /// Trusted clicks the debugger made, at these points.
    trusted_clicks: Vec<(f64, f64)>,
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
        if frame != 0 && self.state.borrow().hung_frames.contains(&frame) {
            return None;
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
            ContentRequest::LateClickEffect { .. } => reply(json!({"effect": false})),
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
                    Some(OnClick::CloseTab) => {
                        // The tab goes, and the channel to its page with it (see `ask_frame`).
                        self.state.borrow_mut().tabs.remove(&tab);
                        reply(json!({}))
                    }
                    None => reply(json!({"effect": true, "navigating": false})),
                }
            }
            ContentRequest::ElementsAdded { .. } => reply(json!({"added": false})),
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
    fn set_task_tabs(&self, _ids: &[i32]) {}
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
    async fn inject_files(&self, _tab: i32, _files: &[&str]) -> Result<(), String> {
        Ok(())
    }
    async fn end_page_scripts(&self) -> Result<(), String> {
        Ok(())
    }
    fn close_content_ports(&self) {}
    async fn read_task_file(&self, _id: &str) -> Result<Option<String>, String> {
        Ok(None)
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
        TabBrowser::new(self.host.clone(), 1, PageOptions { highlights: true, ..PageOptions::default() })
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
    assert!(!answers.deliver("too early".into()), "no question is open");
    let host = sim.host.clone();
    let delivered = Rc::new(Cell::new(false));
    let flag = delivered.clone();
    sim.pool
        .spawner()
        .spawn_local(async move {
            host.sleep(3_000).await;
            flag.set(host.answers().deliver("blue".into()));
        })
        .unwrap();
    let answer = sim.run(async move { browser.ask_human("Which colour?").await });
    assert!(delivered.get());
    assert_eq!(answer.unwrap(), "blue");
    assert!(!answers.deliver("again".into()), "the question is closed once answered");
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
    }
    let h = host.clone();
    sim.run(async move {
        tabwright::tabs::join_task_group(&h, 7).await.unwrap();
        tabwright::tabs::join_task_group(&h, 8).await.unwrap();
    });
    let s = host.state.borrow();
    assert_eq!(s.groups.len(), 2, "one group in each window: {:?}", s.groups);
    assert_eq!(s.tabs[&2].group_id, s.tabs[&3].group_id, "the task's new tabs share their group");
    assert!(s.tabs[&2].group_id.is_some());
    assert_eq!(s.tabs[&7].group_id, Some(55), "a tab in another group stays there");
    assert!(s.groups.values().all(|(_, title)| title == "Tabwright"));
    assert_eq!(s.tabs[&1].group_id, None, "the tab the task started in is the person's and is left alone");
}

/// After an action that changed the page, the look waits for its requests to be quiet for a
/// moment, and no longer than the cap however busy the page stays.
#[test]
fn a_busy_network_is_waited_for_up_to_its_cap() {
    for (busy_for, least, most) in [(1_200.0, 1_700.0, 2_300.0), (60_000.0, 3_000.0, 3_600.0)] {
        let mut sim = Sim::new(HOME, home_page());
        let mut browser = sim.browser();
        let host = sim.host.clone();
        let took = sim.run(async move {
            browser.observe().await.unwrap();
            let t0 = host.now_ms();
            host.state.borrow_mut().network_busy_until = t0 + busy_for;
            browser.click(1).await.unwrap();
            host.now_ms() - t0
        });
        assert!((least..=most).contains(&took), "busy for {busy_for} ms: the click took {took} ms");
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
