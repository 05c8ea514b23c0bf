//! What a running task reports, in order: the events the side panel draws and the history
//! keeps. Defined by the agent that emits them; `protocol` carries them across the seam to the
//! panel unchanged (`{"v": 1, "type": "...", ...}`).

use super::{ModelThoughts, StepRecord, TaskEnd};
use crate::llm::Usage;
use serde::{Deserialize, Serialize};

/// The version every message across the seam carries (`v`).
pub const PROTOCOL_VERSION: u32 = 1;

crate::tagged::tagged_enum! {
tag = "type", remote = "AgentEvent", serde(rename_all = "snake_case");
/// What a running task reports, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum AgentEvent {
    TaskStarted {
        v: u32,
        task_id: String,
        task: String,
        max_steps: u32,
        /// The model the settings name (a step may have used the fallback model instead).
        #[serde(default)]
        model: String,
        /// The conversation (chat) the task belongs to: the id of its first task. A follow-up
        /// carries its conversation's id; the history lists tasks by it.
        #[serde(default)]
        conversation_id: String,
        /// A replay of saved steps: no model is asked, and each step's evaluation says how
        /// its elements were found again (worth showing from step 1 on).
        #[serde(default)]
        replay: bool,
    },
    /// The step began: the page is being observed and the LLM asked.
    StepStarted {
        v: u32,
        step: u32,
        max_steps: u32,
    },
    /// The LLM answered; the actions are about to run.
    StepPlanned {
        v: u32,
        step: u32,
        thoughts: ModelThoughts,
        actions: Vec<PlannedAction>,
    },
    /// The service worker was stopped while the task ran; it continues at `step` with the
    /// `steps_kept` steps it had completed (the step in flight is done again).
    TaskRestored {
        v: u32,
        step: u32,
        steps_kept: u32,
        reason: String,
    },
    /// The task is paused before `step` (or before its next action); nothing runs until resumed.
    TaskPaused {
        v: u32,
        step: u32,
    },
    TaskResumed {
        v: u32,
        step: u32,
    },
    /// The agent asked the user a question (`ask_human`); the task waits for the answer.
    QuestionAsked {
        v: u32,
        step: u32,
        question: String,
    },
    QuestionAnswered {
        v: u32,
        step: u32,
        answer: String,
    },
    /// The request of `step` was over its budget: the model condensed the steps up to
    /// `summary.through_step`, which later requests show as this summary.
    HistoryCompacted {
        v: u32,
        step: u32,
        summary: crate::prompt::HistorySummary,
    },
    /// The step is over, with everything it did.
    StepFinished {
        v: u32,
        record: StepRecord,
    },
    TaskFinished {
        v: u32,
        end: TaskEnd,
        steps: u32,
        usage: Usage,
        /// USD, when the price table knows the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
}
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedAction {
    pub name: String,
    pub description: String,
    pub params: serde_json::Value,
}
