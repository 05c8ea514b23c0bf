//! The worker's tasks as saved for a restarted worker (`TaskStore`), each under keys of its
//! own, so one task's saving never rewrites another's: the ids of the tasks kept under
//! `TASKS_KEY`; how each started under `task_key(id)`, written when it starts; its events in
//! pages of `EVENTS_PER_PAGE` under `events_key(id, n)`; its guard under `guard_key(id)`; and
//! the queue under `QUEUE_KEY`. A turn's new events rewrite only the page they fall in, so
//! saving a step costs the same at step 90 as at step 1, where one value holding the whole log
//! would be written out again, longer, after every event.

use super::host::{SavedItems, TaskStore};
use crate::agent::PreviousTask;
use crate::protocol::AgentEvent;
use std::cell::RefCell;
use std::rc::Rc;

/// The ids of the tasks kept, oldest first (JSON array).
pub const TASKS_KEY: &str = "tasks";
/// The tasks waiting to start, first first (JSON array of `QueuedTask`).
pub const QUEUE_KEY: &str = "task_queue";
pub const EVENTS_PER_PAGE: usize = 8;

/// How task `id` started.
pub fn task_key(id: &str) -> String {
    format!("task:{id}")
}

/// Task `id`'s guard (`crate::guard::Guard`), with its task's id.
pub fn guard_key(id: &str) -> String {
    format!("task_guard:{id}")
}

/// What task `id`'s ledger added since its guard was saved whole under `guard_key`.
pub fn guard_added_key(id: &str) -> String {
    format!("task_guard_added:{id}")
}

/// The guard's JSON text `guard` as saved under `guard_key(task_id)`, naming its task.
pub fn guard_text(task_id: &str, guard: &str) -> String {
    format!("{{\"task_id\":{},\"guard\":{guard}}}", serde_json::Value::String(task_id.to_string()))
}

/// Page `page` of task `id`'s events.
pub fn events_key(id: &str, page: usize) -> String {
    format!("task_events:{id}:{page}")
}

/// Every key task `id` is saved under, with `events` events in its log.
pub fn keys_of(id: &str, events: usize) -> Vec<String> {
    let mut keys = vec![task_key(id), guard_key(id), guard_added_key(id)];
    keys.extend((0..events.div_ceil(EVENTS_PER_PAGE)).map(|page| events_key(id, page)));
    keys
}

/// The ids of the tasks saved, oldest first (none when unreadable).
pub fn read_index(items: &SavedItems) -> Vec<String> {
    items(TASKS_KEY).ok().flatten().and_then(|raw| crate::json::read::<Vec<String>>(&raw).ok()).unwrap_or_default()
}

/// Saves the ids of the tasks kept.
pub async fn save_index(store: &impl TaskStore, ids: Vec<String>) {
    store.write_saved(TASKS_KEY.into(), Box::new(move || serde_json::to_string(&ids).map_err(|e| e.to_string()))).await;
}

/// The queue as saved; an entry this version cannot read is left out.
pub fn read_queue(items: &SavedItems) -> Vec<QueuedTask> {
    let Some(raw) = items(QUEUE_KEY).ok().flatten() else { return Vec::new() };
    let Ok(entries) = crate::json::from_text::<Vec<serde_json::Value>>(&raw) else { return Vec::new() };
    entries.iter().filter_map(|entry| crate::json::read_value::<QueuedTask>(entry).ok()).collect()
}

/// Saves the queue.
pub async fn save_queue(store: &impl TaskStore, queue: Vec<QueuedTask>) {
    store
        .write_saved(QUEUE_KEY.into(), Box::new(move || serde_json::to_string(&queue).map_err(|e| e.to_string())))
        .await;
}

/// A task waiting to start: everything its start needs, kept across restarts of the worker.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueuedTask {
    pub task_id: String,
    pub task: String,
    pub start: super::Start,
    #[serde(default)]
    pub output_schema: Option<serde_json::Value>,
    #[serde(default)]
    pub files: Vec<crate::browser::TaskFile>,
    /// A replay's saved steps.
    #[serde(default)]
    pub script: Option<Vec<crate::agent::replay::ReplayStep>>,
    #[serde(default)]
    pub model: Option<String>,
    /// It continues a conversation: the one of task `follows`, else the latest task's.
    #[serde(default)]
    pub follow_up: bool,
    #[serde(default)]
    pub follows: Option<String>,
    /// A schedule started it.
    #[serde(default)]
    pub scheduled: bool,
}

/// One page of a saved task's events, with its task: a page left over from an earlier, longer
/// task is not read as this one's.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedEvents {
    task_id: String,
    events: Vec<AgentEvent>,
}

/// What a restarted worker needs to continue a task: how it started, and its events so far
/// (every completed step's record is in them). Saved without its events, which are saved in
/// pages.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SavedTask {
    pub task_id: String,
    pub task: String,
    pub start_tab: i32,
    pub output_schema: Option<serde_json::Value>,
    /// Empty as saved; a version that kept the whole log here is still read.
    #[serde(default)]
    pub events: Vec<AgentEvent>,
    /// The earlier tasks of the conversation, for a follow-up.
    #[serde(default)]
    pub earlier: Vec<PreviousTask>,
    /// The conversation the task belongs to; empty (saved by an older version) means its own.
    #[serde(default)]
    pub conversation_id: String,
    /// A replay's saved steps (all of them; a restored replay skips those it completed).
    #[serde(default)]
    pub script: Option<Vec<crate::agent::replay::ReplayStep>>,
    /// The files the person attached (names and where their bytes are kept).
    #[serde(default)]
    pub files: Vec<crate::browser::TaskFile>,
    /// A schedule started it.
    #[serde(default)]
    pub scheduled: bool,
    /// The coding agent whose own acts it is (`agent::driven`), by the name the person knows it
    /// by: such a task ends with its client's connection, and is never continued.
    #[serde(default)]
    pub driven_by: Option<String>,
    /// The task's guard as last saved (under its own key).
    #[serde(skip)]
    pub guard: Option<crate::guard::Guard>,
}

impl SavedTask {
    /// Saves how the task started; its events are saved by `save_events_page`.
    pub async fn save(&self, store: &impl TaskStore) {
        let header = SavedTask { events: Vec::new(), ..self.clone() };
        store
            .write_saved(
                task_key(&self.task_id),
                Box::new(move || serde_json::to_string(&header).map_err(|e| e.to_string())),
            )
            .await;
    }

    /// Saved task `id`, with its events gathered from their pages; `None` when none is saved
    /// or it cannot be read.
    pub fn read(items: &SavedItems, id: &str) -> Option<SavedTask> {
        let mut saved = crate::json::read::<SavedTask>(&items(&task_key(id)).ok()??).ok()?;
        if saved.task_id != id {
            return None;
        }
        for page in 0.. {
            let Ok(Some(raw)) = items(&events_key(id, page)) else { break };
            match crate::json::read::<SavedEvents>(&raw) {
                Ok(part) if part.task_id == saved.task_id => saved.events.extend(part.events),
                _ => break,
            }
        }
        if let Ok(Some(raw)) = items(&guard_key(id)) {
            let kept: serde_json::Value = crate::json::from_text(&raw).unwrap_or_default();
            if kept["task_id"].as_str() == Some(saved.task_id.as_str()) {
                saved.guard = crate::guard::Guard::from_value(&kept["guard"]);
            }
        }
        if let (Some(guard), Ok(Some(raw))) = (saved.guard.as_mut(), items(&guard_added_key(id))) {
            let kept: serde_json::Value = crate::json::from_text(&raw).unwrap_or_default();
            if kept["task_id"].as_str() == Some(saved.task_id.as_str()) {
                guard.ledger.add_saved(&kept["guard"]);
            }
        }
        Some(saved)
    }

    pub fn conversation_id(&self) -> &str {
        if self.conversation_id.is_empty() {
            &self.task_id
        } else {
            &self.conversation_id
        }
    }
}

/// The event without its step's screenshot: session storage is small (10 MB), and a restarted
/// task does not need the images (history keeps them).
fn without_screenshot(event: &AgentEvent) -> AgentEvent {
    match event {
        AgentEvent::StepFinished { v, record } if record.screenshot.is_some() => AgentEvent::StepFinished {
            v: *v,
            record: Box::new(crate::agent::StepRecord { screenshot: None, ..(**record).clone() }),
        },
        other => other.clone(),
    }
}

/// Saves the page of `events` that holds event `seq`, as the log is when the write is made.
pub async fn save_events_page(
    store: &impl TaskStore,
    task_id: String,
    events: Rc<RefCell<Vec<AgentEvent>>>,
    seq: usize,
) {
    let page = seq / EVENTS_PER_PAGE;
    let key = events_key(&task_id, page);
    let text = move || {
        let events = events.borrow();
        let start = (page * EVENTS_PER_PAGE).min(events.len());
        let end = (start + EVENTS_PER_PAGE).min(events.len());
        let part = SavedEvents { task_id, events: events[start..end].iter().map(without_screenshot).collect() };
        serde_json::to_string(&part).map_err(|e| e.to_string())
    };
    store.write_saved(key, Box::new(text)).await;
}

/// Trims, in a task's log, the events of the steps that fell
/// [`FULL_RECORD_STEPS`](crate::record::FULL_RECORD_STEPS) behind the last finished one, so the
/// log a long task keeps in memory and in session storage grows by about 1.5 KB a step whatever
/// the steps read or wrote (see `StepRecord::trim`). Every event before `from` is trimmed
/// already; returns the new such position. The latest plan the model gave keeps its plan, so a
/// restore finds it; the latest summary stays whole.
pub fn trim_log(events: &mut [AgentEvent], from: usize) -> usize {
    fn finished(event: &AgentEvent) -> Option<&crate::agent::StepRecord> {
        match event {
            AgentEvent::StepFinished { record, .. } => Some(record),
            _ => None,
        }
    }
    let Some(last_step) = events.iter().rev().find_map(finished).map(|r| r.step) else { return from };
    let Some(cutoff) = last_step.checked_sub(crate::record::FULL_RECORD_STEPS as u32) else { return from };
    // Only the log's untrimmed tail is looked through (some 40 steps, not the whole task): a
    // plan or summary before it is trimmed already, so none in it has a later one behind.
    let last_in_tail = |wanted: &dyn Fn(&AgentEvent) -> bool| events[from..].iter().rposition(wanted).map(|i| from + i);
    let last_plan = last_in_tail(&|e| finished(e).is_some_and(|r| r.output.as_ref().is_some_and(|o| o.plan.is_some())));
    let last_summary = last_in_tail(&|e| matches!(e, AgentEvent::HistoryCompacted { .. }));
    let mut at = from;
    while at < events.len() {
        let step = match &events[at] {
            AgentEvent::StepStarted { step, .. }
            | AgentEvent::StepPlanned { step, .. }
            | AgentEvent::TaskPaused { step, .. }
            | AgentEvent::TaskResumed { step, .. }
            | AgentEvent::TaskRestored { step, .. }
            | AgentEvent::QuestionAsked { step, .. }
            | AgentEvent::QuestionAnswered { step, .. }
            | AgentEvent::ConsentAsked { step, .. }
            | AgentEvent::ConsentAnswered { step, .. }
            | AgentEvent::HistoryCompacted { step, .. } => *step,
            AgentEvent::StepFinished { record, .. } => record.step,
            AgentEvent::TaskStarted { .. } => 0,
            AgentEvent::TaskFinished { .. } => break,
        };
        if step > cutoff {
            break;
        }
        let keep = |text: &mut String| *text = crate::llm::excerpt(text, KEPT_TEXT_CHARS);
        match &mut events[at] {
            // The step's record that follows holds all of it again.
            AgentEvent::StepPlanned { thoughts, actions, .. } => {
                *thoughts = Default::default();
                actions.clear();
            }
            AgentEvent::StepFinished { record, .. } => record.trim(Some(at) == last_plan),
            AgentEvent::QuestionAsked { question: text, .. } | AgentEvent::QuestionAnswered { answer: text, .. } => {
                keep(text)
            }
            AgentEvent::HistoryCompacted { summary, .. } if Some(at) != last_summary => keep(&mut summary.text),
            _ => {}
        }
        at += 1;
    }
    at
}

/// A question, an answer or an old summary far behind keeps this many characters.
const KEPT_TEXT_CHARS: usize = 300;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_saved_task_reads_its_guard_whole_and_what_was_added_since_and_no_other_tasks() {
        let mut guard =
            crate::guard::Guard::new(crate::guard::SitePolicy::Ask, &[], "https://mail.example/", "Sort it");
        guard.note_read("https://mail.example/", "Order ACME-4471 shipped");
        guard.ledger.saved_whole();
        let whole = serde_json::to_string(&guard).unwrap();
        guard.note_read("https://tickets.example/", "Ticket TK-88120 opened");
        let added = guard.ledger.added_text();
        let task = r#"{"task_id": "t-1", "task": "Sort it", "start_tab": 1, "output_schema": null}"#;
        let mut items = BTreeMap::from([
            (task_key("t-1"), task.to_string()),
            (guard_key("t-1"), guard_text("t-1", &whole)),
            (guard_added_key("t-1"), guard_text("t-1", &added)),
        ]);
        let read = |items: &BTreeMap<String, String>| {
            let items = items.clone();
            let items: SavedItems = Box::new(move |key: &str| Ok(items.get(key).cloned()));
            SavedTask::read(&items, "t-1").unwrap().guard
        };
        let restored = read(&items).expect("the guard is read");
        assert!(restored.ledger.crossing("ACME-4471", "x.example", &[]).is_some(), "saved whole");
        assert!(restored.ledger.crossing("TK-88120", "x.example", &[]).is_some(), "added since");
        // Another task's guard is not this one's.
        items.insert(guard_key("t-1"), guard_text("t-0", &whole));
        assert!(read(&items).is_none());
    }
}
