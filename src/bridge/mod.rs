//! The messages between the coding agents that drive Tabwright over MCP and the worker.
//!
//! A client (Claude Code, Cursor…) starts `tabwright-mcp`, which speaks MCP to it over stdio.
//! That server reaches the extension through the bridge Chrome starts for it (the same binary,
//! started by `chrome.runtime.connectNative` as the native-messaging host [`HOST_NAME`]): a
//! socket only this user can open, then Chrome's pipe to the worker. No port is opened that a
//! web page or another user of the machine could reach.
//!
//! Each client's server sends [`ClientMessage`]s (the bridge numbers the connection: `client`)
//! and the worker answers each with a [`WorkerMessage`] of the same `id`. The tools' inputs
//! ([`RunTaskInput`], [`ActInput`]…) are these types: the MCP server gives their JSON Schemas as
//! the tools' input schemas and reads a call's arguments with them, and the worker reads them
//! again, so what crosses is checked on both sides like every other message of the core.

use serde::{Deserialize, Serialize};

/// The version of these messages; a server and an extension of other versions refuse each other
/// with a message that says to update.
pub const BRIDGE_VERSION: u32 = 1;

/// The native-messaging host's name, as its manifest and `connectNative` give it.
pub const HOST_NAME: &str = "com.tabwright.bridge";

/// The most Chrome takes in one message from a native host (1 MB).
pub const HOST_MESSAGE_MAX: usize = 1024 * 1024;

/// What a client asks, numbered by the bridge (`client`: its connection) and by the client's
/// server (`id`: the reply carries it back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientMessage {
    pub v: u32,
    #[serde(default)]
    pub client: u32,
    pub id: u64,
    pub request: ClientRequest,
}

crate::tagged::tagged_enum! {
tag = "type", remote = "ClientRequest", serde(rename_all = "snake_case");
/// One request of a client. Every request but `hello` and `gone` waits until the person has
/// allowed the client (the first time it connects, the side panel asks them).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub enum ClientRequest {
    /// The client says who it is (MCP's `clientInfo`), once, when it connects.
    Hello(ClientHello),
    /// Tabwright's own agent does a task; the reply is `task_accepted`, then `task_status`
    /// follows it.
    RunTask(RunTaskInput),
    /// Where a task stands, with its steps from `since` on.
    TaskStatus(TaskStatusInput),
    /// Stop a task this client started.
    StopTask(TaskRef),
    /// The browser's tabs.
    Tabs(TabsInput),
    /// The state text of a tab, as the agent's model reads it: the indices `act` takes.
    Observe(TabInput),
    /// One action of the page's union, on the page the last `observe` showed.
    Act(ActInput),
    /// A PNG of the tab.
    Screenshot(TabInput),
    /// The page as markdown.
    Extract(TabInput),
    /// Sent by the bridge, never by a client: the client's connection closed.
    Gone(GoneInput),
}
}

/// Who a client is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientHello {
    /// The client's name, as it gives it (`claude-code`, `cursor-vscode`…).
    pub name: String,
    #[serde(default)]
    pub version: String,
    /// The name a person reads, when the client gives one.
    #[serde(default)]
    pub title: Option<String>,
}

/// `run_task`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunTaskInput {
    /// What to do, in plain words, as a person would ask it in Tabwright's side panel.
    pub task: String,
    /// Open this http(s) URL in a new tab and start there.
    #[serde(default)]
    pub url: Option<String>,
    /// Start in a new blank tab (ignored when `url` is given).
    #[serde(default)]
    pub new_tab: bool,
    /// Start in this tab (an id from `tabs`). Without `url`, `new_tab` or `tab_id`, the task
    /// starts in the tab the person has in front.
    #[serde(default)]
    pub tab_id: Option<i32>,
    /// A JSON Schema: the task's result is then data of that shape, in `data`.
    #[serde(default)]
    pub output_schema: Option<serde_json::Value>,
}

/// `task_status`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskStatusInput {
    /// The id `run_task` returned.
    pub task_id: String,
    /// Only the steps after the first `since` (the `next` of an earlier reply).
    #[serde(default)]
    pub since: Option<u32>,
}

/// A task, by the id `run_task` returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    pub task_id: String,
}

/// `tabs`' input: nothing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabsInput {}

/// A tab to look at; the one the client works in when absent (at first, a new tab of its own).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabInput {
    /// A tab id from `tabs`. The client's acts go on in that tab from then on.
    #[serde(default)]
    pub tab_id: Option<i32>,
}

/// `act`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActInput {
    /// One action, an object with one key, the action's name, whose value is its parameters:
    /// `{"click": {"index": 12}}`. Indices are those of the last `observe`.
    pub action: serde_json::Value,
}

/// The bridge's word that client `client`'s connection closed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoneInput {}

/// The worker's answer to the request `id` of client `client`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkerMessage {
    pub v: u32,
    pub client: u32,
    pub id: u64,
    pub reply: ClientReply,
}

/// What the worker answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientReply {
    /// `hello`: the person allowed this client (`allowed`), or has not answered yet.
    Welcome { allowed: bool },
    /// `run_task`: the task runs (or waits in the queue for a place, `queued`).
    TaskAccepted { task_id: String, queued: bool },
    /// `task_status`.
    Task(Box<TaskReport>),
    /// `tabs`.
    Tabs { tabs: Vec<TabLine> },
    /// `observe`.
    Observed(Box<Observation>),
    /// `act`.
    Acted(Box<ActOutcome>),
    /// `screenshot`: a PNG, base64.
    Screenshot { tab_id: i32, png_base64: String, width: u32, height: u32 },
    /// `extract`.
    Extracted { tab_id: i32, url: String, title: String, markdown: String },
    /// `stop_task`, `gone`: done.
    Done,
    /// The request was not carried out; `message` says why and what to do.
    Refused { why: RefusedBecause, message: String },
}

/// Why a request was refused, for the MCP server to choose its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefusedBecause {
    /// The person turned the MCP server off in the options.
    Off,
    /// The person denied this client.
    Denied,
    /// The person has not answered whether this client may use Tabwright.
    NotAnswered,
    /// The request was malformed or named something that does not exist (a task, a tab).
    BadRequest,
    /// An index the last `observe` did not give, or a page that changed since.
    Stale,
    /// Something else stood in the way; `message` says what.
    Failed,
    /// Another version of the server or the extension.
    Version,
}

/// Where a task stands, as `task_status` tells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskReport {
    pub task_id: String,
    pub task: String,
    pub status: crate::protocol::TaskStatus,
    /// Steps finished.
    pub step: u32,
    pub max_steps: Option<u32>,
    /// The steps finished after `since`, in order.
    pub steps: Vec<StepLine>,
    /// What to pass as `since` next time.
    pub next: u32,
    /// How it ended, once it has.
    pub end: Option<crate::record::TaskEnd>,
    pub cost_usd: Option<f64>,
    /// What the task waits for the person to answer in the side panel, if anything.
    pub waiting_for_person: Option<String>,
}

/// One finished step, in short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepLine {
    pub step: u32,
    pub url: String,
    /// What the agent set out to do next.
    pub goal: String,
    /// Each action as a person reads it, with its result.
    pub actions: Vec<String>,
    pub error: Option<String>,
}

/// One tab of the browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TabLine {
    pub tab_id: i32,
    pub window_id: i32,
    pub url: String,
    pub title: String,
    /// The tab in front of its window.
    pub active: bool,
    /// Which task works in it, if one does (this client's own acts included).
    pub task_id: Option<String>,
}

/// A tab as `observe` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Observation {
    pub tab_id: i32,
    pub url: String,
    pub title: String,
    /// The page as the agent's model reads it: tabs, scroll position, and each element a
    /// person would use as `[index]<tag attributes>text`.
    pub state: String,
    /// The actions this page allows now (`act` takes one of them).
    pub actions: Vec<String>,
}

/// What one action did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActOutcome {
    /// The action as a person reads it ("Clicked the Sign in button").
    pub description: String,
    /// Its result, as the agent's model is told it.
    pub result: String,
    pub is_error: bool,
    /// The page may have changed: `observe` before the next action that takes an index.
    pub look_again: bool,
}

impl ClientMessage {
    /// A message from its JSON text, the version checked first.
    pub fn from_json_text(text: &str) -> Result<Self, String> {
        read_versioned(text)
    }
}

impl WorkerMessage {
    /// A reply from its JSON text, the version checked first.
    pub fn from_json_text(text: &str) -> Result<Self, String> {
        read_versioned(text)
    }
}

/// A message of either side from its JSON text: another version is said as such (so the
/// person updates both) rather than as whatever field it lacks.
fn read_versioned<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let value: serde_json::Value = crate::json::from_text(text).map_err(|e| e.to_string())?;
    match value.get("v").and_then(serde_json::Value::as_u64) {
        Some(found) if found != u64::from(BRIDGE_VERSION) => Err(version_mismatch(found)),
        _ => crate::json::read_value(&value).map_err(|e| e.to_string()),
    }
}

fn version_mismatch(found: u64) -> String {
    format!(
        "Tabwright's MCP server speaks version {BRIDGE_VERSION} of its messages and the extension version {found}: \
         update both to the same release (rebuild the extension and run scripts/install-mcp again)."
    )
}

impl ClientReply {
    pub fn refused(why: RefusedBecause, message: impl Into<String>) -> Self {
        ClientReply::Refused { why, message: message.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_with_its_tag_and_refuses_unknown_fields() {
        let text = r#"{"v":1,"client":3,"id":7,"request":{"type":"act","action":{"click":{"index":4}}}}"#;
        let message = ClientMessage::from_json_text(text).unwrap();
        assert_eq!(message.client, 3);
        assert!(matches!(message.request, ClientRequest::Act(ActInput { .. })));
        let back = serde_json::to_string(&message).unwrap();
        assert_eq!(ClientMessage::from_json_text(&back).unwrap(), message);

        let extra = r#"{"v":1,"id":7,"request":{"type":"observe","tab_id":2,"colour":"red"}}"#;
        assert!(ClientMessage::from_json_text(extra).unwrap_err().contains("colour"));
        let unknown = r#"{"v":1,"id":7,"request":{"type":"format_disk"}}"#;
        assert!(ClientMessage::from_json_text(unknown).unwrap_err().contains("format_disk"));
        let tabs = r#"{"v":1,"id":1,"request":{"type":"tabs"}}"#;
        assert_eq!(ClientMessage::from_json_text(tabs).unwrap().request, ClientRequest::Tabs(TabsInput {}));
    }

    #[test]
    fn another_version_says_to_update_both() {
        let text = r#"{"v":9,"id":7,"request":{"type":"tabs"}}"#;
        assert!(ClientMessage::from_json_text(text).unwrap_err().contains("update both"));
        let reply = r#"{"v":2,"client":0,"id":7,"reply":{"type":"done"}}"#;
        assert!(WorkerMessage::from_json_text(reply).unwrap_err().contains("update both"));
    }

    #[test]
    fn a_reply_goes_and_comes_back_the_same() {
        let reply = WorkerMessage {
            v: BRIDGE_VERSION,
            client: 2,
            id: 9,
            reply: ClientReply::Acted(Box::new(ActOutcome {
                description: "Clicked".into(),
                result: "ok".into(),
                is_error: false,
                look_again: true,
            })),
        };
        let text = serde_json::to_string(&reply).unwrap();
        assert_eq!(WorkerMessage::from_json_text(&text).unwrap(), reply);
    }
}
