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
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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
        /// A schedule started it, not the person (`crate::schedule`).
        #[serde(default)]
        scheduled: bool,
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
    /// An act waits for the person's yes (`crate::guard`): nothing reaches the page before
    /// the answer, `answer_consent`.
    ConsentAsked {
        v: u32,
        step: u32,
        consent: crate::guard::Consent,
    },
    /// The person answered consent `id` (about `site`).
    ConsentAnswered {
        v: u32,
        step: u32,
        id: u32,
        site: String,
        answer: crate::guard::ConsentAnswer,
    },
    /// The request of `step` was over its budget: the model condensed the steps up to
    /// `summary.through_step`, which later requests show as this summary.
    HistoryCompacted {
        v: u32,
        step: u32,
        summary: crate::prompt::HistorySummary,
    },
    /// The step is over, with everything it did. Boxed: a task's log holds thousands of
    /// events, each as large as the largest kind.
    StepFinished {
        v: u32,
        record: Box<StepRecord>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedAction {
    pub name: String,
    pub description: String,
    /// Where the pages find `description` in their languages (`core_do_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_locale_text: Option<crate::message::LocaleText>,
    pub params: serde_json::Value,
}

/// Where a task stands, folded from its events: what the task history keeps for each task, said
/// by the core that knows it rather than worked out again from the events by each reader. Sent
/// with every event and with `get_status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TaskState {
    pub task: String,
    pub model: String,
    pub max_steps: Option<u32>,
    pub conversation_id: String,
    pub replay: bool,
    /// A schedule started it (`crate::schedule`).
    pub scheduled: bool,
    pub running: bool,
    pub paused: bool,
    /// Set when a restarted worker continued the task.
    pub restored: Option<Restored>,
    /// The latest summary of old steps, when the task had one.
    pub summary: Option<crate::prompt::HistorySummary>,
    /// The model's plan as it stands, when it keeps one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<crate::record::PlanItem>>,
    pub end: Option<TaskEnd>,
    pub usage: Usage,
    /// USD, summed over the priced steps; `None` until one is priced.
    pub cost_usd: Option<f64>,
    /// Steps that used tokens the price table has no price for.
    pub unpriced_steps: u32,
    pub step_count: u32,
    /// The act waiting for the person's yes, if one is.
    #[serde(default)]
    pub pending_consent: Option<crate::guard::Consent>,
}

/// How a restarted worker continued a task (`AgentEvent::TaskRestored`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Restored {
    pub step: u32,
    pub steps_kept: u32,
    pub reason: String,
}

impl TaskState {
    /// The state after all of `events`.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> TaskState {
        let mut state = TaskState::default();
        for event in events {
            state.apply(event);
        }
        state
    }

    /// Takes in one more event.
    pub fn apply(&mut self, event: &AgentEvent) {
        let finished = self.end.is_some();
        if !finished && !matches!(event, AgentEvent::TaskFinished { .. }) {
            self.running = true;
        }
        match event {
            AgentEvent::TaskStarted { task, max_steps, model, conversation_id, replay, scheduled, task_id, .. } => {
                self.task = task.clone();
                self.max_steps = Some(*max_steps);
                self.model = model.clone();
                self.conversation_id =
                    if conversation_id.is_empty() { task_id.clone() } else { conversation_id.clone() };
                self.replay = *replay;
                self.scheduled = *scheduled;
            }
            AgentEvent::TaskRestored { step, steps_kept, reason, .. } => {
                self.restored = Some(Restored { step: *step, steps_kept: *steps_kept, reason: reason.clone() });
                self.paused = false;
                // The step that asked is done again, and asks again.
                self.pending_consent = None;
            }
            AgentEvent::HistoryCompacted { summary, .. } => self.summary = Some(summary.clone()),
            AgentEvent::TaskPaused { .. } => self.paused = !finished,
            AgentEvent::TaskResumed { .. } => self.paused = false,
            AgentEvent::StepFinished { record, .. } => {
                self.step_count += 1;
                record.update_plan(&mut self.plan);
                self.usage += record.usage;
                match record.cost_usd {
                    Some(cost) => self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + cost),
                    None if record.usage.input_tokens + record.usage.output_tokens > 0 => self.unpriced_steps += 1,
                    None => {}
                }
            }
            AgentEvent::TaskFinished { end, usage, cost_usd, .. } => {
                self.end = Some(end.clone());
                self.usage = *usage;
                self.cost_usd = *cost_usd;
                self.running = false;
                self.paused = false;
                self.pending_consent = None;
            }
            AgentEvent::ConsentAsked { consent, .. } => self.pending_consent = Some(consent.clone()),
            AgentEvent::ConsentAnswered { id, .. } => {
                if self.pending_consent.as_ref().is_some_and(|c| c.id == *id) {
                    self.pending_consent = None;
                }
            }
            AgentEvent::StepStarted { .. }
            | AgentEvent::StepPlanned { .. }
            | AgentEvent::QuestionAsked { .. }
            | AgentEvent::QuestionAnswered { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: u32, input: u64, cost: Option<f64>) -> AgentEvent {
        let usage = Usage { input_tokens: input, output_tokens: input / 10, ..Usage::default() };
        AgentEvent::StepFinished {
            v: 1,
            record: Box::new(StepRecord { step: n, usage, cost_usd: cost, ..StepRecord::default() }),
        }
    }

    #[test]
    fn the_state_is_folded_from_the_events_as_the_history_keeps_it() {
        let started = AgentEvent::TaskStarted {
            v: 1,
            task_id: "task-1".into(),
            task: "Read it".into(),
            max_steps: 9,
            model: "m".into(),
            conversation_id: String::new(),
            replay: false,
            scheduled: true,
        };
        let events = [
            started,
            step(1, 100, Some(0.5)),
            AgentEvent::TaskPaused { v: 1, step: 2 },
            step(2, 200, None),
            step(3, 0, None),
        ];
        let state = TaskState::of(&events);
        assert_eq!(
            (state.task.as_str(), state.conversation_id.as_str(), state.max_steps),
            ("Read it", "task-1", Some(9))
        );
        assert!(state.running && state.paused);
        assert!(state.scheduled, "a schedule started it");
        assert_eq!((state.step_count, state.usage.input_tokens, state.cost_usd), (3, 300, Some(0.5)));
        assert_eq!(state.unpriced_steps, 1, "a step with tokens and no price; one without tokens costs nothing");
        let mut state = state;
        let end = TaskEnd::Stopped;
        state.apply(&AgentEvent::TaskFinished {
            v: 1,
            end: end.clone(),
            steps: 3,
            usage: Usage::default(),
            cost_usd: None,
        });
        assert!(!state.running && !state.paused);
        assert_eq!(state.end, Some(end));
        state.apply(&AgentEvent::TaskPaused { v: 1, step: 4 });
        assert!(!state.paused && !state.running, "nothing after the end changes it");
    }
}
