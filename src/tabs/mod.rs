//! `TabBrowser`: the `Browser` port over a browser's tabs, the content scripts in their frames
//! and the debugger, all reached through one port (`host::TabHost`: chrome.* in the extension,
//! a scripted browser in native tests), so every rule here runs under `cargo test`.
//!
//! Observing asks the top frame's content script for its snapshot, then each child frame it
//! names (by Chrome frame id) for theirs, nested frames included, and stitches them into one
//! page with one numbering (`dom::Stitcher`); then it draws the highlights. Element actions
//! (click, type, scroll a container, dropdowns) are done by the content script of the element's
//! own frame, addressed by its local index. What only trusted input can do — key presses, clicks
//! at a point, a click on a page that ignores script clicks — and screenshots and scripts go
//! through the debugger (`debugger.rs`), attached on first need and detached when the task ends.
//!
//! After an action the tab is watched: if a navigation starts, the action waits for it to
//! finish; then for the network to be quiet for a moment (capped), so the next observation sees
//! the page the action led to rather than a half-loaded one. A page that opens a new tab hands
//! the task to that tab.
//!
//! # How actions run
//!
//! - **In the page** (content-script messages, addressed to the element's own frame by its local
//!   index): click (scroll into view, then the events Chrome makes for a real mouse: the
//!   pointer's way there from where it last was, the press, focus only where Chrome puts it, the
//!   release and the click — `extension/content/pointer.js`; the reply says whether anything a
//!   person would see happened: hover and focus styling does not count), type (native value setter + `input`/`change`, so React sees it;
//!   `execCommand('insertText')` for contenteditable), scroll, find text, dropdown options and
//!   choice (a `<select>`: native setter + events; a combobox or listbox button of a component
//!   library: its ARIA listbox when a person can see it — an accessibility list kept at 0 × 0, as
//!   Ant Design keeps one, does not count — else it is opened with a click and the options taken
//!   from what the click added (role `option`, or marked selected, or named option or item); the
//!   options of a web component are read in the flat tree, slotted ones included; the choice is a
//!   click on the option, confirmed by the control showing it, and the closing list is let finish
//!   before the answer; a control a script's click does not open is opened with a real click,
//!   and an option after whose script click nothing changed gets a real one at an uncovered
//!   point the page gives), drags (`drag_and_drop`, to an element or a point: pointer and
//!   mouse events in twelve steps a frame apart, and the HTML5 drag events with one
//!   `dataTransfer` when the element is draggable once pressed — SortableJS and native drop areas
//!   follow those, dnd-kit the pointer events), files (`upload_file`: the bytes, read by the worker from
//!   where the panel kept them, become a `File` put into the file field the element is, holds, or
//!   labels, through a `DataTransfer` with `input`/`change`; or dropped on the element with
//!   dragenter/dragover/drop carrying it — the reply says whether the page took it), search the
//!   page (JS `RegExp`), page → markdown (Turndown and
//!   its GFM plugin, injected only when `extract` runs), history (`history.go`, which unlike the
//!   browser's buttons does not skip pages left by a script click).
//! - **Trusted, through the debugger** (`debugger.rs`): key presses
//!   (`Input.dispatchKeyEvent`: script key events do not submit forms; one at a time, each after
//!   the page drew a frame since the last), clicks at a point, and the
//!   fallback for pages that check `isTrusted`. The fallback runs only when the script click showed
//!   nothing at all: no DOM, focus, value, scroll or URL change within a moment, no new tab, no
//!   navigation, no network request since the click, and no late change while the network settled
//!   (the content script keeps watching) — a slow handler must not run twice. The content script
//!   then reports an uncovered point of the element and the debugger clicks it; an element covered
//!   everywhere is refused rather than clicking whatever covers it. The element is watched
//!   through the real click too, and a real click after which nothing changed says so
//!   (`ActionEffect::unchanged`: the step does not report it as a success). Also screenshots (`Page.captureScreenshot`) and `evaluate` (`Runtime.evaluate`).
//!   The debugger is attached on first need and detached when the task ends; "another debugger is
//!   attached", pages Chrome will not debug, and the user closing the debugging bar
//!   (`canceled_by_user`, after which the task does not re-attach) are typed errors.
//! - **Tabs** (chrome.tabs): the task works in the tab it started on plus the tabs it opened and
//!   the tabs its pages opened during an action: a web tab whose opener is a task tab, or that
//!   appeared in the task's window while the action ran (links with `target=_blank` have no
//!   opener), takes over as the current tab; a popup opened blank joins once it loads a page. A
//!   task tab that closes itself (a sign-in popup) hands the task back to the most recent other
//!   task tab. Other tabs of the user are neither listed nor touched. Every tab the task opens
//!   (and the new tab a task started with **New tab** runs in) joins the window's **Tabwright**
//!   tab group, made the first time (`join_task_group`, in the background: the task does
//!   not wait for it); a tab Chrome already put in a group stays there, and the tab the user
//!   started on is never grouped.
//! - **Settling**: after a page-changing action the tab is watched for a navigation (then its
//!   load), a new tab, and then a quiet network (500 ms without requests, capped at 3 s; the top
//!   frame counts them: `page-network.js` the page's fetch and XMLHttpRequest in flight, `main.js`
//!   the resources it finished loading, from its Resource Timing entries). Not webRequest: an
//!   extension that merely holds that permission makes Chrome route every request of every page
//!   through an extra hop, task or not (measured by `scripts/bench idle`). No fixed sleeps. Every wait is bounded:
//!   content scripts and injections 15 s (5 s for child frames), debugger commands 15 s, loads
//!   20 s; and the loop gives each action a time limit (`action_timeout_s`, default 60 s; at least
//!   40 s for `wait`, five times the limit and at least 300 s for actions that call the LLM, none
//!   for `ask_human`), through the clock port, so a hung page cannot hang the task.
//! - **Scripts only where allowed**: `evaluate` is offered only on hosts the user listed. Just
//!   before it runs, the worker reads the address the debugger's target has now
//!   (`Target.getTargetInfo`) and refuses a host the user did not list (the page may have moved on
//!   since the observation); the script then starts with `location.hostname !== "that host"`,
//!   which calls nothing a page can replace, for a page that moves in between. A script is never
//!   given a secret: it runs in the page's own world.
//! - **Debugger unavailable**: once the user closed the debugging bar on a tab, actions that need
//!   the debugger (`Needs::debugger`) are no longer allowed there (refused, and left out of the
//!   available actions), and clicks do without the fallback.
//! - **Asking the user**: `ask_human` emits `question_asked`; the panel shows the question with an
//!   answer box and sends `answer_question`; the action waits (Stop still works) and returns the
//!   answer, outside the page fence.

pub mod debugger;
pub mod host;
pub mod wait;

use crate::browser::{
    ActionEffect, Browser, BrowserError, DragOutcome, DropPoint, DropdownOption, KeyPress, PageMarkdown, PageMatches,
    PageState, Screenshot, ScrollOutcome, TabInfo, TaskFile, UploadOutcome, UploadTarget,
};
use crate::dom::{ChildFrame, FrameSet, FrameSnapshot, FrameWaits, Snapshot, Stitcher};
use crate::protocol::{ContentReply, ContentRequest, ReadAfter, RealClickMade, ScreenRegion, PROTOCOL_VERSION};
use crate::settings::PageOptions;
use crate::web::{is_blank_page, is_restricted};
use debugger::Debugger;
use host::{FrameAnswer, Tab, TabChange, TabHost};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use wait::within;

/// How long a page may take to load before the step goes on without it.
const LOAD_TIMEOUT_MS: f64 = 20_000.0;
/// How long after a click or keystroke a navigation may take to start.
const NAVIGATION_GRACE_MS: f64 = 400.0;
/// How long after `navigate` the page may take to start loading.
const NAVIGATION_START_MS: f64 = 5_000.0;
const POLL_MS: u32 = 50;
/// How long the top frame's content script may take to answer one request.
const CONTENT_TIMEOUT_MS: u32 = 15_000;
/// A child frame that takes longer is left out of this step's page.
const CHILD_FRAME_TIMEOUT_MS: u32 = 5_000;
/// A screenshot waits this long at most for the highlight boxes to be painted.
const HIGHLIGHT_WAIT_MS: u32 = 1_000;
/// All child frames of a page together get this long; the rest are shown unread.
const CHILD_FRAMES_BUDGET_MS: f64 = 8_000.0;
/// Frames read per page at most.
const MAX_FRAMES: usize = crate::dom::limits::MAX_FRAMES;
/// After an action: the network counts as settled once it has been quiet this long…
const NETWORK_QUIET_MS: f64 = 500.0;
/// …or after this long, whatever it does (pages that poll or stream never go quiet).
const NETWORK_SETTLE_CAP_MS: f64 = 3_000.0;
/// The page says how its network is doing within this long, or is not asked again.
const NETWORK_ASK_MS: u32 = 1_000;
/// How long a script click may take to show an effect before a new tab or navigation is
/// looked for, and then a trusted click is tried.
const NEW_TAB_GRACE_MS: f64 = 300.0;
/// How often a pending `ask_human` looks for the user's answer.
const ANSWER_POLL_MS: u32 = 200;

pub struct TabBrowser<H: TabHost> {
    host: H,
    /// The tab the task works in now.
    tab_id: i32,
    /// The task's tabs: the one it started on, those it opened and those its pages opened.
    tabs: Vec<i32>,
    options: PageOptions,
    stitcher: Stitcher,
    /// Which child frames are not waited for again (they did not answer in time).
    frame_waits: FrameWaits,
    /// Frames that show highlights, by tab, to clear when the task ends or moves on.
    highlighted: Vec<(i32, i64)>,
    /// Highlight requests sent and not yet answered (a frame answers once the boxes are
    /// painted): a screenshot waits for them, so the model sees the numbers.
    highlights_pending: std::rc::Rc<std::cell::Cell<u32>>,
    /// Whether the current tab's history can go back / forward, from the last observation.
    history: (bool, bool),
    /// What the dialogs the page opened since the last look said, and how each was answered.
    dialogs: Vec<String>,
    /// Every tab open when the current action began: a tab the action opened is one not
    /// among them.
    known_tabs: Vec<i32>,
    /// When the current action began (ms), to tell its network requests from earlier ones.
    action_started: f64,
    /// The action about to run is the step's last, and a look follows (`look_follows`); until
    /// the next look.
    look_follows: bool,
    /// Tabs a task page opened that are still blank; they join the task when they load a page.
    blank_children: Vec<i32>,
    /// Every tab as the last look at the browser's tabs found them.
    seen_tabs: Vec<Tab>,
    /// The last look at every tab, until the worker next waits for anything (see `took_look`).
    latest_look: Rc<RefCell<Option<Vec<Tab>>>>,
    debugger: Debugger<H>,
    grouping: Rc<Grouping>,
    /// The top document whose frames lacking scripts were given them (see `read_page`).
    frames_completed: Option<String>,
    /// The facts last read for the guard (`act_facts`), as the page wrote them.
    facts_read: Option<(crate::browser::FactsOf, String)>,
    /// The facts the next click on that element must still find (`expect_facts`).
    expected: Option<(u32, String)>,
    /// Which task this browser works for, and what the person answers it.
    seat: TaskSeat,
}

/// Which task a browser works for: its id (the page scripts and ports it ends are its own),
/// the title of its tab group, the answers the person gives it, and which tabs every running
/// task owns (shared with the worker and the other tasks' browsers).
#[derive(Clone)]
pub struct TaskSeat {
    pub task_id: String,
    pub group_title: String,
    pub waits: host::PersonWaits,
    pub claims: host::TabClaims,
}

impl Default for TaskSeat {
    fn default() -> Self {
        TaskSeat {
            task_id: String::new(),
            group_title: TASK_GROUP_TITLE.into(),
            waits: Default::default(),
            claims: Default::default(),
        }
    }
}

/// How long a look at the tabs waits for a tab being opened for another task to be claimed.
const OPENING_WAIT_MS: u32 = 2_000;

/// Tab groups take the colours Chrome offers; a task's is picked by its id, so two tasks
/// side by side are told apart at a glance.
const GROUP_COLORS: [&str; 8] = ["cyan", "blue", "purple", "green", "orange", "pink", "yellow", "red"];

/// The title of task `task`'s tab group: the product's name and the task's first words, so a
/// person with several tasks running sees which tabs are which.
pub fn group_title_of(task: &str) -> String {
    const WORDS_CHARS: usize = 24;
    let words: Vec<&str> = task.split_whitespace().collect();
    let Some(first) = words.first() else { return TASK_GROUP_TITLE.into() };
    // Whole words, as many as fit; a first word longer than that is cut.
    let mut cut: String = first.chars().take(WORDS_CHARS).collect();
    let mut taken = 1;
    for word in &words[1..] {
        if cut.chars().count() + 1 + word.chars().count() > WORDS_CHARS {
            break;
        }
        cut = format!("{cut} {word}");
        taken += 1;
    }
    if taken < words.len() || first.chars().count() > WORDS_CHARS {
        cut.push('…');
    }
    format!("{TASK_GROUP_TITLE} · {cut}")
}

/// The title of the tab group the tabs a task opens are gathered in.
pub const TASK_GROUP_TITLE: &str = "Tabwright";

/// Puts a tab the task opened into its window's tab group titled `title` (made the first
/// time), so the person sees at a glance which tabs the agent opened, and for which task. A tab
/// already in a group (Chrome puts a tab opened from a grouped tab into that group) stays
/// where it is.
pub async fn join_task_group(host: &impl TabHost, tab_id: i32, title: &str) -> Result<(), String> {
    let tab = host.tab(tab_id).await?;
    if tab.group_id.is_some_and(|g| g >= 0) {
        return Ok(());
    }
    let window = tab.window_id.ok_or("the tab has no window")?;
    match host.find_group(window, title).await? {
        Some(group) => host.add_to_group(tab_id, group).await,
        None => {
            let pick = title.bytes().fold(0usize, |sum, b| sum.wrapping_mul(31).wrapping_add(b as usize));
            let color =
                if title == TASK_GROUP_TITLE { GROUP_COLORS[0] } else { GROUP_COLORS[pick % GROUP_COLORS.len()] };
            host.new_group(tab_id, window, title, color).await
        }
    }
}

/// Tabs waiting to join the task's tab group, joined one after another off the task's path
/// (two at once could each make a group).
#[derive(Default)]
struct Grouping {
    title: RefCell<String>,
    pending: RefCell<Vec<i32>>,
    busy: std::cell::Cell<bool>,
}

/// Gathers tabs the task opened into its tab group, in the background: the task
/// does not wait for it, and a failure (the user dragged the tab out, tab groups unavailable)
/// only leaves the tab ungrouped.
fn group_later<H: TabHost>(host: &H, grouping: &Rc<Grouping>, tabs: impl IntoIterator<Item = i32>) {
    grouping.pending.borrow_mut().extend(tabs);
    if grouping.busy.replace(true) {
        return;
    }
    let (grouping, worker) = (grouping.clone(), host.clone());
    host.spawn(Box::pin(async move {
        loop {
            let next = {
                let mut pending = grouping.pending.borrow_mut();
                (!pending.is_empty()).then(|| pending.remove(0))
            };
            let Some(tab) = next else { break };
            let title = grouping.title.borrow().clone();
            if let Err(e) = join_task_group(&worker, tab, &title).await {
                worker.warn(&format!("Tabwright could not group tab {tab}: {e}"));
            }
        }
        grouping.busy.set(false);
    }));
}

impl<H: TabHost> TabBrowser<H> {
    pub fn new(host: H, tab_id: i32, options: PageOptions) -> Self {
        TabBrowser {
            debugger: Debugger::new(host.clone()),
            host,
            tab_id,
            tabs: vec![tab_id],
            options,
            stitcher: Stitcher::new(),
            frame_waits: FrameWaits::new(),
            highlighted: Vec::new(),
            highlights_pending: Default::default(),
            history: (false, false),
            dialogs: Vec::new(),
            known_tabs: Vec::new(),
            action_started: 0.0,
            look_follows: false,
            blank_children: Vec::new(),
            seen_tabs: Vec::new(),
            latest_look: Rc::default(),
            grouping: Rc::new(Grouping { title: RefCell::new(TASK_GROUP_TITLE.into()), ..Default::default() }),
            frames_completed: None,
            facts_read: None,
            expected: None,
            seat: TaskSeat::default(),
        }
    }

    /// The task this browser works for (see `TaskSeat`).
    pub fn for_task(mut self, seat: TaskSeat) -> Self {
        *self.grouping.title.borrow_mut() = seat.group_title.clone();
        self.seat = seat;
        self
    }

    /// The task's tabs, when it continues after a worker restart (the current one among them).
    pub fn with_tabs(mut self, tabs: Vec<i32>) -> Self {
        for id in tabs {
            if !self.tabs.contains(&id) {
                self.tabs.push(id);
            }
        }
        self
    }

    /// Every tab of the browser, as the browser lists them now (none if it cannot say); once
    /// no tab is being opened for a task, so every tab listed that is a task's is claimed.
    async fn all_tabs(&self) -> Vec<Tab> {
        let mut waited = 0;
        while self.seat.claims.opening_now() && waited < OPENING_WAIT_MS {
            self.host.sleep(10).await;
            waited += 10;
        }
        self.host.all_tabs_now().await.unwrap_or_default()
    }

    async fn tab(&self) -> Result<Tab, BrowserError> {
        self.host.tab(self.tab_id).await.map_err(|_| BrowserError::TabClosed)
    }

    /// Keeps the task's tab list current: tabs that were closed leave it; with `adopt`, web
    /// tabs that appeared since the last observation and were opened by one of the task's
    /// pages (a `target=_blank` link, `window.open`) join it. Returns the tabs that joined,
    /// newest last. If the current tab was closed (by the page or the user), the task moves to
    /// its most recent other tab.
    async fn refresh_tabs(&mut self, adopt: bool) -> Result<Vec<Tab>, BrowserError> {
        let all = self.all_tabs().await;
        self.refresh_tabs_from(all, adopt)
    }

    /// Keeps a look at every tab just taken for as long as the worker runs on without waiting
    /// for anything: until then nothing else has run here, and a second look would only tell
    /// the same moment again, a round trip later. An observation right after an action that
    /// needed no waiting uses it (see `observe`).
    fn took_look(&self, all: &[Tab]) {
        *self.latest_look.borrow_mut() = Some(all.to_vec());
        let latest = self.latest_look.clone();
        // Spawned work runs once the running work waits, before anything it waits for.
        self.host.spawn(Box::pin(async move {
            latest.borrow_mut().take();
        }));
    }

    /// `refresh_tabs` with every tab as a look just taken found them.
    fn refresh_tabs_from(&mut self, all: Vec<Tab>, adopt: bool) -> Result<Vec<Tab>, BrowserError> {
        let open: Vec<i32> = all.iter().filter_map(|t| t.id).collect();
        self.tabs.retain(|id| open.contains(id));
        self.seen_tabs = all.clone();
        let window = all.iter().find(|t| t.id == Some(self.tab_id)).and_then(|t| t.window_id);
        let mut joined = Vec::new();
        // A popup a task page opened blank (`window.open()` first, the address after) joins
        // once it shows a web page, whenever that is.
        self.blank_children.retain(|id| open.contains(id));
        for tab in &all {
            let Some(id) = tab.id else { continue };
            let url = tab.destination();
            if self.blank_children.contains(&id) && crate::web::is_web_url(url) {
                self.blank_children.retain(|&b| b != id);
                self.tabs.push(id);
                joined.push(tab.clone());
            }
        }
        let others_here = all.iter().any(|t| {
            t.window_id == window
                && t.id.and_then(|id| self.seat.claims.owner(id)).is_some_and(|owner| owner != self.seat.task_id)
        });
        // Repeat so that a tab opened from a tab that just joined joins too.
        let mut looking = adopt;
        while looking {
            let new: Vec<&Tab> = all
                .iter()
                .filter(|t| {
                    t.id.is_some_and(|id| {
                        !self.tabs.contains(&id)
                            && !self.known_tabs.contains(&id)
                            && !self.blank_children.contains(&id)
                            // Another running task's tab is its own.
                            && self.seat.claims.owner(id).is_none_or(|owner| owner == self.seat.task_id)
                    })
                })
                .collect();
            looking = false;
            for tab in new {
                let id = tab.id.unwrap_or_default();
                let url = tab.destination();
                let opened_by_task = tab.opener_tab_id.is_some_and(|o| self.tabs.contains(&o));
                // Links with target=_blank may open without an opener: a web tab with none that
                // appeared in the task's window during the action is the action's too, unless
                // another task works in that window (it could be that task's: it is no one's).
                let beside =
                    tab.opener_tab_id.is_none() && tab.window_id.is_some() && tab.window_id == window && !others_here;
                if crate::web::is_web_url(url) && (opened_by_task || beside) {
                    self.tabs.push(id);
                    joined.push(tab.clone());
                    looking = true;
                } else if opened_by_task && (url == "about:blank" || url.is_empty()) {
                    self.blank_children.push(id);
                }
            }
        }
        group_later(&self.host, &self.grouping, joined.iter().filter_map(|t| t.id));
        if !adopt {
            self.known_tabs = open;
        }
        if !self.tabs.contains(&self.tab_id) {
            self.tab_id = *self.tabs.last().ok_or(BrowserError::TabClosed)?;
            self.stitcher = Stitcher::new();
            self.frame_waits.forget();
        }
        self.host.set_task_tabs(&self.seat.task_id, &self.tabs);
        self.seat.claims.set(&self.seat.task_id, &self.tabs);
        Ok(joined)
    }

    /// The task's tabs as the last look at the browser's tabs found them.
    fn tab_infos(&self) -> Vec<TabInfo> {
        self.tabs.iter().filter_map(|id| self.seen_tabs.iter().find(|t| t.id == Some(*id))).map(tab_info).collect()
    }

    /// Makes `tab` the task's current tab and brings it to the front, as a person switching
    /// tabs would.
    async fn make_current(&mut self, tab_id: i32) {
        if tab_id != self.tab_id {
            self.tab_id = tab_id;
            self.stitcher = Stitcher::new();
            self.frame_waits.forget();
        }
        let _ = self.host.change_tab(tab_id, TabChange::Activate).await;
    }

    /// After a page-changing action: follows a navigation it started, hands the task to a tab
    /// it opened, then waits for the network to settle.
    async fn settle(&mut self, before: &Tab, grace_ms: f64) -> Result<ActionEffect, BrowserError> {
        // One look at every tab serves as the first look at the current one, and, when no
        // navigation is waited for, as the look for tabs the action opened.
        let all = self.all_tabs().await;
        self.took_look(&all);
        let first = find_tab(&all, self.tab_id);
        let listed = first.is_some();
        let (after, looked_again) = match self.follow_navigation_from(before, grace_ms, first).await {
            Ok((after, _, looked_again)) => (after, looked_again),
            // The tab closed itself (a popup done with its work): the task goes on in its most
            // recent other tab, if it has one.
            Err(BrowserError::TabClosed) => {
                self.refresh_tabs(false).await?;
                self.make_current(self.tab_id).await;
                let now = self.wait_for_load().await?;
                self.wait_for_quiet_network().await;
                return Ok(ActionEffect { tab_closed_to: Some(tab_info(&now)), ..Default::default() });
            }
            Err(e) => return Err(e),
        };
        let mut effect = ActionEffect {
            navigated_to: after.url.filter(|url| Some(url) != before.url.as_ref()),
            ..Default::default()
        };
        let joined =
            if looked_again || !listed { self.refresh_tabs(true).await? } else { self.refresh_tabs_from(all, true)? };
        if let Some(opened) = joined.into_iter().last() {
            let id = opened.id.unwrap_or_default();
            self.make_current(id).await;
            let loaded = self.wait_for_load().await.unwrap_or(opened);
            effect.opened_tab = Some(tab_info(&loaded));
        }
        self.wait_for_quiet_network().await;
        Ok(effect)
    }

    /// Call at the start of every action: remembers which tabs exist (a tab that appears during
    /// the action is the action's) and when the action began; returns the current tab.
    async fn before_action(&mut self) -> Result<Tab, BrowserError> {
        let look = self.start_action();
        let all = look.await;
        self.tabs_before_action(all).await
    }

    /// The first half of `before_action`: notes the time and asks Chrome for every tab now, so
    /// the caller can send the action while the answer travels back. The look still predates
    /// the action: the question leaves first, and a tab the action opens can appear only after
    /// the page has received the action. Hand the answer to `tabs_before_action`.
    fn start_action(&mut self) -> impl std::future::Future<Output = Vec<Tab>> {
        self.action_started = self.host.now_ms();
        let look = self.host.all_tabs_now();
        async move { look.await.unwrap_or_default() }
    }

    /// The second half of `before_action`.
    async fn tabs_before_action(&mut self, all: Vec<Tab>) -> Result<Tab, BrowserError> {
        self.known_tabs = all.iter().filter_map(|t| t.id).collect();
        match find_tab(&all, self.tab_id) {
            Some(tab) => Ok(tab),
            None => self.tab().await,
        }
    }

    /// How the current tab's requests are doing, as its top frame counts them (content/main.js,
    /// `network`): how long they have been quiet (0 while one is in flight) and when one last
    /// started (ms since the epoch). None when the page cannot say (it is loading, or has no
    /// script yet).
    async fn network_state(&self) -> Option<(f64, f64)> {
        let request = ContentRequest::Network { v: PROTOCOL_VERSION };
        let FrameAnswer::Reply(reply) =
            within(&self.host, NETWORK_ASK_MS, self.host.ask_frame(self.tab_id, 0, &request)).await?.ok()?
        else {
            return None;
        };
        let result = reply.result?;
        Some((result["quiet_ms"].as_f64()?, result["last_request_at"].as_f64().unwrap_or(0.0)))
    }

    /// Waits until the tab's network has been quiet for a moment, capped, when the action may
    /// have started a request (one started since the action began); not at all when the page
    /// cannot say. Requests a page started before the action are its own: a page opened just
    /// before the task is still loading its images when the first click comes, and waiting
    /// for them held that click ~460 ms.
    async fn wait_for_quiet_network(&self) {
        let deadline = self.host.now_ms() + NETWORK_SETTLE_CAP_MS;
        while self.host.now_ms() < deadline {
            match self.network_state().await {
                Some((quiet, last_request)) if quiet < NETWORK_QUIET_MS && last_request >= self.action_started => {
                    self.host.sleep(POLL_MS).await
                }
                _ => break,
            }
        }
    }

    /// Waits for the person's answer to what waits as `id` in `slot` (the side panel delivers
    /// it through the worker); the slot is closed however the wait ends (answered, or the task
    /// stopped while waiting).
    async fn wait_for_person<T: Clone>(&self, slot: host::Waiting<T>, id: u32) -> T {
        struct Close<T: Clone>(host::Waiting<T>);
        impl<T: Clone> Drop for Close<T> {
            fn drop(&mut self) {
                self.0.close();
            }
        }
        slot.open(id);
        let _close = Close(slot.clone());
        loop {
            if let Some(answer) = slot.answer() {
                return answer;
            }
            self.host.sleep(ANSWER_POLL_MS).await;
        }
    }

    /// The element's frame and local index, or the error for an index that is gone.
    fn target(&self, index: u32) -> Result<crate::dom::Target, BrowserError> {
        self.stitcher.target(index).ok_or(BrowserError::ElementGone { index })
    }

    /// Asks the element's frame, mapping failure codes to typed errors, and returns the
    /// request's result.
    async fn ask_element(
        &self,
        index: u32,
        request: impl FnOnce(u32) -> ContentRequest,
    ) -> Result<serde_json::Value, BrowserError> {
        let target = self.target(index)?;
        let reply = self.ask_frame(target.frame_id, &request(target.local)).await?;
        element_result(index, reply)
    }

    /// Asks the top frame for a page-level request and returns its result.
    async fn ask_page(&self, request: &ContentRequest) -> Result<serde_json::Value, BrowserError> {
        let reply = self.ask_frame(0, request).await?;
        if !reply.ok {
            let message = reply.message.unwrap_or_else(|| "the page refused the request".into());
            return Err(match reply.code.as_deref() {
                Some("bad_pattern") => BrowserError::Script(message),
                _ => BrowserError::ContentScript { reason: message },
            });
        }
        Ok(reply.result.unwrap_or_default())
    }

    /// Moves through the tab's history with the page's own `history.go` (see
    /// `ContentRequest::HistoryGo`); on a page without a content script (an error page), with
    /// the browser's buttons.
    async fn history_go(&mut self, delta: i32) -> Result<ActionEffect, BrowserError> {
        let before = self.before_action().await?;
        let by_page = self.ask_frame(0, &ContentRequest::HistoryGo { v: PROTOCOL_VERSION, delta }).await;
        if !by_page.is_ok_and(|reply| reply.ok) {
            let moved = self.host.history_button(self.tab_id, delta.signum()).await;
            moved.map_err(|reason| BrowserError::Navigation { url: "the page in the tab's history".into(), reason })?;
        }
        self.settle(&before, NAVIGATION_START_MS).await
    }

    /// Whether the page changed since the element's content script began watching it (after a
    /// script click that showed nothing, or when `again` armed it); with `again`, it watches
    /// afresh from now. A frame that cannot be asked (it went away) counts as changed.
    async fn late_click_effect(&mut self, index: u32, again: bool) -> bool {
        let asked = self
            .ask_element(index, |local| ContentRequest::LateClickEffect { v: PROTOCOL_VERSION, index: local, again })
            .await;
        asked.map_or(true, |reply| reply["effect"].as_bool() != Some(false))
    }

    /// Whether a real click on `index` changed nothing a person would see: no navigation, no
    /// tab opened or closed, no request sent (a save that answers later), and nothing on its
    /// page beyond hover and focus styling.
    async fn changed_nothing(&mut self, index: u32, effect: &ActionEffect) -> bool {
        if effect.navigated_to.is_some() || effect.opened_tab.is_some() || effect.tab_closed_to.is_some() {
            return false;
        }
        let changed = self.late_click_effect(index, false).await;
        let requested = self.network_state().await.is_some_and(|(_, last_request)| last_request >= self.action_started);
        !changed && !requested
    }

    /// Opens a dropdown a script's click did not open, with a real click on it. The refusal
    /// `no_options_shown` when the debugger cannot be used here (the person closed its bar);
    /// any other error as it is (the control is covered, the page did not answer).
    async fn open_for_real(&mut self, index: u32) -> Result<(), BrowserError> {
        if !self.debugger.available(self.tab_id) {
            return Err(no_options_shown(index));
        }
        self.trusted_click(index).await
    }

    /// A trusted click on the element: scrolled into view by its content script, clicked at
    /// an uncovered point through the debugger.
    async fn trusted_click(&mut self, index: u32) -> Result<(), BrowserError> {
        let target = self.target(index)?;
        let expect = self.expected.take().filter(|(i, _)| *i == index).map(|(_, facts)| facts);
        let point = self
            .ask_element(index, |local| ContentRequest::Point { v: PROTOCOL_VERSION, index: local, expect })
            .await?;
        if point["covered"].as_bool() == Some(true) {
            // A real click there would land on whatever covers it (a banner, an overlay).
            return Err(BrowserError::ElementUnsuitable {
                index,
                reason: "the page ignored a script click on it, and a real click cannot reach it: another element covers it. Close what covers it (a banner, a dialog) or scroll, then try again".into(),
            });
        }
        let x = point["x"].as_f64().unwrap_or_default() + target.offset.0;
        let y = point["y"].as_f64().unwrap_or_default() + target.offset.1;
        self.debugger.click_at(self.tab_id, x, y).await
    }

    /// Waits until the tab has finished loading, up to `LOAD_TIMEOUT_MS`. A page that never
    /// finishes (a stuck resource) is observed as it is.
    async fn wait_for_load(&self) -> Result<Tab, BrowserError> {
        let deadline = self.host.now_ms() + LOAD_TIMEOUT_MS;
        loop {
            let tab = self.tab().await?;
            if tab.is_complete() || self.host.now_ms() > deadline {
                return Ok(tab);
            }
            self.host.sleep(POLL_MS).await;
        }
    }

    /// Watches the tab after something that may navigate. Waits up to `start_within_ms` for a
    /// navigation to start (the URL changes, or a finished page starts loading again); if one
    /// starts, waits for it to finish. Returns the tab afterwards and whether one started. A
    /// page that was still loading before (it never finishes) is not waited on again.
    async fn follow_navigation(&self, before: &Tab, start_within_ms: f64) -> Result<(Tab, bool), BrowserError> {
        self.follow_navigation_from(before, start_within_ms, None).await.map(|(tab, started, _)| (tab, started))
    }

    /// `follow_navigation`, whose first look at the tab may already have been taken (`first`).
    /// Also tells whether it looked at the browser again after that first look.
    async fn follow_navigation_from(
        &self,
        before: &Tab,
        start_within_ms: f64,
        first: Option<Tab>,
    ) -> Result<(Tab, bool, bool), BrowserError> {
        let was_complete = before.is_complete();
        let deadline = self.host.now_ms() + start_within_ms;
        let mut tab = match first {
            Some(tab) => tab,
            None => self.tab().await?,
        };
        let mut looked_again = false;
        loop {
            let url_changed =
                tab.url != before.url || tab.pending_url.as_ref().is_some_and(|p| Some(p) != before.url.as_ref());
            let reloading = was_complete && !tab.is_complete();
            if url_changed || reloading {
                if !tab.is_complete() {
                    tab = self.wait_for_load().await?;
                    looked_again = true;
                }
                return Ok((tab, true, looked_again));
            }
            if self.host.now_ms() >= deadline {
                return Ok((tab, false, looked_again));
            }
            self.host.sleep(POLL_MS).await;
            tab = self.tab().await?;
            looked_again = true;
        }
    }

    /// Sends a request to the content script of a frame. When the top frame has no script to
    /// ask for a snapshot (the tab predates the extension), the scripts are injected into every
    /// frame first; other requests never inject (clearing highlights on a page that has moved
    /// on must not load anything into it). A frame that does not answer in time (blocked by a
    /// dialog or a busy script) is an error.
    async fn ask_frame(&self, frame_id: i64, request: &ContentRequest) -> Result<ContentReply, BrowserError> {
        let timeout = if frame_id == 0 { CONTENT_TIMEOUT_MS } else { CHILD_FRAME_TIMEOUT_MS };
        within(&self.host, timeout, self.ask_frame_unbounded(frame_id, request)).await.unwrap_or_else(|| {
            Err(BrowserError::Timeout {
                what: "Waiting for the page to answer (it may be showing a dialog or running a long script)".into(),
                seconds: timeout / 1000,
            })
        })
    }

    async fn ask_frame_unbounded(&self, frame_id: i64, request: &ContentRequest) -> Result<ContentReply, BrowserError> {
        let answer = match self.host.ask_frame(self.tab_id, frame_id, request).await {
            Ok(reply) => reply,
            Err(reason) if frame_id != 0 || !matches!(request, ContentRequest::Snapshot { .. }) => {
                return Err(BrowserError::ContentScript { reason })
            }
            Err(first) => {
                let tab = self.tab().await?;
                let url = tab.url.unwrap_or_default();
                if is_restricted(&url) {
                    return Err(BrowserError::RestrictedPage { url });
                }
                // An http(s) page Chrome will not script is an error page (the site failed to
                // load): the LLM can navigate away, so it is not a restricted page.
                self.host.inject_content_scripts(self.tab_id).await.map_err(|e| BrowserError::ContentScript {
                    reason: format!("{first}; the content script could not be injected either: {e}"),
                })?;
                self.host
                    .ask_frame(self.tab_id, frame_id, request)
                    .await
                    .map_err(|reason| BrowserError::ContentScript { reason })?
            }
        };
        match answer {
            FrameAnswer::Reply(reply) => Ok(reply),
            FrameAnswer::Nothing => {
                Err(BrowserError::ContentScript { reason: "the content script sent no answer".into() })
            }
            FrameAnswer::Unreadable(e) => {
                Err(BrowserError::ContentScript { reason: format!("unreadable answer: {e}") })
            }
        }
    }

    /// The request for a frame's snapshot.
    fn snapshot_request(&self, screen: Option<ScreenRegion>, worker: &str) -> ContentRequest {
        ContentRequest::Snapshot {
            v: PROTOCOL_VERSION,
            viewport_expansion: self.options.viewport_expansion,
            screen,
            worker: worker.to_string(),
        }
    }

    /// Takes in what a frame's snapshot reply says besides the snapshot: the dialogs it
    /// answered, and for the top frame where the tab's history can go.
    fn note_reply(&mut self, frame_id: i64, reply: &ContentReply) {
        if let Some(dialogs) = reply.result.as_ref().and_then(|r| r.get("dialogs")).and_then(|d| d.as_array()) {
            self.dialogs.extend(dialogs.iter().filter_map(describe_dialog));
        }
        if frame_id == 0 {
            let result = reply.result.as_ref();
            let flag = |name| result.and_then(|r| r.get(name)).and_then(serde_json::Value::as_bool).unwrap_or(false);
            self.history = (flag("can_go_back"), flag("can_go_forward"));
        }
    }

    /// The whole page: the top frame, then every frame it (or a frame inside it) shows, all the
    /// frames of a level asked at once and each frame inside one asked as soon as that one has
    /// answered, stitched in page order. A child frame that cannot be read is shown empty; one
    /// that did not answer in time is not waited for again until it loads a document
    /// (`dom::FrameWaits`). The top frame's errors are the page's.
    async fn read_page(&mut self) -> Result<Snapshot, BrowserError> {
        let worker = self.host.worker_instance();
        let request = self.snapshot_request(None, &worker);
        let reply = self.ask_frame(0, &request).await?;
        self.note_reply(0, &reply);
        let mut top = snapshot_of(reply)?;
        top.resolve_frames(|token| self.host.frame_id_of(self.tab_id, token));
        // Frames that did not answer may have no scripts: registered ones never reach a
        // document a script wrote into a blank frame (a rich-text editor's). They get them
        // once per page, and the top frame is read again, which now hears from them.
        if top.unread_frames() > 0 && self.frames_completed.as_deref() != Some(top.doc.as_str()) {
            self.frames_completed = Some(top.doc.clone());
            if self.host.inject_where_missing(self.tab_id).await.unwrap_or(0) > 0 {
                let reply = self.ask_frame(0, &request).await?;
                self.note_reply(0, &reply);
                top = snapshot_of(reply)?;
                top.resolve_frames(|token| self.host.frame_id_of(self.tab_id, token));
            }
        }
        // Each child frame is told where the top window's screen lies in its own coordinates:
        // its content box starts at the sum of the placeholders' positions on the way down.
        let top_size = top.viewport;
        let mut asked = std::collections::HashSet::new();
        let reading = wait::JoinSet::default();
        let deadline = self.host.now_ms() + CHILD_FRAMES_BUDGET_MS;
        let (tab_id, viewport_expansion, frames_host) =
            (self.tab_id, self.options.viewport_expansion, self.host.clone());
        let ask = |child: ChildFrame, asked: &mut std::collections::HashSet<i64>| {
            if asked.len() >= MAX_FRAMES || frames_host.now_ms() > deadline {
                return;
            }
            asked.insert(child.frame_id);
            let (x, y) = child.origin;
            let screen = top_size.map(|(width, height)| ScreenRegion {
                top: -y,
                left: -x,
                bottom: height - y,
                right: width - x,
            });
            let request =
                ContentRequest::Snapshot { v: PROTOCOL_VERSION, viewport_expansion, screen, worker: worker.clone() };
            let budget = (deadline - frames_host.now_ms()).clamp(0.0, f64::from(CHILD_FRAME_TIMEOUT_MS)) as u32;
            let host = frames_host.clone();
            reading.spawn(&frames_host, async move {
                let reply = within(&host, budget, host.ask_frame(tab_id, child.frame_id, &request)).await;
                (child, reply)
            });
        };
        for child in self.frame_waits.to_ask(&top, (0.0, 0.0), &asked) {
            ask(child, &mut asked);
        }
        let mut frames = FrameSet { top: Some(top), ..Default::default() };
        while let Some((child, reply)) = reading.next().await {
            let reply = match reply {
                // Out of time: not waited for again until it loads a document.
                None => {
                    self.frame_waits.did_not_answer(&child);
                    continue;
                }
                Some(reply) => reply,
            };
            self.frame_waits.answered(child.frame_id);
            let Ok(FrameAnswer::Reply(reply)) = reply else { continue };
            self.note_reply(child.frame_id, &reply);
            let Ok(mut snapshot) = snapshot_of(reply) else { continue };
            snapshot.resolve_frames(|token| self.host.frame_id_of(self.tab_id, token));
            for grandchild in self.frame_waits.to_ask(&snapshot, child.origin, &asked) {
                ask(grandchild, &mut asked);
            }
            frames.children.insert(child.frame_id, snapshot);
        }
        let page = self.stitcher.stitch(&frames);
        if self.options.highlights {
            self.highlight(&page).await;
        }
        Ok(page)
    }

    /// Draws each frame's boxes, labelled with the page-wide numbers. Best effort: a frame that
    /// cannot draw does not fail the step.
    async fn highlight(&mut self, page: &Snapshot) {
        let mut by_frame: BTreeMap<i64, Vec<(u32, u32)>> = BTreeMap::new();
        for element in page.elements() {
            if let Some(target) = self.stitcher.target(element.index) {
                by_frame.entry(target.frame_id).or_default().push((target.local, element.index));
            }
        }
        // Frames that showed boxes last step but have none now (not read, emptied, another
        // tab) are cleared, so no stale numbers stay on a page.
        for (tab_id, frame_id) in std::mem::take(&mut self.highlighted) {
            if tab_id != self.tab_id || !by_frame.contains_key(&frame_id) {
                clear_highlights(&self.host, tab_id, frame_id).await;
            }
        }
        // Drawn without waiting: the boxes are for the person watching, and the step need not
        // wait for them (clearing a frame that drew nothing is harmless).
        for (frame_id, labels) in by_frame {
            let (tab_id, request) = (self.tab_id, ContentRequest::Highlight { v: PROTOCOL_VERSION, labels });
            let pending = self.highlights_pending.clone();
            pending.set(pending.get() + 1);
            let host = self.host.clone();
            self.host.spawn(Box::pin(async move {
                let _ = within(&host, CHILD_FRAME_TIMEOUT_MS, host.ask_frame(tab_id, frame_id, &request)).await;
                pending.set(pending.get().saturating_sub(1));
            }));
            self.highlighted.push((self.tab_id, frame_id));
        }
    }
}

impl<H: TabHost> TabBrowser<H> {
    /// Has the boxes asked for at the last look drawn now (a frame draws them only a moment
    /// later), and waits (a little, at most) until they are on screen.
    async fn highlights_painted(&self) {
        if self.highlights_pending.get() > 0 {
            let request = ContentRequest::DrawHighlightsNow { v: PROTOCOL_VERSION };
            for &(tab_id, frame_id) in self.highlighted.iter().filter(|(tab_id, _)| *tab_id == self.tab_id) {
                let _ = within(&self.host, HIGHLIGHT_WAIT_MS, self.host.ask_frame(tab_id, frame_id, &request)).await;
            }
        }
        let mut waited = 0;
        while self.highlights_pending.get() > 0 && waited < HIGHLIGHT_WAIT_MS {
            self.host.sleep(5).await;
            waited += 5;
        }
    }

    /// The task's tab as Chrome shows it, when it is the shown tab of its window; `None` when
    /// it is not or Chrome will not capture it (the debugger can still).
    async fn capture_shown_tab(&self) -> Option<Screenshot> {
        let tab = self.host.tab(self.tab_id).await.ok()?;
        let window = tab.window_id.filter(|_| tab.active)?;
        let mut captured = self.host.capture_window(window).await;
        // Chrome allows two captures a second.
        if captured.as_ref().is_err_and(|e| e.contains("MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND")) {
            self.host.sleep(600).await;
            captured = self.host.capture_window(window).await;
        }
        let png_base64 = captured.ok()?.strip_prefix("data:image/png;base64,")?.to_string();
        let (width, height) = crate::browser::png_size(&png_base64)?;
        Some(Screenshot { png_base64, width, height })
    }
}

/// The snapshot in a frame's reply, checked.
fn snapshot_of(reply: ContentReply) -> Result<FrameSnapshot, BrowserError> {
    match (reply.ok, reply.snapshot_json) {
        (true, Some(text)) => {
            FrameSnapshot::from_json_text(&text).map_err(|e| BrowserError::ContentScript { reason: e.to_string() })
        }
        _ => Err(BrowserError::ContentScript {
            reason: reply.message.unwrap_or_else(|| "the page could not be indexed".into()),
        }),
    }
}

/// Removes a frame's boxes. Best effort, and never injects anything into a page that moved on.
async fn clear_highlights(host: &impl TabHost, tab_id: i32, frame_id: i64) {
    let request = ContentRequest::ClearHighlights { v: PROTOCOL_VERSION };
    let _ = within(host, CHILD_FRAME_TIMEOUT_MS, host.ask_frame(tab_id, frame_id, &request)).await;
}

/// An element request's result, or the typed error its failure code names.
fn element_result(index: u32, reply: ContentReply) -> Result<serde_json::Value, BrowserError> {
    if reply.ok {
        return Ok(reply.result.unwrap_or_default());
    }
    let reason = reply.message.unwrap_or_else(|| "the page refused the action".into());
    Err(match reply.code.as_deref() {
        Some("element_gone") => BrowserError::ElementGone { index },
        _ => BrowserError::ElementUnsuitable { index, reason },
    })
}

/// Chrome's words for a message channel that closed because the page unloaded.
fn page_went_away(reason: &str) -> bool {
    reason.contains("message port closed")
        || reason.contains("back/forward cache")
        || reason.contains("message channel closed")
}

/// The tab with this id, from a list of every tab.
fn find_tab(all: &[Tab], tab_id: i32) -> Option<Tab> {
    all.iter().find(|t| t.id == Some(tab_id)).cloned()
}

fn tab_info(tab: &Tab) -> TabInfo {
    TabInfo {
        id: tab.id.unwrap_or_default(),
        url: tab.url.clone().or_else(|| tab.pending_url.clone()).unwrap_or_default(),
        title: tab.title.clone().unwrap_or_default(),
    }
}

fn parse_result<T: serde::de::DeserializeOwned>(value: serde_json::Value, what: &str) -> Result<T, BrowserError> {
    crate::json::read_value(&value)
        .map_err(|e| BrowserError::ContentScript { reason: format!("unreadable {what} from the page: {e}") })
}

/// One sentence for the model about a dialog page-dialogs.js answered, e.g. `The page asked
/// to confirm "Delete?"; Tabwright accepted.` The page wrote the text: it is escaped.
fn describe_dialog(dialog: &serde_json::Value) -> Option<String> {
    let text = |key: &str| crate::dom::untrusted(dialog.get(key).and_then(|v| v.as_str()).unwrap_or_default(), 300);
    Some(match dialog.get("kind")?.as_str()? {
        "alert" => format!("The page showed an alert \"{}\"; Tabwright closed it.", text("message")),
        "confirm" => format!("The page asked to confirm \"{}\"; Tabwright accepted.", text("message")),
        "prompt" => {
            format!("The page asked for text \"{}\"; Tabwright answered \"{}\".", text("message"), text("answer"))
        }
        _ => return None,
    })
}

impl<H: TabHost> Browser for TabBrowser<H> {
    async fn observe(&mut self) -> Result<PageState, BrowserError> {
        self.look_follows = false;
        let latest = self.latest_look.borrow_mut().take();
        match latest {
            Some(all) => self.refresh_tabs_from(all, false).map(|_| ())?,
            None => self.refresh_tabs(false).await.map(|_| ())?,
        }
        // The look at every tab just taken also tells whether this one has finished loading.
        let tab = match find_tab(&self.seen_tabs, self.tab_id) {
            Some(tab) if tab.is_complete() => tab,
            _ => self.wait_for_load().await?,
        };
        let url = tab.url.clone().unwrap_or_default();
        let title = tab.title.clone().unwrap_or_default();
        let current = tab_info(&tab);
        let tabs: Vec<TabInfo> =
            self.tab_infos().into_iter().map(|t| if t.id == current.id { current.clone() } else { t }).collect();
        let tab_id = self.tab_id;
        let debugger_available = self.debugger.available(tab_id);
        let state = move |snapshot, notice, history: (bool, bool)| PageState {
            tab_id,
            snapshot,
            notice,
            tabs,
            can_go_back: history.0,
            can_go_forward: history.1,
            debugger_available,
        };
        self.history = (false, false);
        if is_blank_page(&url) {
            // A new tab: nothing to see yet, but the task can navigate from here.
            return Ok(state(Snapshot::with_elements(&url, &title, Vec::new()), None, (false, false)));
        }
        if is_restricted(&url) {
            return Err(BrowserError::RestrictedPage { url });
        }
        match self.read_page().await {
            Ok(snapshot) => {
                let dialogs = std::mem::take(&mut self.dialogs);
                let notice = (!dialogs.is_empty()).then(|| dialogs.join(" "));
                Ok(state(snapshot, notice, self.history))
            }
            // Unreadable (an error page, a page too busy to answer): the LLM still sees where the
            // tab is and why the page is empty, so it can go elsewhere.
            Err(e @ (BrowserError::ContentScript { .. } | BrowserError::Timeout { .. })) => {
                let why = if e.to_string().contains("showing error page") {
                    "The page failed to load: Chrome is showing its error page for this URL.".to_string()
                } else {
                    e.to_string()
                };
                Ok(state(Snapshot::with_elements(&url, &title, Vec::new()), Some(why), (false, false)))
            }
            Err(e) => Err(e),
        }
    }

    fn look_follows(&mut self) {
        self.look_follows = true;
    }

    async fn navigate(&mut self, url: &str) -> Result<ActionEffect, BrowserError> {
        let before = self.before_action().await?;
        self.host
            .change_tab(self.tab_id, TabChange::Load(url.into()))
            .await
            .map_err(|reason| BrowserError::Navigation { url: url.into(), reason })?;
        let (after, started) = self.follow_navigation(&before, NAVIGATION_START_MS).await?;
        if !started {
            return Err(BrowserError::Navigation {
                url: url.into(),
                reason: "the page did not start loading (it may be a download, or a URL the browser refused)".into(),
            });
        }
        self.wait_for_quiet_network().await;
        Ok(ActionEffect { navigated_to: after.url, ..Default::default() })
    }

    async fn open_tab(&mut self, url: &str) -> Result<ActionEffect, BrowserError> {
        let current = self.tab().await?;
        // Claimed as it opens: no other task takes it in meanwhile.
        let opening = self.seat.claims.opening();
        let tab = self
            .host
            .open_tab(url, self.tab_id, current.window_id)
            .await
            .map_err(|reason| BrowserError::Navigation { url: url.into(), reason })?;
        let id = tab
            .id
            .ok_or_else(|| BrowserError::Navigation { url: url.into(), reason: "Chrome opened no tab".into() })?;
        self.seat.claims.claim(id, &self.seat.task_id);
        drop(opening);
        if !self.tabs.contains(&id) {
            self.tabs.push(id);
            self.host.set_task_tabs(&self.seat.task_id, &self.tabs);
        }
        group_later(&self.host, &self.grouping, [id]);
        self.make_current(id).await;
        // A new tab starts at about:blank before loading the URL.
        let deadline = self.host.now_ms() + NAVIGATION_START_MS;
        while self.host.now_ms() < deadline {
            let t = self.tab().await?;
            if t.url.as_deref().is_some_and(|u| !is_blank_page(u)) || t.pending_url.is_some() {
                break;
            }
            self.host.sleep(POLL_MS).await;
        }
        let loaded = self.wait_for_load().await?;
        self.wait_for_quiet_network().await;
        Ok(ActionEffect { navigated_to: loaded.url.clone(), opened_tab: Some(tab_info(&loaded)), ..Default::default() })
    }

    async fn switch_tab(&mut self, tab_id: i32) -> Result<TabInfo, BrowserError> {
        self.refresh_tabs(false).await?;
        if !self.tabs.contains(&tab_id) {
            return Err(BrowserError::NoSuchTab { tab_id });
        }
        self.make_current(tab_id).await;
        let tab = self.wait_for_load().await?;
        Ok(tab_info(&tab))
    }

    fn current_tab_id(&self) -> i32 {
        self.tab_id
    }

    async fn take_tab(&mut self, tab_id: i32) -> Result<TabInfo, BrowserError> {
        if !self.tabs.contains(&tab_id) {
            if self.seat.claims.owner(tab_id).is_some_and(|owner| owner != self.seat.task_id) {
                return Err(BrowserError::TabOfAnotherTask { tab_id });
            }
            self.host.tab(tab_id).await.map_err(|_| BrowserError::NoSuchTab { tab_id })?;
            self.seat.claims.claim(tab_id, &self.seat.task_id);
            self.tabs.push(tab_id);
            self.known_tabs.push(tab_id);
            self.host.set_task_tabs(&self.seat.task_id, &self.tabs);
            group_later(&self.host, &self.grouping, [tab_id]);
        }
        self.switch_tab(tab_id).await
    }

    async fn close_tab(&mut self, tab_id: i32) -> Result<Option<TabInfo>, BrowserError> {
        self.refresh_tabs(false).await?;
        if !self.tabs.contains(&tab_id) {
            return Err(BrowserError::NoSuchTab { tab_id });
        }
        if self.tabs.len() == 1 {
            return Err(BrowserError::LastTab { tab_id });
        }
        self.debugger.release(tab_id).await;
        self.host.close_tab(tab_id).await.map_err(|_| BrowserError::NoSuchTab { tab_id })?;
        self.tabs.retain(|&id| id != tab_id);
        self.host.set_task_tabs(&self.seat.task_id, &self.tabs);
        if tab_id != self.tab_id {
            return Ok(None);
        }
        let next = *self.tabs.last().ok_or(BrowserError::TabClosed)?;
        self.make_current(next).await;
        let tab = self.wait_for_load().await?;
        Ok(Some(tab_info(&tab)))
    }

    async fn go_back(&mut self) -> Result<ActionEffect, BrowserError> {
        self.history_go(-1).await
    }

    async fn go_forward(&mut self) -> Result<ActionEffect, BrowserError> {
        self.history_go(1).await
    }

    async fn click(&mut self, index: u32) -> Result<ActionEffect, BrowserError> {
        // The look at every tab and the click go out together: one round trip less per click.
        let look = self.start_action();
        // The top frame reads itself once the click is done when a look follows: the snapshot
        // is then under way, or taken, while the worker settles the click.
        let read_after = (std::mem::take(&mut self.look_follows) && self.target(index).is_ok_and(|t| t.frame_id == 0))
            .then_some(ReadAfter { viewport_expansion: self.options.viewport_expansion });
        let expect = self.expected.take().filter(|(i, _)| *i == index).map(|(_, facts)| facts);
        let clicked = self
            .ask_element(index, |local| ContentRequest::Click {
                v: PROTOCOL_VERSION,
                index: local,
                read_after,
                expect: expect.clone(),
            })
            .await;
        let before = self.tabs_before_action(look.await).await?;
        let result = match clicked {
            Ok(result) => result,
            // The click unloaded the page before its content script could answer.
            Err(BrowserError::ContentScript { reason }) if page_went_away(&reason) => {
                serde_json::json!({"effect": true})
            }
            Err(e) => return Err(e),
        };
        if result["effect"].as_bool() != Some(false) {
            // The page reacted. Wait for a navigation only when the click started one (a link,
            // a submit); a click that changed the page in place goes on at once.
            let grace = if result["navigating"].as_bool() == Some(false) { 0.0 } else { NAVIGATION_GRACE_MS };
            return self.settle(&before, grace).await;
        }
        // The page showed no reaction to the script click. It may have opened a tab or started
        // a navigation the content script cannot see; if not, it probably ignores events that
        // are not trusted: click again as a person's mouse would.
        let effect = self.settle(&before, NEW_TAB_GRACE_MS).await?;
        if effect.navigated_to.is_some() || effect.opened_tab.is_some() || effect.tab_closed_to.is_some() {
            return Ok(effect);
        }
        // A slow handler may have reacted after all: it sent a request, or changed the page
        // while the network settled. Clicking again would do its work twice.
        if self.network_state().await.is_some_and(|(_, last_request)| last_request >= self.action_started) {
            return Ok(effect);
        }
        // Asked again, the element is watched afresh: what the real click does is seen.
        if self.late_click_effect(index, true).await {
            return Ok(effect);
        }
        if !self.debugger.available(self.tab_id) {
            return Ok(effect);
        }
        let before = self.tab().await?;
        self.expected = expect.map(|facts| (index, facts));
        self.trusted_click(index).await?;
        let effect = self.settle(&before, NAVIGATION_GRACE_MS).await?;
        let unchanged = self.changed_nothing(index, &effect).await;
        Ok(ActionEffect { trusted_fallback: true, unchanged, ..effect })
    }

    async fn drag_and_drop(&mut self, index: u32, to: DropPoint) -> Result<DragOutcome, BrowserError> {
        let source = self.target(index)?;
        let (to_index, to_point) = match to {
            DropPoint::Element(target) => {
                let target = self.target(target)?;
                if target.frame_id != source.frame_id {
                    return Err(BrowserError::ElementUnsuitable {
                        index,
                        reason: "it and the element to drop it on are in different frames, and a drag stays within one"
                            .into(),
                    });
                }
                (Some(target.local), None)
            }
            // The point is in the top window; the drag happens in the element's own frame.
            DropPoint::Point(x, y) => (None, Some((x - source.offset.0, y - source.offset.1))),
        };
        let look = self.start_action();
        let dragged = self
            .ask_element(index, |local| ContentRequest::Drag { v: PROTOCOL_VERSION, index: local, to_index, to_point })
            .await;
        let before = self.tabs_before_action(look.await).await?;
        let changed = dragged?["effect"].as_bool() == Some(true);
        let effect = self.settle(&before, NAVIGATION_GRACE_MS).await?;
        Ok(DragOutcome { changed, effect })
    }

    async fn upload_file(&mut self, index: u32, file: &TaskFile) -> Result<UploadOutcome, BrowserError> {
        let missing = |reason: String| BrowserError::FileMissing { name: file.name.clone(), reason };
        let data = match self.host.read_task_file(&file.id).await {
            Ok(Some(data)) => data,
            Ok(None) => return Err(missing("it was removed, or kept longer than 30 days".into())),
            Err(e) => return Err(missing(e)),
        };
        let look = self.start_action();
        let given = self
            .ask_element(index, |local| ContentRequest::Upload {
                v: PROTOCOL_VERSION,
                index: local,
                name: file.name.clone(),
                mime: file.mime.clone(),
                data,
            })
            .await;
        let before = self.tabs_before_action(look.await).await?;
        let result = given?;
        let target = if result["target"].as_str() == Some("drop") { UploadTarget::Drop } else { UploadTarget::Input };
        let accepted = result["accepted"].as_bool() == Some(true);
        let effect = self.settle(&before, NAVIGATION_GRACE_MS).await?;
        Ok(UploadOutcome { target, accepted, effect })
    }

    async fn click_trusted(&mut self, index: u32) -> Result<ActionEffect, BrowserError> {
        if !self.debugger.available(self.tab_id) {
            return Err(BrowserError::Unsupported("click with trusted input once the debugging bar was closed"));
        }
        let before = self.before_action().await?;
        // Watched from now on, so the answer says whether the real click changed anything.
        self.late_click_effect(index, true).await;
        self.trusted_click(index).await?;
        let effect = self.settle(&before, NAVIGATION_GRACE_MS).await?;
        let unchanged = self.changed_nothing(index, &effect).await;
        Ok(ActionEffect { trusted: true, unchanged, ..effect })
    }

    async fn click_at(&mut self, x: f64, y: f64) -> Result<ActionEffect, BrowserError> {
        let before = self.before_action().await?;
        self.debugger.click_at(self.tab_id, x, y).await?;
        self.settle(&before, NAVIGATION_GRACE_MS).await
    }

    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError> {
        let look = self.start_action();
        let typed = self
            .ask_element(index, |local| ContentRequest::Input {
                v: PROTOCOL_VERSION,
                index: local,
                text: text.into(),
                clear,
            })
            .await;
        let before = self.tabs_before_action(look.await).await?;
        typed?;
        // Typing seldom navigates; if it does, the next observation waits for the new page.
        self.settle(&before, 0.0).await
    }

    async fn send_keys(&mut self, keys: &[KeyPress]) -> Result<ActionEffect, BrowserError> {
        let before = self.before_action().await?;
        self.debugger.press_keys(self.tab_id, keys).await?;
        self.settle(&before, NAVIGATION_GRACE_MS).await
    }

    async fn scroll(&mut self, down: bool, pages: f64, index: Option<u32>) -> Result<ScrollOutcome, BrowserError> {
        let request = |local| ContentRequest::Scroll { v: PROTOCOL_VERSION, down, pages, index: local };
        let result = match index {
            Some(index) => self.ask_element(index, |local| request(Some(local))).await?,
            None => self.ask_page(&request(None)).await?,
        };
        parse_result(result, "scroll result")
    }

    async fn find_text(&mut self, text: &str) -> Result<u32, BrowserError> {
        let result = self.ask_page(&ContentRequest::FindText { v: PROTOCOL_VERSION, text: text.into() }).await?;
        Ok(if result["found"].as_bool() == Some(true) {
            result["count"].as_u64().unwrap_or(1).max(1) as u32
        } else {
            0
        })
    }

    async fn dropdown_options(&mut self, index: u32) -> Result<Vec<DropdownOption>, BrowserError> {
        let result = self
            .ask_element(index, |local| ContentRequest::DropdownOptions { v: PROTOCOL_VERSION, index: local })
            .await?;
        // Listing options is reading: it makes no real click (the guard lets reading through
        // unasked). A control a script's click does not open is opened by select_dropdown, or
        // by the model's own click.
        if result["real_click"].as_str() == Some("open") {
            return Err(BrowserError::ElementUnsuitable {
                index,
                reason: "no options showed when a script's click opened it; choose with select_dropdown, or click it and read the options on the page".into(),
            });
        }
        parse_result(result["options"].clone(), "dropdown options")
    }

    async fn select_option(&mut self, index: u32, text: &str) -> Result<(String, ActionEffect), BrowserError> {
        let before = self.before_action().await?;
        let ask = |text: String, then| {
            move |local| ContentRequest::SelectOption { v: PROTOCOL_VERSION, index: local, text: text.clone(), then }
        };
        let mut result = self.ask_element(index, ask(text.into(), None)).await?;
        // A control a script's click did not open: a person's real click opens it.
        if result["real_click"].as_str() == Some("open") {
            self.open_for_real(index).await?;
            result = self.ask_element(index, ask(text.into(), Some(RealClickMade::Opened))).await?;
        }
        // An option that took no script's click: a real click on it, where the page said it is.
        if result["real_click"].as_str() == Some("option") {
            let option = result["text"].as_str().unwrap_or(text).to_string();
            let target = self.target(index)?;
            let (Some(x), Some(y)) = (result["x"].as_f64(), result["y"].as_f64()) else {
                return Err(BrowserError::ContentScript { reason: "the option's place was not given".into() });
            };
            if !self.debugger.available(self.tab_id) {
                return Err(BrowserError::ElementUnsuitable {
                    index,
                    reason: format!("the option {option:?} took no script's click, and a real one needs the debugging bar, which was closed; click the option on the page"),
                });
            }
            // The script's click sent a request (its page may be saving the choice): a real
            // click would do that work twice.
            if self.network_state().await.is_some_and(|(_, last_request)| last_request >= self.action_started) {
                return Err(BrowserError::ElementUnsuitable {
                    index,
                    reason: format!("the option {option:?} was clicked and the page sent a request, but the control does not show it as chosen yet; look at the page again"),
                });
            }
            self.debugger.click_at(self.tab_id, x + target.offset.0, y + target.offset.1).await?;
            result = self.ask_element(index, ask(option, Some(RealClickMade::Chose))).await?;
        }
        let chosen = result["selected"].as_str().unwrap_or(text).to_string();
        let effect = self.settle(&before, NAVIGATION_GRACE_MS).await?;
        Ok((chosen, effect))
    }

    async fn search_page(&mut self, pattern: &str, regex: bool, max: u32) -> Result<PageMatches, BrowserError> {
        let request = ContentRequest::SearchPage {
            v: PROTOCOL_VERSION,
            pattern: pattern.into(),
            regex,
            max_matches: max,
            context: 80,
        };
        parse_result(self.ask_page(&request).await?, "search results")
    }

    async fn page_markdown(&mut self) -> Result<PageMarkdown, BrowserError> {
        let files = ["vendor/turndown.js", "vendor/turndown-plugin-gfm.js", "content/markdown.js"];
        match within(&self.host, CONTENT_TIMEOUT_MS, self.host.inject_files(self.tab_id, &files)).await {
            None => return Err(BrowserError::Timeout {
                what:
                    "Loading the markdown converter into the page (it may be showing a dialog or running a long script)"
                        .into(),
                seconds: CONTENT_TIMEOUT_MS / 1000,
            }),
            Some(Err(reason)) => {
                return Err(BrowserError::ContentScript {
                    reason: format!("the markdown converter could not be loaded: {reason}"),
                })
            }
            Some(Ok(())) => {}
        }
        parse_result(self.ask_page(&ContentRequest::Markdown { v: PROTOCOL_VERSION }).await?, "page markdown")
    }

    async fn screenshot(&mut self) -> Result<Screenshot, BrowserError> {
        self.highlights_painted().await;
        // A tab on show is captured without the debugger and its bar; any other through it.
        if let Some(shot) = self.capture_shown_tab().await {
            return Ok(shot);
        }
        self.debugger.screenshot(self.tab_id).await
    }

    async fn script_target_url(&mut self) -> Result<String, BrowserError> {
        self.debugger.target_url(self.tab_id).await
    }

    async fn evaluate(&mut self, code: &str) -> Result<String, BrowserError> {
        self.debugger.evaluate(self.tab_id, code).await
    }

    async fn wait(&mut self, ms: u32) {
        self.host.sleep(ms).await;
    }

    async fn leave_blocked_page(&mut self) {
        let Ok(before) = self.tab().await else { return };
        let _ = self.history_go(-1).await;
        let still_there = self.tab().await.is_ok_and(|now| now.url == before.url);
        if !still_there {
            return;
        }
        // Nothing to go back to: the page opened a tab straight onto the blocked site.
        if self.tabs.len() > 1 {
            let _ = self.close_tab(self.tab_id).await;
        } else {
            let _ = self.host.change_tab(self.tab_id, TabChange::Load("about:blank".into())).await;
            let _ = self.wait_for_load().await;
        }
    }

    async fn new_elements_appeared(&mut self) -> bool {
        let reply = self.ask_page(&ContentRequest::ElementsAdded { v: PROTOCOL_VERSION }).await;
        reply.is_ok_and(|result| result["added"].as_bool() == Some(true))
    }

    async fn act_facts(&mut self, of: crate::browser::FactsOf) -> Result<crate::guard::ActFacts, BrowserError> {
        use crate::browser::FactsOf;
        let result = match of {
            FactsOf::Element(index) => {
                self.ask_element(index, |local| ContentRequest::ActFacts {
                    v: PROTOCOL_VERSION,
                    index: Some(local),
                    point: None,
                })
                .await?
            }
            FactsOf::Focused => {
                self.ask_page(&ContentRequest::ActFacts { v: PROTOCOL_VERSION, index: None, point: None }).await?
            }
            FactsOf::Point(x, y) => {
                self.ask_page(&ContentRequest::ActFacts { v: PROTOCOL_VERSION, index: None, point: Some((x, y)) })
                    .await?
            }
        };
        let text = result["facts_json"].as_str().unwrap_or_default().to_string();
        let facts = crate::guard::ActFacts::from_json_text(&text).map_err(|e| BrowserError::ContentScript {
            reason: format!("the page's facts of the element could not be read: {e}"),
        })?;
        self.facts_read = Some((of, text));
        Ok(facts)
    }

    fn expect_facts(&mut self, of: crate::browser::FactsOf) {
        self.expected = match (&self.facts_read, of) {
            (Some((read, facts)), crate::browser::FactsOf::Element(index)) if *read == of => {
                Some((index, facts.clone()))
            }
            _ => None,
        };
    }

    async fn ask_consent(
        &mut self,
        consent: &crate::guard::Consent,
    ) -> Result<crate::guard::ConsentAnswer, BrowserError> {
        Ok(self.wait_for_person(self.seat.waits.consents.clone(), consent.id).await)
    }

    async fn ask_human(&mut self, _question: &str) -> Result<String, BrowserError> {
        Ok(self.wait_for_person(self.seat.waits.answers.clone(), 0).await)
    }

    async fn finish(&mut self) {
        for (tab_id, frame_id) in std::mem::take(&mut self.highlighted) {
            clear_highlights(&self.host, tab_id, frame_id).await;
        }
        // Nothing more goes into pages, and every frame with the scripts takes them out: the
        // page's own functions and dialogs are the person's again.
        if let Err(e) = self.host.end_page_scripts(&self.seat.task_id).await {
            self.host.warn(&format!("Tabwright could not take its scripts out of the pages: {e}"));
        }
        self.debugger.release_all().await;
        self.host.close_content_ports(&self.tabs);
    }
}

/// The refusal for a dropdown whose list no click showed.
fn no_options_shown(index: u32) -> BrowserError {
    BrowserError::ElementUnsuitable {
        index,
        reason: "no options showed when it was opened, and a real click could not be made (the debugging bar was closed); click it, then click the option on the page".into(),
    }
}
