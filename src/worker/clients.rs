//! Coding agents that drive Tabwright over MCP (`crate::bridge`): the person's say over which
//! may, the tasks they start, and their own acts.
//!
//! # The person stays in charge
//!
//! A client names itself when it connects (`hello`, MCP's `clientInfo`). The first time a name
//! is seen, the side panel asks the person (`clients_asking`, and a notification when no panel
//! is open), and every request of that client waits for the answer, up to `ASK_WAIT_MS`; the
//! answer is kept (`STORAGE_KEY`), and the options list it, to change or forget. A denied client
//! gets nothing, and with the options' switch off no client gets anything. (A name is what a
//! program of this user says of itself: the bridge's socket is this user's alone, so the names
//! tell the person's own programs apart, not strangers.)
//!
//! # What a client does
//!
//! `run_task` starts a task as the panel would: the queue, the caps, the guard and its
//! consents apply unchanged, and the panel shows it live. `observe`, `act`, `screenshot` and
//! `extract` go to the client's own task (`agent::driven`), started at its first such request
//! in a tab group named after it, and ended when the client disconnects or the person stops it
//! (a later request starts another). A client sees and steers only the tasks it started; what
//! becomes of them when it disconnects is the person's choice (`stop_on_disconnect`).

use super::host::WorkerHost;
use super::saved::{QueuedTask, SavedTask};
use super::{Start, TaskHost, TaskSlot, V};
use crate::agent::driven::{Answer, Ask, Asks};
use crate::agent::{AgentEvent, TaskState};
use crate::bridge::{
    ClientHello, ClientMessage, ClientReply, ClientRequest, RefusedBecause, RunTaskInput, StepLine, TabLine,
    TaskReport, WorkerMessage, BRIDGE_VERSION,
};
use crate::message::LocaleText;
use crate::protocol::{ClientAsking, ClientEntry, PanelReply, PanelRequest, Refusal};
use crate::settings::{Settings, StoredLlm};
use crate::worker::host::NoticeText;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

/// Where the switch and the person's answers are kept, in chrome.storage.local.
pub const STORAGE_KEY: &str = "mcp";
/// How long a client's request waits for the person's answer before it is told to ask them.
/// Under the 60 s a client's call commonly waits for an answer.
pub const ASK_WAIT_MS: u32 = 50_000;
/// The most steps a client's own acts take before they start again as another task.
const CLIENT_MAX_STEPS: u32 = 1_000;

/// The switch and the person's answers, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientBook {
    #[serde(default = "on")]
    pub enabled: bool,
    #[serde(default)]
    pub stop_on_disconnect: bool,
    #[serde(default)]
    pub clients: Vec<ClientEntry>,
}

fn on() -> bool {
    true
}

impl Default for ClientBook {
    fn default() -> Self {
        ClientBook { enabled: true, stop_on_disconnect: false, clients: Vec::new() }
    }
}

impl ClientBook {
    fn answer(&self, name: &str) -> Option<bool> {
        self.clients.iter().find(|c| c.name == name).map(|c| c.allowed)
    }
}

/// The title of a client's tab group.
pub fn group_title_of_client(client: &str) -> String {
    format!("Tabwright · {client}")
}

/// The clients connected now and the person's answers.
#[derive(Default)]
pub(crate) struct ClientDesk {
    /// By the bridge's number of each connection.
    connected: RefCell<BTreeMap<u32, Connected>>,
    /// As stored; read at the first need.
    book: RefCell<Option<ClientBook>>,
    /// Which client (by name) started which task.
    owners: RefCell<BTreeMap<String, String>>,
    /// Counts the person's answers and changes of the switch; requests waiting for one are
    /// woken by the next.
    answers: std::cell::Cell<u64>,
    waiting: RefCell<Vec<std::task::Waker>>,
}

impl ClientDesk {
    /// Comes when the person next answers a client or changes the switch.
    fn next_answer(&self) -> impl Future<Output = ()> + '_ {
        let seen = self.answers.get();
        std::future::poll_fn(move |cx| {
            if self.answers.get() != seen {
                return std::task::Poll::Ready(());
            }
            self.waiting.borrow_mut().push(cx.waker().clone());
            std::task::Poll::Pending
        })
    }

    fn answered(&self) {
        self.answers.set(self.answers.get() + 1);
        for waker in self.waiting.borrow_mut().drain(..) {
            waker.wake();
        }
    }
}

#[derive(Default)]
struct Connected {
    hello: Option<ClientHello>,
    /// The tasks it started over this connection.
    tasks: Vec<String>,
    /// Its own acts' task, while it runs.
    acts: Option<(String, Asks)>,
}

/// The name a person reads for a client.
fn title_of(hello: &ClientHello) -> String {
    hello.title.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| hello.name.clone())
}

/// A request's number and client read from a message that could not be read whole, so the
/// refusal reaches the right caller.
fn numbers_of(text: &str) -> (u32, u64) {
    let value: serde_json::Value = crate::json::from_text(text).unwrap_or_default();
    let client = value.get("client").and_then(serde_json::Value::as_u64).unwrap_or(0) as u32;
    let id = value.get("id").and_then(serde_json::Value::as_u64).unwrap_or(0);
    (client, id)
}

fn reply_text(client: u32, id: u64, reply: ClientReply) -> String {
    let message = WorkerMessage { v: BRIDGE_VERSION, client, id, reply };
    serde_json::to_string(&message).unwrap_or_else(|e| {
        format!(
            r#"{{"v":{BRIDGE_VERSION},"client":{client},"id":{id},"reply":{{"type":"refused","why":"failed","message":"The reply could not be written: {}"}}}}"#,
            e.to_string().replace('"', "'")
        )
    })
}

fn failed(message: impl Into<String>) -> ClientReply {
    ClientReply::refused(RefusedBecause::Failed, message)
}

fn bad_request(message: impl Into<String>) -> ClientReply {
    ClientReply::refused(RefusedBecause::BadRequest, message)
}

/// The settings a client's own acts run with: the person's, whatever model they name (none is
/// asked), so a client that brings its own model works before Tabwright's model is set up.
fn client_settings(stored: crate::settings::StoredSettings) -> Result<Settings, Refusal> {
    let mut settings = match stored.validate() {
        Ok(settings) => settings,
        Err(_) => {
            let mut without_model = stored;
            without_model.llm = StoredLlm { model: "none".into(), ..StoredLlm::default() };
            without_model.keys_in_session = false;
            without_model.validate()?
        }
    };
    settings.limits.max_steps = CLIENT_MAX_STEPS;
    Ok(settings)
}

impl<H: WorkerHost> TaskHost<H> {
    /// The clients connected now whom the person has not answered, one per name.
    pub fn clients_asking(&self) -> Vec<ClientAsking> {
        let book = self.clients.book.borrow();
        let mut asking: Vec<ClientAsking> = Vec::new();
        for hello in self.clients.connected.borrow().values().filter_map(|c| c.hello.as_ref()) {
            let answered = book.as_ref().and_then(|b| b.answer(&hello.name)).is_some();
            if !answered && !asking.iter().any(|a| a.name == hello.name) {
                asking.push(ClientAsking { name: hello.name.clone(), title: hello.title.clone() });
            }
        }
        asking
    }

    /// Whether task `task_id` is a client's own acts (`agent::driven`).
    pub(super) fn is_clients_own(&self, task_id: &str) -> bool {
        self.clients.connected.borrow().values().any(|c| c.acts.as_ref().is_some_and(|(id, _)| id == task_id))
    }

    fn clients_asking_changed(&self) {
        self.host.broadcast_clients(&self.clients_asking());
    }

    /// The book as stored now (what another page of the extension wrote too), kept for the
    /// answers given at once (`clients_asking`); when storage cannot be read, the one kept.
    async fn client_book(&self) -> ClientBook {
        let read = match self.host.stored_clients().await {
            Ok(serde_json::Value::Null) => Ok(ClientBook::default()),
            Ok(value) => crate::json::read_value::<ClientBook>(&value).map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        match read {
            Ok(book) => {
                *self.clients.book.borrow_mut() = Some(book.clone());
                book
            }
            Err(e) => {
                self.host.warn(&format!("Tabwright could not read its coding agents' settings: {e}"));
                self.clients.book.borrow().clone().unwrap_or_default()
            }
        }
    }

    async fn write_client_book(&self, book: ClientBook) {
        *self.clients.book.borrow_mut() = Some(book.clone());
        let value = serde_json::to_value(&book).unwrap_or_default();
        if let Err(e) = self.host.write_clients(&value).await {
            self.host.warn(&format!("Tabwright could not keep its coding agents' settings: {e}"));
        }
    }

    /// The answer to a panel's or the options' request about clients: the book as it stands.
    pub(crate) async fn answer_clients_request(self: &Rc<Self>, request: PanelRequest) -> PanelReply {
        let mut book = self.client_book().await;
        let changed = match request {
            PanelRequest::AnswerClient { name, allow, .. } => {
                let title = self
                    .clients
                    .connected
                    .borrow()
                    .values()
                    .filter_map(|c| c.hello.as_ref())
                    .find(|h| h.name == name)
                    .and_then(|h| h.title.clone());
                let now = crate::agent::Clock::now_ms(&self.host.clock());
                match book.clients.iter_mut().find(|c| c.name == name) {
                    Some(entry) => {
                        entry.allowed = allow;
                        entry.answered_ms = now;
                    }
                    None => {
                        book.clients.push(ClientEntry { name: name.clone(), title, allowed: allow, answered_ms: now })
                    }
                }
                self.host.clear_notification(&notice_id(&name)).await;
                if !allow {
                    self.client_denied(&name);
                }
                true
            }
            PanelRequest::ForgetClient { name, .. } => {
                book.clients.retain(|c| c.name != name);
                true
            }
            PanelRequest::SetClientOptions { enabled, stop_on_disconnect, .. } => {
                book.enabled = enabled;
                book.stop_on_disconnect = stop_on_disconnect;
                true
            }
            _ => false,
        };
        if changed {
            self.write_client_book(book.clone()).await;
            self.clients.answered();
            self.clients_asking_changed();
        }
        PanelReply::Clients {
            v: V,
            enabled: book.enabled,
            stop_on_disconnect: book.stop_on_disconnect,
            clients: book.clients,
            asking: self.clients_asking(),
        }
    }

    /// A client the person denied: its own acts end now.
    fn client_denied(&self, name: &str) {
        for connected in self.clients.connected.borrow().values() {
            if connected.hello.as_ref().is_some_and(|h| h.name == name) {
                if let Some((_, asks)) = &connected.acts {
                    asks.close();
                }
            }
        }
    }

    /// Answers one message of the bridge with the JSON text of the reply (a message that
    /// cannot be read is refused, to the caller it names if it names one).
    pub fn answer_client(self: &Rc<Self>, text: String) -> Pin<Box<dyn Future<Output = String>>> {
        let this = self.clone();
        Box::pin(async move {
            let message = match ClientMessage::from_json_text(&text) {
                Ok(message) => message,
                Err(e) => {
                    let (client, id) = numbers_of(&text);
                    let why =
                        if e.contains("update both") { RefusedBecause::Version } else { RefusedBecause::BadRequest };
                    return reply_text(client, id, ClientReply::refused(why, e));
                }
            };
            let (client, id) = (message.client, message.id);
            let reply = this.client_request(client, message.request).await;
            reply_text(client, id, reply)
        })
    }

    /// The bridge's connection closed: every client is gone.
    pub fn bridge_closed(self: &Rc<Self>) {
        let clients: Vec<u32> = self.clients.connected.borrow().keys().copied().collect();
        for client in clients {
            self.client_gone(client);
        }
    }

    async fn client_request(self: &Rc<Self>, client: u32, request: ClientRequest) -> ClientReply {
        match request {
            ClientRequest::Hello(hello) => return self.hello(client, hello).await,
            ClientRequest::Gone(_) => {
                self.client_gone(client);
                return ClientReply::Done;
            }
            _ => {}
        }
        let hello = match self.admitted(client).await {
            Ok(hello) => hello,
            Err(refusal) => return refusal,
        };
        match request {
            ClientRequest::RunTask(input) => self.run_client_task(client, &hello, input).await,
            ClientRequest::TaskStatus(input) => match self.clients_task(&hello, &input.task_id) {
                Ok(slot) => ClientReply::Task(Box::new(report_of(&slot, input.since.unwrap_or(0)))),
                Err(refusal) => self.queued_report(&hello, &input.task_id).unwrap_or(refusal),
            },
            ClientRequest::StopTask(input) => {
                let owned = self.clients.owners.borrow().get(&input.task_id) == Some(&hello.name);
                if !owned {
                    return no_such_task(&input.task_id);
                }
                match self.answer_now(PanelRequest::StopTask { v: V, task_id: Some(input.task_id.clone()) }) {
                    Ok(PanelReply::Refused { message, .. }) => failed(message),
                    _ => ClientReply::Done,
                }
            }
            ClientRequest::Tabs(_) => self.tab_lines().await,
            ClientRequest::Observe(input) => {
                self.ask_own_task(client, &hello, Ask::Observe { tab: input.tab_id }).await
            }
            ClientRequest::Act(input) => self.ask_own_task(client, &hello, Ask::Act { action: input.action }).await,
            ClientRequest::Screenshot(input) => {
                self.ask_own_task(client, &hello, Ask::Screenshot { tab: input.tab_id }).await
            }
            ClientRequest::Extract(input) => {
                self.ask_own_task(client, &hello, Ask::Extract { tab: input.tab_id }).await
            }
            ClientRequest::Hello(_) | ClientRequest::Gone(_) => ClientReply::Done,
        }
    }

    /// A client says who it is; the person is asked about a name they have not answered.
    async fn hello(self: &Rc<Self>, client: u32, hello: ClientHello) -> ClientReply {
        if hello.name.trim().is_empty() {
            return bad_request("A client must give its name (MCP's clientInfo.name).");
        }
        let book = self.client_book().await;
        let name = hello.name.clone();
        let title = title_of(&hello);
        self.clients.connected.borrow_mut().entry(client).or_default().hello = Some(hello);
        if !book.enabled {
            return off();
        }
        match book.answer(&name) {
            Some(true) => ClientReply::Welcome { allowed: true },
            Some(false) => denied(&title),
            None => {
                self.clients_asking_changed();
                let (heading, notice) = asking_notice(&title);
                self.host.notify(&notice_id(&name), &heading, &notice).await;
                ClientReply::Welcome { allowed: false }
            }
        }
    }

    /// The client's hello, once the person allows it; waits up to `ASK_WAIT_MS` for their answer.
    async fn admitted(&self, client: u32) -> Result<ClientHello, ClientReply> {
        let clock = self.host.clock();
        let started = crate::agent::Clock::now_ms(&clock);
        loop {
            let book = self.client_book().await;
            if !book.enabled {
                return Err(off());
            }
            let Some(hello) = self.clients.connected.borrow().get(&client).and_then(|c| c.hello.clone()) else {
                return Err(bad_request("Say hello first: a client names itself before anything else."));
            };
            match book.answer(&hello.name) {
                Some(true) => return Ok(hello),
                Some(false) => return Err(denied(&title_of(&hello))),
                None => {
                    let waited = (crate::agent::Clock::now_ms(&clock) - started).max(0.0) as u32;
                    let left = ASK_WAIT_MS.saturating_sub(waited);
                    if left > 0 && crate::tabs::wait::within(&clock, left, self.clients.next_answer()).await.is_some() {
                        continue;
                    }
                    return Err(ClientReply::refused(
                        RefusedBecause::NotAnswered,
                        format!(
                            "{} waits for the person's answer: ask them to allow it in Tabwright's side panel (a card at its top), then try again.",
                            title_of(&hello)
                        ),
                    ));
                }
            }
        }
    }

    /// A client's connection closed: its own acts end; the tasks it started stop if the person
    /// said so, else they go on in the panel.
    fn client_gone(self: &Rc<Self>, client: u32) {
        let Some(gone) = self.clients.connected.borrow_mut().remove(&client) else { return };
        if let Some((_, asks)) = &gone.acts {
            asks.close();
        }
        let stop = self.clients.book.borrow().as_ref().is_some_and(|b| b.stop_on_disconnect);
        if stop {
            for task_id in gone.tasks {
                let _ = self.answer_now(PanelRequest::StopTask { v: V, task_id: Some(task_id) });
            }
        }
        self.clients_asking_changed();
    }

    async fn run_client_task(self: &Rc<Self>, client: u32, hello: &ClientHello, input: RunTaskInput) -> ClientReply {
        let start = match (input.url, input.new_tab, input.tab_id) {
            (Some(url), _, _) => Start::NewTabAt { url },
            (None, true, _) => Start::NewTab { beside: None },
            (None, false, tab) => Start::Tab { tab },
        };
        let request = QueuedTask {
            task_id: String::new(),
            task: input.task,
            start,
            output_schema: input.output_schema,
            files: Vec::new(),
            script: None,
            model: None,
            follow_up: false,
            follows: None,
            scheduled: false,
        };
        match self.clone().start_task(request).await {
            PanelReply::TaskAccepted { task_id, queued, .. } => {
                self.clients.owners.borrow_mut().insert(task_id.clone(), hello.name.clone());
                if let Some(connected) = self.clients.connected.borrow_mut().get_mut(&client) {
                    connected.tasks.push(task_id.clone());
                }
                ClientReply::TaskAccepted { task_id, queued }
            }
            PanelReply::Refused { message, .. } => failed(message),
            other => failed(format!("Unexpected answer to a start: {other:?}")),
        }
    }

    /// Task `task_id`, if this client started it.
    fn clients_task(&self, hello: &ClientHello, task_id: &str) -> Result<TaskSlot, ClientReply> {
        let owned = self.clients.owners.borrow().get(task_id) == Some(&hello.name);
        let slot = self.tasks.borrow().iter().find(|s| s.task_id == task_id).cloned();
        match slot {
            Some(slot) if owned => Ok(slot),
            _ => Err(no_such_task(task_id)),
        }
    }

    /// A task of this client's still waiting in the queue.
    fn queued_report(&self, hello: &ClientHello, task_id: &str) -> Option<ClientReply> {
        let owned = self.clients.owners.borrow().get(task_id) == Some(&hello.name);
        let queue = self.queue.borrow();
        let queued = queue.iter().find(|q| q.task_id == task_id).filter(|_| owned)?;
        Some(ClientReply::Task(Box::new(TaskReport {
            task_id: task_id.to_string(),
            task: queued.task.clone(),
            status: crate::protocol::TaskStatus::Queued,
            step: 0,
            max_steps: None,
            steps: Vec::new(),
            next: 0,
            end: None,
            cost_usd: None,
            waiting_for_person: None,
        })))
    }

    async fn tab_lines(&self) -> ClientReply {
        let tabs = match self.host.all_tabs().await {
            Ok(tabs) => tabs,
            Err(e) => return failed(format!("The browser's tabs could not be read: {e}")),
        };
        let running = |id: &str| self.tasks.borrow().iter().any(|s| s.running.get() && s.task_id == id);
        let tabs = tabs
            .into_iter()
            .filter_map(|tab| {
                let tab_id = tab.id?;
                Some(TabLine {
                    tab_id,
                    window_id: tab.window_id.unwrap_or(-1),
                    url: tab.url.clone().unwrap_or_default(),
                    title: tab.title.clone().unwrap_or_default(),
                    active: tab.active,
                    task_id: self.claims.owner(tab_id).filter(|owner| running(owner)),
                })
            })
            .collect();
        ClientReply::Tabs { tabs }
    }

    /// Hands `ask` to the client's own task, starting one if none runs.
    async fn ask_own_task(self: &Rc<Self>, client: u32, hello: &ClientHello, ask: Ask) -> ClientReply {
        let running = self.clients.connected.borrow().get(&client).and_then(|c| c.acts.clone()).filter(|(id, asks)| {
            !asks.is_closed() && self.tasks.borrow().iter().any(|s| s.task_id == *id && s.running.get())
        });
        let asks = match running {
            Some((_, asks)) => asks,
            None => {
                let tab = match &ask {
                    Ask::Observe { tab } | Ask::Screenshot { tab } | Ask::Extract { tab } => *tab,
                    // No page was observed in this task: nothing to act on.
                    Ask::Act { .. } => {
                        return ClientReply::refused(
                            RefusedBecause::Stale,
                            "Call observe first: act works on the page the last observe showed (your acts begin again at an observe).",
                        )
                    }
                };
                match self.start_own_task(client, hello, tab).await {
                    Ok(asks) => asks,
                    Err(refusal) => return refusal,
                }
            }
        };
        match asks.post(ask).await {
            Some(answer) => reply_of(answer),
            None => failed(
                "Your acts in this browser ended: the person stopped them in Tabwright's side panel, or an act ended them. \
                 Call observe to begin again.",
            ),
        }
    }

    /// Starts the client's own task in `tab` (taken in), else in a new tab of its group.
    async fn start_own_task(
        self: &Rc<Self>,
        client: u32,
        hello: &ClientHello,
        tab: Option<i32>,
    ) -> Result<Asks, ClientReply> {
        if self.restoring.get() {
            return Err(failed(Refusal::Restoring.to_string()));
        }
        let stored = self.saved_settings().await.map_err(|e| failed(e.to_string()))?;
        let settings = client_settings(stored).map_err(|e| failed(e.to_string()))?;
        let title = title_of(hello);
        let task_id = self.new_task_id();
        let task = format!("The acts {title} asks for");
        let slot = self.claim_slot(&task_id, Vec::new(), Vec::new(), &task_id, false);
        if let Some(tab) = tab {
            if self.task_in_tab(tab, &task_id).is_some() {
                self.drop_slot(&task_id);
                return Err(failed(crate::browser::BrowserError::TabOfAnotherTask { tab_id: tab }.to_string()));
            }
            self.claims.claim(tab, &task_id);
        }
        let start = match tab {
            Some(tab) => Start::Tab { tab: Some(tab) },
            None => Start::NewTab { beside: None },
        };
        let tab_id = match self.pick_tab(start, &group_title_of_client(&title), &task_id).await {
            Ok(tab) if self.task_in_tab(tab, &task_id).is_none() => tab,
            outcome => {
                self.drop_slot(&task_id);
                self.claims.release(&task_id);
                let why = match outcome {
                    Err(reason) => reason.to_string(),
                    Ok(tab_id) => crate::browser::BrowserError::TabOfAnotherTask { tab_id }.to_string(),
                };
                return Err(failed(why));
            }
        };
        slot.tabs.borrow_mut().push(tab_id);
        self.claims.claim(tab_id, &task_id);
        // The client's acts are seen together: a tab of the person's it takes joins its group.
        if tab.is_some() {
            self.group_new_tab(tab_id, &group_title_of_client(&title)).await;
        }
        let saved = SavedTask {
            task_id: task_id.clone(),
            task,
            start_tab: tab_id,
            output_schema: None,
            events: Vec::new(),
            earlier: Vec::new(),
            conversation_id: task_id.clone(),
            script: None,
            files: Vec::new(),
            scheduled: false,
            driven_by: Some(title),
            guard: None,
        };
        let asks = Asks::default();
        self.clients.owners.borrow_mut().insert(task_id.clone(), hello.name.clone());
        if let Some(connected) = self.clients.connected.borrow_mut().get_mut(&client) {
            connected.acts = Some((task_id, asks.clone()));
        } else {
            // Gone meanwhile: the task ends as soon as it starts.
            asks.close();
        }
        self.launch(saved, slot, settings, Vec::new(), &[tab_id], None, Some(asks.clone()));
        Ok(asks)
    }
}

/// The notification that a client asks, for a person with no panel open: its title and text.
fn asking_notice(title: &str) -> (NoticeText, NoticeText) {
    let heading = NoticeText {
        message: "A coding agent asks to use Tabwright".into(),
        locale_text: Some(LocaleText::plain("client_asks_title")),
    };
    let text = NoticeText {
        message: format!(
            "{title} wants to use Tabwright in this browser. Open Tabwright's side panel to allow or deny it."
        ),
        locale_text: Some(LocaleText::new("client_asks", [title])),
    };
    (heading, text)
}

/// What the person may read of clients, in English and where the pages find it in their
/// language (`crate::message`'s check of every core message).
pub fn sample_texts() -> Vec<(String, Option<LocaleText>)> {
    let (heading, text) = asking_notice("Claude Code");
    vec![(heading.message, heading.locale_text), (text.message, text.locale_text)]
}

fn notice_id(name: &str) -> String {
    format!("tabwright-client:{name}")
}

fn off() -> ClientReply {
    ClientReply::refused(
        RefusedBecause::Off,
        "The person turned coding agents off in Tabwright's options (Coding agents): ask them to switch it on.",
    )
}

fn denied(title: &str) -> ClientReply {
    ClientReply::refused(
        RefusedBecause::Denied,
        format!(
            "The person denied {title} the use of Tabwright in this browser. They can allow it in Tabwright's options, under Coding agents."
        ),
    )
}

fn no_such_task(task_id: &str) -> ClientReply {
    bad_request(format!(
        "There is no task {task_id} of yours: use the task_id run_task returned (tasks that ended long ago are only in the side panel's history)."
    ))
}

/// The client's reply to what its own task answered.
fn reply_of(answer: Answer) -> ClientReply {
    match answer {
        Answer::Observed { tab_id, url, title, state, actions } => {
            ClientReply::Observed(Box::new(crate::bridge::Observation { tab_id, url, title, state, actions }))
        }
        Answer::Acted { description, result, is_error, look_again } => {
            ClientReply::Acted(Box::new(crate::bridge::ActOutcome { description, result, is_error, look_again }))
        }
        Answer::Screenshot { tab_id, shot } => {
            ClientReply::Screenshot { tab_id, png_base64: shot.png_base64, width: shot.width, height: shot.height }
        }
        Answer::Extracted { tab_id, page } => {
            ClientReply::Extracted { tab_id, url: page.url, title: page.title, markdown: page.markdown }
        }
        Answer::Refused { stale: true, message } => ClientReply::refused(RefusedBecause::Stale, message),
        Answer::Refused { stale: false, message } => failed(message),
    }
}

/// Where a task stands and its steps from event `since` on.
fn report_of(slot: &TaskSlot, since: u32) -> TaskReport {
    let state: TaskState = slot.state.borrow().clone();
    let events = slot.events.borrow();
    let from = (since as usize).min(events.len());
    let steps = events[from..]
        .iter()
        .filter_map(|event| match event {
            AgentEvent::StepFinished { record, .. } => Some(StepLine {
                step: record.step,
                url: record.url.clone(),
                goal: record.output.as_ref().map(|o| o.next_goal.clone()).unwrap_or_default(),
                actions: record
                    .actions
                    .iter()
                    .map(|a| format!("{} → {}", a.description, crate::llm::excerpt(&a.result.message, 300)))
                    .collect(),
                error: record.error.clone(),
            }),
            _ => None,
        })
        .collect();
    TaskReport {
        task_id: slot.task_id.clone(),
        task: state.task.clone(),
        status: slot.summary().status,
        step: state.step_count,
        max_steps: state.max_steps,
        steps,
        next: events.len() as u32,
        end: state.end.clone(),
        cost_usd: state.cost_usd,
        waiting_for_person: state.pending_consent.as_ref().map(|c| c.act.clone()),
    }
}
