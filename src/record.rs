//! What a task leaves behind: one record per step (the model's thoughts, each action and its
//! result), the outcome, and what a follow-up task is told of earlier ones. Below the agent
//! that writes them and the prompt that reads them back to the model, so neither needs the
//! other for them.
//!
//! Records are plain serde data: the same JSON goes to the side panel live, into the headless
//! runner's `--out` file, and into the task history the extension keeps in IndexedDB
//! (`extension/history-store.js`).

use crate::actions::ActionResult;
use crate::llm::{excerpt, Usage};
use serde::{Deserialize, Serialize};

/// The reasoning part of an answer, kept in history and shown in the side panel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelThoughts {
    /// Free reasoning, when the settings ask for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    pub evaluation_previous_goal: String,
    pub memory: String,
    pub next_goal: String,
    /// The plan as the model gave it in this step: a checklist of the task's parts, each ticked
    /// off when done. `None` when the model left its plan as it was (or keeps none); an empty
    /// list drops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<PlanItem>>,
}

/// One part of the model's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PlanItem {
    /// The part, in a few words.
    pub text: String,
    /// Whether it is done.
    #[serde(default)]
    pub done: bool,
}

/// Steps kept whole at the end of a task's log (in the agent, the worker's memory and session
/// storage): more than the prompt ever lists in full. Older ones are trimmed.
pub const FULL_RECORD_STEPS: usize = 40;

/// Trims, in the agent's history, the record that just fell [`FULL_RECORD_STEPS`] behind the
/// last (called after each step; older ones were trimmed before). The agent keeps even less of
/// it than the log does: what the prompt shows of a step far behind (its memory line) and what
/// a summary of it reads (goal, actions, results), not where it was or how the panel words its
/// actions; it keeps the plan apart.
pub fn trim_behind(history: &mut [StepRecord]) {
    let Some(behind) = history.len().checked_sub(FULL_RECORD_STEPS + 1) else { return };
    for record in history[..=behind].iter_mut().rev().take_while(|r| !r.trimmed) {
        record.trim(false);
        record.url = String::new();
        record.title = String::new();
        for action in &mut record.actions {
            action.description = String::new();
            action.description_locale_text = None;
        }
    }
}

/// The plan as it stands after `history` (see [`StepRecord::update_plan`]).
pub fn current_plan(history: &[StepRecord]) -> Option<Vec<PlanItem>> {
    let mut plan = None;
    for record in history {
        record.update_plan(&mut plan);
    }
    plan
}

/// What a trimmed record keeps (characters, actions); see [`StepRecord::trim`].
const TRIMMED_URL_CHARS: usize = 150;
const TRIMMED_TITLE_CHARS: usize = 80;
const TRIMMED_EVALUATION_CHARS: usize = 100;
const TRIMMED_GOAL_CHARS: usize = 150;
pub const TRIMMED_ACTIONS: usize = 3;
pub const TRIMMED_ACTION_CHARS: usize = 100;
/// A step's memory as the history lists it once the step has left the window of full steps,
/// and as a trimmed record keeps it.
pub const MEMORY_LINE_CHARS: usize = 250;

/// Parts of a plan kept at most, and characters of each.
pub const PLAN_MAX_ITEMS: usize = 20;
pub const PLAN_ITEM_MAX_CHARS: usize = 200;

impl PlanItem {
    /// A part as a model wrote it: its text cut to [`PLAN_ITEM_MAX_CHARS`] (a blank one is
    /// left out where the answer is read).
    pub fn new(text: &str, done: bool) -> PlanItem {
        let text = text.trim();
        // A model that writes the checklist as text ("[x] Open the cart") is read as meant.
        let (text, done) = match text.get(..3).map(str::to_ascii_lowercase).as_deref() {
            Some("[x]") => (text[3..].trim(), true),
            Some("[ ]") => (text[3..].trim(), done),
            _ => (text, done),
        };
        PlanItem { text: excerpt(text, PLAN_ITEM_MAX_CHARS), done }
    }
}

/// A part of a plan is read from `{"text", "done"}`, or from a bare string (an earlier version
/// kept plans as strings, and models sometimes write them so).
impl<'de> Deserialize<'de> for PlanItem {
    fn deserialize<D: serde::Deserializer<'de>>(reader: D) -> Result<Self, D::Error> {
        struct Part;
        impl<'de> serde::de::Visitor<'de> for Part {
            type Value = PlanItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a part of the plan: {\"text\": \"…\", \"done\": false}")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<PlanItem, E> {
                Ok(PlanItem::new(text, false))
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<PlanItem, M::Error> {
                let (mut text, mut done) = (None::<String>, false);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "text" => text = Some(map.next_value()?),
                        "done" => done = map.next_value::<Option<bool>>()?.unwrap_or(false),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                let text = text.ok_or_else(|| serde::de::Error::missing_field("text"))?;
                Ok(PlanItem::new(&text, done))
            }
        }
        reader.deserialize_any(Part)
    }
}

impl ModelThoughts {
    /// What a trimmed record keeps of the thoughts (see [`StepRecord::trim`]).
    pub fn trim(&mut self, keep_plan: bool) {
        self.thinking = None;
        self.evaluation_previous_goal = excerpt(&self.evaluation_previous_goal, TRIMMED_EVALUATION_CHARS);
        self.memory = excerpt(&self.memory, MEMORY_LINE_CHARS);
        self.next_goal = excerpt(&self.next_goal, TRIMMED_GOAL_CHARS);
        if !keep_plan {
            self.plan = None;
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    pub step: u32,
    /// The tab the step worked in (0 when the page could not be observed).
    #[serde(default)]
    pub tab_id: i32,
    /// The page the step started on.
    pub url: String,
    pub title: String,
    /// The model's reasoning, when its answer was valid.
    pub output: Option<ModelThoughts>,
    pub actions: Vec<ActionRecord>,
    /// Why the step failed before acting: an invalid answer, an LLM or page error.
    pub error: Option<String>,
    /// Where the pages find `error` in their languages (see `crate::message`), when a person
    /// is its reader rather than the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_locale_text: Option<Box<crate::message::LocaleText>>,
    pub usage: Usage,
    /// What the step's LLM call cost in USD, by the price table; `None` for a model it lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub timings: StepTimings,
    /// The screenshot taken in this step (every step with vision on; after the `screenshot`
    /// action with vision auto), as the model saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<crate::browser::Screenshot>,
    /// Kept short once the step fell far behind (see [`StepRecord::trim`]): the full record
    /// is in the task history, and a short one never replaces it there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trimmed: bool,
    /// What the person was asked in this step, and what they answered (`crate::guard`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<crate::guard::Decision>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionRecord {
    pub name: String,
    /// For people: "click [12] Submit", secrets masked.
    pub description: String,
    /// Where the pages find `description` in their languages (`core_do_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_locale_text: Option<crate::message::LocaleText>,
    pub params: serde_json::Value,
    pub result: ActionResult,
    /// For an action on an element: the element's stable features as the page showed it, so a
    /// replay or a skill can find it again when the numbers have changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Box<crate::dom::ElementFingerprint>>,
}

/// Milliseconds spent in each phase of a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepTimings {
    pub observe_ms: f64,
    pub llm_ms: f64,
    pub act_ms: f64,
}

impl StepRecord {
    /// The step failed before acting, on `error`.
    pub fn note_error(&mut self, error: &impl crate::message::Localize) {
        self.error = Some(error.to_string());
        self.error_locale_text = error.locale_text().map(Box::new);
    }

    /// Keeps of the record what a long task needs of a step far behind it, whatever the model
    /// or the page wrote, so a task's log in memory and in session storage grows by at most
    /// about 1.5 KB a step: the step's memory line and goal (what the prompt shows of it),
    /// where it was, and its first actions as described, without parameters, page content,
    /// fingerprints or the screenshot. The plan goes too unless `keep_plan` (the latest plan
    /// must survive for a restore). Trimming twice changes nothing.
    pub fn trim(&mut self, keep_plan: bool) {
        self.trimmed = true;
        self.screenshot = None;
        self.url = excerpt(&self.url, TRIMMED_URL_CHARS);
        self.title = excerpt(&self.title, TRIMMED_TITLE_CHARS);
        if let Some(output) = &mut self.output {
            output.trim(keep_plan);
        }
        self.actions.truncate(TRIMMED_ACTIONS);
        for action in &mut self.actions {
            action.description = excerpt(&action.description, TRIMMED_ACTION_CHARS);
            action.params = serde_json::Value::Null;
            action.target = None;
            action.result.message = excerpt(&action.result.message, TRIMMED_ACTION_CHARS);
            action.result.detail = None;
            action.result.screenshot = None;
            if let Some(done) = &mut action.result.done {
                done.text = excerpt(&done.text, TRIMMED_ACTION_CHARS);
                done.data = None;
            }
            action.result.navigated_to = action.result.navigated_to.as_deref().map(|u| excerpt(u, TRIMMED_URL_CHARS));
        }
        if let Some(error) = &mut self.error {
            *error = excerpt(error, TRIMMED_ACTION_CHARS);
        }
    }

    /// The plan as it stands after this step, from `plan` as it stood before: the one the model
    /// gave here, when it gave one (an empty one drops it); else unchanged.
    pub fn update_plan(&self, plan: &mut Option<Vec<PlanItem>>) {
        if let Some(given) = self.output.as_ref().and_then(|o| o.plan.as_ref()) {
            *plan = (!given.is_empty()).then(|| given.clone());
        }
    }

    /// A step counts as failed when it could not act or its last action failed.
    pub fn failed(&self) -> bool {
        self.error.is_some() || self.actions.last().is_some_and(|a| a.result.is_error)
    }
}

crate::tagged::tagged_enum! {
tag = "kind", remote = "TaskEnd", serde(rename_all = "snake_case");
/// How a task ended.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub enum TaskEnd {
    /// The agent called `done`. `data` is the result in the task's output schema, if it gave one.
    Done {
        text: String,
        success: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<serde_json::Value>,
    },
    /// The user stopped it.
    Stopped,
    /// It used every step without calling `done`.
    StepLimit { max_steps: u32 },
    /// Too many steps in a row failed. `last_error` in the words the model read; the
    /// person's in `last_error_locale_text`.
    TooManyFailures {
        failures: u32,
        last_error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_error_locale_text: Option<crate::message::LocaleText>,
    },
    /// Something that retrying cannot fix: bad settings, an unreachable LLM, a restricted page.
    /// `message` in English; `locale_text` names it in the pages' languages.
    Error {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locale_text: Option<crate::message::LocaleText>,
    },
}
}

impl TaskEnd {
    /// A task the stopped worker left running could not go on, because of `reason`.
    pub fn not_resumed(reason: &impl crate::message::Localize) -> Self {
        TaskEnd::Error {
            message: format!("The task could not continue after Chrome stopped Tabwright's service worker: {reason}"),
            locale_text: reason
                .locale_text()
                .map(|cause| crate::message::LocaleText::plain("task_not_resumed").because(cause)),
        }
    }

    /// The task ended on `error`.
    pub fn error(error: &impl crate::message::Localize) -> Self {
        TaskEnd::Error { message: error.to_string(), locale_text: error.locale_text() }
    }

    /// One sentence for the user.
    pub fn summary(&self) -> String {
        match self {
            TaskEnd::Done { text, .. } => text.clone(),
            TaskEnd::Stopped => "Stopped.".into(),
            TaskEnd::StepLimit { max_steps } => {
                format!("The task used all {max_steps} steps without finishing. Raise the step limit in options or give a more specific task.")
            }
            TaskEnd::TooManyFailures { failures, last_error, .. } => {
                format!("The task stopped after {failures} failed steps in a row. Last error: {last_error}")
            }
            TaskEnd::Error { message, .. } => message.clone(),
        }
    }
}

/// Everything about one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskHistory {
    pub task: String,
    pub model: String,
    pub steps: Vec<StepRecord>,
    pub end: TaskEnd,
    pub usage: Usage,
    /// The task's cost in USD, when every step's model is in the price table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The sum of the steps' costs; `None` if any step that used tokens has no price.
pub fn total_cost(steps: &[StepRecord]) -> Option<f64> {
    steps
        .iter()
        .filter(|r| r.usage.input_tokens + r.usage.output_tokens > 0)
        .try_fold(0.0, |sum, r| Some(sum + r.cost_usd?))
}

/// What a follow-up task knows of an earlier task of the same conversation: what was asked,
/// how it ended, what the model had noted, and where it left the browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviousTask {
    pub task: String,
    pub outcome: String,
    pub memory: String,
    pub last_url: String,
}

impl TaskHistory {
    /// This task as an earlier one, for a follow-up.
    pub fn as_previous(&self) -> PreviousTask {
        PreviousTask {
            task: self.task.clone(),
            outcome: self.end.summary(),
            memory: self
                .steps
                .iter()
                .rev()
                .find_map(|r| r.output.as_ref())
                .map(|o| o.memory.clone())
                .unwrap_or_default(),
            last_url: self.steps.iter().rev().map(|r| r.url.clone()).find(|u| !u.is_empty()).unwrap_or_default(),
        }
    }
}
