//! The words the LLM reads: a fixed system prompt and one state message per step.
//!
//! Each step sends the whole situation afresh (task, compact history, last results, browser
//! state, step info) rather than a growing chat, so the prompt's size is bounded and an old
//! mistake cannot echo forever. Page text is fenced inside `<browser_state>`, which the system
//! prompt declares to be data, never instructions.

use crate::browser::PageState;
use crate::dom::{page_text, untrusted};
use crate::llm::excerpt;
use crate::record::{PlanItem, StepRecord, MEMORY_LINE_CHARS};

/// Earlier tasks of a conversation shown in full at most.
const MAX_EARLIER_TASKS: usize = 5;
/// Tabs listed in the browser state at most.
const MAX_TABS: usize = 20;
use std::fmt::Write;

/// The system prompt, kept as a markdown file beside this module.
pub const SYSTEM_PROMPT: &str = include_str!("system_prompt.md");
/// What [`SYSTEM_PROMPT`] costs in tokens ([`estimate_tokens`]), worked out once.
pub fn system_prompt_tokens() -> u32 {
    static TOKENS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *TOKENS.get_or_init(|| estimate_tokens(SYSTEM_PROMPT))
}

/// The system prompt of the call that condenses old steps when a request is over its budget.
pub const SUMMARY_PROMPT: &str = include_str!("summary_prompt.md");

/// The element list is cut past this many characters (a few thousand tokens).
const MAX_PAGE_CHARS: usize = 40_000;
/// Title and URL are cut past this many characters.
const MAX_FIELD_CHARS: usize = 300;
/// At most this many recent steps are listed in full; older ones as memory lines.
const HISTORY_STEPS: usize = 30;
/// The window of full steps moves this many steps at once, so the history before it, and with
/// it the start of every request, stays byte for byte the same for as many steps: providers'
/// prompt caches match a request's start exactly.
const WINDOW_BLOCK: usize = 10;
/// Memory lines are listed up to about this many characters (some 10,000 tokens); past it
/// the oldest go.
const MAX_MEMORY_LINES_CHARS: usize = 40_000;
/// Memory lines past the limit go this many steps at a time.
const DROPPED_LINES_BLOCK: usize = 100;
/// Steps always shown in full, however short the budget.
pub const RECENT_STEPS: usize = 5;
/// A history summary is cut past this many characters.
const MAX_SUMMARY_CHARS: usize = 6_000;

/// The page's element list as the LLM reads it (cut past a few thousand tokens). Made once a
/// step: the prompt shows it and the loop detector fingerprints it.
pub fn page_listing(page: &PageState) -> String {
    page_text(&page.snapshot, MAX_PAGE_CHARS)
}

/// The element list cut to `max_chars`, for a request over its budget.
pub fn short_page_listing(page: &PageState, max_chars: usize) -> String {
    page_text(&page.snapshot, max_chars.min(MAX_PAGE_CHARS))
}

/// How much of the history a state message shows. The agent tries each in turn, fullest first,
/// until the request fits its budget (after asking the model to summarise old steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detail {
    /// The window of full steps since the summary (see [`window_start`]), each with its
    /// evaluation, memory, goal, actions and results; older steps as memory lines.
    Full,
    /// The last [`RECENT_STEPS`] in full; older ones as memory lines.
    OlderAsLines,
    /// The last [`RECENT_STEPS`] only; older ones are counted.
    RecentOnly,
    /// The last [`RECENT_STEPS`], each field and result cut to a line or two.
    Terse,
}

impl Detail {
    /// The next shorter detail, if any.
    pub fn shorter(self) -> Option<Detail> {
        match self {
            Detail::Full => Some(Detail::OlderAsLines),
            Detail::OlderAsLines => Some(Detail::RecentOnly),
            Detail::RecentOnly => Some(Detail::Terse),
            Detail::Terse => None,
        }
    }
}

/// In a terse history, goals and results are cut past this many characters.
const TERSE_CHARS: usize = 200;

/// Steps the model condensed, shown in place of those steps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct HistorySummary {
    /// The last step the summary covers.
    pub through_step: u32,
    pub text: String,
}

impl HistorySummary {
    /// The summary as the model reads it in place of its steps (the history it was made from
    /// quotes pages, so it is escaped like page text).
    pub fn block(&self) -> String {
        format!("<summary of steps 1–{}>\n{}\n</summary>", self.through_step, untrusted(&self.text, MAX_SUMMARY_CHARS))
    }
}

/// An estimate of the tokens `text` costs, as byte-pair tokenizers (OpenAI's o200k and its
/// kin) split it, within a few percent on page texts (tests/token_estimate.rs measures it
/// against o200k on the saved real pages): a run of letters is a word of a token per
/// [`LETTERS_PER_TOKEN`] letters or part of it, a run of digits a token per three, each mark of
/// punctuation or markup (`[12]<a>` is six) and each line break a token, spaces nothing (they
/// join the word after them), and a character of a script written without spaces (CJK, kana,
/// Hangul) about [`CJK_TOKENS_PER_CHAR`] of a token. Counted in one pass over the characters:
/// the request budget asks it of every step's text.
pub fn estimate_tokens(text: &str) -> u32 {
    let mut tokens = 0.0f64;
    let (mut letters, mut digits) = (0u32, 0u32);
    let end_run = |letters: &mut u32, digits: &mut u32, tokens: &mut f64| {
        if *letters > 0 {
            *tokens += f64::from(letters.div_ceil(LETTERS_PER_TOKEN));
        }
        if *digits > 0 {
            *tokens += f64::from(digits.div_ceil(3));
        }
        *letters = 0;
        *digits = 0;
    };
    for c in text.chars() {
        if c.is_ascii_digit() {
            if letters > 0 {
                end_run(&mut letters, &mut digits, &mut tokens);
            }
            digits += 1;
        } else if c.is_alphabetic() && !is_unspaced_script(c) {
            if digits > 0 {
                end_run(&mut letters, &mut digits, &mut tokens);
            }
            letters += 1;
        } else {
            end_run(&mut letters, &mut digits, &mut tokens);
            if c == ' ' {
                continue;
            }
            tokens += if is_unspaced_script(c) {
                CJK_TOKENS_PER_CHAR
            } else if c.is_whitespace() {
                WHITESPACE_TOKENS
            } else {
                MARK_TOKENS
            };
        }
    }
    end_run(&mut letters, &mut digits, &mut tokens);
    tokens.ceil() as u32
}

/// An estimate of the tokens a JSON Schema costs as compact JSON text: a character count at
/// [`JSON_CHARS_PER_TOKEN`]. Byte-pair tokenizers merge JSON's runs of marks (`":{"`, `"},"`)
/// and its repeated key names into single tokens, which the count by words and marks of
/// [`estimate_tokens`] takes apart (it put the answer schema half again above o200k);
/// tests/token_estimate.rs measures this one on the answer schemas.
pub fn estimate_json_tokens(json_text: &str) -> u32 {
    (json_text.chars().count() as f64 / JSON_CHARS_PER_TOKEN).ceil() as u32
}

/// Characters of compact JSON Schema per o200k token, as measured on the answer schemas.
const JSON_CHARS_PER_TOKEN: f64 = 4.4;

/// Letters of a word per token (English words of up to this many letters are mostly one).
const LETTERS_PER_TOKEN: u32 = 6;
/// A character of CJK, kana or Hangul, in tokens.
const CJK_TOKENS_PER_CHAR: f64 = 0.8;
/// A line break or tab, in tokens.
const WHITESPACE_TOKENS: f64 = 0.5;
/// A mark of punctuation or markup, in tokens (pairs such as `]<` are sometimes one).
const MARK_TOKENS: f64 = 0.7;

/// Scripts written without spaces between words, which tokenizers split by character or two.
fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // hiragana, katakana
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0x3000..=0x303F   // CJK punctuation
        | 0xFF00..=0xFFEF   // full-width forms
        | 0x0E00..=0x0E7F   // Thai
    )
}

/// Tokens an image of this size costs, at most (providers scale large images down).
pub fn estimate_image_tokens(width: u32, height: u32) -> u32 {
    ((u64::from(width) * u64::from(height) / 750).min(1_600)) as u32
}

/// The steps as the summariser reads them: every goal, action and result, in full.
pub fn steps_text<'a>(steps: impl IntoIterator<Item = &'a StepRecord>) -> String {
    let mut out = String::new();
    for record in steps {
        write_step(&mut out, record, Shown::Full);
    }
    out
}

fn write_history(out: &mut String, input: &StateInput<'_>) {
    let through = input.summary.map_or(0, |s| s.through_step);
    let steps: Vec<&StepRecord> = input.history.iter().filter(|r| r.step > through).collect();
    if let Some(summary) = input.summary {
        let _ = writeln!(out, "{}", summary.block());
    } else if steps.is_empty() {
        out.push_str("(no steps yet)\n");
    }
    let recent_from = steps.len().saturating_sub(RECENT_STEPS);
    let full_from = match input.detail {
        Detail::Full => window_start(steps.len()),
        Detail::OlderAsLines | Detail::RecentOnly | Detail::Terse => recent_from,
    };
    match input.detail {
        Detail::Full | Detail::OlderAsLines => write_memory_lines(out, &steps[..full_from]),
        Detail::RecentOnly | Detail::Terse if full_from > 0 => {
            let _ = writeln!(out, "({full_from} earlier steps not shown)");
        }
        _ => {}
    }
    let last = steps.len().saturating_sub(1);
    for (i, record) in steps.iter().enumerate().skip(full_from) {
        let shown = if input.detail == Detail::Terse { Shown::Terse { last: i == last } } else { Shown::Full };
        write_step(out, record, shown);
    }
}

/// How many of `n` steps are listed as memory lines before the window of full steps: none up to
/// [`HISTORY_STEPS`], then a multiple of [`WINDOW_BLOCK`], so that the window holds between
/// `HISTORY_STEPS - WINDOW_BLOCK + 1` and `HISTORY_STEPS` steps and moves a block at a time.
pub fn window_start(n: usize) -> usize {
    if n <= HISTORY_STEPS {
        0
    } else {
        (n - HISTORY_STEPS).div_ceil(WINDOW_BLOCK) * WINDOW_BLOCK
    }
}

/// The steps before the window, one line each: the memory the model wrote then (its goal when
/// it wrote none), a run of steps with the same memory as one line. Past
/// [`MAX_MEMORY_LINES_CHARS`] the oldest lines go, [`DROPPED_LINES_BLOCK`] steps at a time.
fn write_memory_lines(out: &mut String, steps: &[&StepRecord]) {
    let mut lines: Vec<(u32, u32, String)> = Vec::new();
    for record in steps {
        let failed = if record.failed() { " (failed)" } else { "" };
        let text = match &record.output {
            Some(o) if !o.memory.trim().is_empty() => {
                format!("memory: {}", excerpt(o.memory.trim(), MEMORY_LINE_CHARS))
            }
            Some(o) => format!("goal: {}", excerpt(o.next_goal.trim(), MEMORY_LINE_CHARS)),
            None => format!("error: {}", excerpt(record.error.as_deref().unwrap_or("").trim(), MEMORY_LINE_CHARS)),
        };
        let text = format!("{failed} {text}");
        match lines.last_mut() {
            Some((_, to, last)) if *last == text => *to = record.step,
            _ => lines.push((record.step, record.step, text)),
        }
    }
    let mut total: usize = lines.iter().map(|(_, _, t)| t.len() + 16).sum();
    let mut dropped_through = 0;
    let mut first = 0;
    while total > MAX_MEMORY_LINES_CHARS && first < lines.len() {
        // A block of steps at a time, so the lines left start the same for many steps.
        let block_end = (lines[first].0 as usize / DROPPED_LINES_BLOCK + 1) * DROPPED_LINES_BLOCK;
        while first < lines.len() && (lines[first].0 as usize) <= block_end {
            total -= lines[first].2.len() + 16;
            dropped_through = lines[first].1;
            first += 1;
        }
    }
    if dropped_through > 0 {
        let _ = writeln!(out, "(the memory of steps up to {dropped_through} is no longer shown)");
    }
    for (from, to, text) in &lines[first..] {
        if from == to {
            let _ = writeln!(out, "Step {from}:{text}");
        } else {
            let _ = writeln!(out, "Steps {from}–{to}:{text}");
        }
    }
}

/// How much of one step the history shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    Full,
    /// Each field, action and result cut to [`TERSE_CHARS`], but the last step's memory.
    Terse {
        last: bool,
    },
}

/// One step of the history: the model's evaluation, memory and goal, then each action and its
/// result.
fn write_step(out: &mut String, record: &StepRecord, shown: Shown) {
    let cut = |text: &str| -> String {
        match shown {
            Shown::Terse { .. } => excerpt(text, TERSE_CHARS),
            Shown::Full => text.to_string(),
        }
    };
    let _ = writeln!(out, "Step {}:", record.step);
    if let Some(output) = &record.output {
        for (label, text, cut_it) in [
            ("evaluation", &output.evaluation_previous_goal, true),
            ("memory", &output.memory, shown != Shown::Terse { last: true }),
            ("goal", &output.next_goal, true),
        ] {
            let text = text.trim();
            if !text.is_empty() {
                let text = if cut_it { cut(text) } else { text.to_string() };
                let _ = writeln!(out, "  {label}: {text}");
            }
        }
    }
    for action in &record.actions {
        let mark = if action.result.is_error { "error" } else { "ok" };
        let params = cut(&action.params.to_string());
        let _ = writeln!(out, "  - {} {params} → {mark}: {}", action.name, cut(&action.result.message));
    }
    if let Some(error) = &record.error {
        let _ = writeln!(out, "  - error: {}", cut(error));
    }
}

pub struct StateInput<'a> {
    pub task: &'a str,
    pub history: &'a [StepRecord],
    pub page: &'a PageState,
    /// `page_listing(page)`.
    pub listing: &'a str,
    pub step: u32,
    pub max_steps: u32,
    pub allowed_actions: &'a [&'a str],
    /// The model's plan as it stands, if it keeps one.
    pub plan: Option<&'a [PlanItem]>,
    /// A word from the loop detector, if the last steps look like a loop.
    pub nudge: Option<&'a str>,
    /// Earlier tasks of the same conversation (for a follow-up task), oldest first.
    pub previous: &'a [crate::record::PreviousTask],
    /// The secrets the model may name on this page (names only).
    pub secrets: Option<&'a str>,
    /// What the URL firewall allows, when it restricts anything.
    pub firewall: Option<&'a str>,
    /// The sites the task may read and act on, and what waits for the person (`crate::guard`).
    pub scope: Option<&'a str>,
    /// The model's summary of old steps, shown instead of them.
    pub summary: Option<&'a HistorySummary>,
    /// The files the person attached to the task (names, types and sizes only).
    pub files: &'a [crate::browser::TaskFile],
    pub detail: Detail,
}

/// From this many steps before the end, the model is told its budget is running out.
fn budget_warning_from(max_steps: u32) -> u32 {
    (max_steps / 10).max(3)
}

/// The page as the model reads it: `<browser_state>` with its URL, title, tabs, a note, and
/// `listing` (the element list, `page_listing`). The same text a client that brings its own
/// model reads through `observe`.
pub fn browser_state(page: &PageState, listing: &str) -> String {
    let mut out = String::new();
    let snapshot = &page.snapshot;
    let _ = writeln!(
        out,
        "<browser_state>\nURL: {}\nTitle: {}",
        untrusted(&snapshot.url, MAX_FIELD_CHARS),
        untrusted(&snapshot.title, MAX_FIELD_CHARS)
    );
    if page.tabs.len() > 1 {
        out.push_str("Tabs:\n");
        for tab in page.tabs.iter().take(MAX_TABS) {
            let current = if tab.id == page.tab_id { " (current)" } else { "" };
            let _ = writeln!(
                out,
                "  tab {}{current}: {} — {}",
                tab.id,
                untrusted(&tab.title, 80),
                untrusted(&tab.url, 200)
            );
        }
    }
    if let Some(notice) = &page.notice {
        let _ = writeln!(out, "Note: {}", untrusted(notice, MAX_FIELD_CHARS * 2));
    }
    let _ = writeln!(out, "Interactive elements:\n{}</browser_state>\n", listing);
    out
}

pub fn state_message(input: &StateInput<'_>) -> String {
    let mut out = String::new();
    if !input.previous.is_empty() {
        out.push_str("<earlier_tasks>\n");
        // The most recent ones matter; older ones are counted.
        let skipped = input.previous.len().saturating_sub(MAX_EARLIER_TASKS);
        if skipped > 0 {
            let _ = writeln!(out, "({skipped} earlier tasks not shown)");
        }
        for (i, earlier) in input.previous[skipped..].iter().enumerate() {
            let _ = writeln!(out, "Task {}: {}", skipped + i + 1, earlier.task.trim());
            let _ = writeln!(out, "  Outcome: {}", untrusted(&earlier.outcome, 2_000));
            if !earlier.memory.trim().is_empty() {
                let _ = writeln!(out, "  Notes: {}", untrusted(&earlier.memory, 1_000));
            }
            if !earlier.last_url.is_empty() {
                let _ = writeln!(out, "  Ended on: {}", untrusted(&earlier.last_url, MAX_FIELD_CHARS));
            }
        }
        out.push_str("</earlier_tasks>\n\n");
    }
    let _ = writeln!(out, "<task>\n{}\n</task>\n", input.task.trim());
    if !input.files.is_empty() {
        // Names the person chose, so escaped like page text; the bytes never reach the model.
        out.push_str("<attached_files>\n");
        for file in input.files {
            let _ = writeln!(out, "- {}", untrusted(&file.describe(), 300));
        }
        out.push_str("</attached_files>\n\n");
    }

    out.push_str("<history>\n");
    write_history(&mut out, input);
    out.push_str("</history>\n\n");

    out.push_str("<last_step_results>\n");
    match input.history.last() {
        None => out.push_str("(this is the first step)\n"),
        Some(last) => {
            for action in &last.actions {
                let _ = writeln!(out, "{}: {}", action.name, action.result.message);
                // What the action read from the page: shown this once, fenced as page content.
                if let Some(detail) = &action.result.detail {
                    let _ = writeln!(out, "<page_content>\n{detail}\n</page_content>");
                }
            }
            if let Some(error) = &last.error {
                let _ = writeln!(out, "Error: {error}");
            }
        }
    }
    out.push_str("</last_step_results>\n\n");

    if let Some(plan) = input.plan.filter(|p| !p.is_empty()) {
        out.push_str("<plan>\n");
        for (i, item) in plan.iter().enumerate() {
            let mark = if item.done { "[x]" } else { "[ ]" };
            let _ = writeln!(out, "{mark} {}. {}", i + 1, item.text);
        }
        out.push_str("</plan>\n\n");
    }

    out.push_str(&browser_state(input.page, input.listing));

    let _ = write!(out, "<step_info>\nStep {} of {}.", input.step, input.max_steps);
    let left = input.max_steps.saturating_sub(input.step);
    if input.step >= input.max_steps {
        out.push_str(" This is the last step: use `done` now with everything you have found.");
    } else if left < budget_warning_from(input.max_steps) {
        let _ = write!(
            out,
            " Only {left} step(s) left after this one: finish what matters most, and make sure to call `done` with what you have before the steps run out."
        );
    }
    if let Some(nudge) = input.nudge {
        let _ = write!(out, "\nNote: {nudge}");
    }
    let _ = write!(out, "\nAvailable actions: {}.", input.allowed_actions.join(", "));
    for line in [input.secrets, input.firewall, input.scope].into_iter().flatten() {
        let _ = write!(out, "\n{line}");
    }
    out.push_str("\n</step_info>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::estimate_tokens;

    /// Past the cap on memory lines the oldest go a hundred steps at a time, and the lines left
    /// fit under it; a run of steps with the same memory is one line.
    #[test]
    fn memory_lines_past_their_cap_go_oldest_first_in_blocks() {
        use crate::record::{ModelThoughts, StepRecord};
        let record = |step: u32, memory: String| StepRecord {
            step,
            output: Some(ModelThoughts { memory, next_goal: format!("goal {step}"), ..Default::default() }),
            ..Default::default()
        };
        let steps: Vec<StepRecord> =
            (1..=400).map(|n| record(n, format!("note {n}: {}", "word ".repeat(45)))).collect();
        let listed: Vec<&StepRecord> = steps.iter().collect();
        let mut out = String::new();
        super::write_memory_lines(&mut out, &listed);
        assert!(
            out.starts_with("(the memory of steps up to 300 is no longer shown)\nStep 301: memory: note 301:"),
            "{}",
            &out[..200]
        );
        assert!(out.len() <= super::MAX_MEMORY_LINES_CHARS + 100, "{} characters", out.len());
        assert!(out.ends_with(&format!("Step 400: memory: note 400: {}\n", "word ".repeat(45).trim())));

        let same: Vec<StepRecord> = (1..=3).map(|n| record(n, "the same".into())).collect();
        let mut out = String::new();
        super::write_memory_lines(&mut out, &same.iter().collect::<Vec<_>>());
        assert_eq!(out, "Steps 1–3: memory: the same\n");
    }

    #[test]
    fn words_digits_marks_and_unspaced_scripts_are_counted_apart() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("   "), 0, "spaces join the word after them");
        assert_eq!(estimate_tokens("search"), 1);
        assert_eq!(estimate_tokens("internationalization"), 4);
        assert_eq!(estimate_tokens("Click the button"), 3);
        // A line of the state text: four marks, a number, a tag name and a word.
        assert_eq!(estimate_tokens("[12]<a>Home"), 6);
        assert_eq!(estimate_tokens("2026"), 2);
        // Accented letters are letters of their word; CJK is counted by character.
        assert_eq!(estimate_tokens("café"), 1);
        assert_eq!(estimate_tokens("搜索按钮"), 4);
        assert_eq!(estimate_tokens("Click 登录 now"), 4);
        assert_eq!(estimate_tokens("🙂🙂"), 2);
    }
}
