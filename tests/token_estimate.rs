//! The request budget's token estimate (`prompt::estimate_tokens`) against a real tokenizer:
//! OpenAI's o200k_base (through tiktoken-rs, a test-only dependency that never enters the
//! wasm), on the state texts of the 72 saved real pages (`tests/fixtures/state-texts/`, in
//! English, Japanese, German and French), the fixture pages' goldens and the system prompt.
//! Goal: the estimate within ±5% of the real count, pooled over the page texts. And the
//! smallest request budget the settings take against what a request needs.

use std::fs;
use std::path::Path;
use tabwright::actions::{registered, registered_for, with_files, ActionResult, ActionUnion};
use tabwright::agent::{ActionRecord, AgentOutput, ModelThoughts, StepRecord};
use tabwright::browser::{PageState, TaskFile};
use tabwright::dom::{Element, Snapshot};
use tabwright::prompt::{
    estimate_json_tokens, estimate_tokens, page_listing, state_message, system_prompt_tokens, Detail, StateInput,
    SYSTEM_PROMPT,
};
use tabwright::settings::{ActionOptions, MIN_REQUEST_BUDGET_TOKENS, REQUEST_FIXED_TOKENS};

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

/// The state message of step 6 of a task on `page`, its history `steps` shown as `detail`.
fn state_at(page: &PageState, listing: &str, union: &ActionUnion, steps: &[StepRecord], detail: Detail) -> String {
    let allowed = union.names();
    state_message(&StateInput {
        task: "Find the cheapest flight from Lisbon to Berlin next Friday and note its price.",
        history: steps,
        page,
        listing,
        step: steps.len() as u32 + 1,
        max_steps: 100,
        allowed_actions: &allowed,
        plan: None,
        nudge: None,
        previous: &[],
        secrets: None,
        firewall: None,
        scope: None,
        summary: None,
        files: &page_files(),
        detail,
    })
}

fn page_files() -> Vec<TaskFile> {
    vec![TaskFile { id: "k1".into(), name: "cv.pdf".into(), mime: "application/pdf".into(), size: 48_213 }]
}

/// Every action a task can be offered: `evaluate` on a host the person listed, `upload_file`
/// with a file attached (a saved skill or a result schema of the person's adds to it).
fn full_union(page: &PageState) -> ActionUnion {
    let options =
        ActionOptions { evaluate_domains: vec!["example.com".into()], files: page_files(), ..Default::default() };
    ActionUnion::for_page(&with_files(registered(), &page_files()), page, &options, false)
}

/// The request budget's floor against what a request needs, so the two cannot drift apart:
/// the fixed part of a request (the system prompt, the answer's schema with every action and
/// `thinking`, the state message around an empty page) is about what the settings' error says
/// (`REQUEST_FIXED_TOKENS`, within a tenth), and the smallest budget holds it with the
/// shortest request the agent makes of a real page: a screenful of its elements (the list cut
/// to 2,000 characters) and the last five steps cut to a line or two (`Detail::Terse`).
#[test]
fn the_smallest_request_budget_holds_a_requests_fixed_part_and_a_page() {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let o200k = |text: &str| bpe.encode_with_special_tokens(text).len();
    let empty = PageState::new(1, Snapshot::with_elements("https://example.com/", "", vec![]));
    let union = full_union(&empty);
    for name in ["evaluate", "upload_file", "done"] {
        assert!(union.offered_names().contains(&name), "{name} is offered");
    }
    let schema = AgentOutput::schema(&union, true, 20).to_string();
    let frame = state_at(&empty, &page_listing(&empty), &union, &[], Detail::Full);
    let fixed = system_prompt_tokens() + estimate_json_tokens(&schema) + estimate_tokens(&frame);
    let fixed_o200k = o200k(SYSTEM_PROMPT) + o200k(&schema) + o200k(&frame);
    println!(
        "a request's fixed part: {fixed} tokens estimated, {fixed_o200k} o200k (system prompt {}, schema {}, state {})",
        system_prompt_tokens(),
        estimate_json_tokens(&schema),
        estimate_tokens(&frame)
    );
    let off = f64::from(fixed) / f64::from(REQUEST_FIXED_TOKENS) - 1.0;
    assert!(
        off.abs() <= 0.10,
        "the settings say a request's fixed part is about {REQUEST_FIXED_TOKENS} tokens; it is {fixed} ({:+.0}%)",
        off * 100.0
    );
    assert!(fixed < MIN_REQUEST_BUDGET_TOKENS && (fixed_o200k as u32) < MIN_REQUEST_BUDGET_TOKENS);

    // The shortest request on a real page, after five steps that wrote and read a lot.
    let (name, page_text) = texts("tests/fixtures/state-texts").into_iter().max_by_key(|(_, t)| t.len()).unwrap();
    let screenful = tabwright::llm::excerpt(&page_text, 2_000);
    let long = |what: &str, n: u32| format!("{what} of step {n}: {}", "words the model or the page wrote ".repeat(12));
    let steps: Vec<StepRecord> = (1..=5)
        .map(|n| StepRecord {
            step: n,
            output: Some(ModelThoughts {
                evaluation_previous_goal: long("evaluation", n),
                memory: long("memory", n),
                next_goal: long("goal", n),
                ..Default::default()
            }),
            actions: (0..3)
                .map(|_| ActionRecord {
                    name: "click".into(),
                    description: String::new(),
                    description_locale_text: None,
                    params: serde_json::json!({"index": 12}),
                    result: ActionResult::ok(long("result", n)),
                    target: None,
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    let page = PageState::new(1, Snapshot::with_elements("https://example.com/flights", "Flights", vec![]));
    let state = state_at(&page, &screenful, &union, &steps, Detail::Terse);
    let shortest = system_prompt_tokens() + estimate_json_tokens(&schema) + estimate_tokens(&state);
    println!(
        "the shortest request on {name}: {shortest} tokens estimated, {} o200k",
        fixed_o200k - o200k(&frame) + o200k(&state)
    );
    assert!(
        shortest <= MIN_REQUEST_BUDGET_TOKENS,
        "the smallest budget ({MIN_REQUEST_BUDGET_TOKENS}) is below the shortest request the agent makes ({shortest})"
    );
}
