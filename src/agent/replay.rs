//! Replaying a saved task without the model.
//!
//! A replay is a task whose answers come from a script instead of the LLM: each saved step's
//! goal and actions, in order. The loop is the same — observe, build the union, validate, act,
//! record — so a replay shows up live in the panel, is kept in the history, and is held to the
//! same rules (the firewall, secrets filled in per site, the union of the page). Only the index
//! of an element action changes: the saved step's numbers belonged to another visit, so each
//! element is found again on the page as it is now by its saved features
//! ([`crate::dom::find_element`]). The step's evaluation says how each was found. The replay
//! stops at the first element it cannot find, or the first action that fails, saying which; a
//! replay that ran every step ends with a report of how the elements were found.
//!
//! # Replay, in detail
//!
//! **Replay** (`src/agent/replay.rs`, request `replay_task`). The panel hands over a past
//! conversation's steps — each step's goal and the actions that worked, each with the element it
//! acted on (`ActionRecord::target`, an `ElementFingerprint`: tag, text, identifying attributes,
//! listed ancestors, rank among its tag) — and the page it began on. The task runs in a new tab
//! there, through the same loop with `Agent::replaying`: the model is not asked; the saved step is
//! the answer, its element indices replaced by `dom::find_element` on the page as it is now
//! (same tag required, then text, attributes, ancestors; a tie nearest the old rank, a tie beyond
//! that refused). The step's evaluation says how each element was found ("`[41] is [141]`", "found
//! again by its features"). The replay stops at the first element it cannot find, a password that
//! history keeps masked (only `<secret>` placeholders can be typed again), or a failed action; after
//! its last step it ends with a report. A restored replay skips the steps it completed.

use crate::dom::{find_element, ElementFingerprint, Snapshot};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What the masked text of a password typed without a secret looks like in a saved step.
pub(crate) const MASKED: &str = "•••";

/// How a step's evaluation says an element was where it had been: "[41] is [141]".
const SAME_PLACE: &str = " is [";
/// How it says an element was found by its features: "[2] found again as [5] by its features".
const REFOUND: &str = " found again as [";

/// One saved step to replay: what it set out to do, and its actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayStep {
    pub goal: String,
    pub actions: Vec<ReplayAction>,
}

/// One saved action: its name and parameters as recorded, and the element it acted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayAction {
    pub name: String,
    pub params: serde_json::Value,
    #[serde(default)]
    pub target: Option<ElementFingerprint>,
}

/// The replay under way: the steps still to run, and how its elements were found so far.
#[derive(Debug, Clone, Default)]
pub struct Script {
    steps: VecDeque<ReplayStep>,
    total: usize,
    same_place: u32,
    refound: u32,
    /// Set when the steps are a skill's, called by the model: its name.
    skill: Option<String>,
}

/// A saved step made ready for this page: the answer the model would have given.
pub struct Scripted {
    /// `{evaluation_previous_goal, memory, next_goal, action}`, as AgentOutput reads it.
    pub answer: serde_json::Value,
    pub actions: usize,
}

impl Script {
    pub fn new(steps: Vec<ReplayStep>) -> Self {
        Script { total: steps.len(), steps: steps.into(), ..Script::default() }
    }

    /// A skill's steps, run when the model called it (see `skill`).
    pub fn skill(name: String, steps: Vec<ReplayStep>) -> Self {
        Script { skill: Some(name), ..Script::new(steps) }
    }

    /// The skill these steps are, if they are one.
    pub fn skill_name(&self) -> Option<&str> {
        self.skill.as_deref()
    }

    /// What the steps belong to, in messages: the saved task, or the skill.
    fn source(&self) -> String {
        match &self.skill {
            Some(name) => format!("the skill \"{name}\""),
            None => "the saved task".into(),
        }
    }

    /// Drops the steps already done: a replay continued after the worker was stopped, with
    /// the evaluations of its completed steps. How their elements were found counts in the
    /// report: each evaluation says it, in the words `next` wrote.
    pub fn skip_done(&mut self, evaluations: &[&str]) {
        for evaluation in evaluations.iter().take(self.steps.len()) {
            self.steps.pop_front();
            self.same_place += evaluation.matches(SAME_PLACE).count() as u32;
            self.refound += evaluation.matches(REFOUND).count() as u32;
        }
    }

    /// How many steps the replay has in all.
    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Whether every step has been handed out.
    pub fn finished(&self) -> bool {
        self.steps.is_empty()
    }

    /// The number (from 1) of the step `next` hands out.
    fn position(&self) -> usize {
        self.handed_out() + 1
    }

    /// How many steps `next` has handed out.
    pub fn handed_out(&self) -> usize {
        self.total - self.steps.len()
    }

    /// The next saved step, its elements found again on `page`; an error (for the person)
    /// when one cannot be, or the step cannot be replayed at all.
    pub fn next(&mut self, page: &Snapshot) -> Option<Result<Scripted, String>> {
        let position = self.position();
        let step = self.steps.pop_front()?;
        let mut items = Vec::with_capacity(step.actions.len());
        let mut how = Vec::new();
        for action in step.actions {
            let mut params = action.params;
            if params.get("text").and_then(|t| t.as_str()) == Some(MASKED) {
                return Some(Err(format!(
                    "Step {position} of {} typed a password, which Tabwright does not keep. Save it as a secret in Tabwright's settings and let the agent type <secret>name</secret>, then save the task again.",
                    self.source()
                )));
            }
            if let (Some(old), Some(target)) = (params.get("index").and_then(|i| i.as_u64()), &action.target) {
                let Some(found) = find_element(page, target) else {
                    let text = if target.text.is_empty() { String::new() } else { format!(" \"{}\"", target.text) };
                    return Some(Err(format!(
                        "Step {position} of {}: the <{}>{text} it used ([{old}] then) is not on the page any more, or cannot be told apart from another.",
                        self.source(),
                        target.tag
                    )));
                };
                if found.exact {
                    self.same_place += 1;
                    how.push(format!("[{old}]{SAME_PLACE}{}]", found.index));
                } else {
                    self.refound += 1;
                    how.push(format!("[{old}]{REFOUND}{}] by its features", found.index));
                }
                params["index"] = found.index.into();
            }
            items.push(serde_json::json!({ action.name: params }));
        }
        let doing = match &self.skill {
            Some(name) => format!("Running the skill \"{name}\", step {position} of {}", self.total),
            None => format!("Replaying step {position} of {}", self.total),
        };
        let evaluation = if how.is_empty() { format!("{doing}.") } else { format!("{doing}: {}.", how.join("; ")) };
        let actions = items.len();
        Some(Ok(Scripted {
            answer: serde_json::json!({
                "evaluation_previous_goal": evaluation,
                "memory": "",
                "next_goal": step.goal,
                "action": items,
            }),
            actions,
        }))
    }

    /// How the replay went, once it ran every step.
    pub fn report(&self) -> String {
        format!(
            "Replayed all {} step(s) of {}: {} element(s) were where they had been, {} were found again by their features.",
            self.total,
            self.source(),
            self.same_place,
            self.refound
        )
    }
}
