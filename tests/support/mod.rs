//! Scripted fakes for the two ports, so the whole agent loop runs natively.
//!
//! - [`FakeSite`] is a tiny web site behind the `Browser` port: a log-in page whose form really
//!   checks the typed values, and a welcome page.
//! - [`ScriptedLlm`] is an LLM behind the `LlmTransport` port that answers in the wire format of
//!   the request it got (OpenAI chat completions, Anthropic Messages, Gemini generateContent,
//!   Ollama /api/chat). Its policy reads the state text the core sent and finds elements by
//!   their text, never by indices known in advance; it records every request.

#![allow(dead_code)]

use futures::executor::block_on;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use tabwright::agent::{Agent, Ports, StopSignal, TaskHistory};
use tabwright::browser::{
    ActionEffect, Browser, BrowserError, PageMarkdown, PageState, Screenshot, TaskFile, UploadOutcome, UploadTarget,
};
use tabwright::dom::{Element, Snapshot};
use tabwright::llm::{HttpRequest, HttpResponse, LlmTransport, TransportError};
use tabwright::protocol::AgentEvent;
use tabwright::settings::{Limits, LlmSettings, Settings};

pub fn settings(max_steps: u32) -> Settings {
    Settings {
        llm: LlmSettings {
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "scripted".into(),
            api_key: "sk-test".into(),
            ..LlmSettings::default()
        },
        limits: Limits { max_steps, ..Limits::default() },
        page: Default::default(),
        actions: Default::default(),
        safety: Default::default(),
        agent: Default::default(),
        sites: Default::default(),
        tasks_at_once: 3,
    }
}

/// The state of the fake site, shared with the test for assertions.
#[derive(Debug, Default)]
pub struct SiteState {
    pub url: String,
    pub fields: BTreeMap<u32, String>,
    pub logged_in_as: Option<String>,
    pub clicks: Vec<u32>,
    /// The elements clicked with trusted input (`click_trusted`).
    pub trusted_clicks: Vec<u32>,
    /// The user closed the debugging bar: actions that need the debugger are not offered.
    pub debugger_unavailable: bool,
    /// Files given to elements: (index, file name, its id).
    pub uploads: Vec<(u32, String, String)>,
    /// Indices the page has removed since the last observe (to test stale indices).
    pub removed: Vec<u32>,
    pub observations: u32,
    /// The page as markdown, for `extract`.
    pub markdown: String,
    /// What the user answers `ask_human` questions with; the questions asked are kept.
    pub answer: String,
    pub questions: Vec<String>,
    pub screenshots: u32,
    /// Screenshots fail with this error (a page Chrome will not capture).
    pub screenshot_error: Option<String>,
    /// How often the task was taken off a page the firewall blocks.
    pub left_blocked: u32,
    /// Navigations that end elsewhere: (asked, landed).
    pub redirects: Vec<(String, String)>,
    /// Added to every element's number, as another visit would number the page afresh.
    pub renumbered_by: u32,
    /// Set by `look_follows` until the next observe.
    pub look_announced: bool,
    /// The element actions (`click 58`, `input 41`) that ran told that a look follows them.
    pub ran_before_look: Vec<String>,
    /// When set, the log-in page embeds a frame from this address with a field of its own
    /// ("Card number", index 77).
    pub embedded_frame: Option<String>,
    /// The scripts run in the page, as sent.
    pub scripts: Vec<String>,
    /// What the person answers the guard's consents with, in turn (then: allow once); the
    /// consents asked are kept.
    pub consent_answers: std::collections::VecDeque<tabwright::guard::ConsentAnswer>,
    pub consents: Vec<tabwright::guard::Consent>,
    /// What the page says of an element for the guard, where not what its snapshot says; and
    /// of the focused element.
    pub facts: BTreeMap<u32, tabwright::guard::ActFacts>,
    pub focused_facts: Option<tabwright::guard::ActFacts>,
    /// The elements whose facts a click had to find unchanged.
    pub expected: Vec<u32>,
    /// Where the debugger's target is when a script is about to run, when not the page's URL
    /// (the page moved on after it was observed).
    pub script_target: Option<String>,
}

#[derive(Clone)]
pub struct FakeSite {
    pub state: Rc<RefCell<SiteState>>,
    /// Pending forever on observe after this many observations (to test stop).
    pub hang_after: Option<u32>,
    /// Clicks never finish (a page whose script blocks).
    pub hang_on_click: bool,
    /// Typing makes new elements appear (a suggestion list).
    pub input_adds_elements: bool,
}

pub const LOGIN_URL: &str = "https://app.example.com/login";
pub const HOME_URL: &str = "https://app.example.com/home";
/// A page that cannot be read (an error page).
pub const BROKEN_URL: &str = "https://app.example.com/broken";

impl FakeSite {
    pub fn at(url: &str) -> Self {
        FakeSite {
            state: Rc::new(RefCell::new(SiteState { url: url.into(), ..Default::default() })),
            hang_after: None,
            hang_on_click: false,
            input_adds_elements: false,
        }
    }

    fn element(index: u32, tag: &str, attrs: &[(&str, &str)], text: &str) -> Element {
        Element::new(index, tag, attrs, text)
    }

    fn snapshot(&self) -> Snapshot {
        let s = self.state.borrow();
        let (title, elements) = if s.url == LOGIN_URL {
            // Indices deliberately not 1..n, so a policy that guesses indices fails.
            (
                "Sign in".to_string(),
                vec![
                    Self::element(41, "input", &[("name", "username"), ("placeholder", "Username")], ""),
                    Self::element(
                        17,
                        "input",
                        &[("type", "password"), ("name", "password"), ("placeholder", "Password")],
                        "",
                    ),
                    Self::element(58, "button", &[("type", "submit")], "Submit"),
                ],
            )
        } else if s.url == HOME_URL {
            let who = s.logged_in_as.clone().unwrap_or_default();
            (format!("Welcome, {who}"), vec![Self::element(3, "a", &[("href", "/logout")], "Log out")])
        } else {
            ("Example".to_string(), vec![Self::element(9, "a", &[("href", LOGIN_URL)], "Sign in")])
        };
        let elements = elements
            .into_iter()
            .filter(|e| !s.removed.contains(&e.index))
            .map(|e| Element { index: e.index + s.renumbered_by, ..e })
            .collect();
        let mut snapshot = Snapshot::with_elements(&s.url, &title, elements);
        if let (Some(frame), true) = (&s.embedded_frame, s.url == LOGIN_URL) {
            snapshot.nodes.push(tabwright::dom::Node::Frame { depth: 0, url: frame.clone() });
            let field = Self::element(77, "input", &[("placeholder", "Card number")], "");
            snapshot.nodes.push(tabwright::dom::Node::Element(Element { depth: 1, ..field }));
        }
        snapshot
    }
}

impl Browser for FakeSite {
    async fn observe(&mut self) -> Result<PageState, BrowserError> {
        let n = {
            let mut s = self.state.borrow_mut();
            s.observations += 1;
            s.look_announced = false;
            s.observations
        };
        if self.hang_after.is_some_and(|h| n > h) {
            std::future::pending::<()>().await;
        }
        let url = self.state.borrow().url.clone();
        if url.starts_with("chrome://") {
            return Err(BrowserError::RestrictedPage { url });
        }
        if url == BROKEN_URL {
            return Err(BrowserError::ContentScript { reason: "the page failed to load".into() });
        }
        let debugger_available = !self.state.borrow().debugger_unavailable;
        Ok(PageState { debugger_available, ..PageState::new(1, self.snapshot()) })
    }

    async fn navigate(&mut self, url: &str) -> Result<ActionEffect, BrowserError> {
        let mut s = self.state.borrow_mut();
        let landed = s.redirects.iter().find(|(from, _)| from == url).map_or(url.to_string(), |(_, to)| to.clone());
        s.url = landed.clone();
        Ok(ActionEffect { navigated_to: Some(landed), ..Default::default() })
    }

    async fn click(&mut self, index: u32) -> Result<ActionEffect, BrowserError> {
        if self.hang_on_click {
            std::future::pending::<()>().await;
        }
        let mut s = self.state.borrow_mut();
        if std::mem::take(&mut s.look_announced) {
            s.ran_before_look.push(format!("click {index}"));
        }
        let index = index.checked_sub(s.renumbered_by).ok_or(BrowserError::ElementGone { index })?;
        if s.removed.contains(&index) {
            return Err(BrowserError::ElementGone { index });
        }
        s.clicks.push(index);
        match (s.url.as_str(), index) {
            (LOGIN_URL, 58) => {
                if s.fields.get(&41).map(String::as_str) == Some("alice")
                    && s.fields.get(&17).map(String::as_str) == Some("hunter2")
                {
                    s.logged_in_as = Some("alice".into());
                    s.url = HOME_URL.into();
                    Ok(ActionEffect { navigated_to: Some(HOME_URL.into()), ..Default::default() })
                } else {
                    Ok(ActionEffect::default())
                }
            }
            (_, 9) => {
                s.url = LOGIN_URL.into();
                Ok(ActionEffect { navigated_to: Some(LOGIN_URL.into()), ..Default::default() })
            }
            _ => Ok(ActionEffect::default()),
        }
    }

    async fn upload_file(&mut self, index: u32, file: &TaskFile) -> Result<UploadOutcome, BrowserError> {
        self.state.borrow_mut().uploads.push((index, file.name.clone(), file.id.clone()));
        Ok(UploadOutcome { target: UploadTarget::Input, accepted: true, effect: ActionEffect::default() })
    }

    async fn click_trusted(&mut self, index: u32) -> Result<ActionEffect, BrowserError> {
        self.state.borrow_mut().trusted_clicks.push(index);
        let effect = self.click(index).await?;
        Ok(ActionEffect { trusted: true, ..effect })
    }

    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError> {
        let mut s = self.state.borrow_mut();
        if std::mem::take(&mut s.look_announced) {
            s.ran_before_look.push(format!("input {index}"));
        }
        let index = index.checked_sub(s.renumbered_by).ok_or(BrowserError::ElementGone { index })?;
        if s.removed.contains(&index) {
            return Err(BrowserError::ElementGone { index });
        }
        let field = s.fields.entry(index).or_default();
        if clear {
            field.clear();
        }
        field.push_str(text);
        Ok(ActionEffect::default())
    }

    fn look_follows(&mut self) {
        self.state.borrow_mut().look_announced = true;
    }

    async fn leave_blocked_page(&mut self) {
        let mut s = self.state.borrow_mut();
        s.left_blocked += 1;
        s.url = LOGIN_URL.into();
    }

    async fn new_elements_appeared(&mut self) -> bool {
        self.input_adds_elements && !self.state.borrow().fields.is_empty()
    }

    async fn page_markdown(&mut self) -> Result<PageMarkdown, BrowserError> {
        let s = self.state.borrow();
        Ok(PageMarkdown { markdown: s.markdown.clone(), title: "Example".into(), url: s.url.clone() })
    }

    async fn script_target_url(&mut self) -> Result<String, BrowserError> {
        let s = self.state.borrow();
        Ok(s.script_target.clone().unwrap_or_else(|| s.url.clone()))
    }

    async fn evaluate(&mut self, code: &str) -> Result<String, BrowserError> {
        self.state.borrow_mut().scripts.push(code.to_string());
        Ok("42".into())
    }

    async fn screenshot(&mut self) -> Result<Screenshot, BrowserError> {
        self.state.borrow_mut().screenshots += 1;
        if let Some(reason) = self.state.borrow().screenshot_error.clone() {
            return Err(BrowserError::Debugger { what: "Taking a screenshot".into(), reason });
        }
        Ok(Screenshot { png_base64: "iVBORw0KGgo=".into(), width: 1280, height: 800 })
    }

    async fn ask_human(&mut self, question: &str) -> Result<String, BrowserError> {
        let mut s = self.state.borrow_mut();
        s.questions.push(question.to_string());
        Ok(s.answer.clone())
    }

    async fn act_facts(&mut self, of: tabwright::browser::FactsOf) -> Result<tabwright::guard::ActFacts, BrowserError> {
        let s = self.state.borrow();
        let found = match of {
            tabwright::browser::FactsOf::Element(index) => s.facts.get(&index).cloned(),
            tabwright::browser::FactsOf::Focused => s.focused_facts.clone(),
            tabwright::browser::FactsOf::Point(..) => None,
        };
        found.ok_or(BrowserError::Unsupported("read an element's facts"))
    }

    fn expect_facts(&mut self, of: tabwright::browser::FactsOf) {
        if let tabwright::browser::FactsOf::Element(index) = of {
            self.state.borrow_mut().expected.push(index);
        }
    }

    async fn ask_consent(
        &mut self,
        consent: &tabwright::guard::Consent,
    ) -> Result<tabwright::guard::ConsentAnswer, BrowserError> {
        let mut s = self.state.borrow_mut();
        s.consents.push(consent.clone());
        Ok(s.consent_answers.pop_front().unwrap_or(tabwright::guard::ConsentAnswer::AllowOnce))
    }
}

/// One recorded request: the parsed body of the chat-completions call.
pub type Recorded = Rc<RefCell<Vec<Value>>>;

/// What the scripted LLM answers.
pub enum Reply {
    /// An AgentOutput object, wrapped in a chat-completions response.
    Output(Value),
    /// Raw assistant content (to test invalid answers).
    Content(String),
    /// An HTTP status and body.
    Http(u16, String),
    /// The transport fails.
    Unreachable(String),
    /// Never answers.
    Hang,
}

/// Decides each answer from the state text and the request body.
type Policy = Box<dyn Fn(&str, &Value) -> Reply>;

pub struct ScriptedLlm {
    pub requests: Recorded,
    policy: Policy,
}

impl ScriptedLlm {
    /// `policy(state_text, request_body)` decides each answer.
    pub fn new(policy: impl Fn(&str, &Value) -> Reply + 'static) -> Self {
        ScriptedLlm { requests: Rc::new(RefCell::new(Vec::new())), policy: Box::new(policy) }
    }
}

/// The actions that log alice in on the log-in page the state shows (its fields and button
/// found by their text), or `None` when the state shows no such form.
pub fn log_in_actions(state: &str) -> Option<Value> {
    let user = index_of(state, "placeholder=Username")?;
    let pass = index_of(state, "placeholder=Password")?;
    let submit = index_of(state, ">Submit")?;
    Some(json!([
        {"input": {"index": user, "text": "alice", "clear": null}},
        {"input": {"index": pass, "text": "hunter2", "clear": true}},
        {"click": {"index": submit}}
    ]))
}

/// A model that logs in by reading the page: fill the fields found by placeholder, press the
/// button found by its text, and finish when the title welcomes alice.
pub fn login_policy(state: &str, _body: &Value) -> Reply {
    if title_of(state).starts_with("Welcome, alice") {
        return output("Report success", json!([{"done": {"text": "Logged in as alice.", "success": true}}]));
    }
    match log_in_actions(state) {
        Some(actions) => output("Fill in the form and submit it", actions),
        None => match index_of(state, ">Sign in") {
            Some(link) => output("Open the sign-in page", json!([{"click": {"index": link}}])),
            None => output("Give up", json!([{"done": {"text": "No sign-in found", "success": false}}])),
        },
    }
}

pub fn output(next_goal: &str, actions: Value) -> Reply {
    Reply::Output(json!({
        "evaluation_previous_goal": "judged from the page",
        "memory": "",
        "next_goal": next_goal,
        "action": actions,
    }))
}

impl LlmTransport for ScriptedLlm {
    async fn post(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let body: Value = tabwright::json::from_text(&request.body).expect("the core sends JSON");
        self.requests.borrow_mut().push(body.clone());
        let state = state_text(&body);
        let content = match (self.policy)(&state, &body) {
            Reply::Output(v) => v.to_string(),
            Reply::Content(c) => c,
            Reply::Http(status, body) => return Ok(HttpResponse { status, headers: Vec::new(), body }),
            Reply::Unreachable(reason) => return Err(TransportError(reason)),
            Reply::Hang => {
                std::future::pending::<()>().await;
                unreachable!()
            }
        };
        let response = match WireFormat::of(&body) {
            WireFormat::OpenAi => json!({
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": null}, "logprobs": null, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }),
            WireFormat::Anthropic => {
                let input: Value = tabwright::json::from_text(&content).unwrap_or(Value::String(content));
                json!({
                    "id": "msg_test", "type": "message", "role": "assistant", "model": body["model"],
                    "content": [{"type": "tool_use", "id": "toolu_test", "name": body["tools"][0]["name"], "input": input}],
                    "stop_reason": "tool_use", "stop_sequence": null,
                    "usage": {"input_tokens": 100, "output_tokens": 20},
                })
            }
            WireFormat::Gemini => json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": content}]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
            }),
            WireFormat::Ollama => json!({
                "model": body["model"], "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": content},
                "done_reason": "stop", "done": true, "prompt_eval_count": 100, "eval_count": 20,
            }),
        };
        Ok(HttpResponse { status: 200, headers: Vec::new(), body: response.to_string() })
    }
}

/// The provider wire format of a request body, read from its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    OpenAi,
    Anthropic,
    Gemini,
    Ollama,
}

impl WireFormat {
    pub fn of(body: &Value) -> WireFormat {
        if body.get("contents").is_some() {
            WireFormat::Gemini
        } else if body.get("max_tokens").is_some() && body.get("system").is_some() {
            WireFormat::Anthropic
        } else if body.get("format").is_some() && body.get("response_format").is_none() {
            WireFormat::Ollama
        } else {
            WireFormat::OpenAi
        }
    }
}

/// The text of the request's last user message (without an attached image), in any format.
fn user_text(body: &Value) -> String {
    let joined = |parts: &Value| -> String {
        parts.as_array().map_or_else(String::new, |parts| {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
        })
    };
    match WireFormat::of(body) {
        WireFormat::Gemini => {
            body["contents"].as_array().and_then(|c| c.last()).map_or_else(String::new, |c| joined(&c["parts"]))
        }
        _ => {
            let message = body["messages"].as_array().and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
            match message.map(|m| &m["content"]) {
                Some(Value::String(text)) => text.clone(),
                Some(parts) => joined(parts),
                None => String::new(),
            }
        }
    }
}

/// The JSON Schema the request asks the answer to follow, in any format.
pub fn answer_schema(body: &Value) -> Value {
    match WireFormat::of(body) {
        // JSON-object mode: the schema is written at the end of the system prompt.
        WireFormat::OpenAi if body["response_format"]["type"] == "json_object" => {
            let system = body["messages"][0]["content"].as_str().unwrap_or_default();
            system
                .rfind("JSON Schema:")
                .and_then(|at| tabwright::json::from_text(&system[at + 12..]).ok())
                .unwrap_or(Value::Null)
        }
        WireFormat::OpenAi => body["response_format"]["json_schema"]["schema"].clone(),
        WireFormat::Anthropic => body["tools"][0]["input_schema"].clone(),
        WireFormat::Gemini => body["generationConfig"]["responseJsonSchema"].clone(),
        WireFormat::Ollama => body["format"].clone(),
    }
}

/// The name the request gives its answer's schema (`agent_output`, `extraction`, …), where the
/// format names it.
pub fn schema_name(body: &Value) -> Option<&str> {
    match WireFormat::of(body) {
        WireFormat::OpenAi => body["response_format"]["json_schema"]["name"].as_str(),
        WireFormat::Anthropic => body["tools"][0]["name"].as_str(),
        WireFormat::Gemini | WireFormat::Ollama => None,
    }
}

/// The step a state text is for ("Step 12 of 70." in its step info).
pub fn step_of(state: &str) -> u32 {
    let info = &state[state.rfind("<step_info>").expect("a step info")..];
    info.split_whitespace().nth(2).and_then(|n| n.parse().ok()).expect("a step number")
}

/// The user message's text (without an attached image).
pub fn state_text(body: &Value) -> String {
    user_text(body)
}

/// Whether a request is one of `extract`'s calls rather than an agent step.
pub fn is_extraction(body: &Value) -> bool {
    match schema_name(body) {
        Some(name) => name == "extraction",
        // Formats that do not name the schema: the extraction answer has no `action`.
        None => answer_schema(body)["properties"].get("action").is_none(),
    }
}

/// The index of the first element line in the state text that contains `needle`.
pub fn index_of(state: &str, needle: &str) -> Option<u32> {
    state.lines().find(|l| l.contains(needle)).and_then(|l| {
        let l = l.trim_start().trim_start_matches('*');
        let inner = l.strip_prefix('[')?;
        inner[..inner.find(']')?].parse().ok()
    })
}

/// The page title in the state text.
pub fn title_of(state: &str) -> &str {
    state.lines().find_map(|l| l.strip_prefix("Title: ")).unwrap_or_default()
}

/// The action names offered in a request's schema.
/// The actions the state message says the page allows now (`Available actions: a, b.`).
pub fn available_actions(body: &Value) -> Vec<String> {
    let state = state_text(body);
    let line = state.lines().find_map(|l| l.strip_prefix("Available actions: ")).unwrap_or_default();
    line.trim_end_matches('.').split(", ").filter(|n| !n.is_empty()).map(str::to_string).collect()
}

/// The actions the request's schema offers: one branch each.
pub fn offered_actions(body: &Value) -> Vec<String> {
    answer_schema(body)["properties"]["action"]["items"]["anyOf"]
        .as_array()
        .map(|branches| {
            branches.iter().filter_map(|b| b["properties"].as_object().and_then(|p| p.keys().next().cloned())).collect()
        })
        .unwrap_or_default()
}

/// A task run to its end: its history, its events and the requests the LLM received.
pub struct Run {
    pub history: TaskHistory,
    pub events: Vec<AgentEvent>,
    pub requests: Vec<Value>,
}

/// The agent a test runs: the fake site, the scripted model, events kept in a log.
pub type TestAgent = Agent<FakeSite, ScriptedLlm, Box<dyn Fn(AgentEvent)>, fn() -> f64>;

/// Runs task `(id, text)` as `configure` sets the agent up (a follow-up, a replay), keeping
/// its events and the requests the LLM received.
pub fn run_configured(
    site: FakeSite,
    llm: ScriptedLlm,
    settings: tabwright::settings::Settings,
    (id, task): (&str, &str),
    stop: StopSignal,
    configure: impl FnOnce(TestAgent) -> TestAgent,
) -> Run {
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink: Box<dyn Fn(AgentEvent)> = {
        let events = events.clone();
        Box::new(move |e: AgentEvent| events.borrow_mut().push(e))
    };
    let requests = llm.requests.clone();
    let clock: fn() -> f64 = || 0.0;
    let ports = Ports { browser: site, transport: llm, events: sink, clock };
    let history = block_on(configure(Agent::new(id.into(), task.into(), settings, ports, stop)).run());
    let events = events.borrow().clone();
    let requests = requests.borrow().clone();
    Run { history, events, requests }
}
