//! Golden tests of the agent's answer schema as each LLM provider receives it: the real schema
//! of a simple page goes through each transform of `tabwright::llm::schema`, and the result must
//! equal the reviewed `tests/fixtures/schemas/<provider>.json`. After a deliberate change, run
//! with `UPDATE_GOLDENS=1` and review the diff.
//!
//! Goldens only say that something changed, so each output is also checked against the rules
//! its provider enforces, over the whole tree; those checks hold however the goldens are
//! regenerated.

use serde_json::Value;
use std::fs;
use std::path::PathBuf;
use tabwright::llm::schema::{
    anthropic_input_schema, gemini_json_schema, ollama_format, openai_strict, openai_strict_fits,
};

/// The agent's answer schema on a page that offers every action: a button, a dropdown, a
/// scrolling page, two tabs, history both ways, scripts allowed on its host, and a task with
/// attached files. The only place
/// the test builds it, so that a change to these constructors is fixed here once. With an
/// output schema, `done` is the structured one.
fn agent_schema_for(output_schema: Option<&Value>) -> Value {
    use tabwright::dom::{Element, ScrollInfo, Snapshot};
    let mut snapshot = Snapshot::with_elements(
        "https://example.com/",
        "Example",
        vec![Element::new(1, "button", &[], "Go"), Element::new(2, "select", &[("name", "size")], "")],
    );
    snapshot.scroll = ScrollInfo { above_px: 0, below_px: 1200 };
    let mut page = tabwright::browser::PageState::new(1, snapshot);
    page.tabs.push(tabwright::browser::TabInfo { id: 2, url: "https://example.org/".into(), title: "Other".into() });
    page.can_go_back = true;
    page.can_go_forward = true;
    let files = vec![tabwright::browser::TaskFile {
        id: "f1".into(),
        name: "report.pdf".into(),
        mime: "application/pdf".into(),
        size: 120_000,
    }];
    let options = tabwright::settings::ActionOptions {
        evaluate_domains: vec!["example.com".into()],
        files: files.clone(),
        ..Default::default()
    };
    let registry = tabwright::actions::with_files(tabwright::actions::registered_for(output_schema), &files);
    let union = tabwright::actions::ActionUnion::for_page(&registry, &page, &options, false);
    if output_schema.is_none() {
        assert_eq!(union.names().len(), 23, "every action but the structured done: {:?}", union.names());
    }
    tabwright::agent::AgentOutput::schema(&union, true, 5)
}

fn agent_schema() -> Value {
    agent_schema_for(None)
}

type Transform = fn(&Value) -> Value;

const PROVIDERS: [(&str, Transform); 4] = [
    ("openai", openai_strict),
    ("anthropic", anthropic_input_schema),
    ("gemini-json", gemini_json_schema),
    ("ollama", ollama_format),
];

const REASONING_THEN_ACTION: [&str; 6] =
    ["thinking", "evaluation_previous_goal", "memory", "next_goal", "plan", "action"];

fn check_golden(provider: &str, transform: Transform) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/schemas/{provider}.json"));
    let text = serde_json::to_string_pretty(&transform(&agent_schema())).expect("a schema serializes") + "\n";
    if std::env::var_os("UPDATE_GOLDENS").is_some() {
        fs::create_dir_all(path.parent().expect("a parent folder")).expect("the schemas folder");
        fs::write(&path, &text).expect("the golden is writable");
    }
    let expected = fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing; run with UPDATE_GOLDENS=1 to create it", path.display()));
    assert!(
        text == expected,
        "The {provider} schema no longer matches {}. If the change is intended, rerun with UPDATE_GOLDENS=1 \
         and review the diff.\n--- now ---\n{text}",
        path.display()
    );
}

#[test]
fn openai_schema_matches_its_golden() {
    check_golden("openai", openai_strict);
}

#[test]
fn anthropic_schema_matches_its_golden() {
    check_golden("anthropic", anthropic_input_schema);
}

#[test]
fn gemini_json_schema_matches_its_golden() {
    check_golden("gemini-json", gemini_json_schema);
}

#[test]
fn ollama_schema_matches_its_golden() {
    check_golden("ollama", ollama_format);
}

/// Every schema in the tree, with its path: the root, then recursively the values of
/// `properties`, `items`, the members of `anyOf`/`oneOf`/`allOf`/`prefixItems`, and an
/// `additionalProperties` schema. Property names and `enum` values are not visited.
fn schema_nodes(schema: &Value) -> Vec<(String, &Value)> {
    fn walk<'a>(path: String, node: &'a Value, out: &mut Vec<(String, &'a Value)>) {
        let Some(obj) = node.as_object() else { return };
        out.push((path.clone(), node));
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, prop) in props {
                walk(format!("{path}/properties/{name}"), prop, out);
            }
        }
        for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
            if let Some(Value::Array(list)) = obj.get(key) {
                for (i, member) in list.iter().enumerate() {
                    walk(format!("{path}/{key}/{i}"), member, out);
                }
            }
        }
        for key in ["items", "additionalProperties"] {
            if let Some(sub) = obj.get(key) {
                walk(format!("{path}/{key}"), sub, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(String::new(), schema, &mut out);
    out
}

fn property_names(node: &Value) -> Option<Vec<&str>> {
    node.get("properties")?.as_object().map(|p| p.keys().map(String::as_str).collect())
}

fn string_list(value: Option<&Value>) -> Option<Vec<&str>> {
    value?.as_array().map(|l| l.iter().filter_map(Value::as_str).collect())
}

/// The names of the actions offered in `action.items`, in order.
fn action_names(schema: &Value) -> Vec<String> {
    schema
        .pointer("/properties/action/items/anyOf")
        .and_then(Value::as_array)
        .map(|branches| branches.iter().flat_map(|b| property_names(b).unwrap_or_default()).map(String::from).collect())
        .unwrap_or_default()
}

#[test]
fn the_input_is_the_schema_these_tests_expect() {
    let schema = agent_schema();
    assert_eq!(property_names(&schema).unwrap(), REASONING_THEN_ACTION);
    assert!(action_names(&schema).len() >= 2, "the union offers few actions: {:?}", action_names(&schema));
    assert!(schema_nodes(&schema).iter().any(|(_, n)| n.get("format").is_some()), "no format to strip");
}

#[test]
fn every_output_keeps_reasoning_before_action_and_every_action() {
    let input = agent_schema();
    for (provider, transform) in PROVIDERS {
        let out = transform(&input);
        assert_eq!(property_names(&out).unwrap(), REASONING_THEN_ACTION, "{provider}");
        assert_eq!(action_names(&out), action_names(&input), "{provider}");
        for (path, node) in schema_nodes(&out) {
            assert!(node.get("oneOf").is_none(), "{provider}: oneOf at {path}");
            assert!(node.get("$schema").is_none(), "{provider}: $schema at {path}");
            assert!(node.get("title").is_none(), "{provider}: title at {path}");
        }
    }
}

#[test]
fn openai_output_is_strict_everywhere() {
    let out = openai_strict(&agent_schema());
    for (path, node) in schema_nodes(&out) {
        assert!(node.get("format").is_none(), "format at {path}");
        assert!(node.get("oneOf").is_none(), "oneOf at {path}");
        let is_object = node.get("type") == Some(&Value::from("object"));
        assert!(!is_object || node.get("properties").is_some(), "object without properties at {path}");
        if let Some(names) = property_names(node) {
            assert_eq!(node["additionalProperties"], false, "open object at {path}");
            assert_eq!(string_list(node.get("required")), Some(names), "not every property required at {path}");
        }
    }
}

#[test]
fn anthropic_output_has_an_object_root() {
    let out = anthropic_input_schema(&agent_schema());
    assert_eq!(out["type"], "object");
}

#[test]
fn gemini_json_output_has_no_empty_objects_and_only_date_formats() {
    let out = gemini_json_schema(&agent_schema());
    for (path, node) in schema_nodes(&out) {
        if node.get("type") == Some(&Value::from("object")) {
            assert!(property_names(node).is_some_and(|p| !p.is_empty()), "object without properties at {path}");
        }
        if let Some(format) = node.get("format").and_then(Value::as_str) {
            assert!(["date-time", "date", "time"].contains(&format), "{format} at {path}");
        }
    }
}

#[test]
fn ollama_output_has_no_format_and_keeps_closed_objects() {
    let input = agent_schema();
    let out = ollama_format(&input);
    assert_eq!(out["additionalProperties"], input["additionalProperties"]);
    assert_eq!(out["required"], input["required"]);
    for (path, node) in schema_nodes(&out) {
        assert!(node.get("format").is_none(), "format at {path}");
    }
}

#[test]
fn every_transform_is_idempotent_on_the_agent_schema() {
    let input = agent_schema();
    for (provider, transform) in PROVIDERS {
        let once = transform(&input);
        let twice = transform(&once);
        assert_eq!(
            serde_json::to_string(&twice).unwrap(),
            serde_json::to_string(&once).unwrap(),
            "{provider} changes its own output"
        );
    }
}

#[test]
fn every_transform_survives_garbage_input() {
    let garbage = [
        Value::from(42),
        Value::from(-1.5),
        Value::from("schema"),
        Value::Bool(false),
        Value::Null,
        serde_json::json!([]),
        serde_json::json!([1, {"type": "object"}, null]),
        serde_json::json!({}),
        serde_json::json!({"properties": null, "items": 3, "anyOf": {}, "type": {"object": true}}),
    ];
    for (provider, transform) in PROVIDERS {
        for input in &garbage {
            let once = transform(input);
            let _ = transform(&once);
        }
        assert!(transform(&serde_json::json!({})).is_object(), "{provider}");
    }
}

/// A task's output schema as pydantic writes it (definitions in `$defs`, used by `$ref`)
/// reaches every provider with its definitions inlined: no reference is left dangling.
#[test]
fn an_output_schema_with_definitions_reaches_every_provider_whole() {
    let person = serde_json::json!({
        "$defs": {"Address": {"properties": {"city": {"title": "City", "type": "string"}}, "required": ["city"], "title": "Address", "type": "object"}},
        "properties": {"name": {"title": "Name", "type": "string"}, "addresses": {"items": {"$ref": "#/$defs/Address"}, "title": "Addresses", "type": "array"}},
        "required": ["name", "addresses"], "title": "Person", "type": "object"
    });
    let schema = agent_schema_for(Some(&person));
    assert!(schema.to_string().contains("\"City\""), "the definition is there");
    for (name, transform) in PROVIDERS {
        let out = transform(&schema);
        for (path, node) in schema_nodes(&out) {
            for key in ["$ref", "$defs", "definitions"] {
                assert!(node.get(key).is_none(), "{name}: {key} at {path}");
            }
        }
    }
}

/// The agent's own schema is one strict mode takes whole; a task's output schema with a map of
/// values is not, and keeps its map open instead of becoming `{}`.
#[test]
fn strict_mode_takes_the_agents_schema_and_leaves_a_map_open() {
    assert!(openai_strict_fits(&openai_strict(&agent_schema())));
    let prices = serde_json::json!({"type": "object", "properties": {
        "by_shop": {"type": "object", "additionalProperties": {"type": "number"}}
    }, "required": ["by_shop"]});
    let out = openai_strict(&agent_schema_for(Some(&prices)));
    assert!(!openai_strict_fits(&out));
    assert!(out.to_string().contains(r#""additionalProperties":{"type":"number"}"#), "the map stays a map");
}
