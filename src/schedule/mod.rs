//! Scheduled tasks: a task, a favourite, a saved skill or a replay that runs by itself, every
//! N minutes, hourly, daily at a time, or on weekdays at a time.
//!
//! This module is the plain-Rust part: what a schedule is, when it fires next, what a missed
//! time means, and the list as `chrome.storage.local` keeps it. Chrome is not here: the worker
//! sets the alarms, starts the runs and shows the notifications (see "What the worker does").
//!
//! # Why it is made this way
//!
//! **The time comes from the caller.** The wasm has no clock and no time-zone database, so
//! every function takes the instant (`now_ms`, milliseconds since the epoch, as `Date.now()`)
//! and a [`LocalOffset`]: the local offset from UTC *at a given instant*, which the extension
//! answers with `-new Date(ms).getTimezoneOffset()`. "Daily at 07:00" is 07:00 on the wall
//! clock of that very day, computed with that day's offset, so it stays at 07:00 across a
//! daylight-saving change. A wall time that a change skips (02:30 on the spring-forward night)
//! runs at the same time after the change (03:30); one that happens twice (the autumn night)
//! runs the first time: both as `new Date(y, m, d, h, min)` reads them. "Hourly" runs once an
//! hour of real time, at the minute the local clock shows; "every N minutes" counts real time
//! from the schedule's creation and knows no time zone. The calendar (days since the epoch,
//! weekdays) is a few lines of integer arithmetic; no date crate is needed for it.
//!
//! **A missed time runs once.** Chrome does not run alarms while the browser is closed or the
//! computer sleeps. When the worker next looks ([`Schedule::catch_up`], [`ScheduleBook::due_now`]),
//! a schedule whose next time has passed runs once, however many of its times were missed,
//! and its next time becomes the first one after now: a browser closed for three days does not
//! come back to 864 runs of a five-minute schedule, nor three runs of a daily one. The next
//! time is moved on *before* the run starts, so a worker stopped during a run never starts it a
//! second time (a run that began continues as every task does after a worker stop).
//!
//! **Safety is unchanged.** A scheduled run is an ordinary task started by the worker, not by
//! the person's click: the same loop, the same guard, the same firewall and secrets. An act
//! that waits for the person's yes waits for it in a scheduled run too, with nobody watching;
//! the worker tells the person by a notification that the run waits for them, and the act is
//! never done without the yes. A replay or a skill runs its saved steps without the model,
//! held to the same rules as when the person replays it.
//!
//! **Notifications.** A failed run is always told by a notification; a successful one only
//! when the person asked for it ([`Schedule::notify_success`], see [`Schedule::notifies`]); a
//! run waiting for a yes always, since it cannot go on without them. Every run is a
//! conversation in the task history, marked as scheduled, whatever the notification.
//!
//! **A stored list is read entry by entry.** One entry this version cannot read (written by
//! hand, by a newer version, or no longer valid) is left out with the reason, and the others
//! run ([`read_stored`]). Nothing is lost: the book keeps such entries aside as they were
//! stored and writes them back with the others ([`ScheduleBook::to_stored`]), so a newer
//! version, or the person fixing one by hand, still finds them.
//!
//! **A run is the schedule's until its result is in.** The task a run started is kept with the
//! schedule ([`Schedule::run_task_id`], stored, so a worker that Chrome stopped still knows it)
//! until [`ScheduleBook::record_result`]: while that task is queued or running, the schedule is
//! not started again, and when it ends its result is the schedule's.
//!
//! # What the worker does
//!
//! - One chrome.alarms alarm per unpaused schedule, named [`alarm_name`]
//!   (`tabwright-schedule:<id>`), a one-shot alarm at `when: next_run_ms` ([`ScheduleBook::alarms`]).
//!   One alarm per schedule rather than one for the earliest ([`ScheduleBook::next_wake`]):
//!   alarms outlive worker stops and (mostly) browser restarts, an alarm's name says which
//!   schedule woke the worker, and adding, pausing or removing one schedule touches only its
//!   own alarm. A one-shot alarm, not `periodInMinutes`: a daily time moves against real time
//!   on a daylight-saving day, and a period cannot say "weekdays".
//! - On an alarm whose name [`schedule_of_alarm`] reads: load the book, call
//!   [`Schedule::catch_up`] for that schedule (false: nothing to do — another wake-up ran it
//!   already, or it was paused), save the book, set its alarm again at the new `next_run_ms`,
//!   then start the run.
//! - When the browser starts (`runtime.onStartup`), when the extension is installed or updated
//!   (which clears alarms), and whenever the worker starts: [`ScheduleBook::due_now`], save,
//!   start each id it gives once, and set every alarm again from [`ScheduleBook::alarms`]
//!   (clearing `tabwright-schedule:` alarms it does not list).
//! - A schedule whose last run is still queued or running is not started again when it comes
//!   due (its time was moved on all the same): the run under way stands for it.
//! - When a run starts: [`ScheduleBook::run_started`] with its task, save.
//! - When a run ends: [`ScheduleBook::record_result`], save, set the alarm again, and notify
//!   when [`Schedule::notifies`] says so.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// At most this many schedules in the list.
pub const MAX_SCHEDULES: usize = 50;
/// A title has at most this many characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// The shortest period of "every N minutes". Chrome's alarms allow 30 seconds, but each run
/// opens tabs and, for a task, pays the model for every step; a run of a few minutes would
/// meet the next one still going, and a forgotten schedule would make hundreds of runs a day.
/// Five minutes keeps runs apart and a day to at most 288 of them.
pub const MIN_EVERY_MINUTES: u32 = 5;
/// The longest period of "every N minutes": a day. Longer periods are daily schedules.
pub const MAX_EVERY_MINUTES: u32 = 1440;
/// The prefix of every schedule's alarm name: `tabwright-schedule:<id>`.
pub const ALARM_PREFIX: &str = "tabwright-schedule:";
/// Where the list is kept in `chrome.storage.local`: a list of schedules, as JSON.
pub const STORAGE_KEY: &str = "schedules";

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;
/// The instants JavaScript's `Date` can hold: ±100,000,000 days around the epoch.
const LARGEST_INSTANT: f64 = 8.64e15;
/// Offsets beyond ±18 hours are no time zone's: such an answer is held to that.
const LARGEST_OFFSET_MINUTES: i32 = 18 * 60;

/// The local time zone's offset from UTC at an instant, in minutes east of Greenwich
/// (UTC+02:00 is 120, UTC−05:00 is −300). The extension answers with
/// `-new Date(utc_ms).getTimezoneOffset()`; any `Fn(f64) -> i32` is one.
pub trait LocalOffset {
    fn minutes_east_at(&self, utc_ms: f64) -> i32;
}

impl<F: Fn(f64) -> i32> LocalOffset for F {
    fn minutes_east_at(&self, utc_ms: f64) -> i32 {
        self(utc_ms)
    }
}

/// A scheduled task, as the options page lists it and `chrome.storage.local` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// Given by [`ScheduleBook::add`]; names the schedule's alarm.
    pub id: String,
    /// What the person sees in the list, the history and notifications.
    pub title: String,
    pub what: ScheduledWork,
    pub when: Repeat,
    /// A paused schedule does not run and has no next run.
    #[serde(default)]
    pub paused: bool,
    /// Whether a successful run is told by a notification (a failure always is).
    #[serde(default)]
    pub notify_success: bool,
    /// When it was made (ms since the epoch); "every N minutes" counts from here.
    pub created_ms: f64,
    /// When its last run began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_ms: Option<f64>,
    /// How its last run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_result: Option<RunResult>,
    /// When it runs next; none while paused. Missing in a stored entry, it is worked out from
    /// the last run (or the creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_ms: Option<f64>,
    /// The task of its run under way (queued, running or waiting for the person), from the
    /// run's start until its result is recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_task_id: Option<String>,
}

crate::tagged::tagged_enum! {
tag = "kind", remote = "ScheduledWork", serde(rename_all = "snake_case", deny_unknown_fields);
/// What a schedule runs.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub enum ScheduledWork {
    /// A task (or a favourite), run by the model, as the panel's start would run it.
    Task {
        task: String,
        /// The page it starts on, in a new tab; none: a new tab.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start_url: Option<String>,
        /// A JSON Schema the task's result is data of, as the panel's start takes it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_schema: Option<Value>,
    },
    /// A saved task replayed without the model. `steps` are the replay's steps as the panel's
    /// replay hands them over (`agent::replay::ReplayStep`); the worker reads them when the
    /// run starts (this module sits below the agent and keeps them as they are).
    Replay { start_url: String, steps: Vec<Value> },
    /// A saved skill run without the model, by its name, with a text for each parameter.
    Skill {
        name: String,
        #[serde(default)]
        params: Map<String, Value>,
    },
}
}

crate::tagged::tagged_enum! {
tag = "every", remote = "Repeat", serde(rename_all = "snake_case", deny_unknown_fields);
/// When a schedule runs. Times of day are the local wall clock's `"HH:MM"` (24-hour).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub enum Repeat {
    /// Every `n` minutes of real time from the schedule's creation
    /// ([`MIN_EVERY_MINUTES`]…[`MAX_EVERY_MINUTES`]).
    Minutes { n: u32 },
    /// Every hour, at `minute` past it on the local clock (0…59).
    Hourly { minute: u8 },
    /// Every day at `at` local time.
    Daily { at: String },
    /// Monday to Friday at `at` local time.
    Weekdays { at: String },
}
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// When it ended.
    pub at_ms: f64,
    pub ok: bool,
    /// A line for the list and the notification: the task's answer, or why it failed.
    pub summary: String,
    /// Where the pages find `summary` in their language; none for words shown as they are
    /// (the task's own answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_locale_text: Option<crate::message::LocaleText>,
    /// The run's task, in the history (none when no task started).
    pub task_id: String,
}

/// A new schedule, or the new settings of one, as the options page sends them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleDraft {
    pub title: String,
    pub what: ScheduledWork,
    pub when: Repeat,
    #[serde(default)]
    pub paused: bool,
    #[serde(default)]
    pub notify_success: bool,
}

/// What is wrong with a schedule, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("Give the schedule a title.")]
    NoTitle,
    #[error("The title is longer than {MAX_TITLE_CHARS} characters; choose a shorter one.")]
    TitleTooLong,
    #[error("\"{0}\" is not a time of day: write it as HH:MM on a 24-hour clock, such as 07:30 or 18:00.")]
    BadTime(String),
    #[error("A schedule can run every {MIN_EVERY_MINUTES} to {MAX_EVERY_MINUTES} minutes, not every {0}. Choose a number in that range, or a daily schedule.")]
    MinutesOutOfRange(u32),
    #[error("The minute past the hour must be between 0 and 59; it is {0}.")]
    MinuteOutOfRange(u8),
    #[error("Write the task the schedule should run.")]
    NoTask,
    #[error("The start page \"{0}\" is not a web page: give an address that begins with https:// or http://.")]
    BadStartUrl(String),
    #[error("The saved task has no steps to replay. Choose a conversation whose actions worked.")]
    NoSteps,
    #[error("Choose the skill the schedule should run.")]
    NoSkill,
    #[error("The skill's parameter \"{0}\" must be a text.")]
    SkillParamNotText(String),
    #[error("There are {MAX_SCHEDULES} schedules already. Remove one you no longer need, then add this one.")]
    TooMany,
    #[error("There is no schedule \"{0}\"; it may have been removed. Reload the list.")]
    NoSuchSchedule(String),
    #[error("The saved steps cannot be replayed ({0}). Choose the conversation again.")]
    BadSteps(String),
    #[error("There is no saved skill named \"{0}\"; it may have been deleted. Choose another skill.")]
    NoSuchSkill(String),
    #[error("The skill needs a text for its parameter \"{0}\".")]
    SkillParamMissing(String),
    #[error("The skill has no parameter \"{0}\". Choose the skill again.")]
    SkillParamUnknown(String),
    #[error("The last run of \"{0}\" has not ended yet. Wait for it to end, or stop it in the side panel.")]
    RunUnderWay(String),
    #[error("The schedules could not be read ({0}). Reload the extension.")]
    NotRead(String),
    #[error("The schedules could not be saved ({0}).")]
    NotSaved(String),
}

impl crate::message::Localize for ScheduleError {
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        use crate::message::LocaleText as L;
        Some(match self {
            ScheduleError::NoTitle => L::plain("schedule_no_title"),
            ScheduleError::TitleTooLong => L::new("schedule_title_too_long", [MAX_TITLE_CHARS]),
            ScheduleError::BadTime(text) => L::new("schedule_bad_time", [text]),
            ScheduleError::MinutesOutOfRange(n) => {
                L::new("schedule_minutes_out_of_range", [MIN_EVERY_MINUTES, MAX_EVERY_MINUTES, *n])
            }
            ScheduleError::MinuteOutOfRange(minute) => L::new("schedule_minute_out_of_range", [minute]),
            ScheduleError::NoTask => L::plain("schedule_no_task"),
            ScheduleError::BadStartUrl(url) => L::new("schedule_bad_start_url", [url]),
            ScheduleError::NoSteps => L::plain("schedule_no_steps"),
            ScheduleError::NoSkill => L::plain("schedule_no_skill"),
            ScheduleError::SkillParamNotText(name) => L::new("schedule_skill_param_not_text", [name]),
            ScheduleError::TooMany => L::new("schedule_too_many", [MAX_SCHEDULES]),
            ScheduleError::NoSuchSchedule(id) => L::new("schedule_not_found", [id]),
            ScheduleError::BadSteps(why) => L::new("schedule_bad_steps", [why]),
            ScheduleError::NoSuchSkill(name) => L::new("schedule_no_such_skill", [name]),
            ScheduleError::SkillParamMissing(name) => L::new("schedule_skill_param_missing", [name]),
            ScheduleError::SkillParamUnknown(name) => L::new("schedule_skill_param_unknown", [name]),
            ScheduleError::RunUnderWay(title) => L::new("schedule_run_under_way", [title]),
            ScheduleError::NotRead(why) => L::new("schedule_list_not_read", [why]),
            ScheduleError::NotSaved(why) => L::new("schedule_list_not_saved", [why]),
        })
    }
}

impl ScheduledWork {
    fn validate(&self) -> Result<(), ScheduleError> {
        let web_page = |url: &str| match crate::web::is_web_url(url) {
            true => Ok(()),
            false => Err(ScheduleError::BadStartUrl(url.to_string())),
        };
        match self {
            ScheduledWork::Task { task, start_url, .. } => {
                if task.trim().is_empty() {
                    return Err(ScheduleError::NoTask);
                }
                start_url.as_deref().map_or(Ok(()), web_page)
            }
            ScheduledWork::Replay { start_url, steps } => {
                web_page(start_url)?;
                match steps.is_empty() {
                    true => Err(ScheduleError::NoSteps),
                    false => Ok(()),
                }
            }
            ScheduledWork::Skill { name, params } => {
                if name.trim().is_empty() {
                    return Err(ScheduleError::NoSkill);
                }
                match params.iter().find(|(_, value)| !value.is_string()) {
                    Some((param, _)) => Err(ScheduleError::SkillParamNotText(param.clone())),
                    None => Ok(()),
                }
            }
        }
    }
}

impl Repeat {
    fn validate(&self) -> Result<(), ScheduleError> {
        match self {
            Repeat::Minutes { n } if !(MIN_EVERY_MINUTES..=MAX_EVERY_MINUTES).contains(n) => {
                Err(ScheduleError::MinutesOutOfRange(*n))
            }
            Repeat::Hourly { minute } if *minute > 59 => Err(ScheduleError::MinuteOutOfRange(*minute)),
            Repeat::Daily { at } | Repeat::Weekdays { at } => {
                minutes_of_day(at).map(|_| ()).ok_or_else(|| ScheduleError::BadTime(at.clone()))
            }
            _ => Ok(()),
        }
    }
}

/// The minutes since midnight of `"HH:MM"` (24-hour; one or two digits of hour, two of
/// minute, spaces around allowed).
fn minutes_of_day(at: &str) -> Option<i64> {
    let (hours, minutes) = at.trim().split_once(':')?;
    let number = |s: &str, digits: std::ops::RangeInclusive<usize>| match s.bytes().all(|b| b.is_ascii_digit()) {
        true if digits.contains(&s.len()) => s.parse::<i64>().ok(),
        _ => None,
    };
    let (hours, minutes) = (number(hours, 1..=2)?, number(minutes, 2..=2)?);
    (hours < 24 && minutes < 60).then_some(hours * 60 + minutes)
}

/// The offset at `utc` in milliseconds.
fn offset_at(offset: &impl LocalOffset, utc: i64) -> i64 {
    let minutes = offset.minutes_east_at(utc as f64).clamp(-LARGEST_OFFSET_MINUTES, LARGEST_OFFSET_MINUTES);
    minutes as i64 * MINUTE
}

/// The day of the week of a day counted from the epoch: Monday 0 … Sunday 6 (1 January 1970
/// was a Thursday).
fn weekday(days_since_epoch: i64) -> i64 {
    (days_since_epoch + 3).rem_euclid(7)
}

/// The instant the local wall clock shows `local` (ms since the epoch as if local time were
/// UTC), as `new Date(y, m, d, h, min)` reads it: a time that a change skips is read with the
/// offset before the change (so it lands as far after the change), a time that happens twice
/// is the first. Assumes no two offset changes within two days.
fn instant_of_local(local: i64, offset: &impl LocalOffset) -> i64 {
    let before = offset_at(offset, local - DAY);
    let after = offset_at(offset, local + DAY);
    [before, after]
        .into_iter()
        .map(|o| local - o)
        .filter(|&utc| local - offset_at(offset, utc) == utc)
        .min()
        .unwrap_or(local - before)
}

/// The first instant after `after`, a whole minute, at which the local clock shows `minute`
/// past the hour: once an hour of real time, both hours of an autumn night included.
fn next_hourly(after: f64, minute: i64, offset: &impl LocalOffset) -> i64 {
    let start = after.floor() as i64;
    let first_with = |o: i64| {
        let local = start + o;
        let mut at = local.div_euclid(HOUR) * HOUR + minute * MINUTE - o;
        while at as f64 <= after {
            at += HOUR;
        }
        at
    };
    let offsets = [offset_at(offset, start), offset_at(offset, start + 2 * HOUR)];
    offsets
        .iter()
        .flat_map(|&o| (0..3).map(move |k| (o, first_with(o) + k * HOUR)))
        .filter(|&(o, at)| offset_at(offset, at) == o)
        .map(|(_, at)| at)
        .min()
        .unwrap_or_else(|| first_with(offsets[0]))
}

/// The first instant after `after` at which the local clock shows `minutes` past midnight, on
/// any day (`weekdays_only`: Monday to Friday).
fn next_at_time_of_day(after: f64, minutes: i64, weekdays_only: bool, offset: &impl LocalOffset) -> Option<i64> {
    let start = after.floor() as i64;
    let today = (start + offset_at(offset, start)).div_euclid(DAY);
    (today - 1..=today + 8)
        .filter(|&day| !weekdays_only || weekday(day) < 5)
        .map(|day| instant_of_local(day * DAY + minutes * MINUTE, offset))
        .find(|&at| at as f64 > after)
}

impl Schedule {
    /// Whether the schedule can run as it is: a title, work it can do, a time that is one.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        validate_parts(&self.title, &self.what, &self.when)
    }

    /// The first time strictly after `after_ms` at which the schedule fires; none while it is
    /// paused (or for an instant no `Date` holds).
    pub fn next_run(&self, after_ms: f64, offset: &impl LocalOffset) -> Option<f64> {
        if self.paused || !after_ms.is_finite() || after_ms.abs() > LARGEST_INSTANT {
            return None;
        }
        let next = match &self.when {
            Repeat::Minutes { n } => {
                if !self.created_ms.is_finite() || self.created_ms.abs() > LARGEST_INSTANT {
                    return None;
                }
                let period = f64::from((*n).max(1)) * MINUTE as f64;
                let periods = ((after_ms - self.created_ms) / period).floor().max(0.0) + 1.0;
                let at = self.created_ms + periods * period;
                // Rounding can leave it a period short, never more.
                return Some(if at <= after_ms { at + period } else { at });
            }
            Repeat::Hourly { minute } => next_hourly(after_ms, i64::from((*minute).min(59)), offset),
            Repeat::Daily { at } => next_at_time_of_day(after_ms, minutes_of_day(at)?, false, offset)?,
            Repeat::Weekdays { at } => next_at_time_of_day(after_ms, minutes_of_day(at)?, true, offset)?,
        };
        Some(next as f64)
    }

    /// The time it runs next as it stands: `next_run_ms`, or, when that was never worked out,
    /// the first time after its last run (or its creation).
    fn pending(&self, offset: &impl LocalOffset) -> Option<f64> {
        if self.paused {
            return None;
        }
        self.next_run_ms.or_else(|| self.next_run(self.last_run_ms.unwrap_or(self.created_ms), offset))
    }

    /// Whether it should run at `now_ms`: unpaused, and a time of it has come (one or many).
    pub fn due(&self, now_ms: f64, offset: &impl LocalOffset) -> bool {
        self.pending(offset).is_some_and(|at| at <= now_ms)
    }

    /// Whether to run it now, moving its next run to the first time after `now_ms` either way.
    /// Any number of missed times give one run: true once, then false until the next time
    /// comes. A run to start begins at `now_ms` (`last_run_ms`). When it is not due, the next
    /// time is worked out again, which follows a change of time zone or of the computer's
    /// clock. A paused schedule gives false and has no next run.
    pub fn catch_up(&mut self, now_ms: f64, offset: &impl LocalOffset) -> bool {
        let due = self.due(now_ms, offset);
        self.next_run_ms = self.next_run(now_ms, offset);
        if due {
            self.last_run_ms = Some(now_ms);
        }
        due
    }

    /// Whether the person is told of `result` by a notification: a failure always, a success
    /// only when they asked for it. (A run waiting for the person's yes is always told: that
    /// is not a result, and the worker tells it when the run starts waiting.)
    pub fn notifies(&self, result: &RunResult) -> bool {
        !result.ok || self.notify_success
    }
}

fn validate_parts(title: &str, what: &ScheduledWork, when: &Repeat) -> Result<(), ScheduleError> {
    if title.trim().is_empty() {
        return Err(ScheduleError::NoTitle);
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(ScheduleError::TitleTooLong);
    }
    when.validate()?;
    what.validate()
}

impl ScheduleDraft {
    /// Whether a schedule made of it could run (see [`Schedule::validate`]).
    pub fn validate(&self) -> Result<(), ScheduleError> {
        validate_parts(&self.title, &self.what, &self.when)
    }
}

/// The name of schedule `id`'s alarm.
pub fn alarm_name(id: &str) -> String {
    format!("{ALARM_PREFIX}{id}")
}

/// The schedule an alarm is for, if it is a schedule's alarm.
pub fn schedule_of_alarm(name: &str) -> Option<&str> {
    name.strip_prefix(ALARM_PREFIX).filter(|id| !id.is_empty())
}

/// The schedules a stored list holds, and why each entry that is left out was: one that does
/// not read as a schedule, fails [`Schedule::validate`], has no id or the id of an earlier
/// one, or comes after the first [`MAX_SCHEDULES`]. Never fails as a whole.
pub fn read_stored(stored: &[Value]) -> (Vec<Schedule>, Vec<String>) {
    let (kept, left_out, _) = sort_stored(stored);
    (kept, left_out)
}

/// What [`read_stored`] gives, and the entries left out as they were stored.
fn sort_stored(stored: &[Value]) -> (Vec<Schedule>, Vec<String>, Vec<Value>) {
    let mut kept: Vec<Schedule> = Vec::new();
    let mut left_out = Vec::new();
    let mut aside = Vec::new();
    for (index, raw) in stored.iter().enumerate() {
        let named = raw.get("title").and_then(Value::as_str).map(|t| format!(" (\"{t}\")")).unwrap_or_default();
        let why = match crate::json::read_value::<Schedule>(raw) {
            Err(e) => Some(unreadable_part(raw).unwrap_or_else(|| e.to_string())),
            Ok(schedule) if schedule.id.trim().is_empty() => Some("it has no id".into()),
            Ok(schedule) if kept.iter().any(|k| k.id == schedule.id) => {
                Some(format!("another schedule has its id \"{}\"", schedule.id))
            }
            Ok(_) if kept.len() >= MAX_SCHEDULES => Some(format!("only {MAX_SCHEDULES} schedules are kept")),
            Ok(schedule) => match schedule.validate() {
                Err(e) => Some(e.to_string()),
                Ok(()) => {
                    kept.push(schedule);
                    None
                }
            },
        };
        if let Some(why) = why {
            left_out.push(format!("schedule {}{named} was left out: {why}", index + 1));
            aside.push(raw.clone());
        }
    }
    (kept, left_out, aside)
}

/// Why the `what` or the `when` of a stored entry does not read, said at its key. The path of
/// an error inside an internally tagged enum is the one of the text `crate::tagged` reads, not
/// of the entry, so the entry's own error would name the wrong place.
fn unreadable_part(raw: &Value) -> Option<String> {
    let what = raw.get("what").and_then(|part| crate::json::read_value::<ScheduledWork>(part).err());
    let when = raw.get("when").and_then(|part| crate::json::read_value::<Repeat>(part).err());
    match (what, when) {
        (Some(e), _) => Some(format!("at what: {}", e.message)),
        (None, Some(e)) => Some(format!("at when: {}", e.message)),
        (None, None) => None,
    }
}

/// The list of schedules, as kept in `chrome.storage.local` under [`STORAGE_KEY`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScheduleBook {
    schedules: Vec<Schedule>,
    /// The stored entries this version could not take, as they were stored: written back
    /// after the others, never run.
    kept_aside: Vec<Value>,
}

impl ScheduleBook {
    /// The book a stored list makes, and why entries were left out ([`read_stored`]). Those
    /// entries do not run, and are written back as they were ([`ScheduleBook::to_stored`]).
    pub fn from_stored(stored: &[Value]) -> (ScheduleBook, Vec<String>) {
        let (schedules, left_out, kept_aside) = sort_stored(stored);
        (ScheduleBook { schedules, kept_aside }, left_out)
    }

    /// The list to store: the schedules, then the entries left out when it was read.
    pub fn to_stored(&self) -> Vec<Value> {
        self.schedules
            .iter()
            .filter_map(|s| serde_json::to_value(s).ok())
            .chain(self.kept_aside.iter().cloned())
            .collect()
    }

    pub fn schedules(&self) -> &[Schedule] {
        &self.schedules
    }

    pub fn get(&self, id: &str) -> Option<&Schedule> {
        self.schedules.iter().find(|s| s.id == id)
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut Schedule, ScheduleError> {
        self.schedules.iter_mut().find(|s| s.id == id).ok_or_else(|| ScheduleError::NoSuchSchedule(id.to_string()))
    }

    /// A new schedule made of `draft` at `now_ms`, with an id of its own and its first run
    /// worked out (none when paused).
    pub fn add(
        &mut self,
        draft: ScheduleDraft,
        now_ms: f64,
        offset: &impl LocalOffset,
    ) -> Result<&Schedule, ScheduleError> {
        draft.validate()?;
        if self.schedules.len() >= MAX_SCHEDULES {
            return Err(ScheduleError::TooMany);
        }
        let stem = format!("{:x}", now_ms.max(0.0) as u64);
        let id = (1..)
            .map(|n| if n == 1 { stem.clone() } else { format!("{stem}-{n}") })
            .find(|id| self.get(id).is_none())
            .unwrap_or(stem);
        let mut schedule = Schedule {
            id,
            title: draft.title.trim().to_string(),
            what: draft.what,
            when: draft.when,
            paused: draft.paused,
            notify_success: draft.notify_success,
            created_ms: now_ms,
            last_run_ms: None,
            last_result: None,
            next_run_ms: None,
            run_task_id: None,
        };
        schedule.next_run_ms = schedule.next_run(now_ms, offset);
        self.schedules.push(schedule);
        Ok(self.schedules.last().expect("just added"))
    }

    /// Schedule `id` changed to `draft`: its id, creation, last run and result are kept, and
    /// its next run is the first time after `now_ms` of its new times.
    pub fn update(
        &mut self,
        id: &str,
        draft: ScheduleDraft,
        now_ms: f64,
        offset: &impl LocalOffset,
    ) -> Result<&Schedule, ScheduleError> {
        draft.validate()?;
        let schedule = self.get_mut(id)?;
        schedule.title = draft.title.trim().to_string();
        schedule.what = draft.what;
        schedule.when = draft.when;
        schedule.paused = draft.paused;
        schedule.notify_success = draft.notify_success;
        schedule.next_run_ms = schedule.next_run(now_ms, offset);
        Ok(schedule)
    }

    /// Schedule `id` taken out of the list (the worker clears its alarm).
    pub fn remove(&mut self, id: &str) -> Result<Schedule, ScheduleError> {
        let at =
            self.schedules.iter().position(|s| s.id == id).ok_or_else(|| ScheduleError::NoSuchSchedule(id.into()))?;
        Ok(self.schedules.remove(at))
    }

    /// Pauses or resumes schedule `id`. Paused, it has no next run; resumed, its next run is
    /// the first time after `now_ms`: the times it missed while paused do not run.
    pub fn set_paused(
        &mut self,
        id: &str,
        paused: bool,
        now_ms: f64,
        offset: &impl LocalOffset,
    ) -> Result<&Schedule, ScheduleError> {
        let schedule = self.get_mut(id)?;
        schedule.paused = paused;
        schedule.next_run_ms = schedule.next_run(now_ms, offset);
        Ok(schedule)
    }

    /// A run of schedule `id` began at `now_ms` as task `task_id`: the schedule is not started
    /// again until its result is recorded.
    pub fn run_started(&mut self, id: &str, task_id: &str, now_ms: f64) -> Result<&Schedule, ScheduleError> {
        let schedule = self.get_mut(id)?;
        schedule.run_task_id = Some(task_id.to_string());
        schedule.last_run_ms = Some(now_ms);
        Ok(schedule)
    }

    /// The schedule whose run under way is task `task_id`.
    pub fn running_as(&self, task_id: &str) -> Option<&Schedule> {
        self.schedules.iter().find(|s| s.run_task_id.as_deref() == Some(task_id))
    }

    /// A run of schedule `id` ended with `result`: kept as its last result, its run no longer
    /// under way, and its next run is the first time after the run ended (a time that passed
    /// during the run is not run again).
    pub fn record_result(
        &mut self,
        id: &str,
        result: RunResult,
        offset: &impl LocalOffset,
    ) -> Result<&Schedule, ScheduleError> {
        let schedule = self.get_mut(id)?;
        if schedule.last_run_ms.is_none() {
            schedule.last_run_ms = Some(result.at_ms);
        }
        schedule.next_run_ms = schedule.next_run(result.at_ms, offset);
        schedule.run_task_id = None;
        schedule.last_result = Some(result);
        Ok(schedule)
    }

    /// Whether schedule `id` is to run now, its next run moved past `now_ms` either way
    /// ([`Schedule::catch_up`]): what its alarm ringing means.
    pub fn catch_up(&mut self, id: &str, now_ms: f64, offset: &impl LocalOffset) -> Result<bool, ScheduleError> {
        Ok(self.get_mut(id)?.catch_up(now_ms, offset))
    }

    /// The ids of the schedules to run now, each once however many of its times were missed;
    /// every schedule's next run is moved past `now_ms` ([`Schedule::catch_up`]). Asked again
    /// at once, it gives none.
    pub fn due_now(&mut self, now_ms: f64, offset: &impl LocalOffset) -> Vec<String> {
        self.schedules.iter_mut().filter_map(|s| s.catch_up(now_ms, offset).then(|| s.id.clone())).collect()
    }

    /// The earliest next run among the unpaused schedules, never before `now_ms` (a time that
    /// has passed is due now). For one alarm for the whole list; the worker uses one alarm
    /// per schedule instead ([`ScheduleBook::alarms`], and the module's doc).
    pub fn next_wake(&self, now_ms: f64) -> Option<f64> {
        self.schedules
            .iter()
            .filter(|s| !s.paused)
            .filter_map(|s| s.next_run_ms)
            .min_by(f64::total_cmp)
            .map(|at| at.max(now_ms))
    }

    /// The alarms there should be: for each unpaused schedule with a next run, its alarm's
    /// name and when it rings. Other `tabwright-schedule:` alarms are to be cleared.
    pub fn alarms(&self) -> Vec<(String, f64)> {
        self.schedules
            .iter()
            .filter(|s| !s.paused)
            .filter_map(|s| s.next_run_ms.map(|at| (alarm_name(&s.id), at)))
            .collect()
    }
}

/// One of each error, for the test that checks every message a person may read.
#[cfg(test)]
pub(crate) fn sample_errors() -> Vec<ScheduleError> {
    vec![
        ScheduleError::NoTitle,
        ScheduleError::TitleTooLong,
        ScheduleError::BadTime("7.30".into()),
        ScheduleError::MinutesOutOfRange(1),
        ScheduleError::MinuteOutOfRange(60),
        ScheduleError::NoTask,
        ScheduleError::BadStartUrl("file:///etc/passwd".into()),
        ScheduleError::NoSteps,
        ScheduleError::NoSkill,
        ScheduleError::SkillParamNotText("city".into()),
        ScheduleError::TooMany,
        ScheduleError::NoSuchSchedule("18f".into()),
        ScheduleError::BadSteps("at [0].actions: missing field `name`".into()),
        ScheduleError::NoSuchSkill("Weather".into()),
        ScheduleError::SkillParamMissing("city".into()),
        ScheduleError::SkillParamUnknown("town".into()),
        ScheduleError::RunUnderWay("Mail".into()),
        ScheduleError::NotRead("QUOTA_BYTES exceeded".into()),
        ScheduleError::NotSaved("QUOTA_BYTES exceeded".into()),
    ]
}

#[cfg(test)]
mod tests;
