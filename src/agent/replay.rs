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
//!
//! **The count in the report.** The report says how many elements were where they had been and
//! how many were found again by their features. Each step's evaluation ends with the count so
//! far ("So far 4 element(s) were where they had been, 1 were found again."), and a replay
//! restored after Chrome stopped the worker takes it up from its last completed step. Only that
//! record is read: records far behind are trimmed (`StepRecord::trim`, in the agent and in the
//! worker's saved log), their evaluations cut to a hundred characters, which would lose the
//! elements a step named past them; the last record is always whole.

use crate::dom::{find_element, ElementFingerprint, Snapshot};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What the masked text of a password typed without a secret looks like in a saved step.
pub(crate) const MASKED: &str = "•••";

/// How a step's evaluation says an element was where it had been: "[41] is [141]".
const SAME_PLACE: &str = " is [";
/// How it says an element was found by its features: "[2] found again as [5] by its features".
const REFOUND: &str = " found again as [";
/// How the end of a step's evaluation gives the count so far: before the elements where they
/// had been, between the two numbers, and after the second.
const SO_FAR: &str = " So far ";
const SO_FAR_SAME_PLACE: &str = " element(s) were where they had been, ";
const SO_FAR_REFOUND: &str = " were found again.";

/// The count so far at the end of a replayed step's evaluation: elements where they had been,
/// and elements found again by their features.
fn count_so_far(evaluation: &str) -> Option<(u32, u32)> {
    let (_, count) = evaluation.rsplit_once(SO_FAR)?;
    let (same_place, rest) = count.split_once(SO_FAR_SAME_PLACE)?;
    let refound = rest.strip_suffix(SO_FAR_REFOUND)?;
    Some((same_place.parse().ok()?, refound.parse().ok()?))
}

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
    /// report: the last of them ends with the count so far (`count_so_far`), in the words
    /// `next` wrote; the others may be trimmed.
    pub fn skip_done(&mut self, evaluations: &[&str]) {
        let done = evaluations.len().min(self.steps.len());
        self.steps.drain(..done);
        if let Some((same_place, refound)) = evaluations[..done].iter().rev().find_map(|e| count_so_far(e)) {
            self.same_place = same_place;
            self.refound = refound;
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
        let so_far = format!("{SO_FAR}{}{SO_FAR_SAME_PLACE}{}{SO_FAR_REFOUND}", self.same_place, self.refound);
        let evaluation =
            if how.is_empty() { format!("{doing}.{so_far}") } else { format!("{doing}: {}.{so_far}", how.join("; ")) };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The count so far is read back from the end of an evaluation as `next` writes it, the
    /// last of the evaluations given; evaluations without one leave the count as it was.
    #[test]
    fn the_count_so_far_is_read_from_the_last_completed_step() {
        let so_far = |same: u32, refound: u32| format!("{SO_FAR}{same}{SO_FAR_SAME_PLACE}{refound}{SO_FAR_REFOUND}");
        let first =
            format!("Replaying step 1 of 3: [41] is [141]; [2] found again as [5] by its features.{}", so_far(1, 1));
        let second = format!("Replaying step 2 of 3.{}", so_far(1, 1));
        assert_eq!(count_so_far(&first), Some((1, 1)));
        assert_eq!(count_so_far("judged from the page"), None);
        let step = |n| ReplayStep { goal: format!("goal {n}"), actions: Vec::new() };
        let mut script = Script::new((1..=3).map(step).collect());
        // The first record was trimmed: its end is gone.
        script.skip_done(&["Replaying step 1 of 3: [41] is [141]; [2] fou…", &second]);
        assert_eq!((script.handed_out(), script.same_place, script.refound), (2, 1, 1));
        let mut script = Script::new((1..=3).map(step).collect());
        script.skip_done(&[&first, "Replaying step 2 of 3.", "", "", ""]);
        assert_eq!((script.handed_out(), script.same_place, script.refound), (3, 1, 1), "the last that has one");
        assert!(script.finished());
    }
}
