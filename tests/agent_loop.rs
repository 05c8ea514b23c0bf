//! The whole agent loop, natively: a scripted LLM speaking the OpenAI wire format drives a fake
//! site through the `Browser` port. The LLM's policy finds elements by their text in the state
//! the core sent, as a real model would.

mod support;

use futures::executor::block_on;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::rc::Rc;
use support::*;
use tabwright::agent::replay::{ReplayAction, ReplayStep};
use tabwright::agent::{Agent, Ports, StopSignal, TaskEnd, TaskHistory};
use tabwright::llm::Usage;
use tabwright::protocol::AgentEvent;

fn run_task(site: FakeSite, llm: ScriptedLlm, max_steps: u32, stop: StopSignal) -> Run {
    run_stoppable(site, llm, settings(max_steps), "Log in as alice with password hunter2", stop)
}

/// The actions a readable page with elements offers (no dropdown, one tab, no history, no
/// scrolling, no script permission).
const PAGE_ACTIONS: [&str; 14] = [
    "search",
    "navigate",
    "click",
    "input",
    "drag_and_drop",
    "send_keys",
    "find_text",
    "open_tab",
    "extract",
    "search_page",
    "screenshot",
    "wait",
    "ask_human",
    "done",
];

/// Clicks the form's button by its text without filling the form, three steps in a row (as a
/// model does when the page seemed to take its click and nothing came of it), then gives up.
fn press_submit_again(state: &str, _body: &Value) -> Reply {
    let history = state.split("<history>").nth(1).and_then(|h| h.split("</history>").next()).unwrap_or("");
    let steps = history.lines().filter(|l| l.starts_with("Step ")).count();
    match index_of(state, ">Submit") {
        Some(submit) if steps < 3 => output("Press the button again", json!([{"click": {"index": submit}}])),
        _ => output("Give up", json!([{"done": {"text": "The button does nothing.", "success": false}}])),
    }
}

#[test]
fn an_element_clicked_again_within_a_few_steps_gets_a_real_mouse_click_and_the_result_says_so() {
    let site = FakeSite::at(LOGIN_URL);
    let run = run_task(site.clone(), ScriptedLlm::new(press_submit_again), 10, StopSignal::new());
    let results: Vec<&str> = run.history.steps.iter().take(3).map(|s| s.actions[0].result.message.as_str()).collect();
    assert_eq!(site.state.borrow().trusted_clicks, [58, 58], "the second and third clicks: {results:?}");
    assert_eq!(site.state.borrow().clicks, [58, 58, 58], "each click reached the page");
    assert!(!results[0].contains("real mouse click"), "{}", results[0]);
    assert!(results[1].contains("with a real mouse click, as it was clicked in a recent step too"), "{}", results[1]);

    // Once the debugger cannot be used on the tab, the script's click is the one there is.
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().debugger_unavailable = true;
    let run = run_task(site.clone(), ScriptedLlm::new(press_submit_again), 10, StopSignal::new());
    assert!(site.state.borrow().trusted_clicks.is_empty());
    assert!(!run.history.steps[1].actions[0].result.message.contains("real mouse click"));
}

/// Gives the attached file named in the state to the username field, then finishes.
fn upload_the_cv(state: &str, body: &Value) -> Reply {
    if state.contains("Put cv.pdf into") {
        return output("Finish", json!([{"done": {"text": "Uploaded.", "success": true}}]));
    }
    assert!(offered_actions(body).contains(&"upload_file".to_string()), "upload_file is offered with files");
    let field = index_of(state, "placeholder=Username").expect("the field");
    output("Give the CV", json!([{"upload_file": {"index": field, "file": "cv.pdf"}}]))
}

#[test]
fn attached_files_are_listed_by_name_and_given_to_a_page_by_upload_file_only_when_there_are_some() {
    let files = vec![
        tabwright::browser::TaskFile {
            id: "k1".into(),
            name: "cv.pdf".into(),
            mime: "application/pdf".into(),
            size: 48_213,
        },
        tabwright::browser::TaskFile { id: "k2".into(), name: "photo.png".into(), mime: "image/png".into(), size: 900 },
    ];
    let site = FakeSite::at(LOGIN_URL);
    let run = run_configured(
        site.clone(),
        ScriptedLlm::new(upload_the_cv),
        settings(5),
        ("t1", "Apply"),
        StopSignal::new(),
        |a| a.with_files(files.clone()),
    );
    assert_eq!(site.state.borrow().uploads, [(41, "cv.pdf".to_string(), "k1".to_string())]);
    let first = run.requests[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        first.contains(
            "<attached_files>\n- cv.pdf (application/pdf, 48 KB)\n- photo.png (image/png, 900 B)\n</attached_files>"
        ),
        "{first}"
    );
    let schema = &run.requests[0]["response_format"]["json_schema"]["schema"];
    let names = serde_json::to_string(schema).unwrap();
    assert!(names.contains(r#""enum":["cv.pdf","photo.png"]"#), "the model may name only these files: {names}");

    // A name that is not attached is refused before anything runs.
    let invented = |state: &str, _: &Value| match index_of(state, "placeholder=Username") {
        Some(field) if !state.contains("not an attached file") => {
            output("Give a file", json!([{"upload_file": {"index": field, "file": "passwords.txt"}}]))
        }
        _ => output("Finish", json!([{"done": {"text": "No.", "success": false}}])),
    };
    let site = FakeSite::at(LOGIN_URL);
    run_configured(site.clone(), ScriptedLlm::new(invented), settings(5), ("t2", "Apply"), StopSignal::new(), |a| {
        a.with_files(files.clone())
    });
    assert!(site.state.borrow().uploads.is_empty());

    // Without files the action is not offered at all.
    let run = run_task(FakeSite::at(LOGIN_URL), ScriptedLlm::new(login_policy), 3, StopSignal::new());
    assert!(!offered_actions(&run.requests[0]).contains(&"upload_file".to_string()));
    assert!(!run.requests[0]["messages"][1]["content"].as_str().unwrap().contains("<attached_files>"));
}

#[test]
fn logs_in_by_reading_the_page_and_stops_on_done() {
    let site = FakeSite::at("https://app.example.com/");
    let run = run_task(site.clone(), ScriptedLlm::new(login_policy), 10, StopSignal::new());

    assert_eq!(site.state.borrow().logged_in_as.as_deref(), Some("alice"), "the form was really submitted");
    assert_eq!(run.history.end, TaskEnd::Done { text: "Logged in as alice.".into(), success: true, data: None });
    assert_eq!(run.history.steps.len(), 3);
    assert_eq!(run.requests.len(), 3, "no LLM call after done");
    // Step 2 filled both fields and clicked submit; the click navigated.
    let step2 = &run.history.steps[1];
    let names: Vec<&str> = step2.actions.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["input", "input", "click"]);
    assert!(
        step2.actions[1].result.message.contains("•••"),
        "password not echoed: {}",
        step2.actions[1].result.message
    );
    let described: Vec<&str> = step2.actions.iter().map(|a| a.description.as_str()).collect();
    assert_eq!(described, ["type \"alice\" into [41] Username", "type ••• into [17] Password", "click [58] Submit"]);
    assert!(step2.actions[2].result.message.contains("navigated to https://app.example.com/home"));
    // Each element action keeps what identifies its element beyond its number, for a replay.
    let target = step2.actions[2].target.as_ref().expect("the click's element is kept");
    assert_eq!((target.tag.as_str(), target.text.as_str()), ("button", "Submit"));
    assert_eq!(target.attributes.get("type").map(String::as_str), Some("submit"));
    assert_eq!(step2.actions[0].target.as_ref().and_then(|t| t.attributes.get("placeholder")).unwrap(), "Username");
    // Only each step's last action is told that a look at the page follows it: the inputs
    // before the submit are not (a page read ahead of them would miss what they change).
    let sign_in = run.history.steps[0].actions[0].params["index"].as_u64().unwrap();
    assert_eq!(site.state.borrow().ran_before_look, [format!("click {sign_in}"), "click 58".to_string()]);
    let done = &run.history.steps[2].actions[0];
    assert_eq!((done.name.as_str(), done.target.is_none()), ("done", true), "no element, no target");
    // Every request names exactly the registered actions that fit the page, and offers the
    // same schema, byte for byte, on every page of the site (a prefix the providers cache).
    for body in &run.requests {
        assert_eq!(available_actions(body), PAGE_ACTIONS);
        assert_eq!(body["response_format"]["json_schema"]["strict"], true);
        assert_eq!(body["response_format"], run.requests[0]["response_format"]);
    }
    assert!(offered_actions(&run.requests[0]).contains(&"go_back".to_string()), "the page's state is not the schema's");
    // What comes before the page in a request is the previous request's start, grown by the
    // step just done: the system prompt, the task, and the history up to its last step.
    for pair in run.requests.windows(2) {
        assert_eq!(pair[0]["messages"][0], pair[1]["messages"][0], "the same system prompt");
        let (before, after) = (state_text(&pair[0]), state_text(&pair[1]));
        let kept = &before[..before.find("</history>").unwrap()];
        let kept = kept.strip_suffix("(no steps yet)\n").unwrap_or(kept);
        assert!(after.starts_with(kept), "the next request starts as this one did:\n{kept}\n---\n{after}");
    }
    // The history of step 2 is in the third request's state, with the password masked.
    let third = run.requests[2]["messages"][1]["content"].as_str().unwrap();
    assert!(third.contains("Fill in the form and submit it"), "{third}");
    let without_task = third.replace("Log in as alice with password hunter2", "");
    assert!(!without_task.contains("hunter2"), "the password is not repeated: {third}");
    assert_eq!(step2.actions[1].params["text"], "•••");
    assert_eq!(run.history.usage.input_tokens, 300);
    // Events: started, then per step started/planned/finished, then finished.
    match run.events.first() {
        Some(AgentEvent::TaskStarted { model, conversation_id, .. }) => {
            assert_eq!(model, &run.history.model);
            assert_eq!(conversation_id, "t1", "a task that follows none is its own conversation");
        }
        other => panic!("the first event is {other:?}"),
    }
    assert!(!run.history.model.is_empty());
    assert!(matches!(run.events.last(), Some(AgentEvent::TaskFinished { steps: 3, .. })));
    let finished = run.events.iter().filter(|e| matches!(e, AgentEvent::StepFinished { .. })).count();
    assert_eq!(finished, 3);
}

#[test]
fn a_follow_up_names_its_conversation_and_is_told_the_earlier_task() {
    let site = FakeSite::at("https://app.example.com/");
    let first = run_task(site.clone(), ScriptedLlm::new(login_policy), 10, StopSignal::new());
    let llm = ScriptedLlm::new(|_, _| output("Finish", json!([{"done": {"text": "ok", "success": true}}])));
    let earlier = vec![first.history.as_previous()];
    let run = run_configured(site, llm, settings(5), ("t2", "Now log out"), StopSignal::new(), |agent| {
        agent.following(earlier).in_conversation("t1")
    });
    match run.events.first() {
        Some(AgentEvent::TaskStarted { task_id, conversation_id, .. }) => {
            assert_eq!((task_id.as_str(), conversation_id.as_str()), ("t2", "t1"));
        }
        other => panic!("the first event is {other:?}"),
    }
    let state = run.requests[0]["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(state.contains("<earlier_tasks>") && state.contains("Logged in as alice."), "{state}");
}

#[test]
fn later_actions_are_skipped_after_the_page_changes() {
    let site = FakeSite::at("https://app.example.com/");
    let llm = ScriptedLlm::new(|state, _| {
        if let Some(link) = index_of(state, ">Sign in") {
            // The second click targets an index of the old page: it must not run.
            output("Go", json!([{"click": {"index": link}}, {"click": {"index": link}}]))
        } else {
            output("Stop", json!([{"done": {"text": "here", "success": false}}]))
        }
    });
    let run = run_task(site.clone(), llm, 5, StopSignal::new());
    assert_eq!(site.state.borrow().clicks, vec![9]);
    let first = &run.history.steps[0];
    assert_eq!(first.actions.len(), 1);
    assert!(first.actions[0].result.message.contains("1 later action(s) of this step were not run"));
}

#[test]
fn an_invalid_answer_goes_back_to_the_llm_which_recovers() {
    let site = FakeSite::at(LOGIN_URL);
    let calls = Rc::new(RefCell::new(0));
    let llm = ScriptedLlm::new({
        let calls = calls.clone();
        move |state, body| {
            *calls.borrow_mut() += 1;
            if *calls.borrow() == 1 {
                return output("Teleport", json!([{"teleport": {"to": "home"}}]));
            }
            login_policy(state, body)
        }
    });
    let run = run_task(site.clone(), llm, 10, StopSignal::new());
    let first = &run.history.steps[0];
    assert!(first.error.as_deref().unwrap().contains("`teleport` is not available"));
    let person = first.error_locale_text.as_deref().unwrap();
    assert_eq!((person.key.as_str(), person.detail.as_deref()), ("model_answer_unusable", first.error.as_deref()));
    let second_state = run.requests[1]["messages"][1]["content"].as_str().unwrap();
    assert!(second_state.contains(&format!("Allowed actions: {}", PAGE_ACTIONS.join(", "))), "{second_state}");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }));
}

#[test]
fn three_invalid_answers_in_a_row_end_the_task() {
    let llm = ScriptedLlm::new(|_, _| Reply::Content("I think I should click the button.".into()));
    let run = run_task(FakeSite::at(LOGIN_URL), llm, 10, StopSignal::new());
    match &run.history.end {
        TaskEnd::TooManyFailures { failures, last_error, last_error_locale_text } => {
            assert_eq!(*failures, 3);
            assert!(last_error.contains("not valid JSON"), "{last_error}");
            // The person reads that the answer could not be used; what the model was told is
            // the detail beneath.
            let person = last_error_locale_text.as_ref().unwrap();
            assert_eq!(person.key, "model_answer_unusable");
            assert_eq!(person.detail.as_deref(), Some(last_error.as_str()));
        }
        other => panic!("unexpected end {other:?}"),
    }
    assert_eq!(run.requests.len(), 3);
}

#[test]
fn an_http_error_ends_the_task_naming_status_and_url() {
    let llm = ScriptedLlm::new(|_, _| Reply::Http(401, r#"{"error": {"message": "Invalid key"}}"#.into()));
    let run = run_task(FakeSite::at(LOGIN_URL), llm, 10, StopSignal::new());
    let TaskEnd::Error { message, .. } = &run.history.end else { panic!("{:?}", run.history.end) };
    assert!(message.contains("HTTP 401"), "{message}");
    assert!(message.contains("http://127.0.0.1:9/v1/chat/completions"), "{message}");
    assert!(message.contains("Invalid key"), "{message}");
    assert_eq!(run.requests.len(), 1, "a 401 is not retried in a loop");
}

#[test]
fn an_unreachable_llm_ends_the_task_with_the_url() {
    let llm = ScriptedLlm::new(|_, _| Reply::Unreachable("connection refused".into()));
    let run = run_task(FakeSite::at(LOGIN_URL), llm, 10, StopSignal::new());
    let TaskEnd::Error { message, .. } = &run.history.end else { panic!("{:?}", run.history.end) };
    assert!(message.contains("Could not reach the LLM at http://127.0.0.1:9/v1/chat/completions"), "{message}");
    assert!(message.contains("connection refused"));
}

#[test]
fn a_restricted_page_ends_the_task_with_a_clear_message() {
    let llm = ScriptedLlm::new(login_policy);
    let run = run_task(FakeSite::at("chrome://settings"), llm, 10, StopSignal::new());
    let TaskEnd::Error { message, .. } = &run.history.end else { panic!("{:?}", run.history.end) };
    assert!(message.contains("cannot work on chrome://settings"), "{message}");
    assert!(run.requests.is_empty());
}

#[test]
fn a_stale_index_is_reported_to_the_llm_not_fatal() {
    let site = FakeSite::at(LOGIN_URL);
    let llm = ScriptedLlm::new({
        let state = site.state.clone();
        move |page, body| {
            // The page removes the button between observing and acting.
            if let Some(submit) = index_of(page, ">Submit") {
                if state.borrow().removed.is_empty() {
                    state.borrow_mut().removed.push(submit);
                    return output("Submit", json!([{"click": {"index": submit}}]));
                }
            }
            if page.contains("is no longer on the page") {
                return output("Report", json!([{"done": {"text": "button vanished", "success": false}}]));
            }
            login_policy(page, body)
        }
    });
    let run = run_task(site, llm, 10, StopSignal::new());
    assert!(run.history.steps[0].actions[0].result.is_error);
    assert_eq!(run.history.end, TaskEnd::Done { text: "button vanished".into(), success: false, data: None });
}

#[test]
fn the_last_step_offers_only_done_and_the_step_limit_ends_the_task() {
    let llm = ScriptedLlm::new(|state, body| {
        if offered_actions(body) == ["done"] {
            assert!(state.contains("This is the last step"));
            return output("Wrap up", json!([{"done": {"text": "partial", "success": false}}]));
        }
        output("Wander", json!([{"navigate": {"url": "https://app.example.com/"}}]))
    });
    let run = run_task(FakeSite::at(LOGIN_URL), llm, 3, StopSignal::new());
    assert_eq!(run.history.end, TaskEnd::Done { text: "partial".into(), success: false, data: None });
    assert_eq!(offered_actions(&run.requests[2]), ["done"]);

    // A model that ignores the last-step rule runs out of steps.
    let stubborn =
        ScriptedLlm::new(|_, _| output("Wander", json!([{"navigate": {"url": "https://app.example.com/"}}])));
    let run = run_task(FakeSite::at(LOGIN_URL), stubborn, 2, StopSignal::new());
    assert_eq!(run.history.end, TaskEnd::StepLimit { max_steps: 2 });
}

#[test]
fn stop_ends_a_task_waiting_on_the_llm() {
    let stop = StopSignal::new();
    let llm = ScriptedLlm::new({
        let stop = stop.clone();
        move |_, _| {
            stop.stop();
            Reply::Hang
        }
    });
    let run = run_task(FakeSite::at(LOGIN_URL), llm, 10, stop);
    assert_eq!(run.history.end, TaskEnd::Stopped);
    assert!(matches!(run.events.last(), Some(AgentEvent::TaskFinished { end: TaskEnd::Stopped, .. })));
}

#[test]
fn navigate_refuses_non_web_urls() {
    let llm = ScriptedLlm::new(|state, _| {
        if state.contains("is not an absolute http") {
            output("Stop", json!([{"done": {"text": "refused", "success": false}}]))
        } else {
            output("Open", json!([{"navigate": {"url": "javascript:alert(1)"}}]))
        }
    });
    let site = FakeSite::at(LOGIN_URL);
    let run = run_task(site.clone(), llm, 5, StopSignal::new());
    assert_eq!(site.state.borrow().url, LOGIN_URL);
    assert_eq!(run.history.end, TaskEnd::Done { text: "refused".into(), success: false, data: None });
}

#[test]
fn an_unreadable_page_still_goes_to_the_llm_which_can_navigate_away() {
    let llm = ScriptedLlm::new(|state, body| {
        if state.contains("Note: The page could not be read (the page failed to load)") {
            assert_eq!(
                available_actions(body),
                ["search", "navigate", "open_tab", "wait", "ask_human", "done"],
                "no element actions on an unreadable page"
            );
            return output("Go to the log-in page", json!([{"navigate": {"url": LOGIN_URL}}]));
        }
        login_policy(state, body)
    });
    let site = FakeSite::at(BROKEN_URL);
    let run = run_task(site.clone(), llm, 10, StopSignal::new());
    assert!(run.history.steps[0].error.as_deref().unwrap().contains("could not be read"));
    assert_eq!(run.history.steps[0].actions[0].name, "navigate");
    assert_eq!(site.state.borrow().logged_in_as.as_deref(), Some("alice"));
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }));
}

/// Yields to the executor `n` times, so another future can reach a pending point first.
async fn yield_times(n: usize) {
    for _ in 0..n {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                std::task::Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }
        })
        .await;
    }
}

/// Runs the agent and, concurrently, stops it once it is waiting; returns the history.
fn run_and_stop_while_waiting(site: FakeSite, llm: ScriptedLlm) -> (TaskHistory, usize) {
    let stop = StopSignal::new();
    let requests = llm.requests.clone();
    let ports = Ports { browser: site, transport: llm, events: |_e: AgentEvent| {}, clock: || 0.0 };
    let agent = Agent::new("t".into(), "Log in".into(), settings(10), ports, stop.clone());
    let (history, ()) = block_on(async {
        futures::join!(agent.run(), async {
            yield_times(20).await;
            stop.stop();
        })
    });
    let asked = requests.borrow().len();
    (history, asked)
}

#[test]
fn stop_from_outside_ends_a_task_whose_llm_never_answers() {
    let (history, asked) = run_and_stop_while_waiting(FakeSite::at(LOGIN_URL), ScriptedLlm::new(|_, _| Reply::Hang));
    assert_eq!(history.end, TaskEnd::Stopped);
    assert_eq!(asked, 1, "the LLM was being waited on when the stop came");
}

#[test]
fn stop_from_outside_ends_a_task_whose_page_never_answers() {
    let mut site = FakeSite::at(LOGIN_URL);
    site.hang_after = Some(1);
    let llm = ScriptedLlm::new(|_, _| output("Wander", json!([{"navigate": {"url": LOGIN_URL}}])));
    let (history, asked) = run_and_stop_while_waiting(site, llm);
    assert_eq!(history.end, TaskEnd::Stopped);
    assert_eq!(asked, 1, "step 1 ran; step 2 hung observing the page");
    assert_eq!(history.steps.len(), 1);
}

/// The `<last_step_results>` block of a state text.
fn last_results(state: &str) -> &str {
    state.split("<last_step_results>").nth(1).and_then(|r| r.split("</last_step_results>").next()).unwrap_or("")
}

#[test]
fn extract_reads_a_long_page_in_chunks_with_the_extraction_model_and_shows_the_result_once() {
    let site = FakeSite::at(HOME_URL);
    // Two chunks: the first holds the Starter price, the second the Team price.
    site.state.borrow_mut().markdown =
        format!("# Pricing\n\nStarter costs 9 EUR.\n{}\nTeam costs 29 EUR.\n", "filler line\n".repeat(4_000));
    let steps = Rc::new(RefCell::new(0));
    let llm = ScriptedLlm::new({
        let steps = steps.clone();
        move |state, body| {
            if is_extraction(body) {
                let found: Vec<&str> = state.lines().filter(|l| l.contains(" costs ")).collect();
                return Reply::Output(json!({"found": !found.is_empty(), "content": found.join("; ")}));
            }
            *steps.borrow_mut() += 1;
            match *steps.borrow() {
                1 => output("Read the prices", json!([{"extract": {"query": "the price of each plan"}}])),
                2 => output("Note them", json!([{"wait": {"seconds": 0}}])),
                _ => output("Report", json!([{"done": {"text": "Starter 9, Team 29", "success": true}}])),
            }
        }
    });
    let mut settings = settings(10);
    settings.llm.extraction_model = Some("small-reader".into());
    let requests = llm.requests.clone();
    let ports = Ports { browser: site, transport: llm, events: |_: AgentEvent| {}, clock: || 0.0 };
    let history = block_on(Agent::new("t".into(), "Prices?".into(), settings, ports, StopSignal::new()).run());
    assert!(matches!(history.end, TaskEnd::Done { success: true, .. }));
    let requests = requests.borrow();
    let extraction: Vec<&Value> = requests.iter().filter(|b| is_extraction(b)).collect();
    assert_eq!(extraction.len(), 2, "one call per chunk");
    assert!(extraction.iter().all(|b| b["model"] == "small-reader"));
    assert!(state_text(extraction[0]).contains("part=\"1 of 2\""));
    let agent: Vec<String> = requests.iter().filter(|b| !is_extraction(b)).map(state_text).collect();
    let shown = last_results(&agent[1]);
    assert!(shown.contains("<page_content>\nStarter costs 9 EUR.\n\nTeam costs 29 EUR.\n</page_content>"), "{shown}");
    // The extracted text is shown once, not carried in the history of every later step.
    assert!(!agent[2].contains("Team costs 29 EUR"), "{}", agent[2]);
    // Each answer is billed (100 in, 20 out here): the step that extracted paid for its own
    // answer and the two readings, and the task for all five.
    assert_eq!((history.steps[0].usage.input_tokens, history.steps[0].usage.output_tokens), (300, 60));
    assert_eq!((history.usage.input_tokens, history.usage.output_tokens), (500, 100));
}

#[test]
fn a_screenshot_is_attached_to_the_next_request_only() {
    let site = FakeSite::at(HOME_URL);
    let steps = Rc::new(RefCell::new(0));
    let llm = ScriptedLlm::new({
        let steps = steps.clone();
        move |_, _| {
            *steps.borrow_mut() += 1;
            match *steps.borrow() {
                1 => output("Look", json!([{"screenshot": {}}])),
                2 => output("Wait", json!([{"wait": {"seconds": 0}}])),
                _ => output("Report", json!([{"done": {"text": "seen", "success": true}}])),
            }
        }
    });
    let run = run_task(site.clone(), llm, 10, StopSignal::new());
    assert_eq!(site.state.borrow().screenshots, 1);
    let image_of = |body: &Value| {
        body["messages"][1]["content"]
            .as_array()
            .and_then(|parts| parts.iter().find_map(|p| p["image_url"]["url"].as_str().map(String::from)))
    };
    assert_eq!(image_of(&run.requests[0]), None);
    assert_eq!(image_of(&run.requests[1]).as_deref(), Some("data:image/png;base64,iVBORw0KGgo="));
    assert!(last_results(&state_text(&run.requests[1])).contains("Took a screenshot of the viewport (1280×800 pixels)"));
    assert_eq!(image_of(&run.requests[2]), None);
}

/// Asks the user for alice's password, then logs in with the answer.
fn ask_for_the_password(state: &str, body: &Value) -> Reply {
    if let Some(answer) = state.lines().find_map(|l| l.strip_prefix("ask_human: The user answered: ")) {
        let user = index_of(state, "placeholder=Username").unwrap();
        let pass = index_of(state, "placeholder=Password").unwrap();
        return output(
            "Use the password the user gave",
            json!([{"input": {"index": user, "text": "alice"}}, {"input": {"index": pass, "text": answer}}, {"click": {"index": index_of(state, ">Submit").unwrap()}}]),
        );
    }
    if title_of(state).starts_with("Welcome") {
        return login_policy(state, body);
    }
    output("Ask for the password", json!([{"ask_human": {"question": "What is alice's password?"}}]))
}

#[test]
fn ask_human_reports_the_question_and_gives_the_answer_back_to_the_llm() {
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().answer = "hunter2".into();
    let llm = ScriptedLlm::new(ask_for_the_password);
    let run = run_task(site.clone(), llm, 10, StopSignal::new());
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);
    assert_eq!(site.state.borrow().questions, ["What is alice's password?"]);
    let asked = run.events.iter().position(
        |e| matches!(e, AgentEvent::QuestionAsked { question, step: 1, .. } if question == "What is alice's password?"),
    );
    let answered =
        run.events.iter().position(|e| matches!(e, AgentEvent::QuestionAnswered { answer, .. } if answer == "hunter2"));
    assert!(asked.is_some() && answered > asked, "{:?}", run.events);
}

/// A clock whose timers fire at once, so every action that does not finish immediately times out.
struct ImpatientClock;

impl tabwright::agent::Clock for ImpatientClock {
    fn now_ms(&self) -> f64 {
        0.0
    }
    async fn sleep(&self, _ms: u32) {}
}

#[test]
fn an_action_that_hangs_is_abandoned_at_its_time_limit_and_the_llm_is_told() {
    let mut site = FakeSite::at(LOGIN_URL);
    site.hang_on_click = true;
    let llm = ScriptedLlm::new(|state, _| {
        if state.contains("took longer than 60 s and was abandoned") {
            return output("Give up", json!([{"done": {"text": "the page hangs", "success": false}}]));
        }
        output("Press the button", json!([{"click": {"index": index_of(state, ">Submit").unwrap()}}]))
    });
    let ports = Ports { browser: site, transport: llm, events: |_: AgentEvent| {}, clock: ImpatientClock };
    let history = block_on(Agent::new("t".into(), "Submit".into(), settings(5), ports, StopSignal::new()).run());
    assert_eq!(history.end, TaskEnd::Done { text: "the page hangs".into(), success: false, data: None });
    assert!(history.steps[0].actions[0].result.is_error);
}

#[test]
fn a_model_that_refuses_images_is_asked_again_without_the_screenshot() {
    let site = FakeSite::at(HOME_URL);
    let steps = Rc::new(RefCell::new(0));
    let llm = ScriptedLlm::new({
        let steps = steps.clone();
        move |_, body| {
            if body["messages"][1]["content"].is_array() {
                return Reply::Http(400, r#"{"error":{"message":"this model does not support image input"}}"#.into());
            }
            *steps.borrow_mut() += 1;
            match *steps.borrow() {
                1 => output("Look", json!([{"screenshot": {}}])),
                _ => output("Report", json!([{"done": {"text": "text only", "success": true}}])),
            }
        }
    });
    let run = run_task(site, llm, 10, StopSignal::new());
    assert_eq!(run.history.end, TaskEnd::Done { text: "text only".into(), success: true, data: None });
    assert_eq!(run.requests.len(), 3, "step 2 was asked twice: with the image, then without");
    assert!(run.requests[2]["messages"][1]["content"].is_string());
}

/// A future that lets others run once.
async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

#[test]
fn a_paused_task_waits_at_the_step_boundary_and_goes_on_when_resumed() {
    let control = StopSignal::new();
    let events = Rc::new(RefCell::new(Vec::new()));
    let llm = ScriptedLlm::new(login_policy);
    let requests = llm.requests.clone();
    let sink = {
        let events = events.clone();
        move |e: AgentEvent| events.borrow_mut().push(e)
    };
    let ports = Ports { browser: FakeSite::at(LOGIN_URL), transport: llm, events: sink, clock: || 0.0 };
    let agent =
        Agent::new("t".into(), "Log in as alice with password hunter2".into(), settings(10), ports, control.clone());
    control.pause();
    let asked_while_paused = Rc::new(RefCell::new(None));
    let resumer = {
        let events = events.clone();
        let control = control.clone();
        let requests = requests.clone();
        let asked_while_paused = asked_while_paused.clone();
        async move {
            while !events.borrow().iter().any(|e| matches!(e, AgentEvent::TaskPaused { step: 1, .. })) {
                yield_now().await;
            }
            for _ in 0..20 {
                yield_now().await;
            }
            *asked_while_paused.borrow_mut() = Some(requests.borrow().len());
            control.resume();
        }
    };
    let (history, ()) = block_on(async { futures::join!(agent.run(), resumer) });
    assert_eq!(*asked_while_paused.borrow(), Some(0), "nothing was asked while paused");
    assert!(matches!(history.end, TaskEnd::Done { success: true, .. }));
    assert!(events.borrow().iter().any(|e| matches!(e, AgentEvent::TaskResumed { step: 1, .. })));
}

#[test]
fn stop_while_paused_ends_the_task() {
    let control = StopSignal::new();
    control.pause();
    let stopper = control.clone();
    let llm = ScriptedLlm::new(login_policy);
    let ports = Ports { browser: FakeSite::at(LOGIN_URL), transport: llm, events: |_: AgentEvent| {}, clock: || 0.0 };
    let agent = Agent::new("t".into(), "x".into(), settings(10), ports, control);
    let (history, ()) = block_on(async {
        futures::join!(agent.run(), async {
            yield_now().await;
            stopper.stop();
        })
    });
    assert_eq!(history.end, TaskEnd::Stopped);
}

#[test]
fn later_actions_naming_elements_are_skipped_when_new_elements_appeared() {
    let mut site = FakeSite::at(LOGIN_URL);
    site.input_adds_elements = true;
    let llm = ScriptedLlm::new(|state, body| {
        if state.contains("were not run because new elements appeared") {
            return output("Stop here", json!([{"done": {"text": "saw the change", "success": false}}]));
        }
        login_policy(state, body)
    });
    let run = run_task(site.clone(), llm, 5, StopSignal::new());
    let first = &run.history.steps[0];
    assert_eq!(first.actions.len(), 1, "only the first input ran: {:?}", first.actions);
    assert!(first.actions[0]
        .result
        .message
        .contains("2 later action(s) of this step were not run because new elements appeared on the page"));
    assert!(site.state.borrow().clicks.is_empty());
}

#[test]
fn repeating_the_same_action_on_an_unchanged_page_brings_a_nudge() {
    let llm = ScriptedLlm::new(|state, _| {
        if state.contains("same actions") {
            return output("Change approach", json!([{"done": {"text": "stuck", "success": false}}]));
        }
        output("Press submit again", json!([{"click": {"index": index_of(state, ">Submit").unwrap()}}]))
    });
    let run = run_task(FakeSite::at(LOGIN_URL), llm, 10, StopSignal::new());
    assert_eq!(run.history.steps.len(), 4, "three identical steps, then the nudged one");
    assert!(state_text(&run.requests[3]).contains(r#"Note: You have sent the same actions (click {"index":58"#));
}

#[test]
fn the_plan_is_kept_across_steps_ticked_off_and_the_budget_warning_comes_near_the_end() {
    let llm = ScriptedLlm::new(|state, _| {
        let step: u32 =
            state.split("Step ").last().and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap();
        // Written at step 1, left as it is at step 2 (null), ticked off at step 3 as text.
        let plan = match step {
            1 => json!([{"text": "Open the cart", "done": false}, {"text": "Check out"}]),
            3 => json!(["[x] Open the cart", "Check out"]),
            _ => json!(null),
        };
        Reply::Output(json!({
            "thinking": "Two parts.",
            "evaluation_previous_goal": "ok",
            "memory": "",
            "next_goal": "Wait",
            "plan": plan,
            "action": [{"wait": {"seconds": 0}}],
        }))
    });
    let run = run_task(FakeSite::at(HOME_URL), llm, 5, StopSignal::new());
    let written = "<plan>\n[ ] 1. Open the cart\n[ ] 2. Check out\n</plan>";
    let second = state_text(&run.requests[1]);
    assert!(second.contains(written), "{second}");
    assert!(!second.contains("steps left") && !second.contains("step(s) left"), "{second}");
    let third = state_text(&run.requests[2]);
    assert!(third.contains(written), "a step that leaves the plan null keeps it: {third}");
    assert!(third.contains("Only 2 step(s) left after this one"), "{third}");
    let fourth = state_text(&run.requests[3]);
    assert!(fourth.contains("<plan>\n[x] 1. Open the cart\n[ ] 2. Check out\n</plan>"), "{fourth}");
    assert_eq!(run.history.steps[0].output.as_ref().unwrap().thinking.as_deref(), Some("Two parts."));
    assert!(run.requests[0]["response_format"]["json_schema"]["schema"]["properties"]["thinking"].is_object());
}

#[test]
fn a_restored_task_goes_on_after_its_last_completed_step_with_its_history() {
    // Step 1 was completed by the worker that was stopped: the form is already filled.
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().fields.extend([(41, "alice".to_string()), (17, "hunter2".to_string())]);
    let earlier = tabwright::agent::StepRecord {
        step: 1,
        url: LOGIN_URL.into(),
        output: Some(tabwright::agent::ModelThoughts {
            thinking: None,
            evaluation_previous_goal: "Start".into(),
            memory: "".into(),
            next_goal: "Fill in the form".into(),
            plan: None,
        }),
        usage: tabwright::llm::Usage::new(100, 10),
        ..Default::default()
    };
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: AgentEvent| events.borrow_mut().push(e)
    };
    let llm = ScriptedLlm::new(|state, body| {
        assert!(
            state.contains("Step 1:\n  evaluation: Start\n  goal: Fill in the form\n"),
            "the history survives: {state}"
        );
        login_policy(state, body)
    });
    let requests = llm.requests.clone();
    let ports = Ports { browser: site, transport: llm, events: sink, clock: || 0.0 };
    let history = block_on(
        Agent::new("t".into(), "Log in as alice with password hunter2".into(), settings(10), ports, StopSignal::new())
            .restored(vec![earlier], tabwright::llm::Usage::new(100, 10), "stopped".into())
            .run(),
    );
    assert!(matches!(history.end, TaskEnd::Done { success: true, .. }));
    let steps: Vec<u32> = history.steps.iter().map(|r| r.step).collect();
    assert_eq!(steps[0], 1);
    assert_eq!(steps[1], 2, "the next step is numbered after the kept one");
    assert!(matches!(events.borrow()[0], AgentEvent::TaskRestored { step: 2, steps_kept: 1, .. }));
    assert!(history.usage.input_tokens > 100, "usage continues from what was spent");
    assert!(!requests.borrow().is_empty());
}

fn with_safety(max_steps: u32, secrets: &[(&str, &str, &[&str])], blocked: &[&str]) -> tabwright::settings::Settings {
    let stored: Vec<tabwright::safety::StoredSecret> = secrets
        .iter()
        .map(|(name, value, domains)| tabwright::safety::StoredSecret {
            name: name.to_string(),
            value: value.to_string(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
        })
        .collect();
    let blocked: Vec<String> = blocked.iter().map(|d| d.to_string()).collect();
    let mut s = settings(max_steps);
    s.safety = tabwright::safety::Safety::from_settings(&stored, &[], &blocked).unwrap();
    s
}

fn run_with(site: FakeSite, llm: ScriptedLlm, settings: tabwright::settings::Settings, task: &str) -> Run {
    run_stoppable(site, llm, settings, task, StopSignal::new())
}

/// Runs a task to its end, keeping its events and the requests the LLM received.
fn run_stoppable(
    site: FakeSite,
    llm: ScriptedLlm,
    settings: tabwright::settings::Settings,
    task: &str,
    stop: StopSignal,
) -> Run {
    run_configured(site, llm, settings, ("t1", task), stop, |agent| agent)
}

/// Logs in with the password named as a secret, never written out.
fn secret_login_policy(state: &str, body: &Value) -> Reply {
    if title_of(state).starts_with("Welcome, alice") {
        return output("Done", json!([{"done": {"text": "Logged in.", "success": true}}]));
    }
    if state.contains("may not be used on") {
        return output("Give up", json!([{"done": {"text": "secret refused", "success": false}}]));
    }
    let _ = body;
    output(
        "Log in with the stored password",
        json!([
            {"input": {"index": index_of(state, "placeholder=Username").unwrap(), "text": "alice"}},
            {"input": {"index": index_of(state, "placeholder=Password").unwrap(), "text": "<secret>alice_pw</secret>"}},
            {"click": {"index": index_of(state, ">Submit").unwrap()}}
        ]),
    )
}

#[test]
fn a_secret_is_typed_by_name_and_its_value_never_reaches_the_llm_or_the_records() {
    let site = FakeSite::at(LOGIN_URL);
    let settings = with_safety(10, &[("alice_pw", "hunter2", &["app.example.com"])], &[]);
    let run = run_with(site.clone(), ScriptedLlm::new(secret_login_policy), settings, "Log in as alice");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);
    assert_eq!(site.state.borrow().logged_in_as.as_deref(), Some("alice"), "the page got the real password");
    assert!(state_text(&run.requests[0]).contains("<secret>alice_pw</secret>"), "the LLM is told the name");
    for body in &run.requests {
        assert!(!body.to_string().contains("hunter2"), "a request carried the value: {body}");
    }
    let kept = serde_json::to_string(&run.history.steps).unwrap() + &serde_json::to_string(&run.events).unwrap();
    assert!(!kept.contains("hunter2"), "records and events hold no value");
}

#[test]
fn a_secret_named_on_a_site_it_is_not_for_is_refused_to_the_llm() {
    let site = FakeSite::at(LOGIN_URL);
    let settings = with_safety(10, &[("alice_pw", "hunter2", &["bank.example"])], &[]);
    let run = run_with(site.clone(), ScriptedLlm::new(secret_login_policy), settings, "Log in as alice");
    let typed = &run.history.steps[0].actions[1];
    assert!(typed.result.is_error, "{:?}", typed.result);
    assert!(typed.result.message.contains("alice_pw"), "{}", typed.result.message);
    assert_ne!(site.state.borrow().fields.get(&17).map(String::as_str), Some("hunter2"));
    assert!(matches!(run.history.end, TaskEnd::Done { success: false, .. }));
}

/// A secret named in a URL goes to that URL's site: allowed there, refused elsewhere, whatever
/// page the task is on, and never allowed to change which site the URL goes to.
#[test]
fn a_secret_in_a_url_goes_only_to_a_site_it_is_for() {
    let secrets: &[(&str, &str, &[&str])] = &[("pw", "hunter2", &["*.bank.example"]), ("mail", "a@mail.test", &[])];
    let try_url = |url: &'static str| {
        let site = FakeSite::at("https://www.bank.example/account");
        let llm = ScriptedLlm::new(move |state, _| {
            if state.contains("Step 1:") {
                return output("Stop", json!([{"done": {"text": "tried", "success": true}}]));
            }
            output("Go", json!([{"navigate": {"url": url}}]))
        });
        let run = run_with(site.clone(), llm, with_safety(3, secrets, &["blocked.test"]), "Go");
        // Refused as the action's result, or (a URL that is no URL until filled in) as the
        // step's invalid answer.
        let step = &run.history.steps[0];
        let result = step.actions.first().map_or_else(
            || tabwright::actions::ActionResult::error(step.error.clone().unwrap_or_default()),
            |a| a.result.clone(),
        );
        let landed = site.state.borrow().url.clone();
        let kept = serde_json::to_string(&run.history.steps).unwrap() + &serde_json::to_string(&run.requests).unwrap();
        assert!(!kept.contains("hunter2") && !kept.contains("a@mail.test"), "{url}: a value was kept or sent: {kept}");
        (result, landed)
    };
    // On the bank's own site, into its query: filled in.
    let (result, landed) = try_url("https://login.bank.example/?p=<secret>pw</secret>");
    assert!(!result.is_error, "{result:?}");
    assert_eq!(landed, "https://login.bank.example/?p=hunter2");
    // From the bank's page to another site: refused, and the tab stays.
    for url in [
        "https://attacker.test/?p=<secret>pw</secret>",
        "https://<secret>pw</secret>.attacker.test/",
        // A value that is itself a host moves the URL to it.
        "https://allowed.test:<secret>mail</secret>/",
        "https://<secret>mail</secret>/",
    ] {
        let (result, landed) = try_url(url);
        assert!(result.is_error, "{url}: {result:?}");
        assert_eq!(landed, "https://www.bank.example/account", "{url}: the tab went to {landed}");
    }
    // The firewall judges the URL with its secrets in.
    let (result, landed) = try_url("https://blocked.test/?m=<secret>mail</secret>");
    assert!(result.is_error && result.message.contains("blocked.test"), "{result:?}");
    assert!(!result.message.contains("a@mail.test"), "{}", result.message);
    assert_eq!(landed, "https://www.bank.example/account");
}

/// Where a script may run is decided in the worker, on the address the debugger's target has
/// when the script is about to run; the page gets a check it cannot redefine, and never a secret.
#[test]
fn a_script_runs_only_where_the_user_allowed_scripts_and_never_holds_a_secret() {
    let run_script = |code: &'static str, moved_to: Option<&str>| {
        let site = FakeSite::at(LOGIN_URL);
        site.state.borrow_mut().script_target = moved_to.map(str::to_string);
        let llm = ScriptedLlm::new(move |state, _| {
            if state.contains("Step 1:") {
                return output("Stop", json!([{"done": {"text": "done", "success": true}}]));
            }
            output("Read it", json!([{"evaluate": {"code": code}}]))
        });
        let mut s = with_safety(3, &[("pw", "hunter2", &["app.example.com"])], &[]);
        s.actions.evaluate_domains = vec!["app.example.com".into()];
        let run = run_with(site.clone(), llm, s, "Read the total");
        let result = run.history.steps[0].actions[0].result.clone();
        let scripts = site.state.borrow().scripts.clone();
        (result, scripts)
    };
    let (result, scripts) = run_script("window.total", None);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(scripts.len(), 1);
    assert!(scripts[0].starts_with(r#"if (location.hostname !== "app.example.com") throw"#), "{}", scripts[0]);
    assert!(scripts[0].ends_with("\nwindow.total"));
    // The page moved to a host the user did not allow scripts on: nothing runs.
    let (result, scripts) = run_script("window.total", Some("https://evil.test/x"));
    assert!(result.is_error && result.message.contains("evil.test"), "{result:?}");
    assert!(scripts.is_empty());
    // A secret is never handed to a script, even on its own site.
    let (result, scripts) = run_script("fetch('/x?p=<secret>pw</secret>')", None);
    assert!(result.is_error && result.message.contains("never given to scripts"), "{result:?}");
    assert!(scripts.is_empty());
}

/// A secret for the site goes into its own fields, never into a field of a frame another
/// site put on the page.
#[test]
fn a_secret_is_not_typed_into_a_frame_from_another_site() {
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().embedded_frame = Some("https://pay.evil.test/card".into());
    let llm = ScriptedLlm::new(|state, _| {
        if state.contains("Step 1:") {
            return output("Stop", json!([{"done": {"text": "done", "success": true}}]));
        }
        output(
            "Type the password twice",
            json!([
                {"input": {"index": index_of(state, "placeholder=Password").unwrap(), "text": "<secret>alice_pw</secret>"}},
                {"input": {"index": index_of(state, "placeholder='Card number'").unwrap(), "text": "<secret>alice_pw</secret>"}}
            ]),
        )
    });
    let run =
        run_with(site.clone(), llm, with_safety(3, &[("alice_pw", "hunter2", &["app.example.com"])], &[]), "Log in");
    let actions = &run.history.steps[0].actions;
    assert!(!actions[0].result.is_error, "the page's own field gets it: {:?}", actions[0].result);
    assert!(actions[1].result.is_error && actions[1].result.message.contains("alice_pw"), "{:?}", actions[1].result);
    assert_eq!(site.state.borrow().fields.get(&17).map(String::as_str), Some("hunter2"));
    assert_ne!(site.state.borrow().fields.get(&77).map(String::as_str), Some("hunter2"));
}

#[test]
fn the_firewall_stops_a_navigation_to_a_blocked_site_and_leaves_one_reached_by_a_link() {
    let llm = ScriptedLlm::new(|state, _| {
        if state.contains("firewall blocks") {
            return output("Stay", json!([{"done": {"text": "blocked", "success": false}}]));
        }
        output("Go", json!([{"navigate": {"url": "https://evil.example/steal"}}]))
    });
    let site = FakeSite::at(HOME_URL);
    let run = run_with(site.clone(), llm, with_safety(5, &[], &["evil.example"]), "Go to evil");
    let refused = &run.history.steps[0].actions[0].result;
    assert!(refused.is_error && refused.message.contains("evil.example"), "{refused:?}");
    assert_eq!(site.state.borrow().url, HOME_URL, "the tab never went there");

    // A page that redirects onto a blocked site: the task is taken off it.
    let llm = ScriptedLlm::new(|state, _| {
        if state.contains("Tabwright left that page") {
            return output("Stop", json!([{"done": {"text": "left", "success": false}}]));
        }
        output("Open", json!([{"navigate": {"url": "https://app.example.com/redirects-to-evil"}}]))
    });
    let site = FakeSite::at(HOME_URL);
    site.state.borrow_mut().redirects =
        vec![("https://app.example.com/redirects-to-evil".into(), "https://evil.example/".into())];
    let run = run_with(site.clone(), llm, with_safety(5, &[], &["evil.example"]), "Open it");
    assert_eq!(site.state.borrow().left_blocked, 1);
    assert!(run.history.steps[0].actions[0].result.message.contains("Tabwright left that page"));
}

#[test]
fn each_step_and_the_task_are_priced_when_the_model_is_in_the_price_table() {
    let mut priced = settings(10);
    priced.llm.model = "gpt-4.1-mini".into();
    let llm = ScriptedLlm::new(login_policy);
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: AgentEvent| events.borrow_mut().push(e)
    };
    let ports = Ports { browser: FakeSite::at(LOGIN_URL), transport: llm, events: sink, clock: || 0.0 };
    let history = block_on(Agent::new("t".into(), "Log in as alice".into(), priced, ports, StopSignal::new()).run());
    let per_step = tabwright::llm::pricing::cost_usd("gpt-4.1-mini", history.steps[0].usage).unwrap();
    assert!(per_step > 0.0);
    assert!(history.steps.iter().all(|r| r.cost_usd == Some(per_step)), "every step priced alike");
    let total = history.cost_usd.unwrap();
    assert!((total - per_step * history.steps.len() as f64).abs() < 1e-12);
    assert!(matches!(events.borrow().last(), Some(AgentEvent::TaskFinished { cost_usd: Some(c), .. }) if *c == total));

    // An unknown model: tokens are counted, no price is made up.
    let run = run_task(FakeSite::at(LOGIN_URL), ScriptedLlm::new(login_policy), 10, StopSignal::new());
    assert_eq!(run.history.cost_usd, None);
    assert!(run.history.usage.input_tokens > 0);
}

/// A provider's recorded answer (`tests/fixtures/llm/`), as the body of an HTTP 200.
fn recorded_answer(path: &str) -> Reply {
    let full = format!("{}/tests/fixtures/llm/{path}", env!("CARGO_MANIFEST_DIR"));
    Reply::Http(200, std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}")))
}

/// The model answers `unusable` (recorded answers the parser rejects, each billed) to the
/// first requests, then logs in.
fn first_unusable(unusable: Vec<&'static str>) -> ScriptedLlm {
    let calls = RefCell::new(0);
    ScriptedLlm::new(move |state, body| {
        *calls.borrow_mut() += 1;
        match unusable.get(*calls.borrow() - 1) {
            Some(path) => recorded_answer(path),
            None => login_policy(state, body),
        }
    })
}

fn price(model: &str, usage: Usage) -> f64 {
    tabwright::llm::pricing::cost_usd(model, usage).unwrap()
}

/// An answer the parser rejects is billed by the provider all the same: its usage counts in
/// its step's record and the task's totals, tokens and cost, as an accepted answer's does;
/// and each one counts when the model is asked again.
#[test]
fn an_answer_cut_off_counts_in_the_tasks_tokens_and_cost() {
    let mut priced = settings(10);
    priced.llm.model = "gpt-4.1-mini".into();
    // Cut off one token in (79 in, 1 out), twice; then the two good steps of the log-in (100
    // in, 20 out each).
    let llm = first_unusable(vec!["openai/truncated.json", "openai/truncated.json"]);
    let run = run_with(FakeSite::at(LOGIN_URL), llm, priced, "Log in as alice with password hunter2");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);
    let steps = &run.history.steps;
    assert_eq!(steps.len(), 4);
    let (cut, good) = (Usage::new(79, 1), Usage::new(100, 20));
    for record in &steps[..2] {
        assert!(record.error.as_deref().is_some_and(|e| e.contains("cut off")), "{:?}", record.error);
        assert_eq!(record.usage, cut);
        assert_eq!(record.cost_usd, Some(price("gpt-4.1-mini", cut)));
    }
    assert!(steps[2..].iter().all(|r| r.usage == good && r.error.is_none()));
    assert_eq!(run.history.usage, Usage::new(2 * 79 + 2 * 100, 2 + 2 * 20), "both kinds of answer, every one");
    let cost = 2.0 * price("gpt-4.1-mini", cut) + 2.0 * price("gpt-4.1-mini", good);
    assert!((run.history.cost_usd.unwrap() - cost).abs() < 1e-12, "{:?} against {cost}", run.history.cost_usd);
    match run.events.last() {
        Some(AgentEvent::TaskFinished { usage, cost_usd: Some(c), .. }) => {
            assert_eq!(*usage, run.history.usage);
            assert!((c - cost).abs() < 1e-12);
        }
        other => panic!("{other:?}"),
    }
}

/// Anthropic's answer over the context window (199,871 input tokens billed) then a good one:
/// the task reports the sum of both usages and the cost of both.
#[test]
fn an_answer_over_the_context_window_counts_with_the_good_one_after_it() {
    let mut anthropic = settings(10);
    anthropic.llm.provider = tabwright::settings::Provider::Anthropic;
    anthropic.llm.model = "claude-sonnet-4-5".into();
    let llm = first_unusable(vec!["anthropic/context_window_exceeded.json"]);
    let run = run_with(FakeSite::at(LOGIN_URL), llm, anthropic, "Log in as alice with password hunter2");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);
    let (over, good) = (Usage::new(199_871, 129), Usage::new(100, 20));
    let first = &run.history.steps[0];
    assert!(first.error.as_deref().is_some_and(|e| e.contains("context window")), "{:?}", first.error);
    assert_eq!((first.usage, first.cost_usd), (over, Some(price("claude-sonnet-4-5", over))));
    let good_steps = run.history.steps.len() as u64 - 1;
    assert_eq!(
        run.history.usage,
        Usage::new(199_871 + good_steps * 100, 129 + good_steps * 20),
        "the sum of both usages"
    );
    let cost = price("claude-sonnet-4-5", over) + good_steps as f64 * price("claude-sonnet-4-5", good);
    assert!((run.history.cost_usd.unwrap() - cost).abs() < 1e-9, "{:?} against {cost}", run.history.cost_usd);
}

/// The model is unknown to the provider (404, not billed) and the fallback answers with a
/// refusal (billed): the step counts the fallback's tokens, at the fallback's price.
#[test]
fn a_fallbacks_billed_answer_counts_at_the_fallbacks_price() {
    let mut priced = settings(10);
    priced.llm.model = "gpt-4.1-mini".into();
    priced.llm.fallback_model = Some("gpt-4.1".into());
    let calls = RefCell::new(0);
    let llm = ScriptedLlm::new(move |state, body| {
        *calls.borrow_mut() += 1;
        match (*calls.borrow(), body["model"].as_str()) {
            (1, Some("gpt-4.1-mini")) => {
                Reply::Http(404, r#"{"error": {"message": "The model does not exist"}}"#.into())
            }
            (2, Some("gpt-4.1")) => recorded_answer("openai/refusal.json"),
            _ => login_policy(state, body),
        }
    });
    let run = run_with(FakeSite::at(LOGIN_URL), llm, priced, "Log in as alice with password hunter2");
    let first = &run.history.steps[0];
    assert!(first.error.as_deref().is_some_and(|e| e.contains("I'm very sorry")), "{:?}", first.error);
    let refused = Usage::new(79, 12);
    assert_eq!((first.usage, first.cost_usd), (refused, Some(price("gpt-4.1", refused))));
    let rest = run.history.steps.len() as u64 - 1;
    assert_eq!(run.history.usage, Usage::new(79 + rest * 100, 12 + rest * 20));
}

fn with_agent(max_steps: u32, agent: tabwright::settings::AgentOptions) -> tabwright::settings::Settings {
    tabwright::settings::Settings { agent, ..settings(max_steps) }
}

fn image_of(body: &Value) -> Option<String> {
    body["messages"][1]["content"]
        .as_array()
        .and_then(|parts| parts.iter().find_map(|p| p["image_url"]["url"].as_str().map(String::from)))
}

fn schema_name(body: &Value) -> &str {
    body["response_format"]["json_schema"]["name"].as_str().unwrap_or_default()
}

/// Waits `steps` steps (each goal long, to grow the history), then finishes.
fn waiting_policy(steps: usize, goal_chars: usize) -> impl Fn(&str, &Value) -> Reply {
    let count = Rc::new(RefCell::new(0));
    move |_, body| {
        if schema_name(body) != "agent_output" {
            return Reply::Content(json!({"summary": "SUMMARY: waited on the home page."}).to_string());
        }
        *count.borrow_mut() += 1;
        let n = *count.borrow();
        if n > steps {
            return output("Finish", json!([{"done": {"text": "waited", "success": true}}]));
        }
        output(&format!("goal-{n}: {}", "x".repeat(goal_chars)), json!([{"wait": {"seconds": 0}}]))
    }
}

use tabwright::settings::{AgentOptions, Vision};

#[test]
fn vision_on_shows_the_page_every_step_and_keeps_each_image_with_its_step() {
    let site = FakeSite::at(HOME_URL);
    let agent = AgentOptions { vision: Vision::On, ..AgentOptions::default() };
    let run = run_with(site.clone(), ScriptedLlm::new(waiting_policy(2, 10)), with_agent(10, agent), "Wait twice");
    assert_eq!(run.history.steps.len(), 3);
    assert_eq!(site.state.borrow().screenshots, 3, "one screenshot per step");
    for (body, record) in run.requests.iter().zip(&run.history.steps) {
        assert_eq!(image_of(body).as_deref(), Some("data:image/png;base64,iVBORw0KGgo="));
        assert_eq!(record.screenshot.as_ref().map(|s| s.width), Some(1280));
    }
    assert!(!offered_actions(&run.requests[0]).contains(&"screenshot".to_string()), "every step has an image already");
}

#[test]
fn vision_on_without_a_screenshot_goes_on_and_says_why() {
    let site = FakeSite::at(HOME_URL);
    site.state.borrow_mut().screenshot_error = Some("Chrome refused to capture this page".into());
    let agent = AgentOptions { vision: Vision::On, ..AgentOptions::default() };
    let run = run_with(site.clone(), ScriptedLlm::new(waiting_policy(1, 10)), with_agent(10, agent), "Wait once");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);
    assert_eq!(image_of(&run.requests[0]), None);
    let state = state_text(&run.requests[0]);
    assert!(state.contains("No screenshot this step:") && state.contains("refused to capture"), "{state}");
    assert!(run.history.steps.iter().all(|r| r.screenshot.is_none()));
}

#[test]
fn vision_off_offers_no_screenshot_and_sends_no_image() {
    let site = FakeSite::at(HOME_URL);
    let agent = AgentOptions { vision: Vision::Off, ..AgentOptions::default() };
    let run = run_with(site.clone(), ScriptedLlm::new(waiting_policy(1, 10)), with_agent(10, agent), "Wait once");
    assert_eq!(site.state.borrow().screenshots, 0);
    for body in &run.requests {
        assert!(!offered_actions(body).contains(&"screenshot".to_string()), "{:?}", offered_actions(body));
        assert_eq!(image_of(body), None);
    }
}

#[test]
fn thinking_off_leaves_the_field_out_of_the_schema() {
    let thinking = |on: bool| {
        let agent = AgentOptions { thinking: on, ..AgentOptions::default() };
        let run =
            run_with(FakeSite::at(HOME_URL), ScriptedLlm::new(waiting_policy(0, 10)), with_agent(5, agent), "Finish");
        run.requests[0]["response_format"]["json_schema"]["schema"]["properties"].get("thinking").is_some()
    };
    assert!(thinking(true));
    assert!(!thinking(false));
}

/// Input tokens of an agent request as the core estimates them: system prompt, state text, schema.
fn estimated_tokens(body: &Value) -> u32 {
    use tabwright::prompt::{estimate_json_tokens, estimate_tokens};
    estimate_tokens(body["messages"][0]["content"].as_str().unwrap_or_default())
        + estimate_tokens(&state_text(body))
        + estimate_json_tokens(&body["response_format"]["json_schema"]["schema"].to_string())
}

#[test]
fn a_request_over_its_budget_has_old_steps_summarised_by_the_extraction_model() {
    // Each step's goal adds about 1,000 tokens of history.
    let first = run_with(FakeSite::at(HOME_URL), ScriptedLlm::new(waiting_policy(0, 10)), settings(5), "Wait");
    let base = estimated_tokens(&first.requests[0]);
    let budget = base + 9_000;
    let mut s = with_agent(40, AgentOptions { request_budget_tokens: budget, ..AgentOptions::default() });
    s.llm.extraction_model = Some("cheap".into());
    let run = run_with(FakeSite::at(HOME_URL), ScriptedLlm::new(waiting_policy(18, 6_000)), s, "Wait");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);

    let summaries: Vec<&Value> = run.requests.iter().filter(|b| schema_name(b) == "history_summary").collect();
    let compacted: Vec<(u32, u32)> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::HistoryCompacted { step, summary, .. } => Some((*step, summary.through_step)),
            _ => None,
        })
        .collect();
    // About 9 steps fit; a summary waits for ten steps to hold (five to condense, five kept):
    // at step 11 (of steps 1–5), and again once five more steps piled up.
    assert_eq!(compacted, [(11, 5), (16, 10)]);
    assert_eq!(summaries.len(), 2);
    for (body, (at, through)) in summaries.iter().zip(&compacted) {
        assert_eq!(body["model"], "cheap", "summaries use the extraction model");
        assert_eq!(*through, at - 1 - tabwright::prompt::RECENT_STEPS as u32, "the last five steps stay in full");
        let summarised = state_text(body);
        assert!(summarised.contains(&format!("goal-{through}:")), "{summarised}");
        assert!(!summarised.contains(&format!("goal-{}:", through + 1)));
    }
    assert!(state_text(summaries[0]).contains("goal-1:"));
    // The second summary builds on the first rather than on steps it no longer sees.
    let second = state_text(summaries[1]);
    assert!(second.contains("SUMMARY: waited on the home page.") && !second.contains("goal-1:"), "{second}");
    let at = compacted[0].0;

    let agent_requests: Vec<&Value> = run.requests.iter().filter(|b| schema_name(b) == "agent_output").collect();
    for (i, body) in agent_requests.iter().enumerate() {
        let step = i as u32 + 1;
        let state = state_text(body);
        assert!(estimated_tokens(body) <= budget, "step {step} is within the budget");
        if step >= at {
            assert!(state.contains("SUMMARY: waited on the home page."), "step {step}: {state}");
            assert!(!state.contains("goal-1:"), "step {step} shows the summary instead of step 1");
            assert!(state.contains(&format!("goal-{}:", step - 1)));
        } else {
            assert!(!state.contains("SUMMARY:"));
        }
    }
    // The summary's tokens count in the step that asked for it.
    let record = &run.history.steps[at as usize - 1];
    assert_eq!(record.usage.input_tokens, 200);
    assert_eq!(run.history.usage.input_tokens, 100 * run.requests.len() as u64);
}

#[test]
fn when_summarising_fails_older_steps_are_shortened_instead_and_not_retried_every_step() {
    let first = run_with(FakeSite::at(HOME_URL), ScriptedLlm::new(waiting_policy(0, 10)), settings(5), "Wait");
    let budget = estimated_tokens(&first.requests[0]) + 9_000;
    let policy = waiting_policy(14, 4_000);
    let llm = ScriptedLlm::new(move |state, body| {
        if schema_name(body) == "history_summary" {
            return Reply::Content("I cannot do that".into());
        }
        policy(state, body)
    });
    let s = with_agent(40, AgentOptions { request_budget_tokens: budget, ..AgentOptions::default() });
    let run = run_with(FakeSite::at(HOME_URL), llm, s, "Wait");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);
    let summaries = run.requests.iter().filter(|b| schema_name(b) == "history_summary").count();
    assert_eq!(summaries, 1, "a failed summary is not asked for again at once");
    assert!(!run.events.iter().any(|e| matches!(e, AgentEvent::HistoryCompacted { .. })));
    let agent_requests: Vec<&Value> = run.requests.iter().filter(|b| schema_name(b) == "agent_output").collect();
    let last = state_text(agent_requests.last().unwrap());
    for body in &agent_requests {
        assert!(estimated_tokens(body) <= budget);
    }
    // Old steps give way: their goals shortened or left out, the latest ones in full.
    assert!(last.contains("earlier steps not shown") || last.contains("Step 1: goal: goal-1"), "{last}");
    assert!(last.contains("goal-14:"), "the latest step is shown");
    let full_x = "x".repeat(4_000);
    let full_goals = last.matches(&full_x).count();
    assert!(full_goals <= tabwright::prompt::RECENT_STEPS, "{full_goals} goals in full");
}

#[test]
fn a_secret_given_as_an_answer_is_masked_in_events_and_requests_but_typed_for_real() {
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().answer = "hunter2".into();
    let llm = ScriptedLlm::new(ask_for_the_password);
    let settings = with_safety(10, &[("alice_password", "hunter2", &[])], &[]);
    let run = run_with(site.clone(), llm, settings, "Log in as alice; ask me for the password");
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }), "{:?}", run.history.end);
    assert_eq!(site.state.borrow().logged_in_as.as_deref(), Some("alice"), "the real value was typed");
    let answered = run.events.iter().find_map(|e| match e {
        AgentEvent::QuestionAnswered { answer, .. } => Some(answer.clone()),
        _ => None,
    });
    assert_eq!(answered.as_deref(), Some("<secret>alice_password</secret>"));
    for body in &run.requests {
        assert!(!body.to_string().contains("hunter2"), "no request carries the value");
    }
    assert!(!serde_json::to_string(&run.events).unwrap().contains("hunter2"), "no event carries the value");
}

/// The saved steps of a finished task, as the panel hands them to a replay: each step's goal
/// and the actions that worked, `done` left out.
fn replay_steps(history: &tabwright::agent::TaskHistory) -> Vec<ReplayStep> {
    history
        .steps
        .iter()
        .map(|r| ReplayStep {
            goal: r.output.as_ref().map(|o| o.next_goal.clone()).unwrap_or_default(),
            actions: r
                .actions
                .iter()
                .filter(|a| a.name != "done" && !a.result.is_error)
                .map(|a| ReplayAction {
                    name: a.name.clone(),
                    params: a.params.clone(),
                    target: a.target.as_deref().cloned(),
                })
                .collect(),
        })
        .filter(|s| !s.actions.is_empty())
        .collect()
}

/// Replays `steps` on `site` with a model that must never be asked.
fn replay(site: FakeSite, steps: Vec<ReplayStep>, settings: tabwright::settings::Settings) -> Run {
    let llm = ScriptedLlm::new(|_, _| panic!("a replay asks no model"));
    run_configured(site, llm, settings, ("r1", "Replay"), StopSignal::new(), |agent| agent.replaying(steps))
}

/// Logs in over two steps, the password named as a secret: fill in the form, then submit it.
fn fill_then_submit(state: &str, _body: &Value) -> Reply {
    if title_of(state).starts_with("Welcome, alice") {
        return output("Report", json!([{"done": {"text": "in", "success": true}}]));
    }
    if !state.contains("Typed") {
        return output(
            "Fill in the form",
            json!([
                {"input": {"index": index_of(state, "placeholder=Username").unwrap(), "text": "alice", "clear": true}},
                {"input": {"index": index_of(state, "placeholder=Password").unwrap(), "text": "<secret>pw</secret>", "clear": true}}
            ]),
        );
    }
    output("Submit", json!([{"click": {"index": index_of(state, ">Submit").unwrap()}}]))
}

#[test]
fn a_restored_replay_counts_in_its_report_the_elements_its_earlier_steps_found() {
    let with_secret = with_safety(10, &[("pw", "hunter2", &["app.example.com"])], &[]);
    let saved = run_with(FakeSite::at(LOGIN_URL), ScriptedLlm::new(fill_then_submit), with_secret.clone(), "Log in");
    let steps = replay_steps(&saved.history);
    let whole = replay(FakeSite::at(LOGIN_URL), steps.clone(), with_secret.clone());
    // The worker stopped after the replay's first step; the second runs after the restart.
    let first = whole.history.steps[..1].to_vec();
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().fields = [(41, "alice".to_string()), (17, "hunter2".to_string())].into();
    let llm = ScriptedLlm::new(|_, _| panic!("a replay asks no model"));
    let restored = run_configured(site, llm, with_secret, ("r1", "Replay"), StopSignal::new(), |agent| {
        agent.restored(first, Default::default(), "the worker was stopped".into()).replaying(steps)
    });
    assert_eq!(restored.history.end, whole.history.end, "the same report: 3 elements where they had been");
    assert_eq!(restored.history.steps.len(), 2);
}

/// A long replay restored after more than `FULL_RECORD_STEPS` steps: the records of its
/// first steps were trimmed (their evaluations cut to a hundred characters, too few for a step
/// that names six elements), and its report counts the same elements as the replay that was
/// not interrupted.
#[test]
fn a_replay_restored_after_forty_steps_counts_every_element_its_trimmed_steps_found() {
    use tabwright::record::FULL_RECORD_STEPS;
    let with_secret = with_safety(10, &[("pw", "hunter2", &["app.example.com"])], &[]);
    let saved = run_with(FakeSite::at(LOGIN_URL), ScriptedLlm::new(fill_then_submit), with_secret.clone(), "Log in");
    let fill = replay_steps(&saved.history).remove(0);
    assert_eq!(fill.actions.len(), 2, "the user name, the password");
    // Each step fills the form three times over: six elements, named in its evaluation.
    let total = FULL_RECORD_STEPS + 5;
    let step = ReplayStep { goal: fill.goal.clone(), actions: [&fill.actions[..]; 3].concat() };
    let steps = vec![step; total];
    let renumbered = || {
        let site = FakeSite::at(LOGIN_URL);
        site.state.borrow_mut().renumbered_by = 100;
        site
    };
    let whole = replay(renumbered(), steps.clone(), with_secret.clone());
    let expected = format!(
        "Replayed all {total} step(s) of the saved task: {} element(s) were where they had been, 0 were found again by their features.",
        6 * total
    );
    assert!(
        matches!(&whole.history.end, TaskEnd::Done { text, success: true, .. } if *text == expected),
        "{:?}",
        whole.history.end
    );
    let long = &whole.history.steps[0].output.as_ref().unwrap().evaluation_previous_goal;
    assert!(long.chars().count() > 100, "longer than a trimmed record keeps: {long}");

    // The worker stopped after step 44: the records it restores from are those of its log,
    // trimmed where 40 steps behind the last.
    let done = total - 1;
    let mut records = whole.history.steps[..done].to_vec();
    for record in &mut records[..done - FULL_RECORD_STEPS] {
        record.trim(false);
    }
    let llm = ScriptedLlm::new(|_, _| panic!("a replay asks no model"));
    let restored = run_configured(renumbered(), llm, with_secret, ("r1", "Replay"), StopSignal::new(), |agent| {
        agent.restored(records, Default::default(), "the worker was stopped".into()).replaying(steps)
    });
    assert_eq!(restored.history.steps.len(), total, "the last step ran after the restart");
    assert_eq!(restored.history.end, whole.history.end, "the same count as the replay not interrupted");
}

#[test]
fn a_replay_finds_each_element_again_on_a_page_numbered_afresh_and_asks_no_model() {
    // A login whose password is a secret, so the saved steps can type it again.
    let with_secret = with_safety(10, &[("pw", "hunter2", &["app.example.com"])], &[]);
    let site = FakeSite::at(LOGIN_URL);
    let llm = ScriptedLlm::new(fill_then_submit);
    let saved = run_with(site, llm, with_secret.clone(), "Log in as alice");
    assert_eq!(saved.history.end, TaskEnd::Done { text: "in".into(), success: true, data: None });
    let steps = replay_steps(&saved.history);
    assert_eq!(steps.len(), 2, "fill in, submit; done is left out");

    // Another visit: the same page, every number 100 higher.
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().renumbered_by = 100;
    let Run { history, events, requests } = replay(site.clone(), steps, with_secret);
    assert!(requests.is_empty());
    assert_eq!(site.state.borrow().logged_in_as.as_deref(), Some("alice"), "the secret was typed again, the form sent");
    assert_eq!(site.state.borrow().clicks, vec![58]);
    match &history.end {
        TaskEnd::Done { text, success: true, .. } => {
            assert_eq!(text, "Replayed all 2 step(s) of the saved task: 3 element(s) were where they had been, 0 were found again by their features.");
        }
        other => panic!("{other:?}"),
    }
    let first = history.steps[0].output.as_ref().unwrap();
    assert_eq!(first.next_goal, "Fill in the form");
    assert_eq!(
        first.evaluation_previous_goal,
        "Replaying step 1 of 2: [41] is [141]; [17] is [117]. So far 2 element(s) were where they had been, 0 were found again."
    );
    assert!(matches!(events.first(), Some(AgentEvent::TaskStarted { max_steps: 2, replay: true, .. })));
    assert!(!serde_json::to_string(&history).unwrap().contains("hunter2"));
}

#[test]
fn a_replay_restored_after_its_last_step_ends_with_its_report() {
    let site = FakeSite::at(LOGIN_URL);
    let saved = run_task(site, ScriptedLlm::new(login_policy), 10, StopSignal::new());
    let steps = vec![ReplayStep { goal: "Look".into(), actions: vec![] }];
    let done = saved.history.steps[..1].to_vec();
    let llm = ScriptedLlm::new(|_, _| panic!("a replay asks no model"));
    let run =
        run_configured(FakeSite::at(LOGIN_URL), llm, settings(100), ("r1", "Replay"), StopSignal::new(), |agent| {
            agent.restored(done, Default::default(), "the worker was stopped".into()).replaying(steps)
        });
    match &run.history.end {
        TaskEnd::Done { text, success: true, .. } => assert!(text.starts_with("Replayed all 1 step(s)"), "{text}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(run.history.steps.len(), 1, "no step run again");
}

#[test]
fn a_replay_stops_at_an_element_it_cannot_find_or_a_password_it_never_kept() {
    let site = FakeSite::at(LOGIN_URL);
    let saved = run_task(site, ScriptedLlm::new(login_policy), 10, StopSignal::new());
    let steps = replay_steps(&saved.history);
    // The password was typed as itself: history keeps it masked, so it cannot be replayed.
    let run = replay(FakeSite::at(LOGIN_URL), steps.clone(), settings(100));
    match &run.history.end {
        TaskEnd::Done { text, success: false, .. } => {
            assert!(text.contains("typed a password, which Tabwright does not keep. Save it as a secret"), "{text}")
        }
        other => panic!("{other:?}"),
    }
    // Without the password field, and a page where the submit button is gone: named, not guessed.
    let only_submit: Vec<ReplayStep> = steps
        .iter()
        .map(|s| ReplayStep { actions: s.actions.iter().filter(|a| a.name == "click").cloned().collect(), ..s.clone() })
        .filter(|s| !s.actions.is_empty())
        .collect();
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().removed.push(58);
    let run = replay(site.clone(), only_submit, settings(100));
    match &run.history.end {
        TaskEnd::Done { text, success: false, .. } => {
            assert!(text.contains("the <button> \"Submit\" it used ([58] then) is not on the page any more"), "{text}")
        }
        other => panic!("{other:?}"),
    }
    assert!(site.state.borrow().clicks.is_empty(), "nothing was clicked instead");
}

/// The login run with a secret password saved as the skill "Log in", its user name a parameter.
fn login_skill() -> tabwright::agent::skill::Skill {
    use tabwright::agent::skill::{suggest_params, Skill, SkillDraft, SkillParam};
    let saved = run_with(FakeSite::at(LOGIN_URL), ScriptedLlm::new(secret_login_policy), with_login_secret(), "Log in");
    assert!(matches!(saved.history.end, TaskEnd::Done { success: true, .. }), "{:?}", saved.history.end);
    let steps = replay_steps(&saved.history);
    let suggested = suggest_params(&steps);
    assert_eq!(suggested.len(), 1, "the user name; the secret placeholder is no parameter: {suggested:?}");
    assert_eq!((suggested[0].name.as_str(), suggested[0].example.as_str()), ("username", "alice"));
    let params = vec![SkillParam { name: suggested[0].name.clone(), example: suggested[0].example.clone() }];
    let draft =
        SkillDraft { name: "Log in".into(), description: "Log in".into(), start_url: LOGIN_URL.into(), steps, params };
    Skill::from_draft(draft, &[]).unwrap()
}

/// Settings with the secret the login skill types.
fn with_login_secret() -> tabwright::settings::Settings {
    with_safety(20, &[("alice_pw", "hunter2", &["app.example.com"])], &[])
}

/// A model that uses the skill when the page offers it, then finishes saying what it was told.
fn skill_policy(user: &'static str) -> impl Fn(&str, &Value) -> Reply {
    move |state, body| {
        if let Some(told) = state.lines().find(|l| l.contains("The skill \"Log in\"")) {
            return output(
                "Report",
                json!([{"done": {"text": told, "success": title_of(state).starts_with("Welcome")}}]),
            );
        }
        if offered_actions(body).iter().any(|a| a == "skill_log_in") {
            return output("Use the saved skill", json!([{"skill_log_in": {"username": user}}]));
        }
        output("Nothing to do here", json!([{"done": {"text": "no skill offered", "success": false}}]))
    }
}

#[test]
fn a_saved_skill_is_offered_on_its_site_and_runs_its_steps_with_the_values_given() {
    let skill = login_skill();
    let settings = with_login_secret();
    // The task starts on the site's front page: the skill first opens the page it began on.
    let site = FakeSite::at("https://app.example.com/");
    let llm = ScriptedLlm::new(skill_policy("alice"));
    let skills = vec![skill.clone()];
    let run = run_configured(site.clone(), llm, settings.clone(), ("t1", "Sign me in"), StopSignal::new(), |agent| {
        agent.with_skills(skills)
    });
    let first = &run.requests[0];
    let branch = first["response_format"]["json_schema"]["schema"]["properties"]["action"]["items"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"].get("skill_log_in").is_some())
        .expect("the skill is a branch of the union")
        .clone();
    assert_eq!(branch["properties"]["skill_log_in"]["required"], json!(["username"]));
    assert_eq!(site.state.borrow().logged_in_as.as_deref(), Some("alice"), "the secret was filled in on its site");
    assert_eq!(run.requests.len(), 2, "asked once to choose, once after the skill; its steps asked nothing");
    match &run.history.end {
        TaskEnd::Done { text, success: true, .. } => {
            assert!(text.contains("finished: Replayed all 2 step(s)"), "{text}")
        }
        other => panic!("{other:?}"),
    }
    let goals: Vec<&str> = run.history.steps.iter().map(|s| s.output.as_ref().unwrap().next_goal.as_str()).collect();
    assert_eq!(
        goals,
        [
            "Use the saved skill",
            "Open the page the skill \"Log in\" begins on",
            "Log in with the stored password",
            "Report"
        ]
    );
    assert!(!serde_json::to_string(&run.history).unwrap().contains("hunter2"));

    // Another user name: typed where the skill typed "alice".
    let site = FakeSite::at(LOGIN_URL);
    let skills = vec![skill.clone()];
    let run = run_configured(
        site.clone(),
        ScriptedLlm::new(skill_policy("carol")),
        settings.clone(),
        ("t2", "x"),
        StopSignal::new(),
        |agent| agent.with_skills(skills),
    );
    assert_eq!(site.state.borrow().fields.get(&41).map(String::as_str), Some("carol"));
    assert_eq!(run.history.steps.len(), 3, "no step to open its page: the task began there");

    // Another site: not offered.
    let site = FakeSite::at("https://elsewhere.example/");
    let skills = vec![skill];
    let run = run_configured(
        site,
        ScriptedLlm::new(skill_policy("alice")),
        settings,
        ("t3", "x"),
        StopSignal::new(),
        |agent| agent.with_skills(skills),
    );
    assert!(!offered_actions(&run.requests[0]).iter().any(|a| a.starts_with("skill_")));
}

#[test]
fn a_skill_that_cannot_go_on_hands_the_task_back_to_the_model_saying_why() {
    let skill = login_skill();
    let site = FakeSite::at(LOGIN_URL);
    site.state.borrow_mut().removed.push(58);
    let settings = with_login_secret();
    let run = run_configured(
        site.clone(),
        ScriptedLlm::new(skill_policy("alice")),
        settings,
        ("t1", "x"),
        StopSignal::new(),
        |agent| agent.with_skills(vec![skill]),
    );
    match &run.history.end {
        TaskEnd::Done { text, success: false, .. } => {
            assert!(text.contains("stopped: Step 1 of the skill \"Log in\": the &lt;button&gt; \"Submit\""), "{text}")
        }
        other => panic!("{other:?}"),
    }
    assert!(site.state.borrow().clicks.is_empty());
    assert_eq!(run.requests.len(), 2, "the model was asked again, told why");
}

/// The history part of a state text.
fn history_of(state: &str) -> &str {
    &state[state.find("<history>").unwrap()..state.find("</history>").unwrap()]
}

/// A 70-step task: each listed step shows the model's evaluation, memory and goal with its
/// action; the steps before the window of full steps are listed as their memory lines, all the
/// way back to step 1; and the window moves ten steps at a time, so the history of each
/// request begins with the history of the one before it for ten steps in a row.
#[test]
fn listed_steps_show_the_models_memory_and_older_ones_stay_as_memory_lines_in_a_window_moving_in_blocks() {
    const STEPS: u32 = 70;
    let llm = ScriptedLlm::new(|state, _| {
        let step = step_of(state);
        let action = if step == STEPS {
            json!([{"done": {"text": "Waited.", "success": true}}])
        } else {
            json!([{"wait": {"seconds": 0}}])
        };
        Reply::Output(json!({
            "evaluation_previous_goal": format!("judged at {step}"),
            // Two steps in a row write the same memory: one line says both.
            "memory": if step == 11 || step == 12 { "the same note".to_string() } else { format!("note {step}") },
            "next_goal": format!("goal {step}"),
            "action": action,
        }))
    });
    let run = run_task(FakeSite::at(HOME_URL), llm, STEPS, StopSignal::new());
    assert!(matches!(run.history.end, TaskEnd::Done { success: true, .. }));
    let states: Vec<String> = run.requests.iter().map(state_text).collect();
    assert_eq!(states.len(), STEPS as usize);

    // Early on every step is listed whole.
    let third = history_of(&states[2]);
    assert!(
        third.contains("Step 2:\n  evaluation: judged at 2\n  memory: note 2\n  goal: goal 2\n  - wait "),
        "{third}"
    );

    // At the last step: steps 1–40 as memory lines (69 steps listed; the window holds 29).
    let last = history_of(&states[STEPS as usize - 1]);
    assert!(last.contains("Step 1: memory: note 1\n"), "{last}");
    assert!(last.contains("Steps 11–12: memory: the same note\n"), "{last}");
    assert!(last.contains("Step 40: memory: note 40\nStep 41:\n  evaluation: judged at 41\n"), "{last}");
    assert!(last.contains("  memory: note 69\n"), "the latest memory whole");
    assert!(!last.contains("not shown"), "nothing is dropped: {last}");

    // The window moves ten steps at a time: steps 42 to 51 list steps 1–20 as lines, and each
    // request's history starts with the whole history of the one before it.
    for step in 42..51 {
        let (this, next) = (history_of(&states[step - 1]), history_of(&states[step]));
        assert!(next.starts_with(this), "step {} adds to step {step}'s history", step + 1);
    }
    let (before, moved) = (history_of(&states[50]), history_of(&states[51]));
    assert!(!moved.starts_with(before), "at step 52 the window moves");
    assert!(moved.contains("Step 30: memory: note 30\nStep 31:\n"), "{moved}");
}
