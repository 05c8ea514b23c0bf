//! The tools a client sees: their names, what each does in words a model acts on, and input
//! schemas derived from the core's own types (`crate::bridge`), so that what a client may send
//! is what the worker reads. A call's arguments are read by those types too.

use crate::bridge::{ActInput, ClientRequest, RunTaskInput, TabInput, TabsInput, TaskRef, TaskStatusInput};
use serde_json::{Map, Value};

/// What a tool does to the browser, for the annotations clients show and decide by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Looks only (`readOnlyHint`).
    ReadsOnly,
    /// Changes what Tabwright does, not the pages (stopping a task).
    Steers,
    /// Acts on pages as the person would, acts that cannot be undone included
    /// (`destructiveHint`; the person is asked before those).
    ActsOnPages,
}

/// One tool, as listed.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub effect: Effect,
    pub input_schema: Map<String, Value>,
    /// The shape of the result's `structuredContent`, for the tools whose result has one shape.
    pub output_schema: Option<Map<String, Value>>,
}

/// What `run_task` answers once the task has ended: its `structuredContent`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct TaskResult {
    /// The task's id, for `task_status` and `stop_task`.
    pub task_id: String,
    /// Where the side panel's history keeps the task (its id there is the task's id).
    pub history_id: String,
    /// Whether the task did what was asked.
    pub success: bool,
    /// The agent's answer, or why the task failed or stopped.
    pub answer: String,
    /// The data of `output_schema`'s shape, when the task was given one.
    pub data: Option<Value>,
    /// Steps taken.
    pub steps: u32,
    /// What the model's requests cost, when the provider's prices are known.
    pub cost_usd: Option<f64>,
}

const RUN_TASK: &str = "Have Tabwright's own agent do a whole task in the person's own browser, where they are \
    signed in: it looks at pages and acts until done, and returns the answer (or data of output_schema's shape), \
    the steps it took and the task's id in the side panel's history. The person watches it live in Tabwright's \
    side panel and may be asked before acts that cannot be undone. Start it in the tab in front (default), a \
    tab from `tabs` (tab_id), a new blank tab (new_tab), or a new tab at `url`. Progress comes as notifications, \
    a step each.";
const TASK_STATUS: &str = "Where a task run_task started stands: its status, the steps finished since `since` \
    (pass the `next` of the last reply), its end and answer once it has one, and what it waits for the person \
    to answer, if anything.";
const STOP_TASK: &str = "Stop a task run_task started (one waiting in the queue leaves it).";
const TABS: &str = "The browser's tabs: id, window, URL, title, whether in front, and which task works in each. \
    Pass a tab's id to observe, screenshot, extract or run_task.";
const OBSERVE: &str = "The page of a tab as Tabwright's own model reads it: URL, title, tabs, and each element \
    a person would use on the screen as `[index]<tag attributes>text`, plus the actions the page allows now. \
    Use the indices with `act`. Without tab_id, the tab your acts work in (at first a new tab of your own \
    group); with tab_id, that tab becomes it. Observe again after an action that may have changed the page: \
    an index from before is refused.";
const ACT: &str = "One action on the page the last `observe` showed, checked against the actions that page \
    allows: an object with one key, the action's name, e.g. {\"click\": {\"index\": 12}}, {\"input\": \
    {\"index\": 4, \"text\": \"alice\"}}, {\"scroll\": {\"down\": true}}, {\"navigate\": {\"url\": \
    \"https://…\"}}, {\"send_keys\": {\"keys\": \"Enter\"}}. Returns what it did, as Tabwright's model is told. \
    It runs in the person's browser under their rules: outside the sites you started on, or for an act that \
    cannot be undone (buy, send, delete), the person is asked first in Tabwright's side panel and the call \
    waits for their answer.";
const SCREENSHOT: &str = "A PNG of the tab your acts work in (or tab_id's, which then becomes it).";
const EXTRACT: &str = "The whole page of the tab your acts work in (or tab_id's) as markdown: text, links, \
    tables, the parts below the screen too.";

/// The tools, in the order they are listed.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            output_schema: Some(schema_of::<TaskResult>()),
            ..spec("run_task", RUN_TASK, Effect::ActsOnPages, schema_of::<RunTaskInput>())
        },
        spec("task_status", TASK_STATUS, Effect::ReadsOnly, schema_of::<TaskStatusInput>()),
        spec("stop_task", STOP_TASK, Effect::Steers, schema_of::<TaskRef>()),
        spec("tabs", TABS, Effect::ReadsOnly, schema_of::<TabsInput>()),
        spec("observe", OBSERVE, Effect::ReadsOnly, schema_of::<TabInput>()),
        spec("act", ACT, Effect::ActsOnPages, act_schema()),
        spec("screenshot", SCREENSHOT, Effect::ReadsOnly, schema_of::<TabInput>()),
        spec("extract", EXTRACT, Effect::ReadsOnly, schema_of::<TabInput>()),
    ]
}

fn spec(name: &'static str, description: &'static str, effect: Effect, input_schema: Map<String, Value>) -> ToolSpec {
    ToolSpec { name, description, effect, input_schema, output_schema: None }
}

/// The names, for a message about a name that is none of them.
pub fn names() -> Vec<&'static str> {
    tools().iter().map(|t| t.name).collect()
}

/// A type's JSON Schema as a tool's schema: an object, its references inlined, nothing at its
/// top that some clients refuse (`$schema`, `$defs`) or that speaks of the Rust type rather
/// than the tool (its title and doc: the tool's description says what it takes).
fn schema_of<T: schemars::JsonSchema>() -> Map<String, Value> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    let mut object = inline(schema.clone(), &schema).as_object().cloned().unwrap_or_default();
    object.remove("$schema");
    object.remove("$defs");
    object.remove("title");
    object.remove("description");
    object.insert("type".into(), "object".into());
    object.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    object
}

/// `value` with every `{"$ref": "#/$defs/X"}` replaced by X from `root`.
fn inline(value: Value, root: &Value) -> Value {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get("$ref") {
                if let Some(name) = reference.strip_prefix("#/$defs/") {
                    if let Some(found) = root.get("$defs").and_then(|d| d.get(name)) {
                        return inline(found.clone(), root);
                    }
                }
            }
            Value::Object(object.into_iter().map(|(k, v)| (k, inline(v, root))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|v| inline(v, root)).collect()),
        other => other,
    }
}

/// `act`'s input: the action, one of every action some page may offer (each page allows a part
/// of them, which the worker checks).
fn act_schema() -> Map<String, Value> {
    let mut object = schema_of::<ActInput>();
    let union = crate::actions::ActionUnion::every(&crate::actions::registered()).schema();
    let mut action = union.as_object().cloned().unwrap_or_default();
    action.insert(
        "description".into(),
        "One action: an object with one key, the action's name, whose value is its parameters.".into(),
    );
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert("action".into(), Value::Object(action));
    }
    object
}

/// A call's arguments read as tool `name`'s request; the error says what is wrong and what
/// is expected.
pub fn request_of(name: &str, arguments: Option<Map<String, Value>>) -> Result<ClientRequest, String> {
    let arguments = Value::Object(arguments.unwrap_or_default());
    fn read<T: serde::de::DeserializeOwned>(name: &str, arguments: &Value) -> Result<T, String> {
        crate::json::read_value::<T>(arguments).map_err(|e| {
            let expected = tools()
                .into_iter()
                .find(|t| t.name == name)
                .map(|t| Value::Object(t.input_schema).to_string())
                .unwrap_or_default();
            let expected = crate::llm::excerpt(&expected, 600);
            format!("The arguments of `{name}` do not fit: {e}. Expected arguments of this schema: {expected}")
        })
    }
    Ok(match name {
        "run_task" => ClientRequest::RunTask(read(name, &arguments)?),
        "task_status" => ClientRequest::TaskStatus(read(name, &arguments)?),
        "stop_task" => ClientRequest::StopTask(read(name, &arguments)?),
        "tabs" => ClientRequest::Tabs(read(name, &arguments)?),
        "observe" => ClientRequest::Observe(read(name, &arguments)?),
        "act" => ClientRequest::Act(read(name, &arguments)?),
        "screenshot" => ClientRequest::Screenshot(read(name, &arguments)?),
        "extract" => ClientRequest::Extract(read(name, &arguments)?),
        _ => return Err(format!("There is no tool `{name}`. Tabwright's tools are: {}.", names().join(", "))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_schema_is_an_object_with_no_reference_left() {
        for tool in tools() {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            let text = Value::Object(tool.input_schema.clone()).to_string();
            assert!(!text.contains("$ref") && !text.contains("$defs"), "{}: {text}", tool.name);
            for key in ["oneOf", "anyOf", "allOf"] {
                assert!(!tool.input_schema.contains_key(key), "{} has {key} at its top", tool.name);
            }
            assert!(tool.description.len() > 40);
        }
        let run_task = tools().into_iter().find(|t| t.name == "run_task").unwrap();
        let output = Value::Object(run_task.output_schema.unwrap());
        assert_eq!(output["type"], "object");
        for field in ["task_id", "history_id", "success", "answer", "data", "steps", "cost_usd"] {
            assert!(output["properties"].get(field).is_some(), "{field} in {output}");
        }
        let act = tools().into_iter().find(|t| t.name == "act").unwrap();
        let text = Value::Object(act.input_schema).to_string();
        assert!(text.contains("\"click\"") && text.contains("\"input\""), "{text}");
    }

    #[test]
    fn arguments_are_read_by_the_cores_types_and_a_misfit_says_what_is_expected() {
        let args = serde_json::json!({"task": "Find the price", "new_tab": true});
        let request = request_of("run_task", args.as_object().cloned()).unwrap();
        assert!(matches!(request, ClientRequest::RunTask(RunTaskInput { new_tab: true, .. })));
        let wrong = request_of("run_task", serde_json::json!({"task": 42}).as_object().cloned()).unwrap_err();
        assert!(wrong.contains("`run_task`") && wrong.contains("task"), "{wrong}");
        let extra = request_of("observe", serde_json::json!({"tab": 3}).as_object().cloned()).unwrap_err();
        assert!(extra.contains("tab"), "{extra}");
        let unknown = request_of("format_disk", None).unwrap_err();
        assert!(unknown.contains("format_disk") && unknown.contains("observe"), "{unknown}");
        assert!(matches!(request_of("tabs", None), Ok(ClientRequest::Tabs(_))));
    }
}
