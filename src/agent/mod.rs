//! The agent loop: observe → build union → prompt → call LLM → validate → act → record.
//!
//! [`Agent::run`] repeats [`Agent::step`] until the model calls `done`, the user stops the task,
//! the step limit is reached, or too many steps fail in a row. Every outside effect goes through
//! a port — the [`Browser`], the [`LlmTransport`], an [`EventSink`] for live progress and a
//! [`Clock`] for timings — so the loop runs unchanged in native tests and in the service worker.
//!
//! # The flow of one step, in detail
//!
//! `Agent::step` (`src/agent/mod.rs`) reads top to bottom:
//!
//! 1. **Observe** — `Browser::observe`. In Chrome: wait for the tab to finish loading, ask the top
//!    frame's content script for its snapshot (injecting the scripts into every frame if the tab
//!    has no live one: the page loaded before the task), once per page give the frames that did
//!    not answer their scripts if they lack them (a document a script wrote into a blank frame)
//!    and ask the top frame again, then each child frame it shows; validate
//!    each (`dom::FrameSnapshot::from_json_text`: the snapshot crosses as one JSON string), stitch them (`dom::Stitcher`), draw highlights. A
//!    page Chrome forbids (`chrome://`, the Web Store) ends the task with a clear message. A page
//!    that cannot be read (Chrome's error page, a page too busy to answer within 15 s) is passed on
//!    empty with a `notice` saying why, so the LLM can navigate away. A page outside the task's
//!    sites (the guard's scope: a redirect, a tab a page opened) waits for the person's yes or is
//!    left; what each document showed goes into the guard's ledger, under its site. With vision **on**, a
//!    screenshot is taken too (`chrome.tabs.captureVisibleTab` when the tab is on show in its
//!    window, so no debugging bar; the debugger otherwise); without one the step goes on, told why.
//! 2. **Build the union** — `ActionUnion::for_page`, in two parts. *Offered* (the schema): the
//!    registered actions whose domains and URL filter fit the URL's host (`evaluate` on the hosts
//!    the user listed, `upload_file` when the task has files), and the user's include/exclude
//!    lists; on the last step only `done`. *Allowed* (the validator, and the "Available actions"
//!    line of the state): of those, the ones whose page filter accepts the page's state (elements,
//!    a history, a second tab, a select, something that scrolls) and whose needs it meets (the
//!    debugger). The schema thus changes with the site, not from step to step, and stays in the
//!    part of each request the providers' prompt caches bill at a fraction of the price
//!    (`scripts/bench tokens`); an action the page's state rules out is refused with the list of
//!    those allowed. See the `actions` module.
//! 3. **Prompt** — `prompt::state_message`: earlier tasks of the conversation (a follow-up),
//!    task, compact history, last results, the model's plan, browser state (URL, title, tabs,
//!    element lines `[n]<tag attrs>text`), step info (budget warning near the end, the loop
//!    detector's nudge, the secret names usable here, the firewall's allow list); plus the fixed
//!    system prompt and `AgentOutput::schema(&union, thinking, max_actions)` (`thinking` optional,
//!    `plan` optional, `action` 1..N). Every secret value is masked out of the message.
//!    **The request budget** (`request_budget_tokens`, 32,000 by default; `prompt::estimate_tokens`
//!    counts words, digits, marks of markup and CJK characters as a byte-pair tokenizer splits
//!    them, within ±5% of OpenAI's o200k on the saved real pages' state texts, measured by
//!    `tests/token_estimate.rs` with a test-only tokenizer; the answer schema by its length,
//!    `estimate_json_tokens`, within ±10% there too; an image included): a request over it gives way in order — the steps before the last five are
//!    condensed by the extraction model into a summary (once there are five or more to condense) (`summary_prompt.md`, event
//!    `history_compacted`; later requests show `<summary of steps 1–n>` instead of them, and a
//!    restored task keeps it), then all but the last five are shown as memory lines, then not at all, then
//!    the last five are cut to a line each, the element list is cut, and last the image is dropped. A failed summary is tried again only ten
//!    steps later. With vision **off** no image is ever sent; with **auto** an image goes only with
//!    the request after the `screenshot` action, which only this mode offers.
//! 4. **Call the LLM** — `LlmClient::complete` → the provider's `build_request` → transport →
//!    `parse_response`; 429/5xx/unreachable are retried (3 times, backoff with jitter,
//!    `retry-after`), then the fallback model is tried once. Errors retrying cannot fix end the
//!    task naming the URL and status. Stop ends the wait at once and aborts the fetch. A model
//!    that refuses an attached screenshot (HTTP 400) is asked again without it. Once the fallback
//!    answered, the next ten calls go to it first instead of waiting through the failing model's
//!    retries each step.
//! 5. **Validate** — `AgentOutput::parse`: JSON shape, then each action against the union (name
//!    allowed here, parameters typed). Errors become the step's error, which the next prompt shows
//!    the LLM; three failed steps in a row end the task.
//! 6. **Act** — each action's executor, in order, with an `ActionContext` (browser, observed page,
//!    LLM client, event sink, action options, secrets). Before it runs: the firewall checks where a
//!    navigation-like action goes, and `<secret>name</secret>` placeholders are filled in for this
//!    site only (the LLM's own words, kept in history, never hold a value); then the person's
//!    guard (`crate::guard`, `pass_guard`): the page is asked what the element is, and an act
//!    outside the task's sites, one that cannot be undone, or one carrying another site's text
//!    waits for the person's yes (`consent_asked`); a "no" is the action's failed result, and
//!    a click carries the facts it was allowed for, so the page refuses it if they changed. After: a landing on a
//!    blocked site is left at once, and results are masked. The sequence stops after an action
//!    that failed, changed the URL, or may change the page (`terminates_sequence`), before an
//!    index-based action once new elements appeared, and at a pause. `done` ends the task. What
//!    an action read from the page (`detail`: extracted text, matches, options, a script's value)
//!    is shown to the LLM once, in the next step's `<last_step_results>` inside `<page_content>`;
//!    a screenshot is attached to the next request as an image.
//! 7. **Record** — the `StepRecord` (tab, URL, title, thoughts, actions with descriptions and
//!    results, error, tokens and cost of every call the step made, timings of observe/LLM/act,
//!    the screenshot taken in the step), masked of secrets, is kept, sent to the panel as
//!    `step_finished`, saved for a restarted worker (without the screenshot: session storage is
//!    small) and written into the task history (with it). An answer the provider billed but
//!    that could not be used (cut off, refused, over the context window) counts in the step's
//!    and the task's tokens and cost as an answer used does (`LlmError::bills`).
//!
//! **Steering.** Stop is immediate. Pause takes effect at the next step or action boundary
//! (`task_paused`), resume lets it go on (`task_resumed`). A follow-up task (`start_task` with
//! `follow_up`) is told the earlier tasks of the conversation (`<earlier_tasks>`: what was asked,
//! how it ended, the notes, where it ended) until the panel starts a new conversation. Every task
//! names its conversation in `task_started` (`conversation_id`: the id of the conversation's first
//! task), which is how the history groups a conversation's tasks.

pub mod driven;
pub mod events;
mod loop_guard;
pub(crate) mod output;
pub mod replay;
pub mod skill;
mod stop;

pub use crate::record::{total_cost, ActionRecord, PreviousTask, StepRecord, StepTimings, TaskEnd, TaskHistory};
pub use output::{AgentOutput, ModelThoughts, OutputError};
pub use stop::StopSignal;

use crate::actions::{registered_for, Action, ActionContext, ActionResult, ActionUnion, RegisteredAction};
use crate::browser::{Browser, PageState, Screenshot};
use crate::dom::ElementFingerprint;
use crate::guard::{Check, Consent, ConsentAnswer, Decision, Guard, Guarded, Verdict};
use crate::llm::{ChatRequest, LlmClient, LlmError, LlmTransport, Usage};
use crate::prompt::{
    estimate_image_tokens, estimate_json_tokens, estimate_tokens, page_listing, short_page_listing, state_message,
    steps_text, system_prompt_tokens, Detail, HistorySummary, StateInput, RECENT_STEPS, SUMMARY_PROMPT, SYSTEM_PROMPT,
};
use crate::settings::{ActionOptions, Limits, Settings, Vision};
pub use events::{AgentEvent, PlannedAction, Restored, TaskState, PROTOCOL_VERSION};
use PROTOCOL_VERSION as V;

/// Receives live progress (the side panel, the headless runner, a test).
pub trait EventSink {
    fn emit(&self, event: AgentEvent);
}

impl<F: Fn(AgentEvent)> EventSink for F {
    fn emit(&self, event: AgentEvent) {
        self(event)
    }
}

/// What an action reports becomes the task's events.
impl<E: EventSink> crate::actions::ActionEvents for E {
    fn question_asked(&self, step: u32, question: &str) {
        self.emit(AgentEvent::QuestionAsked { v: V, step, question: question.to_string() });
    }
    fn question_answered(&self, step: u32, answer: &str) {
        self.emit(AgentEvent::QuestionAnswered { v: V, step, answer: answer.to_string() });
    }
}

/// Time: milliseconds from any fixed origin, for step timings, and sleeping, for action
/// timeouts. A clock that cannot sleep (the default) never times anything out.
#[allow(async_fn_in_trait)]
pub trait Clock {
    fn now_ms(&self) -> f64;
    async fn sleep(&self, _ms: u32) {
        std::future::pending::<()>().await
    }
}

impl<F: Fn() -> f64> Clock for F {
    fn now_ms(&self) -> f64 {
        self()
    }
}

/// The ports an agent works through.
pub struct Ports<B, T, E, C> {
    pub browser: B,
    pub transport: T,
    pub events: E,
    pub clock: C,
}

pub struct Agent<B, T, E, C> {
    task_id: String,
    task: String,
    /// The conversation the task belongs to (its own id unless it follows up another).
    conversation_id: String,
    /// A schedule started it (said in `task_started`, which the history keeps).
    scheduled: bool,
    limits: Limits,
    options: ActionOptions,
    /// The user's secrets and URL firewall.
    safety: crate::safety::Safety,
    browser: B,
    llm: LlmClient<T>,
    events: E,
    clock: C,
    stop: StopSignal,
    registry: Vec<RegisteredAction>,
    history: Vec<StepRecord>,
    /// The model's plan as it stands: the last one it gave.
    plan: Option<Vec<crate::record::PlanItem>>,
    usage: Usage,
    /// A screenshot taken by the last step, for the next request.
    screenshot: Option<Screenshot>,
    /// Whether the answer has a `thinking` field.
    thinking: bool,
    vision: Vision,
    /// Estimated input tokens one request may carry before history is compacted.
    request_budget_tokens: u32,
    /// Earlier tasks of the same conversation, oldest first, for a follow-up task.
    previous: Vec<PreviousTask>,
    /// The model's summary of old steps, once a request went over its budget.
    summary: Option<HistorySummary>,
    /// The step at which summarising last failed: it is not tried again for a while.
    summary_failed_at: Option<u32>,
    /// Set when the task continues after the service worker was stopped: why it stopped.
    restored: Option<String>,
    loop_guard: loop_guard::LoopGuard,
    /// The answer's schema for the last union seen (by its action names), with its size in
    /// tokens: most steps of a task offer the same actions, and the schema is the same then.
    answer_schema: Option<(Vec<String>, serde_json::Value, u32)>,
    /// A replay, or a skill the model called: the saved steps that stand in for the model
    /// (see `replay` and `skill`).
    script: Option<replay::Script>,
    /// The skills saved by the person; each is offered on its own site.
    skills: Vec<skill::Skill>,
    /// How the skill that just ran went, for the model's next step.
    skill_outcome: Option<String>,
    /// What the person set for sites outside a task's own.
    sites: crate::settings::SiteSettings,
    /// The person's guard over the task (`crate::guard`): made at the first step, from the
    /// page the task starts on; a restored task gets its saved one.
    guard: Option<Guard>,
    /// Keeps the guard's state for a restarted worker after each step (`guard::Kept`).
    guard_keeper: Option<Box<dyn Fn(crate::guard::Kept)>>,
    /// The step after which the guard was last kept whole.
    guard_kept_whole_at: u32,
}

/// The guard is kept whole at least every this many steps (and what the ledger added since,
/// after each of the others): a long task's ledger of 256 KB is not written out every step.
const GUARD_WHOLE_EVERY: u32 = 20;
/// How long a vision screenshot may take before the step goes on without it.
const SCREENSHOT_MS: u32 = 10_000;
/// After summarising old steps failed, this many steps pass before it is tried again.
const SUMMARY_RETRY_STEPS: u32 = 10;
/// The steps text a summary is made from is cut past this many characters.
const MAX_SUMMARY_INPUT_CHARS: usize = 120_000;

/// How running one action went.
enum Ran {
    Result(ActionResult),
    Stopped,
    /// A browser error nothing can fix (the tab closed): the task ends with it.
    EndsTask(crate::browser::BrowserError),
}

/// The note on the last action run when the rest of the step's actions are skipped.
fn skipped(remaining: usize, why: &str) -> String {
    format!(" ({remaining} later action(s) of this step were not run because {why}.)")
}

/// The task was stopped while it waited for the person.
struct Stopped;

/// How one step ended, besides its record.
enum StepEnd {
    Continue,
    End(TaskEnd),
}

/// Why a look at the page gave no page.
enum Looked {
    /// Stopped before the page was observed: the step has no record.
    Stopped,
    /// The step ends so (its record says why).
    Ends(StepEnd),
}

impl<B: Browser, T: LlmTransport, E: EventSink, C: Clock> Agent<B, T, E, C> {
    pub fn new(task_id: String, task: String, settings: Settings, ports: Ports<B, T, E, C>, stop: StopSignal) -> Self {
        let mut options = settings.actions;
        // `screenshot` only where it adds something: with vision off no image is ever shown,
        // with vision on every step has one.
        if settings.agent.vision != Vision::Auto {
            options.exclude.push("screenshot".into());
        }
        Agent {
            conversation_id: task_id.clone(),
            scheduled: false,
            task_id,
            task,
            limits: settings.limits,
            options,
            safety: settings.safety,
            browser: ports.browser,
            llm: LlmClient::new(settings.llm, ports.transport),
            events: ports.events,
            clock: ports.clock,
            stop,
            registry: registered_for(None),
            history: Vec::new(),
            plan: None,
            usage: Usage::default(),
            screenshot: None,
            thinking: settings.agent.thinking,
            vision: settings.agent.vision,
            request_budget_tokens: settings.agent.request_budget_tokens,
            previous: Vec::new(),
            restored: None,
            summary: None,
            summary_failed_at: None,
            loop_guard: loop_guard::LoopGuard::default(),
            answer_schema: None,
            script: None,
            skills: Vec::new(),
            skill_outcome: None,
            sites: settings.sites,
            guard: None,
            guard_keeper: None,
            guard_kept_whole_at: 0,
        }
    }

    /// The guard a restored task had (its scope as the person's answers grew it, and what
    /// each site showed).
    pub fn with_guard(mut self, guard: Option<Guard>) -> Self {
        self.guard = guard;
        self
    }

    /// Hands the guard's state to `keep` after each step, for a restarted worker: whole every
    /// few steps and after each answer, else only what the ledger added since.
    pub fn keeping_guard(mut self, keep: impl Fn(crate::guard::Kept) + 'static) -> Self {
        self.guard_keeper = Some(Box::new(keep));
        self
    }

    /// Makes this a replay of saved steps: no model is asked; each step's answer is the saved
    /// one, its elements found again on the page (see `replay`). A restored replay goes on
    /// after the steps it completed. The task has as many steps as the script.
    pub fn replaying(mut self, steps: Vec<replay::ReplayStep>) -> Self {
        let mut script = replay::Script::new(steps);
        let done: Vec<&str> = self
            .history
            .iter()
            .map(|r| r.output.as_ref().map_or("", |o| o.evaluation_previous_goal.as_str()))
            .collect();
        script.skip_done(&done);
        self.limits.max_steps = script.len().max(1) as u32;
        self.script = Some(script);
        self
    }

    /// Continues a task whose service worker was stopped: the steps it completed and the
    /// tokens it used are kept, and the next step is the one after the last completed one.
    pub fn restored(mut self, history: Vec<StepRecord>, usage: Usage, why: String) -> Self {
        self.plan = crate::record::current_plan(&history);
        self.history = history;
        crate::record::trim_behind(&mut self.history);
        self.usage = usage;
        self.restored = Some(why);
        self
    }

    /// The summary of old steps a restored task had made.
    pub fn with_summary(mut self, summary: Option<HistorySummary>) -> Self {
        self.summary = summary;
        self
    }

    /// Makes this a follow-up: the model is told the earlier tasks of the conversation (what
    /// was asked, how it ended, what was noted), so "now do the same for …" works.
    pub fn following(mut self, previous: Vec<PreviousTask>) -> Self {
        self.previous = previous;
        self
    }

    /// Names the conversation the task belongs to (see `AgentEvent::TaskStarted`).
    pub fn in_conversation(mut self, conversation_id: impl Into<String>) -> Self {
        self.conversation_id = conversation_id.into();
        self
    }

    /// Marks the task as started by a schedule (`task_started` says so); nothing else changes.
    pub fn scheduled(mut self, scheduled: bool) -> Self {
        self.scheduled = scheduled;
        self
    }

    /// Asks for the task's result in the shape of this JSON Schema: `done` then takes
    /// `{data, success}` with `data` checked against it.
    pub fn with_output_schema(mut self, schema: Option<&serde_json::Value>) -> Self {
        self.registry = crate::actions::with_files(registered_for(schema), &self.options.files);
        self.registry.extend(self.skills.iter().map(skill::Skill::registered));
        self
    }

    /// The files the person attached: listed to the model by name, and given to pages by
    /// `upload_file`, which is offered only when there are some.
    pub fn with_files(mut self, files: Vec<crate::browser::TaskFile>) -> Self {
        self.registry = crate::actions::with_files(std::mem::take(&mut self.registry), &files);
        self.options.files = files;
        self
    }

    /// The skills the person saved: each becomes a branch of the union on its site, which the
    /// model can call with its parameters (see `skill`). A replay offers none.
    pub fn with_skills(mut self, skills: Vec<skill::Skill>) -> Self {
        self.registry.retain(|a| a.def != "UseSkill");
        self.registry.extend(skills.iter().map(skill::Skill::registered));
        self.skills = skills;
        self
    }

    /// Runs the task to its end and returns its whole history.
    pub async fn run(mut self) -> TaskHistory {
        self.announce();
        let end = self.run_steps().await;
        self.finish(end).await
    }

    /// Tells the panel the task started, or that a restarted worker took it up again.
    fn announce(&mut self) {
        match self.restored.take() {
            None => self.events.emit(AgentEvent::TaskStarted {
                v: V,
                task_id: self.task_id.clone(),
                task: self.task.clone(),
                max_steps: self.limits.max_steps,
                model: self.llm.model().to_string(),
                conversation_id: self.conversation_id.clone(),
                replay: self.script.is_some(),
                scheduled: self.scheduled,
            }),
            Some(reason) => self.events.emit(AgentEvent::TaskRestored {
                v: V,
                step: self.next_step(),
                steps_kept: self.history.len() as u32,
                reason,
            }),
        }
    }

    /// Ends the task so: the browser lets go, the panel is told, the history returned.
    async fn finish(mut self, end: TaskEnd) -> TaskHistory {
        let end = self.redacted(end);
        self.browser.finish().await;
        let cost_usd = total_cost(&self.history);
        self.events.emit(AgentEvent::TaskFinished {
            v: V,
            end: end.clone(),
            steps: self.history.len() as u32,
            usage: self.usage,
            cost_usd,
        });
        TaskHistory {
            task: self.task,
            model: self.llm.model().to_string(),
            steps: self.history,
            end,
            usage: self.usage,
            cost_usd,
        }
    }

    /// The number of the next step: one after the last completed step.
    fn next_step(&self) -> u32 {
        self.history.last().map_or(1, |r| r.step + 1)
    }

    async fn run_steps(&mut self) -> TaskEnd {
        // A task restored after a step that answered (the worker stopped before the end was
        // told) ends with that answer: the model is not asked again, nothing is done twice.
        if let Some(done) = self.history.last().and_then(|r| r.actions.iter().rev().find_map(|a| a.result.done.clone()))
        {
            return TaskEnd::Done { text: done.text, success: done.success, data: done.data };
        }
        let mut failures = 0;
        for n in self.next_step()..=self.limits.max_steps {
            if !self.pause_point(n).await {
                return TaskEnd::Stopped;
            }
            self.events.emit(AgentEvent::StepStarted { v: V, step: n, max_steps: self.limits.max_steps });
            let (record, end) = self.step(n).await;
            self.keep_guard(n >= self.guard_kept_whole_at + GUARD_WHOLE_EVERY);
            if let Some(record) = record {
                let record = self.redacted(record);
                failures = if record.failed() { failures + 1 } else { 0 };
                let (last_error, last_error_locale_text) = last_error(&record);
                record.update_plan(&mut self.plan);
                self.history.push(record.clone());
                // Steps far behind keep only what the prompt shows of them: a long task's
                // history stays a few KB a step, however much each step read or wrote.
                crate::record::trim_behind(&mut self.history);
                self.events.emit(AgentEvent::StepFinished { v: V, record: Box::new(record) });
                if matches!(end, StepEnd::Continue) && failures >= self.limits.max_failures {
                    return TaskEnd::TooManyFailures { failures, last_error, last_error_locale_text };
                }
            }
            if let StepEnd::End(end) = end {
                return end;
            }
        }
        // A replay restored after its last step (the worker stopped before the end was told)
        // has nothing left to run: it ends with its report, not at a step limit.
        match &self.script {
            Some(script) if script.finished() => TaskEnd::Done { text: script.report(), success: true, data: None },
            _ => TaskEnd::StepLimit { max_steps: self.limits.max_steps },
        }
    }

    /// Waits here while the task is paused, telling the panel; false if it was stopped.
    async fn pause_point(&mut self, step: u32) -> bool {
        if self.stop.is_stopped() {
            return false;
        }
        if !self.stop.is_paused() {
            return true;
        }
        self.events.emit(AgentEvent::TaskPaused { v: V, step });
        let went_on = self.stop.wait_while_paused().await;
        if went_on {
            self.events.emit(AgentEvent::TaskResumed { v: V, step });
        }
        went_on
    }

    /// The first part of a step: observe the page, leave it if the firewall blocks it, make the
    /// guard from the first page, ask the person about a page outside the task's sites, note
    /// what it shows in the guard's ledger, and take the screenshot vision wants. The step's
    /// record gets the page's tab, URL, title and the time it took.
    async fn look(&mut self, n: u32, record: &mut StepRecord) -> Result<PageState, Looked> {
        // Observe. A page that cannot be read still goes to the LLM, empty and with the reason,
        // so it can navigate away or finish; only errors nothing can fix end the task.
        let started = self.clock.now_ms();
        let page = match self.stop.unless_stopped(self.browser.observe()).await {
            None => return Err(Looked::Stopped),
            Some(Ok(page)) => page,
            Some(Err(e)) if e.ends_task() => {
                record.note_error(&e);
                record.timings.observe_ms = self.clock.now_ms() - started;
                return Err(Looked::Ends(StepEnd::End(TaskEnd::error(&e))));
            }
            Some(Err(e)) => {
                record.note_error(&e);
                let last_url = self.history.iter().rev().map(|r| r.url.as_str()).find(|u| !u.is_empty()).unwrap_or("");
                PageState::unreadable(0, last_url, e.to_string())
            }
        };
        // A page the task reached on a blocked site (a redirect, a link that opened a tab) is
        // left at once; the LLM hears why. The page a task starts on is the user's own choice.
        let mut page = page;
        if n > 1 || !self.history.is_empty() {
            if let Err(blocked) = self.firewall_allows(page.url()) {
                page = self.leave(&page, &blocked.to_string()).await;
            }
        }
        // The person's guard: made from the page the task starts on; a page outside the task's
        // sites (a redirect, a tab a page opened) waits for the person's yes, or is left.
        if self.guard.is_none() {
            let mut guard = Guard::new(self.sites.policy, &self.sites.always, page.url(), &self.task);
            // The search engines `search` offers are read like the task's own sites: a query
            // is the task's business, not another site's data.
            use crate::actions::SearchEngine;
            for engine in [SearchEngine::Duckduckgo, SearchEngine::Google, SearchEngine::Bing] {
                guard.allow_reading_freely(&engine.results_url(""));
            }
            self.guard = Some(guard);
        }
        match self.page_allowed(n, &page, record).await {
            Err(Stopped) => return Err(Looked::Ends(StepEnd::End(TaskEnd::Stopped))),
            Ok(Ok(())) => {}
            Ok(Err(why)) => page = self.leave(&page, &why).await,
        }
        if let Some(guard) = self.guard.as_mut() {
            page.snapshot.each_document_text(|url, text| guard.note_read(url, text));
        }
        record.tab_id = page.tab_id;
        record.url = page.url().to_string();
        record.title = page.snapshot.title.clone();
        // Vision on: the page as an image too, every step (with the numbered boxes when
        // highlights are on). Without one the step goes on, told why.
        if self.vision == Vision::On && page.tab_id != 0 {
            match self.stop.unless_stopped(within(&self.clock, Some(SCREENSHOT_MS), self.browser.screenshot())).await {
                None => return Err(Looked::Ends(StepEnd::End(TaskEnd::Stopped))),
                Some(Some(Ok(shot))) => {
                    record.screenshot = Some(shot.clone());
                    self.screenshot = Some(shot);
                }
                Some(Some(Err(e))) => page.add_notice(&format!("No screenshot this step: {e}")),
                Some(None) => page.add_notice("No screenshot this step: taking it took too long."),
            }
        }
        record.timings.observe_ms = self.clock.now_ms() - started;

        Ok(page)
    }

    /// One step, top to bottom. Returns the step's record (none if it was stopped before it
    /// could observe the page) and whether the task goes on.
    async fn step(&mut self, n: u32) -> (Option<StepRecord>, StepEnd) {
        let mut record = StepRecord { step: n, ..StepRecord::default() };
        let mut page = match self.look(n, &mut record).await {
            Ok(page) => page,
            Err(Looked::Stopped) => return (None, StepEnd::End(TaskEnd::Stopped)),
            Err(Looked::Ends(end)) => return (Some(record), end),
        };

        // The answer: in a replay or a running skill, the saved step's; else the model's.
        let scripted = match self.script.as_mut().map(|script| script.next(&page.snapshot)) {
            None => None,
            Some(Some(Ok(scripted))) => Some(scripted),
            Some(ended) => {
                let outcome = match ended {
                    Some(Err(message)) => Err(message),
                    _ => Ok(self.script.as_ref().map(replay::Script::report).unwrap_or_default()),
                };
                if let Some(end) = self.script_ended(outcome) {
                    if let TaskEnd::Done { text, success: false, .. } = &end {
                        record.error = Some(text.clone());
                    }
                    return (Some(record), StepEnd::End(end));
                }
                None
            }
        };
        if let Some(outcome) = self.skill_outcome.take() {
            page.add_notice(&outcome);
        }

        // Build the union of actions allowed on this page.
        // (A scripted step is a saved step like the others, not the last chance to finish.)
        let last = n >= self.limits.max_steps && scripted.is_none();
        let union = ActionUnion::for_page(&self.registry, &page, &self.options, last);
        let listing = page_listing(&page);

        let (content, max_actions) = match scripted {
            Some(scripted) => (scripted.answer.to_string(), scripted.actions.max(1)),
            None => match self.ask_model(n, &page, &union, &listing, &mut record).await {
                Ok(content) => (content, self.limits.max_actions_per_step as usize),
                Err(end) => return (Some(record), end),
            },
        };

        // Validate.
        let output = match AgentOutput::parse(&content, &union, max_actions) {
            Ok(output) => output,
            Err(e) => {
                // The model is told what was wrong; the person, that it was asked again.
                record.error = Some(e.to_string());
                let text = crate::message::LocaleText::plain("model_answer_unusable").with_detail(e.to_string());
                record.error_locale_text = Some(Box::new(text));
                return (Some(record), StepEnd::Continue);
            }
        };
        self.act_on(n, output, &page, &union, &listing, record).await
    }

    /// Prompts the model (within the request budget) and returns its answer's text; or, when
    /// there is none, how the step ends (its error is in `record`).
    async fn ask_model(
        &mut self,
        n: u32,
        page: &PageState,
        union: &ActionUnion,
        listing: &str,
        record: &mut StepRecord,
    ) -> Result<String, StepEnd> {
        let request = self.request_for(n, page, union, listing, record).await;

        // Call the LLM.
        let asked = self.clock.now_ms();
        let mut answer = self.stop.unless_stopped(self.llm.complete(&request)).await;
        // A model that cannot read images refuses a request carrying a screenshot: ask again
        // without it rather than ending the task (what the first answer cost, if anything, is
        // the step's too).
        if let (true, Some(Err(refused))) = (request.image.is_some(), &answer) {
            if matches!(refused.unbilled(), LlmError::Http { status: 400, .. }) {
                self.count_bills(record, refused);
                let request = ChatRequest { image: None, ..request };
                answer = self.stop.unless_stopped(self.llm.complete(&request)).await;
            }
        }
        record.timings.llm_ms = self.clock.now_ms() - asked;
        let completion = match answer {
            None => return Err(StepEnd::End(TaskEnd::Stopped)),
            Some(Ok(c)) => c,
            Some(Err(e)) => {
                // An answer that could not be used was billed all the same.
                self.count_bills(record, &e);
                record.note_error(&e);
                return Err(if e.ends_task() { StepEnd::End(TaskEnd::error(&e)) } else { StepEnd::Continue });
            }
        };
        self.count_usage(record, &completion.model, completion.usage);
        Ok(completion.content)
    }

    /// The rest of a step once its answer is read: tell the panel, act, and see how it ends.
    async fn act_on(
        &mut self,
        n: u32,
        output: AgentOutput,
        page: &PageState,
        union: &ActionUnion,
        listing: &str,
        mut record: StepRecord,
    ) -> (Option<StepRecord>, StepEnd) {
        record.output = Some(output.thoughts.clone());
        // How each action is shown and kept (described, secrets masked), worked out once.
        let planned: Vec<PlannedAction> = output
            .actions
            .iter()
            .map(|a| {
                let described = a.describe(page);
                PlannedAction {
                    name: a.name().into(),
                    description: described.english,
                    description_locale_text: Some(described.text),
                    params: a.recorded_params(page),
                }
            })
            .collect();
        self.events.emit(AgentEvent::StepPlanned {
            v: V,
            step: n,
            thoughts: output.thoughts,
            actions: planned.clone(),
        });

        // Remember what was done where, for the loop detector.
        let done_here: Vec<String> = planned.iter().map(|a| format!("{} {}", a.name, a.params)).collect();
        self.loop_guard.record(listing, &done_here.join("; "));

        // Act.
        let was_scripted = self.script.is_some();
        let acting = self.clock.now_ms();
        let mut end = self.act(output.actions.into_iter().zip(planned), union, page, &mut record).await;
        record.timings.act_ms = self.clock.now_ms() - acting;
        // A replay or a skill stops at the first failure (what follows counted on it), and ends
        // with its report after its last step (`script_ended`).
        if let (true, Some(script), StepEnd::Continue) = (was_scripted, &self.script, &end) {
            let failed = record.failed().then(|| last_error(&record).0);
            if failed.is_some() || script.finished() {
                let total = script.len();
                let outcome = match failed {
                    Some(why) if script.skill_name().is_some() => {
                        Err(format!("its step {} of {total} failed: {why}", script.handed_out()))
                    }
                    Some(why) => Err(format!("The replay stopped at step {n} of {total}: {why}")),
                    None => Ok(script.report()),
                };
                if let Some(ended) = self.script_ended(outcome) {
                    end = StepEnd::End(ended);
                }
            }
        }

        // Record: the caller stores and reports the record.
        (Some(record), end)
    }

    /// Runs the step's actions in order. The sequence stops early when an action fails, may
    /// have changed the page (navigation-like actions, a URL change), or ends the task.
    async fn act(
        &mut self,
        actions: impl ExactSizeIterator<Item = (Action, PlannedAction)>,
        union: &ActionUnion,
        page: &PageState,
        record: &mut StepRecord,
    ) -> StepEnd {
        let total = actions.len();
        for (i, (action, PlannedAction { name, description, description_locale_text, params })) in actions.enumerate() {
            if i > 0 {
                if !self.pause_point(record.step).await {
                    return StepEnd::End(TaskEnd::Stopped);
                }
                // An index chosen on the page as it was may now point at something else.
                if action.element_index().is_some() && self.browser.new_elements_appeared().await {
                    if let Some(last) = record.actions.last_mut() {
                        last.result.message.push_str(&skipped(total - i, "new elements appeared on the page"));
                    }
                    break;
                }
            }
            let terminates = action.spec().terminates_sequence;
            let target =
                action.element_index().and_then(|index| ElementFingerprint::of(&page.snapshot, index)).map(Box::new);
            // What the person's guard checks: the action as the model wrote it (a secret's
            // placeholder, not its value).
            let guarded = action.guarded(&self.options);
            let typed_secret = matches!(action, Action::Input(_)) && names_a_secret(&params);
            // The act as the person reads it: the description already worked out for the panel.
            let said = match &description_locale_text {
                Some(text) => crate::message::Said { english: description.clone(), text: text.clone() },
                None => action.describe(page),
            };
            // Before it runs: the secrets it names, then the firewall (where a navigation-like
            // action would go, with its secrets in). Either can refuse it, as the action's
            // failed result. A skill's steps fill in secrets each as it runs, on its site.
            let checked = match action.target_url(&self.options) {
                _ if matches!(action, Action::UseSkill(_)) => Ok(action),
                Some(url) => self.with_secrets_in_url(action, union, &url).and_then(|action| {
                    let filled = action.target_url(&self.options).unwrap_or(url);
                    match self.firewall_allows(&filled) {
                        Ok(()) => Ok(action),
                        Err(blocked) => {
                            Err(format!("{} Choose another site.", self.safety.secrets.redact(&blocked.to_string())))
                        }
                    }
                }),
                // A secret typed into an element goes to that element's document: a frame's
                // own site, not the page around it.
                None => {
                    let document =
                        action.element_index().and_then(|i| page.snapshot.document_url_of(i)).unwrap_or(page.url());
                    self.with_secrets(action, union, document)
                }
            };
            // Then the person's guard: an act it holds waits for their yes; a "no" is the
            // action's failed result. Nothing reaches the page before.
            let checked = match checked {
                Ok(action) if !matches!(action, Action::UseSkill(_)) => {
                    match self.pass_guard(&guarded, &said, page, record).await {
                        Err(Stopped) => return StepEnd::End(TaskEnd::Stopped),
                        Ok(Ok(())) => {
                            if typed_secret {
                                let url = action
                                    .element_index()
                                    .and_then(|i| page.snapshot.document_url_of(i))
                                    .unwrap_or(page.url());
                                if let (Some(guard), Some(site)) = (self.guard.as_mut(), crate::guard::site_of_url(url))
                                {
                                    guard.secret_sites.insert(site);
                                }
                            }
                            Ok(action)
                        }
                        Ok(Err(refused)) => Err(refused),
                    }
                }
                other => other,
            };
            // After the last action (or one the sequence stops after) the page is looked at.
            if i + 1 == total || terminates {
                self.browser.look_follows();
            }
            let mut result = match checked {
                Ok(Action::UseSkill(call)) => self.start_skill(&call, page),
                Err(refused) => ActionResult::error(refused),
                Ok(action) => match self.run_action(action, &name, page, record.step).await {
                    Ran::Result(mut result) => {
                        // What the action's own model calls cost is the step's too.
                        for (model, usage) in std::mem::take(&mut result.bills) {
                            self.count_usage(record, &model, usage);
                        }
                        // Kept with the step that took it; the model sees it on the next step.
                        if let Some(shot) = &self.screenshot {
                            record.screenshot = Some(shot.clone());
                        }
                        result
                    }
                    Ran::Stopped => return StepEnd::End(TaskEnd::Stopped),
                    Ran::EndsTask(error) => {
                        let result = ActionResult::error(error.to_string());
                        record.actions.push(ActionRecord {
                            name,
                            description,
                            description_locale_text,
                            params,
                            result,
                            target,
                        });
                        return StepEnd::End(TaskEnd::error(&error));
                    }
                },
            };
            // What an action read from the page (an extraction, matches) is the page's site's;
            // what the person answered is theirs, free to go anywhere.
            if let Some(guard) = self.guard.as_mut() {
                if let Some(detail) = &result.detail {
                    guard.note_read(page.url(), detail);
                }
                if name == "ask_human" && !result.is_error {
                    guard.note_own(&result.message);
                }
            }
            let done = result.done.clone();
            let stop_here = result.is_error || terminates || result.navigated_to.is_some();
            let remaining = total - i - 1;
            if remaining > 0 && stop_here {
                let why = if result.is_error { "this action failed" } else { "the page may have changed" };
                result.message.push_str(&skipped(remaining, why));
            }
            record.actions.push(ActionRecord { name, description, description_locale_text, params, result, target });
            if let Some(done) = done {
                return StepEnd::End(TaskEnd::Done { text: done.text, success: done.success, data: done.data });
            }
            if stop_here {
                break;
            }
        }
        StepEnd::Continue
    }
}

impl<B: Browser, T: LlmTransport, E: EventSink, C: Clock> Agent<B, T, E, C> {
    /// Runs one action within its time limit, then: keeps a screenshot for the next request,
    /// leaves a blocked site the action led to, and masks secrets in what it reports.
    async fn run_action(&mut self, action: Action, name: &str, page: &PageState, step: u32) -> Ran {
        // Only a click asks which elements were clicked lately (one clicked again gets a
        // trusted click).
        let clicked_lately = match action {
            Action::Click(_) => crate::actions::clicked_indices(
                self.history
                    .iter()
                    .rev()
                    .take(crate::actions::CLICK_REPEAT_STEPS)
                    .flat_map(|record| &record.actions)
                    .map(|a| (a.name.as_str(), &a.params)),
            ),
            _ => Vec::new(),
        };
        let mut ctx = ActionContext {
            browser: &mut self.browser,
            page,
            llm: &self.llm,
            events: &self.events,
            options: &self.options,
            step,
            secrets: &self.safety.secrets,
            clicked_lately: &clicked_lately,
        };
        let limit = time_limit(action.spec(), &self.limits);
        let work = within(&self.clock, limit, action.execute(&mut ctx));
        let mut result = match self.stop.unless_stopped(work).await {
            None => return Ran::Stopped,
            Some(None) => ActionResult::error(format!(
                "`{name}` took longer than {} s and was abandoned; the page may be busy. Look at the page in the next step before trying again.",
                limit.unwrap_or_default() / 1000
            )),
            Some(Some(Ok(result))) => result,
            Some(Some(Err(e))) if e.ends_task() => return Ran::EndsTask(e),
            // Browser errors can quote the page (a refused option's name): escaped, so page
            // text cannot pose as a fence or an instruction in the history.
            Some(Some(Err(e))) => ActionResult::error(crate::dom::untrusted(&e.to_string(), 2_000)),
        };
        if result.screenshot.is_some() {
            self.screenshot = result.screenshot.take();
        }
        // The action led to a blocked site (a redirect, a link): leave it, and say so.
        if let Some(url) = result.navigated_to.clone() {
            if let Err(blocked) = self.firewall_allows(&url) {
                self.browser.leave_blocked_page().await;
                result.message.push_str(&format!("; but {blocked} Tabwright left that page."));
                result.is_error = true;
                result.navigated_to = None;
            }
        }
        // Executors may echo what they typed: no secret's value is kept or shown.
        if !self.safety.secrets.is_empty() {
            result.message = self.safety.secrets.redact(&result.message);
            result.detail = result.detail.map(|d| self.safety.secrets.redact(&d));
        }
        Ran::Result(result)
    }

    /// The running script came to its end: `Ok(report)` after its last step, or `Err(why)` it
    /// could not go on. A replay's task ends with it; a skill hands the task back to the model,
    /// which is told at its next step how the skill went.
    fn script_ended(&mut self, outcome: Result<String, String>) -> Option<TaskEnd> {
        let script = self.script.take()?;
        match script.skill_name() {
            Some(name) => {
                self.skill_outcome = Some(skill_outcome(name, &outcome));
                None
            }
            None => Some(match outcome {
                Ok(report) => TaskEnd::Done { text: report, success: true, data: None },
                Err(why) => TaskEnd::Done { text: why, success: false, data: None },
            }),
        }
    }

    /// Starts the skill the model called: its saved steps, with the values given, stand in for
    /// the model's next answers (see `skill`).
    fn start_skill(&mut self, call: &crate::actions::SkillCall, page: &PageState) -> ActionResult {
        if let Some(running) = self.script.as_ref() {
            let what = running.skill_name().map_or("a replay".to_string(), |n| format!("the skill \"{n}\""));
            return ActionResult::error(format!("A skill cannot be started while {what} runs."));
        }
        let host = crate::web::host_of(page.url());
        let Some(skill) = self.skills.iter().find(|s| s.action == call.skill && host.as_deref() == Some(&s.domain))
        else {
            return ActionResult::error(format!("There is no skill `{}` on this site.", call.skill));
        };
        let script = skill.script(&call.values, page.url());
        let message = format!(
            "Started the skill \"{}\": its {} saved step(s) run next without you; then you go on from where it leaves the page.",
            skill.name,
            script.len()
        );
        self.script = Some(script);
        ActionResult::ok(message)
    }

    /// The state text of step `n` at the given detail.
    fn state_text(
        &self,
        n: u32,
        page: &PageState,
        allowed: &[&str],
        listing: &str,
        nudge: Option<&str>,
        detail: Detail,
    ) -> String {
        state_message(&StateInput {
            task: &self.task,
            history: &self.history,
            page,
            listing,
            step: n,
            max_steps: self.limits.max_steps,
            allowed_actions: allowed,
            plan: self.plan.as_deref(),
            nudge,
            previous: &self.previous,
            secrets: self.safety.secrets.prompt_line(page.url()).as_deref(),
            firewall: self.safety.firewall.summary().as_deref(),
            scope: self.guard.as_ref().map(|g| g.scope.prompt_line()).as_deref(),
            summary: self.summary.as_ref(),
            files: &self.options.files,
            detail,
        })
    }

    /// The request of step `n`, within the budget of input tokens. A request over it gives
    /// way in this order: old steps are condensed by the model (once, then again only when
    /// the history has grown), older steps are shown as memory lines only, then not at all, the
    /// last steps are cut short, the element list is cut, and last the screenshot is left out.
    async fn request_for(
        &mut self,
        n: u32,
        page: &PageState,
        union: &ActionUnion,
        listing: &str,
        record: &mut StepRecord,
    ) -> ChatRequest {
        let (schema, schema_tokens) = self.answer_schema(union);
        let mut image = if self.vision == Vision::Off { None } else { self.screenshot.take() };
        let allowed = union.names();
        let nudge = self.loop_guard.nudge();
        let budget = self.request_budget_tokens;
        let fixed = system_prompt_tokens() + schema_tokens;
        let image_tokens =
            |image: &Option<Screenshot>| image.as_ref().map_or(0, |s| estimate_image_tokens(s.width, s.height));
        // Each text is estimated once (a long task's is tens of KB, every step).
        let over = |user_tokens: u32, image: &Option<Screenshot>| fixed + user_tokens + image_tokens(image) > budget;

        let mut detail = Detail::Full;
        let mut user = self.state_text(n, page, &allowed, listing, nudge.as_deref(), detail);
        let mut tokens = estimate_tokens(&user);
        if over(tokens, &image) && self.summarise(n, record).await {
            user = self.state_text(n, page, &allowed, listing, nudge.as_deref(), detail);
            tokens = estimate_tokens(&user);
        }
        while over(tokens, &image) {
            let Some(shorter) = detail.shorter() else { break };
            detail = shorter;
            user = self.state_text(n, page, &allowed, listing, nudge.as_deref(), detail);
            tokens = estimate_tokens(&user);
        }
        if over(tokens, &image) {
            // What the rest takes, and room for the listing at about three characters a token
            // (page text is denser in tokens than prose); always a screenful of elements.
            let rest = fixed + tokens.saturating_sub(estimate_tokens(listing)) + image_tokens(&image);
            let room = budget.saturating_sub(rest) as usize * 3;
            let short = short_page_listing(page, room.max(2_000));
            user = self.state_text(n, page, &allowed, &short, nudge.as_deref(), detail);
            tokens = estimate_tokens(&user);
        }
        if over(tokens, &image) {
            image = None;
        }
        ChatRequest {
            system: SYSTEM_PROMPT.to_string(),
            // No secret's value leaves the browser, wherever the page shows it.
            user: self.safety.secrets.redact(&user),
            schema_name: "agent_output".to_string(),
            schema,
            image: image.map(|s| s.png_base64),
        }
    }

    /// The schema of the answer to a step offering `union`, and its size in tokens.
    fn answer_schema(&mut self, union: &ActionUnion) -> (serde_json::Value, u32) {
        let names = union.offered_names();
        if let Some((known, schema, tokens)) = &self.answer_schema {
            if known.iter().map(String::as_str).eq(names.iter().copied()) {
                return (schema.clone(), *tokens);
            }
        }
        let schema = AgentOutput::schema(union, self.thinking, self.limits.max_actions_per_step as usize);
        let tokens = estimate_json_tokens(&schema.to_string());
        self.answer_schema = Some((names.iter().map(|n| n.to_string()).collect(), schema.clone(), tokens));
        (schema, tokens)
    }

    /// Asks the model (the extraction model: a cheap one does this well) to condense every
    /// step before the last few into one summary, which later requests show instead of them.
    /// False when there is too little to condense or the call failed; the request is then only
    /// shortened, and summarising is tried again some steps later.
    async fn summarise(&mut self, n: u32, record: &mut StepRecord) -> bool {
        if self.summary_failed_at.is_some_and(|at| n < at + SUMMARY_RETRY_STEPS) {
            return false;
        }
        let through = self.summary.as_ref().map_or(0, |s| s.through_step);
        let open: Vec<&StepRecord> = self.history.iter().filter(|r| r.step > through).collect();
        // At least as many steps to condense as are kept in full: a summary every step or two
        // would cost more than it saves (a page or schema alone can fill a small budget).
        if open.len() < 2 * RECENT_STEPS {
            return false;
        }
        let covered = &open[..open.len() - RECENT_STEPS];
        let last = covered.last().map_or(through, |r| r.step);
        let mut user = format!("<task>\n{}\n</task>\n\n", self.task.trim());
        if let Some(earlier) = &self.summary {
            user.push_str(&earlier.block());
            user.push_str("\n\n");
        }
        user.push_str("<steps>\n");
        user.push_str(&crate::dom::untrusted_block(&steps_text(covered.iter().copied()), MAX_SUMMARY_INPUT_CHARS));
        user.push_str("\n</steps>\n");
        let request = ChatRequest {
            system: SUMMARY_PROMPT.to_string(),
            user: self.safety.secrets.redact(&user),
            schema_name: "history_summary".to_string(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {"summary": {"type": "string", "description": "The summary that replaces these steps."}},
                "required": ["summary"],
                "additionalProperties": false,
            }),
            image: None,
        };
        let text = match self.stop.unless_stopped(self.llm.complete_extraction(&request)).await {
            Some(Err(error)) => {
                self.count_bills(record, &error);
                None
            }
            Some(Ok(completion)) => {
                self.count_usage(record, &completion.model, completion.usage);
                crate::json::from_text::<serde_json::Value>(completion.content.trim())
                    .ok()
                    .and_then(|v| v.get("summary").and_then(|s| s.as_str()).map(|s| s.trim().to_string()))
                    .filter(|s| !s.is_empty())
            }
            None => None,
        };
        let Some(text) = text else {
            self.summary_failed_at = Some(n);
            return false;
        };
        let summary = HistorySummary { through_step: last, text: self.safety.secrets.redact(&text) };
        self.events.emit(AgentEvent::HistoryCompacted { v: V, step: n, summary: summary.clone() });
        self.summary = Some(summary);
        true
    }

    /// Adds a call's tokens and cost (`usage` of `model`) to the step and the task. A step's cost
    /// is unknown when any of its calls used a model the price table lacks.
    fn count_usage(&mut self, record: &mut StepRecord, model: &str, usage: Usage) {
        let cost = self.llm.cost_usd(model, usage);
        let before = record.usage.input_tokens + record.usage.output_tokens;
        record.cost_usd = if before == 0 { cost } else { record.cost_usd.zip(cost).map(|(a, b)| a + b) };
        record.usage += usage;
        self.usage += usage;
    }

    /// Adds what the answers behind `error` cost, each billed though it could not be used
    /// (`LlmError::bills`), to the step and the task, as an answer used is added.
    fn count_bills(&mut self, record: &mut StepRecord, error: &LlmError) {
        for (model, usage) in error.bills() {
            self.count_usage(record, model, usage);
        }
    }

    /// Takes the task off `page` (back, or the tab closed) and looks again; the LLM hears why.
    async fn leave(&mut self, page: &PageState, why: &str) -> PageState {
        self.browser.leave_blocked_page().await;
        let mut again = match self.browser.observe().await {
            Ok(again) => again,
            Err(e) => PageState::unreadable(page.tab_id, "", e.to_string()),
        };
        again.notice = Some(format!("{why} Tabwright left that page."));
        again
    }

    /// Whether the task may read the page it is on (`crate::guard::Guard::check_page`): `Err`
    /// when it was stopped while asking, `Ok(Err(why))` when the page must be left.
    async fn page_allowed(
        &mut self,
        step: u32,
        page: &PageState,
        record: &mut StepRecord,
    ) -> Result<Result<(), String>, Stopped> {
        let Some(guard) = self.guard.as_mut() else { return Ok(Ok(())) };
        match guard.check_page(page.url()) {
            Verdict::Go => Ok(Ok(())),
            Verdict::Refuse(why) => Ok(Err(format!("{why}."))),
            Verdict::Ask(consent) => {
                let answer = self.ask_person(step, (*consent).clone(), record).await?;
                Ok(if answer.allows() {
                    Ok(())
                } else {
                    Err(format!("The person did not allow reading {}.", consent.site))
                })
            }
        }
    }

    /// Checks one action with the person's guard, asking the person for whatever it holds:
    /// `Ok(Ok(()))` when the action may run, `Ok(Err(why))` when it may not (for the model),
    /// `Err(Stopped)` when the task was stopped while it waited. An element's facts are read
    /// from the page just before, and a click carries them back so the page refuses it if they
    /// changed in between.
    async fn pass_guard(
        &mut self,
        guarded: &Guarded,
        said: &crate::message::Said,
        page: &PageState,
        record: &mut StepRecord,
    ) -> Result<Result<(), String>, Stopped> {
        use crate::browser::FactsOf;
        if matches!(guarded, Guarded::Read) || self.guard.is_none() {
            return Ok(Ok(()));
        }
        let of = match guarded {
            Guarded::Element { index, .. } => Some(FactsOf::Element(*index)),
            Guarded::Keys { .. } => Some(FactsOf::Focused),
            Guarded::Point { x, y } => Some(FactsOf::Point(*x, *y)),
            _ => None,
        };
        let facts = match of {
            Some(of) => match self.browser.act_facts(of).await {
                Ok(facts) => Some(facts),
                // What the observation said of the element, when the page cannot say more.
                Err(_) => match of {
                    FactsOf::Element(index) => crate::guard::ActFacts::of_element(&page.snapshot, index),
                    _ => None,
                },
            },
            None => None,
        };
        // The consents given once for this action, by kind and site: each is asked at most once.
        let mut once: Vec<(crate::guard::ConsentKind, String)> = Vec::new();
        // The most an action can be asked: the site it reads, the site it acts on, the site its
        // form goes to, a held act, data crossing.
        for _ in 0..6 {
            let Some(guard) = self.guard.as_ref() else { break };
            let check =
                Check { guarded, described: said, facts: facts.as_ref(), page_url: page.url(), allowed_once: &once };
            match guard.check(&check) {
                Verdict::Go => {
                    match (guarded, of) {
                        (
                            Guarded::Element { how: crate::guard::ElementAct::Click, .. } | Guarded::Point { .. },
                            Some(of),
                        ) if facts.is_some() => self.browser.expect_facts(of),
                        _ => {}
                    }
                    return Ok(Ok(()));
                }
                Verdict::Refuse(why) => return Ok(Err(why)),
                Verdict::Ask(consent) => {
                    let answer = self.ask_person(record.step, (*consent).clone(), record).await?;
                    if !answer.allows() {
                        return Ok(Err(format!(
                            "The person did not allow this: {} ({}). Do not try it again; go on another way, or end the task with `done` saying what was not done.",
                            consent.act, consent.reason
                        )));
                    }
                    once.push((consent.kind, consent.site.clone()));
                }
            }
        }
        // Never let an act through for having been asked about too often.
        Ok(Err(
            "This act needed more of the person's answers than one act can ask; it was not done. Try it another way."
                .into(),
        ))
    }

    /// Shows a consent to the person and waits for the answer; the task's events and the
    /// step's record keep both. `Err` when the task was stopped while it waited.
    async fn ask_person(
        &mut self,
        step: u32,
        mut consent: Consent,
        record: &mut StepRecord,
    ) -> Result<ConsentAnswer, Stopped> {
        let Some(guard) = self.guard.as_mut() else { return Ok(ConsentAnswer::Deny) };
        consent.id = guard.next_id();
        self.events.emit(AgentEvent::ConsentAsked { v: V, step, consent: consent.clone() });
        let answer = match self.stop.unless_stopped(self.browser.ask_consent(&consent)).await {
            None => return Err(Stopped),
            Some(Ok(answer)) => answer,
            Some(Err(_)) => ConsentAnswer::Deny,
        };
        if let Some(guard) = self.guard.as_mut() {
            guard.answered(&consent, answer);
        }
        self.events.emit(AgentEvent::ConsentAnswered {
            v: V,
            step,
            id: consent.id,
            site: consent.site.clone(),
            answer,
        });
        record.decisions.push(Decision { consent, answer });
        self.keep_guard(true);
        Ok(answer)
    }

    /// Hands the guard's state to the keeper (a restarted worker reads it): `whole`, or what
    /// the ledger added since it was last kept whole.
    fn keep_guard(&mut self, whole: bool) {
        let (Some(keep), Some(guard)) = (&self.guard_keeper, self.guard.as_mut()) else { return };
        if whole {
            guard.ledger.saved_whole();
            if let Ok(text) = serde_json::to_string(guard) {
                keep(crate::guard::Kept::Whole(text));
            }
            self.guard_kept_whole_at = self.history.last().map_or(0, |r| r.step);
        } else {
            keep(crate::guard::Kept::Added(guard.ledger.added_text()));
        }
    }

    /// A record (or task end) with every secret value masked (a URL that carries one, an error that quotes
    /// the page), before it is kept, shown or saved.
    fn redacted<R: serde::Serialize + serde::de::DeserializeOwned>(&self, record: R) -> R {
        if self.safety.secrets.is_empty() {
            return record;
        }
        let value = self.safety.secrets.redact_value(&serde_json::to_value(&record).unwrap_or_default());
        crate::json::read_value(&value).unwrap_or(record)
    }

    /// Whether the URL firewall lets the task go to `url` (blank pages always).
    fn firewall_allows(&self, url: &str) -> Result<(), crate::safety::Blocked> {
        if crate::web::is_blank_page(url) {
            return Ok(());
        }
        self.safety.firewall.check(url)
    }

    /// The action with the values of the secrets it names (`<secret>name</secret>`) filled in,
    /// as allowed on the site of `url` (the page it acts on); the LLM's own words (kept in
    /// history) never hold a value. A secret unknown or not allowed on this site is an error for
    /// the LLM.
    fn with_secrets(&self, action: Action, union: &ActionUnion, url: &str) -> Result<Action, String> {
        if self.safety.secrets.is_empty() {
            return Ok(action);
        }
        let params = action.params_value();
        if !names_a_secret(&params) {
            return Ok(action);
        }
        // A script runs in the page's own world, where the page can read anything it is given.
        if matches!(action, Action::Evaluate(_)) {
            return Err("Secrets are never given to scripts: type a secret into a field with `input` instead.".into());
        }
        let filled = self.safety.secrets.substitute(&params, url).map_err(|e| e.to_string())?;
        union.parse_action(action.name(), filled)
    }

    /// A navigation-like action with the secrets in its URL filled in. A secret in a URL goes
    /// to that URL's site, not to the page the task is on: it must be allowed on the host the
    /// URL names, and filling it in must leave that host as it was (a value that moves the URL
    /// to another site, or into its host name, is refused).
    fn with_secrets_in_url(&self, action: Action, union: &ActionUnion, url: &str) -> Result<Action, String> {
        let host = crate::web::host_of(url);
        let filled = self.with_secrets(action, union, url)?;
        let filled_url = filled.target_url(&self.options).unwrap_or_default();
        if filled_url != url && crate::web::host_of(&filled_url) != host {
            return Err(
                "A secret may not change which site a URL goes to: name it only in the path or the query of a URL on a site where it may be used.".into(),
            );
        }
        Ok(filled)
    }
}

/// Whether an action's parameters name a secret (`<secret>name</secret>`, in any case).
fn names_a_secret(params: &serde_json::Value) -> bool {
    params.to_string().to_ascii_lowercase().contains("<secret>")
}

/// How long an action may run, in milliseconds: the limit, five times that for actions that
/// call the LLM themselves, and no limit for `ask_human`, which waits for the person.
fn time_limit(spec: &crate::actions::ActionSpec, limits: &Limits) -> Option<u32> {
    let ms = limits.action_timeout_s.saturating_mul(1000);
    match spec.name {
        "ask_human" => None,
        // Up to 30 s of waiting, plus a look at the page.
        "wait" => Some(ms.max(40_000)),
        // Several LLM calls of up to a minute each.
        _ if spec.needs.llm => Some(ms.saturating_mul(5).max(300_000)),
        _ => Some(ms),
    }
}

/// Runs `work` until it ends (`Some`) or `ms` pass on the clock (`None`, and `work` is dropped).
async fn within<C: Clock, F: std::future::Future>(clock: &C, ms: Option<u32>, work: F) -> Option<F::Output> {
    use std::future::Future;
    let Some(ms) = ms else { return Some(work.await) };
    let mut work = std::pin::pin!(work);
    let mut timer = std::pin::pin!(clock.sleep(ms));
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(out) = work.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(out));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(None);
        }
        std::task::Poll::Pending
    })
    .await
}

/// What the model is told when a skill it called ended: how, and that the task is its again.
fn skill_outcome(name: &str, outcome: &Result<String, String>) -> String {
    match outcome {
        Ok(report) => format!("The skill \"{name}\" finished: {report} Check the page and go on with the task."),
        Err(why) => {
            format!("The skill \"{name}\" stopped: {why} Go on with the task yourself from the page as it is now.")
        }
    }
}

fn last_error(record: &StepRecord) -> (String, Option<crate::message::LocaleText>) {
    if let Some(error) = &record.error {
        return (error.clone(), record.error_locale_text.as_deref().cloned());
    }
    match record.actions.iter().rev().find(|a| a.result.is_error) {
        // What an action met is told to the model, in its words: the person reads that an
        // action failed, and those words beneath.
        Some(action) => {
            use crate::message::LocaleText;
            // The description in the reader's language, where the record has it.
            let failed = match &action.description_locale_text {
                Some(described) => LocaleText::plain("action_failed").because(described.clone()),
                None => LocaleText::new("action_failed", [&action.description]),
            };
            (action.result.message.clone(), Some(failed.with_detail(&action.result.message)))
        }
        None => (String::new(), None),
    }
}
