//! Schedules, run by the worker: the options page's requests, chrome.alarms, the runs and what
//! the person is told of them. What a schedule is and when it fires is `crate::schedule`'s;
//! this is where it meets the tasks.
//!
//! **A run is a task like any other.** It is started through the very path a panel's start
//! takes (`TaskHost::start_task`), so the queue, the number of tasks at once, the settings'
//! check, the guard and its consents all apply unchanged: a scheduled task that meets an act
//! needing the person's yes waits for it, and the act never happens without it. The only
//! differences are that its `QueuedTask` says `scheduled` (the history marks the conversation
//! so, `AgentEvent::TaskStarted::scheduled`) and that the person is not watching: a wait for
//! their yes or their answer is told by a notification as soon as it begins, and taken away
//! once answered.
//!
//! **What runs.** A task (or a favourite, which the options page sends as its text) runs with
//! the model, in a new tab at its start page, or in a new blank tab without one. A replay runs
//! its saved steps without the model, in a new tab at its start page. A skill runs its saved
//! steps with the schedule's values in place of its parameters, without the model, in a new tab
//! at the page it was saved on: a replay of the skill, held to every rule a replay is (a skill
//! called by the model inside a task would need the model, which a schedule of a skill is meant
//! to do without). Replay steps and skills are checked when the schedule is saved, and again
//! when it runs (the skill may have been deleted meanwhile): a run that cannot start is a failed
//! run, told like any other.
//!
//! **One run at a time.** The run's task is kept with its schedule in the stored book
//! (`Schedule::run_task_id`), so a worker that Chrome stopped and started again still knows it.
//! While that task is queued or running, the schedule is not started again (its time moves on
//! all the same). When the task ends (`task_over`), its result is recorded, the next alarm set,
//! and the person told: a failure always, a success only when they asked. A run whose task is
//! gone without an end (the browser closed during it, and what the worker saved of its tasks
//! went with it) is recorded as a run that did not finish, the next time the worker looks.
//!
//! **One change of the book at a time.** The book is read from `chrome.storage.local`, changed,
//! and written back, across awaits; an alarm, a run's end and a request from the options page
//! can come together. Each holds the book (`ScheduleRuns::hold_book`) from its read to its
//! write, so none writes over another's change.

use super::host::{NoticeText, WorkerHost};
use super::saved::QueuedTask;
use super::{refused, Start, TaskHost};
use crate::agent::replay::ReplayStep;
use crate::agent::TaskEnd;
use crate::message::LocaleText;
use crate::protocol::{AgentEvent, PanelReply, Refusal, PROTOCOL_VERSION as V};
use crate::schedule::{self, RunResult, Schedule, ScheduleBook, ScheduleDraft, ScheduleError, ScheduledWork};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::task::{Poll, Waker};

/// The id of the notification that tells schedule `id`'s last result.
pub fn result_notice_id(id: &str) -> String {
    format!("tabwright-schedule-result:{id}")
}

/// The id of the notification that says scheduled task `task_id` waits for the person.
pub fn wait_notice_id(task_id: &str) -> String {
    format!("tabwright-schedule-waits:{task_id}")
}

/// A task's answer longer than this is cut for the list and the notification (the whole is in
/// the history).
const SUMMARY_CHARS: usize = 300;

/// The worker's hold on the stored book, and the runs whose result is recorded.
#[derive(Default)]
pub(super) struct ScheduleRuns {
    book_held: Cell<bool>,
    waiting: RefCell<Vec<Waker>>,
    /// Ended scheduled tasks already looked at: a later task's end reads the book only when a
    /// run ended since.
    settled: RefCell<BTreeSet<String>>,
}

/// The book held, until dropped.
struct BookHeld<'a>(&'a ScheduleRuns);

impl Drop for BookHeld<'_> {
    fn drop(&mut self) {
        self.0.book_held.set(false);
        for waker in self.0.waiting.borrow_mut().drain(..) {
            waker.wake();
        }
    }
}

impl ScheduleRuns {
    /// Waits until no one else holds the book, then holds it.
    async fn hold_book(&self) -> BookHeld<'_> {
        std::future::poll_fn(|cx| {
            if self.book_held.get() {
                self.waiting.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            } else {
                self.book_held.set(true);
                Poll::Ready(())
            }
        })
        .await;
        BookHeld(self)
    }
}

/// How a run's task ended, as its schedule keeps it: done with success is the only success.
pub(crate) fn result_of(end: &TaskEnd, task_id: &str, at_ms: f64) -> RunResult {
    let (ok, said) = match end {
        TaskEnd::Done { text, success, .. } => (*success, NoticeText { message: crate::llm::excerpt(text, SUMMARY_CHARS), locale_text: None }),
        TaskEnd::Stopped => (
            false,
            NoticeText { message: "The run was stopped.".into(), locale_text: Some(LocaleText::plain("schedule_run_stopped")) },
        ),
        TaskEnd::StepLimit { max_steps } => (
            false,
            NoticeText {
                message: format!("The run used all {max_steps} steps without finishing. Raise the step limit in Tabwright's settings, or make the task more specific."),
                locale_text: Some(LocaleText::new("schedule_run_step_limit", [max_steps])),
            },
        ),
        TaskEnd::TooManyFailures { failures, last_error, last_error_locale_text } => {
            let text = LocaleText::new("schedule_run_failures", [failures]);
            (
                false,
                NoticeText {
                    message: format!("The run stopped after {failures} failed steps in a row: {last_error}"),
                    locale_text: Some(match last_error_locale_text {
                        Some(cause) => text.because(cause.clone()),
                        None => LocaleText::new("schedule_run_failures", [failures.to_string(), last_error.clone()]),
                    }),
                },
            )
        }
        TaskEnd::Error { message, locale_text } => {
            (false, NoticeText { message: message.clone(), locale_text: locale_text.clone() })
        }
    };
    RunResult { at_ms, ok, summary: said.message, summary_locale_text: said.locale_text, task_id: task_id.to_string() }
}

/// Why a run did not start: `reason`, as the start refused it.
fn not_started(message: &str, locale_text: Option<LocaleText>) -> NoticeText {
    let text = match locale_text {
        Some(cause) => LocaleText::plain("schedule_run_not_started").because(cause),
        None => LocaleText::new("schedule_run_not_started", [message]),
    };
    NoticeText { message: format!("The run could not start: {message}"), locale_text: Some(text) }
}

/// What a run whose task is gone without an end says.
fn lost() -> NoticeText {
    NoticeText {
        message: "The run did not finish: the browser closed or Tabwright was reloaded while it ran.".into(),
        locale_text: Some(LocaleText::plain("schedule_run_lost")),
    }
}

/// The title of a notification about schedule `title`: `key` is one of the `schedule_notice_…`
/// messages, `english` what it says.
fn notice_title(key: &str, english: String, title: &str) -> NoticeText {
    NoticeText { message: english, locale_text: Some(LocaleText::new(key, [title])) }
}

fn succeeded_title(title: &str) -> NoticeText {
    notice_title("schedule_notice_done", format!("Scheduled task \"{title}\" is done"), title)
}

fn failed_title(title: &str) -> NoticeText {
    notice_title("schedule_notice_failed", format!("Scheduled task \"{title}\" did not succeed"), title)
}

fn waits_title(title: &str) -> NoticeText {
    notice_title("schedule_notice_waits", format!("Scheduled task \"{title}\" waits for you"), title)
}

/// A replay's stored steps, each read as the panel's replay hands them over.
fn replay_steps(steps: &[serde_json::Value]) -> Result<Vec<ReplayStep>, ScheduleError> {
    steps
        .iter()
        .enumerate()
        .map(|(at, step)| {
            crate::json::read_value::<ReplayStep>(step)
                .map_err(|e| ScheduleError::BadSteps(format!("step {}: {e}", at + 1)))
        })
        .collect()
}

impl<H: WorkerHost> TaskHost<H> {
    fn now_ms(&self) -> f64 {
        crate::agent::Clock::now_ms(&self.host.clock())
    }

    /// The local time zone's offset, as the schedules read it.
    fn local_offset(&self) -> impl Fn(f64) -> i32 + '_ {
        |utc_ms| self.host.local_offset_minutes(utc_ms)
    }

    /// The stored book, and why entries were left out (each also said to a developer).
    async fn read_book(&self) -> Result<(ScheduleBook, Vec<String>), ScheduleError> {
        let stored = self.host.stored_schedules().await.map_err(ScheduleError::NotRead)?;
        let (book, left_out) = ScheduleBook::from_stored(&stored);
        for why in &left_out {
            self.host.warn(&format!("Tabwright does not run a stored schedule: {why}"));
        }
        Ok((book, left_out))
    }

    async fn write_book(&self, book: &ScheduleBook) -> Result<(), ScheduleError> {
        self.host.write_schedules(&book.to_stored()).await.map_err(ScheduleError::NotSaved)
    }

    /// Writes the book where nobody waits for the answer: a failure is said to a developer.
    async fn write_book_quietly(&self, book: &ScheduleBook) {
        if let Err(e) = self.write_book(book).await {
            self.host.warn(&format!("Tabwright could not save its schedules: {e}"));
        }
    }

    /// Schedule `schedule`'s alarm at its next run, or none (paused, or no next run).
    async fn alarm_follows(&self, schedule: &Schedule) {
        let name = schedule::alarm_name(&schedule.id);
        match schedule.next_run_ms.filter(|_| !schedule.paused) {
            Some(at) => self.host.set_alarm(&name, at).await,
            None => self.host.clear_alarm(&name).await,
        }
    }

    /// Every schedule's alarm as the book says, and no other schedule alarm (Chrome clears
    /// them when the extension is updated, and a removed schedule's may be left).
    async fn set_every_alarm(&self, book: &ScheduleBook) {
        let alarms = book.alarms();
        for (name, at) in &alarms {
            self.host.set_alarm(name, *at).await;
        }
        let names: Vec<String> = alarms.into_iter().map(|(name, _)| name).collect();
        self.host.clear_alarms_except(schedule::ALARM_PREFIX, &names).await;
    }

    /// The reply listing the book.
    fn schedules_reply(book: &ScheduleBook, left_out: Vec<String>) -> PanelReply {
        PanelReply::Schedules { v: V, schedules: book.schedules().to_vec(), left_out }
    }

    /// Whether task `task_id` is queued or running in this worker.
    fn run_under_way(&self, task_id: &str) -> bool {
        self.queue.borrow().iter().any(|q| q.task_id == task_id)
            || self.tasks.borrow().iter().any(|s| s.task_id == task_id && s.running.get())
    }

    pub(super) async fn list_schedules(&self) -> PanelReply {
        match self.read_book().await {
            Ok((book, left_out)) => Self::schedules_reply(&book, left_out),
            Err(e) => refused(e),
        }
    }

    /// Adds a schedule, or changes schedule `id`; its alarm follows.
    pub(super) async fn save_schedule(&self, id: Option<String>, draft: ScheduleDraft) -> PanelReply {
        if let Err(e) = draft.validate() {
            return refused(e);
        }
        if let Err(reason) = self.check_work(&draft.what).await {
            return refused(reason);
        }
        let _held = self.schedules.hold_book().await;
        let (mut book, left_out) = match self.read_book().await {
            Ok(read) => read,
            Err(e) => return refused(e),
        };
        let (now, offset) = (self.now_ms(), self.local_offset());
        let saved = match id {
            None => book.add(draft, now, &offset).cloned(),
            Some(id) => book.update(&id, draft, now, &offset).cloned(),
        };
        let schedule = match saved {
            Ok(schedule) => schedule,
            Err(e) => return refused(e),
        };
        if let Err(e) = self.write_book(&book).await {
            return refused(e);
        }
        self.alarm_follows(&schedule).await;
        Self::schedules_reply(&book, left_out)
    }

    pub(super) async fn remove_schedule(&self, id: String) -> PanelReply {
        let _held = self.schedules.hold_book().await;
        let (mut book, left_out) = match self.read_book().await {
            Ok(read) => read,
            Err(e) => return refused(e),
        };
        if let Err(e) = book.remove(&id) {
            return refused(e);
        }
        if let Err(e) = self.write_book(&book).await {
            return refused(e);
        }
        self.host.clear_alarm(&schedule::alarm_name(&id)).await;
        Self::schedules_reply(&book, left_out)
    }

    pub(super) async fn pause_schedule(&self, id: String, paused: bool) -> PanelReply {
        let _held = self.schedules.hold_book().await;
        let (mut book, left_out) = match self.read_book().await {
            Ok(read) => read,
            Err(e) => return refused(e),
        };
        let (now, offset) = (self.now_ms(), self.local_offset());
        let schedule = match book.set_paused(&id, paused, now, &offset) {
            Ok(schedule) => schedule.clone(),
            Err(e) => return refused(e),
        };
        if let Err(e) = self.write_book(&book).await {
            return refused(e);
        }
        self.alarm_follows(&schedule).await;
        Self::schedules_reply(&book, left_out)
    }

    /// Starts a run of schedule `id` now (paused or not); its times stay as they are.
    pub(super) async fn run_schedule_now(self: &Rc<Self>, id: String) -> PanelReply {
        let _held = self.schedules.hold_book().await;
        let (mut book, left_out) = match self.read_book().await {
            Ok(read) => read,
            Err(e) => return refused(e),
        };
        let now = self.now_ms();
        let told = self.settle_ended_runs(&mut book, now);
        let Some(schedule) = book.get(&id).cloned() else {
            return refused(ScheduleError::NoSuchSchedule(id));
        };
        if schedule.run_task_id.is_some() {
            return refused(ScheduleError::RunUnderWay(schedule.title));
        }
        let reply = match self.start_run(&schedule).await {
            Ok(task_id) => {
                let _ = book.run_started(&id, &task_id, now);
                None
            }
            // The person asked, and reads why at once: nothing is recorded of a run that did
            // not start.
            Err(why) => {
                Some(PanelReply::Refused { v: V, message: why.message, locale_text: why.locale_text, setting: None })
            }
        };
        let written = self.write_book(&book).await;
        self.tell_results(told).await;
        match (reply, written) {
            (Some(refusal), _) => refusal,
            (None, Err(e)) => refused(e),
            (None, Ok(())) => Self::schedules_reply(&book, left_out),
        }
    }

    /// Checks what a schedule would run as far as can be before it runs: a replay's steps
    /// read as steps, a skill is saved and given each of its parameters.
    async fn check_work(&self, what: &ScheduledWork) -> Result<(), Refusal> {
        match what {
            ScheduledWork::Task { .. } => Ok(()),
            ScheduledWork::Replay { steps, .. } => replay_steps(steps).map(|_| ()).map_err(Refusal::from),
            ScheduledWork::Skill { name, params } => self.skill_run(name, params).await.map(|_| ()),
        }
    }

    /// Where the saved skill `name` begins, and its steps with `params` in place of its
    /// parameters.
    async fn skill_run(
        &self,
        name: &str,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(String, Vec<ReplayStep>), Refusal> {
        let saved = self.host.saved_skills().await.map_err(Refusal::SkillsUnreadable)?;
        let skill = self
            .readable_skills(&saved)
            .into_iter()
            .find(|skill| skill.name == name)
            .ok_or_else(|| ScheduleError::NoSuchSkill(name.to_string()))?;
        if let Some(missing) = skill.params.iter().find(|p| !params.contains_key(&p.name)) {
            return Err(ScheduleError::SkillParamMissing(missing.name.clone()).into());
        }
        if let Some(unknown) = params.keys().find(|key| !skill.params.iter().any(|p| &p.name == *key)) {
            return Err(ScheduleError::SkillParamUnknown(unknown.clone()).into());
        }
        let mut values = BTreeMap::new();
        for (key, value) in params {
            let text = value.as_str().ok_or_else(|| ScheduleError::SkillParamNotText(key.clone()))?;
            values.insert(key.clone(), text.to_string());
        }
        Ok((skill.start_url.clone(), skill.steps_with(&values)))
    }

    /// The task a run of `schedule` starts, as a panel's start would hand it over.
    async fn run_request(&self, schedule: &Schedule) -> Result<QueuedTask, Refusal> {
        let task = |task: String, start: Start| QueuedTask {
            task_id: String::new(),
            task,
            start,
            output_schema: None,
            files: Vec::new(),
            script: None,
            model: None,
            follow_up: false,
            follows: None,
            scheduled: true,
        };
        Ok(match &schedule.what {
            ScheduledWork::Task { task: text, start_url, output_schema } => {
                let start = match start_url {
                    Some(url) => Start::NewTabAt { url: url.clone() },
                    None => Start::NewTab { beside: None },
                };
                QueuedTask { output_schema: output_schema.clone(), ..task(text.clone(), start) }
            }
            ScheduledWork::Replay { start_url, steps } => QueuedTask {
                script: Some(replay_steps(steps)?),
                ..task(schedule.title.clone(), Start::NewTabAt { url: start_url.clone() })
            },
            ScheduledWork::Skill { name, params } => {
                let (url, steps) = self.skill_run(name, params).await?;
                QueuedTask { script: Some(steps), ..task(schedule.title.clone(), Start::NewTabAt { url }) }
            }
        })
    }

    /// Starts a run of `schedule` through the panel's own start (queued when no place is
    /// free): its task's id, or why it did not start.
    async fn start_run(self: &Rc<Self>, schedule: &Schedule) -> Result<String, NoticeText> {
        let request = match self.run_request(schedule).await {
            Ok(request) => request,
            Err(reason) => {
                use crate::message::Localize;
                return Err(not_started(&reason.to_string(), reason.locale_text()));
            }
        };
        match self.clone().start_task(request).await {
            PanelReply::TaskAccepted { task_id, .. } => Ok(task_id),
            PanelReply::Refused { message, locale_text, .. } => Err(not_started(&message, locale_text)),
            other => Err(not_started(&format!("the start answered {other:?}"), None)),
        }
    }

    /// Starts a run of each schedule of `ids` whose last run is not under way; those that do
    /// not start are recorded as failed runs, to be told.
    async fn start_runs(
        self: &Rc<Self>,
        book: &mut ScheduleBook,
        ids: &[String],
        now: f64,
    ) -> Vec<(Schedule, RunResult)> {
        let mut told = Vec::new();
        for id in ids {
            let Some(schedule) = book.get(id).cloned() else { continue };
            if let Some(task_id) = &schedule.run_task_id {
                self.host.warn(&format!(
                    "Tabwright did not start schedule \"{}\" again: its run {task_id} has not ended",
                    schedule.title
                ));
                continue;
            }
            match self.start_run(&schedule).await {
                Ok(task_id) => {
                    let _ = book.run_started(id, &task_id, now);
                }
                Err(why) => {
                    let result = RunResult {
                        at_ms: now,
                        ok: false,
                        summary: why.message,
                        summary_locale_text: why.locale_text,
                        task_id: String::new(),
                    };
                    if let Ok(schedule) = book.record_result(id, result.clone(), &self.local_offset()) {
                        told.push((schedule.clone(), result));
                    }
                }
            }
        }
        told
    }

    /// Records the result of every run that is no longer under way: its task's end, or, for a
    /// task this worker no longer has, a run that did not finish. What is recorded, to be told.
    fn settle_ended_runs(&self, book: &mut ScheduleBook, now: f64) -> Vec<(Schedule, RunResult)> {
        // While tasks are being restored, a run's task may not be back yet: nothing is settled
        // (the restore's end settles them).
        if self.restoring() {
            return Vec::new();
        }
        let ended: Vec<(String, String)> = book
            .schedules()
            .iter()
            .filter_map(|s| s.run_task_id.clone().map(|task_id| (s.id.clone(), task_id)))
            .filter(|(_, task_id)| !self.run_under_way(task_id))
            .collect();
        let mut told = Vec::new();
        for (id, task_id) in ended {
            let end =
                self.tasks.borrow().iter().find(|s| s.task_id == task_id).and_then(|s| s.state.borrow().end.clone());
            let result = match end {
                Some(end) => result_of(&end, &task_id, now),
                None => {
                    let why = lost();
                    RunResult {
                        at_ms: now,
                        ok: false,
                        summary: why.message,
                        summary_locale_text: why.locale_text,
                        task_id,
                    }
                }
            };
            if let Ok(schedule) = book.record_result(&id, result.clone(), &self.local_offset()) {
                told.push((schedule.clone(), result));
            }
        }
        // Only the tasks this worker still keeps are remembered.
        let tasks = self.tasks.borrow();
        let mut settled = self.schedules.settled.borrow_mut();
        settled.retain(|id| tasks.iter().any(|s| &s.task_id == id));
        settled.extend(tasks.iter().filter(|s| s.scheduled && !s.running.get()).map(|s| s.task_id.clone()));
        told
    }

    /// Tells the person of each result, as its schedule asks: a failure always, a success
    /// when they asked for it.
    async fn tell_results(&self, results: Vec<(Schedule, RunResult)>) {
        for (schedule, result) in results {
            if !schedule.notifies(&result) {
                continue;
            }
            let title = if result.ok { succeeded_title(&schedule.title) } else { failed_title(&schedule.title) };
            let message =
                NoticeText { message: result.summary.clone(), locale_text: result.summary_locale_text.clone() };
            self.host.notify(&result_notice_id(&schedule.id), &title, &message).await;
        }
    }

    /// Alarm `name` rang: when it is a schedule's and its time has come, a run starts (unless
    /// its last run is under way); its alarm is set again for its next time.
    pub async fn schedule_alarm(self: &Rc<Self>, name: &str) {
        let Some(id) = schedule::schedule_of_alarm(name) else { return };
        let _held = self.schedules.hold_book().await;
        let mut book = match self.read_book().await {
            Ok((book, _)) => book,
            Err(e) => return self.host.warn(&format!("Tabwright could not run a schedule: {e}")),
        };
        let (now, offset) = (self.now_ms(), self.local_offset());
        // Another wake-up ran it already, or it was removed or paused: nothing to do. (Asked
        // before a run that ended is recorded, which moves the next time past now.)
        let due = book.catch_up(id, now, &offset).unwrap_or(false);
        let mut told = self.settle_ended_runs(&mut book, now);
        // Its next time is saved before the run starts: a worker stopped meanwhile does not
        // start it twice.
        self.write_book_quietly(&book).await;
        if due {
            told.extend(self.start_runs(&mut book, &[id.to_string()], now).await);
            self.write_book_quietly(&book).await;
        }
        match book.get(id) {
            Some(schedule) => self.alarm_follows(schedule).await,
            None => self.host.clear_alarm(name).await,
        }
        self.tell_results(told).await;
    }

    /// The worker started, the browser started, or the extension was installed or updated:
    /// runs that ended unseen are recorded, each schedule whose time passed runs once however
    /// many of its times were missed, and every alarm is set again. Call after `restore`.
    pub async fn wake_schedules(self: &Rc<Self>) {
        let _held = self.schedules.hold_book().await;
        let mut book = match self.read_book().await {
            Ok((book, _)) => book,
            Err(e) => return self.host.warn(&format!("Tabwright could not look at its schedules: {e}")),
        };
        if book.schedules().is_empty() {
            // Nothing to run; an alarm left by a removed schedule goes.
            self.host.clear_alarms_except(schedule::ALARM_PREFIX, &[]).await;
            return;
        }
        let (now, offset) = (self.now_ms(), self.local_offset());
        // Asked before a run that ended is recorded, which moves the next time past now.
        let due = book.due_now(now, &offset);
        let mut told = self.settle_ended_runs(&mut book, now);
        self.write_book_quietly(&book).await;
        if !due.is_empty() {
            told.extend(self.start_runs(&mut book, &due, now).await);
            self.write_book_quietly(&book).await;
        }
        self.set_every_alarm(&book).await;
        self.tell_results(told).await;
    }

    /// A task ended (`task_over`): when it was a schedule's run, its result is recorded, its
    /// next alarm set and the person told.
    pub(super) fn scheduled_runs_over(self: &Rc<Self>) {
        let unsettled = {
            let settled = self.schedules.settled.borrow();
            self.tasks.borrow().iter().any(|s| s.scheduled && !s.running.get() && !settled.contains(&s.task_id))
        };
        if !unsettled {
            return;
        }
        let this = self.clone();
        self.host.spawn(Box::pin(async move {
            let _held = this.schedules.hold_book().await;
            let mut book = match this.read_book().await {
                Ok((book, _)) => book,
                Err(e) => return this.host.warn(&format!("Tabwright could not record a scheduled run: {e}")),
            };
            let told = this.settle_ended_runs(&mut book, this.now_ms());
            if told.is_empty() {
                return;
            }
            this.write_book_quietly(&book).await;
            for (schedule, _) in &told {
                if let Some(now) = book.get(&schedule.id) {
                    this.alarm_follows(now).await;
                }
            }
            this.tell_results(told).await;
        }));
    }

    /// An event of a scheduled task (`launch`'s events): nobody watches it, so a wait for the
    /// person's yes or answer is told by a notification, taken away once answered or over.
    pub(super) fn scheduled_event(self: &Rc<Self>, task_id: &str, event: &AgentEvent) {
        let message = match event {
            AgentEvent::ConsentAsked { consent, .. } => {
                Some(NoticeText { message: consent.act.clone(), locale_text: Some(consent.act_locale_text.clone()) })
            }
            AgentEvent::QuestionAsked { question, .. } => {
                Some(NoticeText { message: crate::llm::excerpt(question, SUMMARY_CHARS), locale_text: None })
            }
            AgentEvent::ConsentAnswered { .. }
            | AgentEvent::QuestionAnswered { .. }
            | AgentEvent::TaskFinished { .. } => None,
            _ => return,
        };
        let (this, task_id) = (self.clone(), task_id.to_string());
        self.host.spawn(Box::pin(async move {
            let id = wait_notice_id(&task_id);
            let Some(message) = message else { return this.host.clear_notification(&id).await };
            // The schedule's title: the run's start has written the book once it is let go.
            let title = {
                let _held = this.schedules.hold_book().await;
                this.read_book().await.ok().and_then(|(book, _)| book.running_as(&task_id).map(|s| s.title.clone()))
            };
            let title = title.unwrap_or_else(|| {
                this.tasks
                    .borrow()
                    .iter()
                    .find(|s| s.task_id == task_id)
                    .map(|s| s.state.borrow().task.clone())
                    .unwrap_or_default()
            });
            this.host.notify(&id, &waits_title(&title), &message).await;
        }));
    }
}

/// One of each message about schedules' runs a person may read, in English and where the
/// pages find it, for the test that checks every message.
#[cfg(test)]
pub(crate) fn sample_texts() -> Vec<(String, Option<LocaleText>)> {
    let failures = TaskEnd::TooManyFailures {
        failures: 3,
        last_error: Refusal::NoOpenTab.to_string(),
        last_error_locale_text: Some(LocaleText::plain("no_open_tab")),
    };
    let failures_unsaid = TaskEnd::TooManyFailures {
        failures: 3,
        last_error: "Element [4] is gone.".into(),
        last_error_locale_text: None,
    };
    let mut out: Vec<NoticeText> = [TaskEnd::Stopped, TaskEnd::StepLimit { max_steps: 40 }, failures, failures_unsaid]
        .iter()
        .map(|end| {
            let result = result_of(end, "task-1", 0.0);
            NoticeText { message: result.summary, locale_text: result.summary_locale_text }
        })
        .collect();
    out.push(not_started(&Refusal::NoOpenTab.to_string(), crate::message::Localize::locale_text(&Refusal::NoOpenTab)));
    out.push(not_started("Chrome is busy", None));
    out.push(lost());
    out.extend([succeeded_title("Mail"), failed_title("Mail"), waits_title("Mail")]);
    out.into_iter().map(|said| (said.message, said.locale_text)).collect()
}
