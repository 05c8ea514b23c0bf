//! The MCP server a client starts (rmcp over stdio): the tools of `tools.rs`, each call passed to
//! the extension over the link (`link.rs`), each reply turned into a tool result. An argument
//! that does not fit, or a tool that does not exist, is a protocol error naming what is
//! expected; what the extension refuses is a tool result marked as an error, whose words tell
//! the client's model what to do.

use super::link::Link;
use super::tools::{self, Effect, TaskResult};
use crate::bridge::{ClientHello, ClientReply, ClientRequest, StepLine, TaskRef, TaskReport, TaskStatusInput};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// How often a running task's progress is asked for.
/// How long the reply waits after the notifications of the steps that came with a task's end.
const LAST_PROGRESS_GAP: std::time::Duration = std::time::Duration::from_millis(100);
const POLL_EVERY: Duration = Duration::from_millis(400);
/// How long a look or an act may take before the call gives up (an act may wait for the
/// person's yes; the task goes on, the panel shows it).
const CALL_TIMEOUT: Duration = Duration::from_secs(600);
/// How long stopping a cancelled call's task may take.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

const INSTRUCTIONS: &str = "Tabwright works in the person's own Chrome, where they are signed in. For a whole task, \
call run_task: Tabwright's own agent does it and returns the answer. To drive pages with your own reasoning, call \
observe (the page as numbered elements), then act with one action using those indices; observe again after a page \
change, since an older index is refused. The person allows each client once in Tabwright's side panel, sees every \
act live there, and is asked before acts that cannot be undone or that leave the sites you started on.";

/// The server: the link to the extension, shared by every call.
#[derive(Clone)]
pub struct TabwrightServer {
    link: Arc<Link>,
}

impl TabwrightServer {
    pub fn new(link: Link) -> Self {
        TabwrightServer { link: Arc::new(link) }
    }
}

fn text(words: impl Into<String>) -> ContentBlock {
    ContentBlock::text(words.into())
}

fn failed(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![text(message)])
}

fn with_structure(words: String, structure: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![text(words)]);
    result.structured_content = Some(structure);
    result
}

impl ServerHandler for TabwrightServer {
    fn get_info(&self) -> InitializeResult {
        let mut implementation = Implementation::new("tabwright", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("Tabwright".into());
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(implementation)
            .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let client = &request.client_info;
        self.link.set_hello(ClientHello {
            name: client.name.clone(),
            version: client.version.clone(),
            title: client.title.clone(),
        });
        // Said now, so the person is asked while the client gets ready; a browser that is not
        // there yet is tried again at the first call.
        let link = self.link.clone();
        tokio::spawn(async move {
            let _ = link.connect().await;
        });
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let listed = tools::tools()
            .into_iter()
            .map(|spec| {
                // Every tool reaches the open web through the person's browser.
                let annotations = ToolAnnotations::new()
                    .read_only(spec.effect == Effect::ReadsOnly)
                    .destructive(spec.effect == Effect::ActsOnPages)
                    .open_world(true);
                let tool =
                    Tool::new(spec.name, spec.description, Arc::new(spec.input_schema)).with_annotations(annotations);
                match spec.output_schema {
                    Some(output) => tool.with_raw_output_schema(Arc::new(output)),
                    None => tool,
                }
            })
            .collect();
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let asked =
            tools::request_of(&request.name, request.arguments).map_err(|e| McpError::invalid_params(e, None))?;
        let result = match asked {
            ClientRequest::RunTask(input) => self.run_task(ClientRequest::RunTask(input), &context).await,
            other => match self.link.ask(other, Some(CALL_TIMEOUT)).await {
                Ok(reply) => result_of(reply),
                Err(e) => failed(e.to_string()),
            },
        };
        Ok(result.into())
    }
}

impl TabwrightServer {
    /// Starts the task, tells its progress a step at a time, and answers with its end; a call
    /// the client cancels stops the task.
    async fn run_task(&self, request: ClientRequest, context: &RequestContext<RoleServer>) -> CallToolResult {
        let task_id = match self.link.ask(request, Some(CALL_TIMEOUT)).await {
            Ok(ClientReply::TaskAccepted { task_id, .. }) => task_id,
            Ok(other) => return result_of(other),
            Err(e) => return failed(e.to_string()),
        };
        let token = context.meta.get_progress_token();
        let mut since = 0;
        let mut told = 0u32;
        loop {
            let status = ClientRequest::TaskStatus(TaskStatusInput { task_id: task_id.clone(), since: Some(since) });
            let reply = tokio::select! {
                reply = self.link.ask(status, Some(CALL_TIMEOUT)) => reply,
                _ = context.ct.cancelled() => return self.stop_cancelled(&task_id).await,
            };
            let report = match reply {
                Ok(ClientReply::Task(report)) => report,
                Ok(other) => return result_of(other),
                Err(e) => return failed(format!("{e} (task {task_id})")),
            };
            since = report.next;
            if let Some(token) = &token {
                for step in &report.steps {
                    // Progress only grows, whatever the steps' numbers.
                    told = step.step.max(told + 1);
                    let mut note = ProgressNotificationParam::new(token.clone(), f64::from(told));
                    if let Some(total) = report.max_steps {
                        note = note.with_total(f64::from(total.max(told)));
                    }
                    note.message = Some(crate::llm::excerpt(&step_message(step), 400));
                    let _ = context.peer.notify_progress(note).await;
                }
            }
            if report.end.is_some() {
                // A client may handle notifications after the reply that follows them at once,
                // and forget the call's progress with its reply (the TypeScript SDK does): the
                // last steps' notifications get a moment to be read first.
                if token.is_some() && !report.steps.is_empty() {
                    tokio::time::sleep(LAST_PROGRESS_GAP).await;
                }
                return task_result(&report);
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL_EVERY) => {}
                _ = context.ct.cancelled() => return self.stop_cancelled(&task_id).await,
            }
        }
    }

    /// The client cancelled the call of task `task_id`: the task stops too.
    async fn stop_cancelled(&self, task_id: &str) -> CallToolResult {
        let stop = ClientRequest::StopTask(TaskRef { task_id: task_id.to_string() });
        match self.link.ask(stop, Some(STOP_TIMEOUT)).await {
            Ok(ClientReply::Refused { message, .. }) => {
                failed(format!("The call was cancelled; stopping task {task_id} failed: {message}"))
            }
            Err(e) => failed(format!("The call was cancelled; stopping task {task_id} failed: {e}")),
            Ok(_) => failed(format!("Stopped task {task_id}: the call was cancelled.")),
        }
    }
}

/// A step as its progress notification says it: "Step n: goal — action; action".
fn step_message(step: &StepLine) -> String {
    let mut message = format!("Step {}: {}", step.step, step.goal);
    if !step.actions.is_empty() {
        message.push_str(" — ");
        message.push_str(&step.actions.join("; "));
    }
    if let Some(error) = &step.error {
        message.push_str(&format!(" (error: {error})"));
    }
    message
}

/// How a task ended, as `run_task` tells it: whether it succeeded, the answer (or why it failed
/// or stopped), and its data.
fn end_of(end: &crate::record::TaskEnd) -> (bool, String, Option<Value>) {
    match end {
        crate::record::TaskEnd::Done { success, data, .. } => (*success, end.summary(), data.clone()),
        _ => (false, end.summary(), None),
    }
}

/// The result of a task that ended.
fn task_result(report: &TaskReport) -> CallToolResult {
    let (success, answer, data) = report.end.as_ref().map(end_of).unwrap_or((false, String::new(), None));
    let structure = TaskResult {
        task_id: report.task_id.clone(),
        history_id: report.task_id.clone(),
        success,
        answer: answer.clone(),
        data: data.clone(),
        steps: report.step,
        cost_usd: report.cost_usd,
    };
    let structure = serde_json::to_value(&structure).unwrap_or_default();
    let mut words = answer.clone();
    if let Some(data) = &data {
        words.push_str(&format!("\n\nData: {data}"));
    }
    words.push_str(&format!("\n\n(Task {} in Tabwright's history, {} step(s).)", report.task_id, report.step));
    let mut result = with_structure(words, structure);
    if !success {
        result.is_error = Some(true);
    }
    result
}

/// A reply as the client reads it.
fn result_of(reply: ClientReply) -> CallToolResult {
    let structure = serde_json::to_value(&reply).unwrap_or_default();
    match reply {
        ClientReply::Refused { message, .. } => failed(message),
        ClientReply::Observed(seen) => {
            let words = format!(
                "Tab {} — {} — {}\nAllowed actions: {}\n{}",
                seen.tab_id,
                seen.url,
                seen.title,
                seen.actions.join(", "),
                seen.state
            );
            with_structure(words, structure)
        }
        ClientReply::Acted(outcome) => {
            let mut words = format!("{}: {}", outcome.description, outcome.result);
            if outcome.look_again {
                words.push_str("\nThe page may have changed: observe before the next action that takes an index.");
            }
            let mut result = with_structure(words, structure);
            if outcome.is_error {
                result.is_error = Some(true);
            }
            result
        }
        ClientReply::Screenshot { tab_id, png_base64, width, height } => CallToolResult::success(vec![
            ContentBlock::image(png_base64, "image/png"),
            text(format!("Tab {tab_id}, {width}×{height} pixels.")),
        ]),
        ClientReply::Extracted { tab_id, url, title, markdown } => {
            let words = format!("Tab {tab_id} — {url} — {title}\n\n{markdown}");
            with_structure(words, json!({"tab_id": tab_id, "url": url, "title": title}))
        }
        ClientReply::Tabs { tabs } => {
            let lines: Vec<String> = tabs
                .iter()
                .map(|t| {
                    let front = if t.active { " (in front)" } else { "" };
                    let task = t.task_id.as_deref().map(|id| format!(" [task {id}]")).unwrap_or_default();
                    format!("tab {}{front}{task}: {} — {}", t.tab_id, t.title, t.url)
                })
                .collect();
            with_structure(lines.join("\n"), json!({ "tabs": tabs }))
        }
        ClientReply::Task(report) => {
            let status = serde_json::to_value(report.status).ok();
            let status = status.as_ref().and_then(Value::as_str).unwrap_or("unknown");
            let mut words = format!("Task {}: {status}, {} step(s).", report.task_id, report.step);
            for step in &report.steps {
                words.push('\n');
                words.push_str(&step_message(step));
            }
            if let Some(waiting) = &report.waiting_for_person {
                words.push_str(&format!("\nWaiting for the person's yes in the side panel: {waiting}"));
            }
            if let Some(end) = &report.end {
                let (success, answer, _) = end_of(end);
                let how = if success { "Done" } else { "Ended without success" };
                words.push_str(&format!("\n{how}: {answer}"));
            }
            with_structure(words, structure)
        }
        ClientReply::TaskAccepted { task_id, queued } => {
            let words =
                if queued { format!("Task {task_id} waits in the queue.") } else { format!("Task {task_id} runs.") };
            with_structure(words, structure)
        }
        ClientReply::Welcome { .. } | ClientReply::Done => with_structure("Done.".into(), structure),
    }
}
