//! The messages that cross into and out of the core, as JSON Schemas the extension's JS is
//! typed from: `tests/types/to-core.schema.json` (what JS sends: panel requests, content
//! script replies, the settings the options page stores; read as the core reads them) and `from-core.schema.json` (what the core
//! sends: replies, events, where a task stands, requests to content scripts; as it writes them).
//! `scripts/lib/js-types.mjs` turns each into TypeScript declarations and `tsc` checks the JS
//! against them. Both files are kept equal to what the Rust types derive:
//! `UPDATE_JS_TYPES=1 cargo test --test js_types` writes them again.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

/// How one top-level type's schema is made.
type SchemaOf = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// A root schema naming each of `types` (by name) among its definitions.
fn root(title: &str, settings: SchemaSettings, types: &[(&str, SchemaOf)]) -> Value {
    let mut generator = settings.into_generator();
    let mut properties = Map::new();
    for (name, schema_of) in types {
        let schema = schema_of(&mut generator);
        properties.insert((*name).into(), schema.to_value());
    }
    let defs = generator.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": "Generated from the Rust types by tests/js_types.rs; do not edit.",
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
        "$defs": defs,
    })
}

fn of<T: JsonSchema>(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    generator.subschema_for::<T>()
}

fn check(file: &str, schema: Value) {
    let path = format!("{}/tests/types/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
    if std::env::var_os("UPDATE_JS_TYPES").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(kept == text, "{path} is not what the Rust types derive: run UPDATE_JS_TYPES=1 cargo test --test js_types");
}

#[test]
fn the_messages_into_the_core_are_typed_for_js_as_the_core_reads_them() {
    use tabwright::protocol::{ContentReply, PanelRequest};
    use tabwright::settings::StoredSettings;
    let schema = root(
        "ToCore",
        SchemaSettings::draft2020_12().for_deserialize(),
        &[
            ("PanelRequest", of::<PanelRequest>),
            ("ContentReply", of::<ContentReply>),
            ("StoredSettings", of::<StoredSettings>),
        ],
    );
    check("to-core.schema.json", schema);
}

#[test]
fn the_messages_out_of_the_core_are_typed_for_js_as_the_core_writes_them() {
    use tabwright::agent::{AgentEvent, TaskState};
    use tabwright::protocol::{ContentRequest, PanelReply};
    let schema = root(
        "FromCore",
        SchemaSettings::draft2020_12().for_serialize(),
        &[
            ("PanelReply", of::<PanelReply>),
            ("AgentEvent", of::<AgentEvent>),
            ("TaskState", of::<TaskState>),
            ("ContentRequest", of::<ContentRequest>),
        ],
    );
    check("from-core.schema.json", schema);
}
