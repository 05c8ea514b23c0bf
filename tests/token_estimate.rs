//! The request budget's token estimate (`prompt::estimate_tokens`) against a real tokenizer:
//! OpenAI's o200k_base (through tiktoken-rs, a test-only dependency that never enters the
//! wasm), on the state texts of the 72 saved real pages (`tests/fixtures/state-texts/`, in
//! English, Japanese, German and French), the fixture pages' goldens and the system prompt.
//! Goal: the estimate within ±5% of the real count, pooled over the page texts.

use std::fs;
use std::path::Path;
use tabwright::actions::{registered, registered_for, ActionUnion};
use tabwright::agent::AgentOutput;
use tabwright::browser::PageState;
use tabwright::dom::{Element, Snapshot};
use tabwright::prompt::{estimate_json_tokens, estimate_tokens, SYSTEM_PROMPT};

fn texts(dir: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn the_estimate_is_within_five_percent_of_o200k() {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let count = |text: &str| bpe.encode_with_special_tokens(text).len() as f64;
    let pages = texts("tests/fixtures/state-texts");
    assert!(pages.len() >= 60, "the real pages' state texts are there");
    let (mut estimated, mut real) = (0.0, 0.0);
    let mut worst = (0.0f64, String::new());
    for (name, text) in &pages {
        let (e, r) = (f64::from(estimate_tokens(text)), count(text));
        estimated += e;
        real += r;
        let error = e / r - 1.0;
        if error.abs() > worst.0.abs() {
            worst = (error, name.clone());
        }
    }
    let pooled = estimated / real - 1.0;
    println!(
        "page texts: estimate {estimated} against o200k {real}: {:+.1}% (worst page {} {:+.1}%)",
        pooled * 100.0,
        worst.1,
        worst.0 * 100.0
    );
    for (name, text) in texts("tests/fixtures/snapshots")
        .iter()
        .chain([("system prompt".to_string(), SYSTEM_PROMPT.to_string())].iter())
    {
        let error = f64::from(estimate_tokens(text)) / count(text) - 1.0;
        println!("{name}: {:+.1}%", error * 100.0);
    }
    // `scripts/bench tokens` reads the figures from here.
    if let Ok(out) = std::env::var("TOKEN_ESTIMATE_JSON") {
        let figures = serde_json::json!({"pages": pages.len(), "estimated": estimated, "real": real, "error": pooled});
        fs::write(out, figures.to_string()).unwrap();
    }
    assert!(pooled.abs() <= 0.05, "the estimate is {:+.1}% off o200k on the page texts", pooled * 100.0);
}

/// The answer schema's estimate (part of every request's fixed cost in the budget) against
/// o200k, for the schemas a task sends: the default actions with and without `thinking`, a
/// short list of actions, and a result schema of the person's.
#[test]
fn the_answer_schemas_estimate_is_within_ten_percent_of_o200k() {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let page =
        PageState::new(1, Snapshot::with_elements("https://example.com/", "", vec![Element::new(1, "a", &[], "x")]));
    let result =
        serde_json::json!({"type": "object", "properties": {"price": {"type": "number"}, "name": {"type": "string"}}});
    let short =
        tabwright::settings::ActionOptions { include: vec!["click".into(), "input".into()], ..Default::default() };
    let schemas = [
        (
            "every action, thinking",
            AgentOutput::schema(&ActionUnion::for_page(&registered(), &page, &Default::default(), false), true, 5),
        ),
        (
            "every action",
            AgentOutput::schema(&ActionUnion::for_page(&registered(), &page, &Default::default(), false), false, 5),
        ),
        ("two actions", AgentOutput::schema(&ActionUnion::for_page(&registered(), &page, &short, false), true, 5)),
        (
            "a result schema",
            AgentOutput::schema(
                &ActionUnion::for_page(&registered_for(Some(&result)), &page, &Default::default(), false),
                true,
                5,
            ),
        ),
    ];
    for (what, schema) in schemas {
        let text = schema.to_string();
        let (estimate, real) =
            (f64::from(estimate_json_tokens(&text)), bpe.encode_with_special_tokens(&text).len() as f64);
        let error = estimate / real - 1.0;
        println!("{what}: estimate {estimate} against o200k {real}: {:+.1}%", error * 100.0);
        assert!(error.abs() <= 0.10, "{what}: the estimate is {:+.1}% off o200k", error * 100.0);
    }
}
