//! What a task leaves behind: one record per step (the model's thoughts, each action and its
//! result), the outcome, and what a follow-up task is told of earlier ones. Below the agent
//! that writes them and the prompt that reads them back to the model, so neither needs the
//! other for them.
//!
//! Records are plain serde data: the same JSON goes to the side panel live, into the headless
//! runner's `--out` file, and into the task history the extension keeps in IndexedDB
//! (`extension/history-store.js`).

use crate::actions::ActionResult;
use crate::llm::Usage;
use serde::{Deserialize, Serialize};

/// The reasoning part of an answer, kept in history and shown in the side panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelThoughts {
    /// Free reasoning, when the settings ask for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    pub evaluation_previous_goal: String,
    pub memory: String,
    pub next_goal: String,
    /// The parts of the task still ahead, when the model keeps a plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<String>>,
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
    pub target: Option<crate::dom::ElementFingerprint>,
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
