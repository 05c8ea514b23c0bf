//! Every request body the core sends, checked against the provider's own published description
//! of its API (tests/fixtures/llm-schemas/, each with its source): OpenAI's OpenAPI document for
//! chat completions (also what OpenAI-compatible servers and Azure OpenAI are sent), the
//! Anthropic Messages request as its SDK types it, Gemini's GenerateContentRequest as its protos
//! define it, and Ollama's OpenAPI document for /api/chat.
//!
//! The requests are the real ones: whole tasks run natively through the agent loop (the fake
//! site and the scripted model of tests/support, which answers in each provider's format) with
//! each provider's settings — the agent's steps with and without a screenshot, `extract`'s calls
//! to the extraction model, a task whose result follows the person's JSON Schema, and the
//! connection check of the options page. Closed objects are checked closed: a field the
//! provider does not define fails, as the live APIs refuse unknown names.

mod support;

use serde_json::{json, Map, Value};
use std::cell::Cell;
use std::rc::Rc;
use support::*;
use tabwright::agent::StopSignal;
use tabwright::llm::{build_request, connection_check_request};
use tabwright::settings::{LlmSettings, Provider, Settings, StructuredOutput, Vision};

fn load(path: &str) -> Value {
    let full = format!("{}/tests/fixtures/llm-schemas/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    tabwright::json::from_text(&text).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// An OpenAPI 3.1 document's `components.schemas` as a JSON Schema 2020-12 rooted at `root`.
/// OpenAPI-only keywords give way to their JSON Schema meaning: `nullable: true` (which OpenAI's
/// document still uses in places) adds `null` to the type, and `discriminator`, `example` and
/// the `x-` extensions, which assert nothing, go. With `closed`, an object that lists its
/// properties takes no others (`unevaluatedProperties: false`, so that the branches of an
/// `allOf` still see each other's) — except the members of an `allOf`, which see only a part.
fn openapi_schema(document: &Value, root: &str, closed: bool) -> Value {
    let schemas = document["components"]["schemas"].as_object().expect("components.schemas");
    let mut members = Vec::new();
    for schema in schemas.values() {
        collect_all_of_members(schema, &mut members);
    }
    let converted: Map<String, Value> = schemas
        .iter()
        .map(|(name, schema)| {
            let member = members.iter().any(|m| m == &format!("#/components/schemas/{name}"));
            (name.clone(), to_json_schema(schema, closed, member))
        })
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/components/schemas/{root}"),
        "components": {"schemas": converted},
    })
}

fn collect_all_of_members(node: &Value, members: &mut Vec<String>) {
    match node {
        Value::Object(object) => {
            for member in object.get("allOf").and_then(Value::as_array).into_iter().flatten() {
                if let Some(reference) = member["$ref"].as_str() {
                    members.push(reference.to_string());
                }
            }
            object.values().for_each(|v| collect_all_of_members(v, members));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_all_of_members(v, members)),
        _ => {}
    }
}

fn to_json_schema(node: &Value, closed: bool, all_of_member: bool) -> Value {
    let Value::Object(object) = node else {
        return match node {
            Value::Array(items) => Value::Array(items.iter().map(|v| to_json_schema(v, closed, false)).collect()),
            other => other.clone(),
        };
    };
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "nullable" | "discriminator" | "example" | "examples" => {}
            k if k.starts_with("x-") => {}
            "enum" | "const" | "default" => {
                out.insert(key.clone(), value.clone());
            }
            "properties" | "patternProperties" | "$defs" => {
                let map = value.as_object().map(|m| {
                    m.iter().map(|(k, v)| (k.clone(), to_json_schema(v, closed, false))).collect::<Map<_, _>>()
                });
                out.insert(key.clone(), map.map_or(Value::Null, Value::Object));
            }
            "allOf" => {
                let items =
                    value.as_array().map(|items| items.iter().map(|v| to_json_schema(v, closed, true)).collect());
                out.insert(key.clone(), items.map_or(Value::Null, Value::Array));
            }
            _ => {
                out.insert(key.clone(), to_json_schema(value, closed, false));
            }
        }
    }
    if object.get("nullable") == Some(&Value::Bool(true)) {
        match out.get("type").cloned() {
            Some(Value::String(t)) => {
                out.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(mut types)) => {
                if !types.contains(&json!("null")) {
                    types.push(json!("null"));
                }
                out.insert("type".into(), Value::Array(types));
            }
            _ => {
                let inner = Value::Object(out.clone());
                out = Map::from_iter([("anyOf".to_string(), json!([inner, {"type": "null"}]))]);
            }
        }
        if let Some(Value::Array(values)) = out.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
    }
    let lists_properties = out.contains_key("properties") || out.contains_key("allOf");
    if closed && lists_properties && !out.contains_key("additionalProperties") && !all_of_member {
        out.insert("unevaluatedProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

struct Checked {
    validator: jsonschema::Validator,
    name: &'static str,
}

impl Checked {
    fn new(name: &'static str, schema: &Value) -> Self {
        let validator = jsonschema::draft202012::options()
            .build(schema)
            .unwrap_or_else(|e| panic!("{name}: the published schema does not compile: {e}"));
        Checked { validator, name }
    }

    /// Every problem the schema finds in `body`, for the assertion's message.
    fn problems(&self, body: &Value) -> Vec<String> {
        self.validator.iter_errors(body).map(|e| format!("{} at {}", e, e.instance_path)).collect()
    }

    fn assert_valid(&self, body: &Value, what: &str) {
        let problems = self.problems(body);
        assert!(
            problems.is_empty(),
            "{what}: not a valid {} request:\n  {}\n{body:#}",
            self.name,
            problems.join("\n  ")
        );
    }
}

fn openai_schema() -> Checked {
    Checked::new(
        "OpenAI chat completions",
        &openapi_schema(&load("openai/chat-completions.schema.json"), "CreateChatCompletionRequest", true),
    )
}

fn ollama_schema() -> Checked {
    Checked::new("Ollama /api/chat", &openapi_schema(&load("ollama/chat.openapi-subset.json"), "ChatRequest", true))
}

fn anthropic_schema() -> Checked {
    Checked::new("Anthropic Messages", &load("anthropic/messages-request.schema.json"))
}

fn gemini_schema() -> Checked {
    Checked::new("Gemini generateContent", &load("gemini/generate-content-request.schema.json"))
}

/// The settings of each provider setup a person can save, with the schema its requests follow.
fn setups() -> Vec<(&'static str, LlmSettings, Checked)> {
    let llm = |provider: Provider, base_url: &str, model: &str| LlmSettings {
        provider,
        base_url: base_url.into(),
        model: model.into(),
        api_key: "key-123".into(),
        extraction_model: Some("small-reader".into()),
        ..LlmSettings::default()
    };
    let mut json_object = llm(Provider::OpenAiCompatible, "https://api.deepseek.com/v1", "deepseek-chat");
    json_object.structured_output = StructuredOutput::JsonObject;
    let mut azure = llm(Provider::AzureOpenAi, "https://contoso.openai.azure.com", "gpt-4.1-mini-prod");
    azure.api_version = Some("2024-10-21".into());
    let mut ollama = llm(Provider::Ollama, "http://localhost:11434", "qwen2.5:7b");
    ollama.api_key.clear();
    vec![
        ("OpenAI", llm(Provider::OpenAi, "https://api.openai.com/v1", "gpt-4.1"), openai_schema()),
        (
            "an OpenAI-compatible server",
            llm(Provider::OpenAiCompatible, "https://openrouter.ai/api/v1", "x/y"),
            openai_schema(),
        ),
        ("an OpenAI-compatible server in JSON-object mode", json_object, openai_schema()),
        ("Azure OpenAI", azure, openai_schema()),
        (
            "Azure OpenAI's v1 URL",
            llm(Provider::AzureOpenAi, "https://contoso.openai.azure.com/openai/v1", "prod"),
            openai_schema(),
        ),
        (
            "Anthropic",
            llm(Provider::Anthropic, "https://api.anthropic.com/v1", "claude-sonnet-4-5"),
            anthropic_schema(),
        ),
        (
            "Gemini",
            llm(Provider::Gemini, "https://generativelanguage.googleapis.com/v1beta", "gemini-2.5-flash"),
            gemini_schema(),
        ),
        ("Ollama", ollama, ollama_schema()),
    ]
}

/// A task that logs in, reads the page with `extract`, and finishes with data of the person's
/// schema (nested definitions, a free-form object), with a screenshot at every step.
fn run_every_kind_of_request(llm_settings: LlmSettings) -> Vec<Value> {
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().markdown = "# Account\n\nPlan: Team, 29 EUR a month.\n".into();
    let extracted = Rc::new(Cell::new(false));
    let llm = ScriptedLlm::new({
        let extracted = extracted.clone();
        move |state, body| {
            if is_extraction(body) {
                return Reply::Output(json!({"found": true, "content": "Plan: Team, 29 EUR a month."}));
            }
            if title_of(state).starts_with("Welcome, alice") {
                if !extracted.replace(true) {
                    return output("Read the plan", json!([{"extract": {"query": "the plan and its price"}}]));
                }
                let data = json!({"plan": {"name": "Team", "price": {"amount": 29, "currency": "EUR"}}, "extra": {"seats": 5}});
                return output("Report", json!([{"done": {"data": data, "success": true}}]));
            }
            match log_in_actions(state) {
                Some(actions) => output("Log in", actions),
                None => output("Give up", json!([{"done": {"data": {}, "success": false}}])),
            }
        }
    });
    // What pydantic writes for nested models, with a map-like field strict mode cannot say.
    let result_schema = json!({
        "$defs": {
            "Price": {"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}}, "required": ["amount", "currency"]},
            "Plan": {"type": "object", "properties": {"name": {"type": "string"}, "price": {"$ref": "#/$defs/Price"}}, "required": ["name", "price"]},
        },
        "type": "object",
        "properties": {"plan": {"$ref": "#/$defs/Plan"}, "extra": {"type": "object", "additionalProperties": true}},
        "required": ["plan"],
    });
    let mut settings: Settings = settings(8);
    settings.llm = llm_settings;
    settings.agent.vision = Vision::On;
    let run = run_configured(
        site,
        llm,
        settings,
        ("t1", "Log in as alice with password hunter2 and report the plan"),
        StopSignal::new(),
        |agent| agent.with_output_schema(Some(&result_schema)),
    );
    assert!(
        matches!(run.history.end, tabwright::agent::TaskEnd::Done { success: true, .. }),
        "the task ran as planned: {:?}",
        run.history.end
    );
    run.requests
}

#[test]
fn every_request_follows_the_providers_published_schema() {
    for (setup, llm_settings, schema) in setups() {
        let requests = run_every_kind_of_request(llm_settings.clone());
        let extraction = requests.iter().filter(|b| is_extraction(b)).count();
        assert!(
            extraction >= 1 && requests.len() >= 4,
            "{setup}: {} requests, {extraction} of them extraction",
            requests.len()
        );
        assert!(requests.iter().any(|b| b.to_string().contains("iVBORw0KGgo")), "{setup}: a request with a screenshot");
        for (i, body) in requests.iter().enumerate() {
            schema.assert_valid(body, &format!("{setup}, request {}", i + 1));
        }
        // The options page's connection check.
        let check = build_request(&llm_settings, &connection_check_request());
        let body: Value = tabwright::json::from_text(&check.body).unwrap();
        schema.assert_valid(&body, &format!("{setup}, the connection check"));
    }
}

/// The schemas are strict enough to catch a request that is wrong: a field the provider does
/// not define, a value of the wrong type, a missing required field.
#[test]
fn the_schemas_refuse_what_the_providers_refuse() {
    for (setup, llm_settings, schema) in setups() {
        let body: Value =
            tabwright::json::from_text(&build_request(&llm_settings, &connection_check_request()).body).unwrap();
        schema.assert_valid(&body, setup);
        let mut unknown = body.clone();
        unknown["temprature"] = json!(0.2);
        assert!(!schema.problems(&unknown).is_empty(), "{setup}: an unknown field passes");
        let mut missing = body.clone();
        let required = match WireFormat::of(&body) {
            WireFormat::Gemini => "contents",
            _ => "messages",
        };
        missing.as_object_mut().unwrap().remove(required);
        assert!(!schema.problems(&missing).is_empty(), "{setup}: a request without {required} passes");
        let mut wrong_type = body.clone();
        match WireFormat::of(&body) {
            WireFormat::Gemini => wrong_type["contents"][0]["parts"][0]["text"] = json!(7),
            WireFormat::Anthropic => wrong_type["max_tokens"] = json!("many"),
            _ => wrong_type["messages"][0]["role"] = json!("narrator"),
        }
        assert!(!schema.problems(&wrong_type).is_empty(), "{setup}: a value of the wrong type passes");
    }
}
