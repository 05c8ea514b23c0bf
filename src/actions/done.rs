//! `done`: end the task with the answer for the user — as free text, or, when the task gives
//! an output schema, as data of that shape.

use super::{schema_check::check_value, ActionContext, ActionDef, ActionResult, ActionSpec, DoneOutcome, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneParams {
    /// The final answer for the user: what was done and what was found.
    pub text: String,
    /// Whether the whole task was completed as asked.
    pub success: bool,
}

pub struct Done;

const DONE_DESCRIPTION: &str =
    "Finish the task: give the final answer and say whether the task succeeded. Must be the only action in its step.";

impl ActionDef for Done {
    type Params = DoneParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "done",
        description: DONE_DESCRIPTION,
        domains: &[],
        page_filter: None,
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn describe(params: &DoneParams, _page: &PageState) -> crate::message::Said {
        finish_description(params.success)
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: DoneParams,
        _ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        Ok(finished(params.text, params.success, None))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StructuredDoneParams {
    /// The task's result, in the shape the task asked for.
    pub data: Value,
    /// Whether the whole task was completed as asked.
    pub success: bool,
}

/// `done` for a task that gave an output schema. Its parameter schema is built per task by
/// [`structured_schema`], and `data` is checked against it.
pub struct StructuredDone;

impl ActionDef for StructuredDone {
    type Params = StructuredDoneParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "done",
        description: "Finish the task: give the result as `data` in the requested shape and say whether the task succeeded. Must be the only action in its step.",
        domains: &[],
        page_filter: None,
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn check(params: &StructuredDoneParams, schema: &Value) -> Result<(), String> {
        match schema.pointer("/properties/data") {
            Some(data_schema) => check_value(&params.data, data_schema, "data"),
            None => Ok(()),
        }
    }

    fn describe(params: &StructuredDoneParams, _page: &PageState) -> crate::message::Said {
        finish_description(params.success)
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: StructuredDoneParams,
        _ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let text = serde_json::to_string_pretty(&params.data).unwrap_or_default();
        Ok(finished(text, params.success, Some(params.data)))
    }
}

/// The parameters of the structured `done`: `data` of the task's output schema, and `success`.
///
/// The output schema goes under `properties.data`, so its own definitions would be left behind:
/// pydantic writes `$defs` with `$ref: "#/$defs/Name"`, zod-to-json-schema `definitions` and
/// references by path. Every local reference is replaced by what it names ([`inline_refs`]).
pub fn structured_schema(output_schema: &Value) -> Value {
    let mut data = inline_refs(output_schema);
    if let Some(obj) = data.as_object_mut() {
        obj.remove("$schema");
        obj.remove("$id");
        obj.entry("description").or_insert_with(|| json!("The task's result, in the shape the task asked for."));
    }
    json!({
        "type": "object",
        "properties": {
            "data": data,
            "success": {"type": "boolean", "description": "Whether the whole task was completed as asked."},
        },
        "required": ["data", "success"],
        "additionalProperties": false,
    })
}

/// How many times one definition may be entered inside itself (a tree of nodes) before the
/// shape stops: deeper than this, the answer holds `null` there.
const MAX_RECURSION: usize = 3;

/// Keywords whose values are data, not schemas: a `$ref` key in them is not a reference.
const DATA_KEYWORDS: &[&str] = &["enum", "const", "default", "examples"];

/// `schema` with every `$ref` to a place in it (`#/$defs/Address`, `#/definitions/Node`,
/// `#/properties/a`) replaced by the schema there, keywords beside the `$ref` kept, and the
/// definition tables dropped. A definition inside itself is entered [`MAX_RECURSION`] times and
/// then stands for `null`; a reference to anything else (another document, a place that is
/// not there) stands for any value, saying so.
pub fn inline_refs(schema: &Value) -> Value {
    let mut entered = Vec::new();
    inline_node(schema, schema, &mut entered)
}

fn inline_node(node: &Value, root: &Value, entered: &mut Vec<String>) -> Value {
    match node {
        Value::Object(map) => {
            let mut out = match map.get("$ref").and_then(Value::as_str) {
                Some(reference) => referenced(reference, root, entered),
                None => serde_json::Map::new(),
            };
            for (key, value) in map {
                if key == "$ref" || key == "$defs" || key == "definitions" {
                    continue;
                }
                let value = if DATA_KEYWORDS.contains(&key.as_str()) {
                    value.clone()
                } else {
                    inline_node(value, root, entered)
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| inline_node(item, root, entered)).collect()),
        other => other.clone(),
    }
}

/// The schema a reference names, inlined in turn, as an object to which the keywords beside
/// the reference are added.
fn referenced(reference: &str, root: &Value, entered: &mut Vec<String>) -> serde_json::Map<String, Value> {
    // A URI fragment: its JSON pointer may carry %XX escapes (`#/$defs/My%20Type`).
    let target = reference
        .strip_prefix('#')
        .and_then(|pointer| root.pointer(&crate::web::percent_decode(pointer).unwrap_or_else(|| pointer.to_string())));
    let schema = match target {
        Some(_) if entered.iter().filter(|r| *r == reference).count() >= MAX_RECURSION => {
            json!({"type": "null", "description": "Nested deeper than the answer can go: null."})
        }
        Some(target) => {
            entered.push(reference.to_string());
            let schema = inline_node(target, root, entered);
            entered.pop();
            schema
        }
        None => {
            json!({"description": format!("Any value (the schema named {reference}, which the task's schema does not hold).")})
        }
    };
    match schema {
        Value::Object(map) => map,
        // `true` (anything) or `false` (nothing) as a whole schema.
        Value::Bool(true) => serde_json::Map::new(),
        other => serde_json::Map::from_iter([("allOf".to_string(), json!([other]))]),
    }
}

fn finish_description(success: bool) -> crate::message::Said {
    if success {
        crate::message::Said::new::<&str>("do_finish_done", "finish: task done".into(), [])
    } else {
        crate::message::Said::new::<&str>("do_finish_not_done", "finish: task not done".into(), [])
    }
}

fn finished(text: String, success: bool, data: Option<Value>) -> ActionResult {
    ActionResult {
        done: Some(DoneOutcome { text, success, data }),
        ..ActionResult::ok(if success { "Task completed" } else { "Task ended without success" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs_in(value: &Value) -> Vec<String> {
        match value {
            Value::Object(map) => map
                .iter()
                .flat_map(|(k, v)| {
                    let own = (k == "$ref" || k == "$defs" || k == "definitions").then(|| k.clone());
                    own.into_iter().chain(refs_in(v))
                })
                .collect(),
            Value::Array(items) => items.iter().flat_map(refs_in).collect(),
            _ => Vec::new(),
        }
    }

    /// What pydantic 2 writes for `class Person(BaseModel): name: str; addresses: list[Address]`
    /// (`Person.model_json_schema()`), with `Address` a model of two strings.
    fn pydantic_person() -> Value {
        json!({
            "$defs": {"Address": {
                "properties": {"street": {"title": "Street", "type": "string"}, "city": {"title": "City", "type": "string"}},
                "required": ["street", "city"], "title": "Address", "type": "object"
            }},
            "properties": {
                "name": {"title": "Name", "type": "string"},
                "addresses": {"items": {"$ref": "#/$defs/Address"}, "title": "Addresses", "type": "array"},
                "home": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "default": null}
            },
            "required": ["name", "addresses"], "title": "Person", "type": "object"
        })
    }

    #[test]
    fn pydantic_definitions_are_inlined_where_they_are_used() {
        let schema = structured_schema(&pydantic_person());
        assert_eq!(refs_in(&schema), Vec::<String>::new(), "{schema:#}");
        let data = &schema["properties"]["data"];
        assert_eq!(data["properties"]["addresses"]["items"]["required"], json!(["street", "city"]));
        assert_eq!(data["properties"]["home"]["anyOf"][0]["properties"]["city"]["type"], "string");
        // The answer is checked against the inlined shape.
        let params = |data: Value| StructuredDoneParams { data, success: true };
        let good = json!({"name": "Ada", "addresses": [{"street": "1 Main St", "city": "Leeds"}]});
        assert_eq!(StructuredDone::check(&params(good), &schema), Ok(()));
        let bad = json!({"name": "Ada", "addresses": [{"street": "1 Main St"}]});
        assert!(StructuredDone::check(&params(bad), &schema).unwrap_err().contains("city"));
    }

    #[test]
    fn zod_definitions_and_paths_are_inlined_and_keywords_beside_a_ref_kept() {
        // zod-to-json-schema: `definitions`, and a second use of a schema as a path to the first.
        let schema = inline_refs(&json!({
            "type": "object",
            "properties": {
                "from": {"$ref": "#/definitions/Place"},
                "to": {"$ref": "#/properties/from", "description": "Where it ends."}
            },
            "definitions": {"Place": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
        }));
        assert_eq!(refs_in(&schema), Vec::<String>::new(), "{schema:#}");
        assert_eq!(schema["properties"]["to"]["required"], json!(["name"]));
        assert_eq!(schema["properties"]["to"]["description"], "Where it ends.");
    }

    #[test]
    fn a_recursive_definition_stops_and_unknown_references_say_so() {
        let schema = inline_refs(&json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            }}}
        }));
        assert_eq!(refs_in(&schema), Vec::<String>::new());
        let mut depth = 0;
        let mut node = &schema;
        while node["type"] == "object" {
            depth += 1;
            node = &node["properties"]["children"]["items"];
        }
        assert_eq!((depth, node["type"].as_str()), (MAX_RECURSION, Some("null")));
        let other = inline_refs(
            &json!({"properties": {"a": {"$ref": "https://example.com/a.json"}, "b": {"$ref": "#/$defs/Gone"}}}),
        );
        assert!(other["properties"]["a"]["description"].as_str().unwrap().contains("https://example.com/a.json"));
        assert!(other["properties"]["b"]["description"].as_str().unwrap().contains("#/$defs/Gone"));
        // Data is not read as schema; an escaped name is found.
        let data = inline_refs(
            &json!({"const": {"$ref": "#/x"}, "$defs": {"My Type": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/My%20Type"}}}),
        );
        assert_eq!(data["const"], json!({"$ref": "#/x"}));
        assert_eq!(data["properties"]["n"]["type"], "integer");
    }
}
