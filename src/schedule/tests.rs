//! When schedules fire, on fixed offsets and across daylight-saving changes; missed times; the
//! list as stored.

use super::*;
use serde_json::json;

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The instant of a UTC date and time.
fn utc(year: i64, month: i64, day: i64, hour: i64, minute: i64) -> f64 {
    (days_from_civil(year, month, day) * DAY + hour * HOUR + minute * MINUTE) as f64
}

const UTC: fn(f64) -> i32 = |_| 0;

/// Berlin in 2024: UTC+1, UTC+2 from 31 March 01:00 UTC to 27 October 01:00 UTC.
fn berlin(ms: f64) -> i32 {
    if ms >= utc(2024, 3, 31, 1, 0) && ms < utc(2024, 10, 27, 1, 0) {
        120
    } else {
        60
    }
}

/// New York in 2024: UTC−5, UTC−4 from 10 March 07:00 UTC to 3 November 06:00 UTC.
fn new_york(ms: f64) -> i32 {
    if ms >= utc(2024, 3, 10, 7, 0) && ms < utc(2024, 11, 3, 6, 0) {
        -240
    } else {
        -300
    }
}

fn task(text: &str) -> ScheduledWork {
    ScheduledWork::Task { task: text.into(), start_url: None, output_schema: None }
}

fn schedule(when: Repeat, created_ms: f64) -> Schedule {
    Schedule {
        id: "a".into(),
        title: "Check the news".into(),
        what: task("Summarise the front page of example.com"),
        when,
        paused: false,
        notify_success: false,
        created_ms,
        last_run_ms: None,
        last_result: None,
        next_run_ms: None,
        run_task_id: None,
    }
}

fn daily(at: &str) -> Repeat {
    Repeat::Daily { at: at.into() }
}

fn weekdays(at: &str) -> Repeat {
    Repeat::Weekdays { at: at.into() }
}

fn draft(title: &str, when: Repeat) -> ScheduleDraft {
    ScheduleDraft { title: title.into(), what: task("Look for new mail"), when, paused: false, notify_success: false }
}

fn result(at_ms: f64, ok: bool) -> RunResult {
    RunResult {
        at_ms,
        ok,
        summary: if ok { "3 new mails".into() } else { "The page did not load".into() },
        summary_locale_text: None,
        task_id: "t1".into(),
    }
}

/// A date as a person reads it, for messages of failed tests.
fn shown(ms: Option<f64>) -> String {
    match ms {
        None => "none".into(),
        Some(ms) => {
            let ms = ms as i64;
            let days = ms.div_euclid(DAY);
            let of_day = ms.rem_euclid(DAY);
            format!("day {days} (weekday {}) {:02}:{:02} UTC", weekday(days), of_day / HOUR, of_day % HOUR / MINUTE)
        }
    }
}

macro_rules! assert_at {
    ($got:expr, $want:expr) => {{
        let (got, want): (Option<f64>, f64) = ($got, $want);
        assert_eq!(got, Some(want), "got {}, want {}", shown(got), shown(Some(want)));
    }};
}

#[test]
fn the_calendar_knows_the_days_of_the_week() {
    assert_eq!(weekday(0), 3, "1 January 1970 was a Thursday");
    assert_eq!(weekday(days_from_civil(2024, 1, 1)), 0, "a Monday");
    assert_eq!(weekday(days_from_civil(2024, 6, 7)), 4, "a Friday");
    assert_eq!(weekday(days_from_civil(2024, 6, 9)), 6, "a Sunday");
    assert_eq!(weekday(days_from_civil(1969, 12, 31)), 2, "a Wednesday, before the epoch");
    assert_eq!(days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28), 2, "2000 was a leap year");
}

#[test]
fn a_time_of_day_is_hh_mm_on_a_24_hour_clock() {
    assert_eq!(minutes_of_day("07:30"), Some(450));
    assert_eq!(minutes_of_day("7:30"), Some(450));
    assert_eq!(minutes_of_day(" 18:00 "), Some(1080));
    assert_eq!(minutes_of_day("00:00"), Some(0));
    assert_eq!(minutes_of_day("23:59"), Some(1439));
    for bad in
        ["24:00", "07:60", "0730", "07:3", "7", "", ":30", "-1:00", "+7:30", "07:30:00", "7h30", "١٢:٠٠", "007:30"]
    {
        assert_eq!(minutes_of_day(bad), None, "{bad:?}");
    }
}

#[test]
fn every_n_minutes_counts_from_the_creation_strictly_after() {
    let t0 = utc(2024, 6, 10, 9, 2) + 123.0;
    let s = schedule(Repeat::Minutes { n: 15 }, t0);
    assert_eq!(s.next_run(t0, &UTC), Some(t0 + 15.0 * MINUTE as f64));
    assert_eq!(s.next_run(t0 + 15.0 * MINUTE as f64, &UTC), Some(t0 + 30.0 * MINUTE as f64), "strictly after");
    assert_eq!(s.next_run(t0 + 16.0 * MINUTE as f64, &UTC), Some(t0 + 30.0 * MINUTE as f64));
    assert_eq!(s.next_run(t0 - 3.0 * HOUR as f64, &UTC), Some(t0 + 15.0 * MINUTE as f64), "never before creation");
    // Real time: a daylight-saving change moves nothing.
    let s = schedule(Repeat::Minutes { n: 60 }, utc(2024, 3, 31, 0, 30));
    assert_eq!(s.next_run(utc(2024, 3, 31, 0, 45), &berlin), Some(utc(2024, 3, 31, 1, 30)));
}

#[test]
fn hourly_runs_at_the_minute_past_each_hour() {
    let s = schedule(Repeat::Hourly { minute: 15 }, 0.0);
    assert_at!(s.next_run(utc(2024, 6, 10, 10, 20), &UTC), utc(2024, 6, 10, 11, 15));
    assert_at!(s.next_run(utc(2024, 6, 10, 10, 10), &UTC), utc(2024, 6, 10, 10, 15));
    assert_at!(s.next_run(utc(2024, 6, 10, 10, 15), &UTC), utc(2024, 6, 10, 11, 15));
    assert_at!(s.next_run(utc(2024, 6, 10, 23, 50), &UTC), utc(2024, 6, 11, 0, 15));
    // India, UTC+05:30: on the hour of the local clock is half past in UTC.
    let s = schedule(Repeat::Hourly { minute: 0 }, 0.0);
    let india = |_: f64| 330;
    assert_at!(s.next_run(utc(2024, 6, 10, 10, 20), &india), utc(2024, 6, 10, 10, 30));
}

#[test]
fn hourly_runs_every_real_hour_across_daylight_saving_changes() {
    let s = schedule(Repeat::Hourly { minute: 30 }, 0.0);
    // Autumn: 02:30 comes twice (CEST, then CET); both are hours.
    let first = s.next_run(utc(2024, 10, 27, 0, 0), &berlin);
    assert_at!(first, utc(2024, 10, 27, 0, 30));
    let second = s.next_run(first.unwrap(), &berlin);
    assert_at!(second, utc(2024, 10, 27, 1, 30));
    assert_at!(s.next_run(second.unwrap(), &berlin), utc(2024, 10, 27, 2, 30));
    // Spring: 01:30 CET, then 03:30 CEST (02:30 never shows), an hour later.
    assert_at!(s.next_run(utc(2024, 3, 31, 0, 30), &berlin), utc(2024, 3, 31, 1, 30));
}

#[test]
fn hourly_finds_the_minute_after_a_half_hour_change() {
    // Lord Howe Island: UTC+10:30, UTC+11 from 6 October 2024 02:00 local (15:30 UTC the day
    // before). 02:45 local under the new offset is 15:45 UTC; under the old one it would be
    // 16:15 UTC, which the clock shows as 03:15.
    let lord_howe = |ms: f64| if ms >= utc(2024, 10, 5, 15, 30) { 660 } else { 630 };
    let s = schedule(Repeat::Hourly { minute: 45 }, 0.0);
    assert_at!(s.next_run(utc(2024, 10, 5, 15, 20), &lord_howe), utc(2024, 10, 5, 15, 45));
    assert_at!(s.next_run(utc(2024, 10, 5, 14, 0), &lord_howe), utc(2024, 10, 5, 14, 15));
}

#[test]
fn daily_runs_today_if_the_time_is_ahead_else_tomorrow() {
    let s = schedule(daily("07:30"), 0.0);
    assert_at!(s.next_run(utc(2024, 6, 10, 6, 0), &UTC), utc(2024, 6, 10, 7, 30));
    assert_at!(s.next_run(utc(2024, 6, 10, 7, 30), &UTC), utc(2024, 6, 11, 7, 30));
    assert_at!(s.next_run(utc(2024, 6, 10, 23, 59), &UTC), utc(2024, 6, 11, 7, 30));
    // The last day of a month, and of a year.
    assert_at!(s.next_run(utc(2024, 2, 29, 8, 0), &UTC), utc(2024, 3, 1, 7, 30));
    assert_at!(s.next_run(utc(2024, 12, 31, 8, 0), &UTC), utc(2025, 1, 1, 7, 30));
}

#[test]
fn daily_follows_the_local_day_where_it_crosses_utc_midnight() {
    // Tokyo, UTC+9: 08:00 local is 23:00 UTC of the day before.
    let tokyo = |_: f64| 540;
    let s = schedule(daily("08:00"), 0.0);
    assert_at!(s.next_run(utc(2024, 6, 10, 22, 0), &tokyo), utc(2024, 6, 10, 23, 0));
    assert_at!(s.next_run(utc(2024, 6, 10, 23, 0), &tokyo), utc(2024, 6, 11, 23, 0));
    // Los Angeles in summer, UTC−7: 21:00 local is 04:00 UTC of the next day.
    let los_angeles = |_: f64| -420;
    let s = schedule(daily("21:00"), 0.0);
    assert_at!(s.next_run(utc(2024, 6, 11, 5, 0), &los_angeles), utc(2024, 6, 12, 4, 0));
    assert_at!(s.next_run(utc(2024, 6, 11, 3, 0), &los_angeles), utc(2024, 6, 11, 4, 0));
    // Midnight itself.
    let s = schedule(daily("00:00"), 0.0);
    assert_at!(s.next_run(utc(2024, 6, 10, 12, 0), &UTC), utc(2024, 6, 11, 0, 0));
}

#[test]
fn weekdays_skip_saturday_and_sunday() {
    let s = schedule(weekdays("09:00"), 0.0);
    // Friday 18:00 → Monday.
    assert_at!(s.next_run(utc(2024, 6, 7, 18, 0), &UTC), utc(2024, 6, 10, 9, 0));
    assert_at!(s.next_run(utc(2024, 6, 8, 10, 0), &UTC), utc(2024, 6, 10, 9, 0));
    assert_at!(s.next_run(utc(2024, 6, 9, 23, 59), &UTC), utc(2024, 6, 10, 9, 0));
    assert_at!(s.next_run(utc(2024, 6, 7, 8, 0), &UTC), utc(2024, 6, 7, 9, 0));
    assert_at!(s.next_run(utc(2024, 6, 12, 8, 0), &UTC), utc(2024, 6, 12, 9, 0));
    assert_at!(s.next_run(utc(2024, 6, 12, 9, 0), &UTC), utc(2024, 6, 13, 9, 0));
}

#[test]
fn weekdays_are_the_local_calendars() {
    // Tokyo: Monday 08:00 local is Sunday 23:00 UTC, and Friday 09:00 local is past Friday's run.
    let tokyo = |_: f64| 540;
    let s = schedule(weekdays("08:00"), 0.0);
    assert_at!(s.next_run(utc(2024, 6, 7, 0, 0), &tokyo), utc(2024, 6, 9, 23, 0));
    // New York: Friday 23:00 local is Saturday 04:00 UTC; the next run is Monday, not Saturday.
    let s = schedule(weekdays("23:30"), 0.0);
    assert_at!(s.next_run(utc(2024, 6, 8, 3, 45), &new_york), utc(2024, 6, 11, 3, 30));
}

#[test]
fn daily_times_stay_on_the_wall_clock_across_daylight_saving_changes() {
    let s = schedule(daily("07:00"), 0.0);
    // Saturday 07:00 CET is 06:00 UTC; Sunday 07:00 CEST is 05:00 UTC.
    assert_at!(s.next_run(utc(2024, 3, 30, 6, 0), &berlin), utc(2024, 3, 31, 5, 0));
    assert_at!(s.next_run(utc(2024, 3, 31, 5, 0), &berlin), utc(2024, 4, 1, 5, 0));
    // Autumn, back to 06:00 UTC.
    assert_at!(s.next_run(utc(2024, 10, 26, 5, 0), &berlin), utc(2024, 10, 27, 6, 0));
    // 02:30 is skipped in spring: it runs at 03:30 CEST, as `new Date(2024, 2, 31, 2, 30)`.
    let s = schedule(daily("02:30"), 0.0);
    assert_at!(s.next_run(utc(2024, 3, 30, 12, 0), &berlin), utc(2024, 3, 31, 1, 30));
    assert_at!(s.next_run(utc(2024, 3, 31, 1, 30), &berlin), utc(2024, 4, 1, 0, 30));
    // 02:30 comes twice in autumn: it runs the first time only.
    let first = s.next_run(utc(2024, 10, 26, 12, 0), &berlin);
    assert_at!(first, utc(2024, 10, 27, 0, 30));
    assert_at!(s.next_run(first.unwrap(), &berlin), utc(2024, 10, 28, 1, 30));
    // Weekdays over New York's spring change: Friday 09:00 EST, Monday 09:00 EDT.
    let s = schedule(weekdays("09:00"), 0.0);
    assert_at!(s.next_run(utc(2024, 3, 8, 14, 0), &new_york), utc(2024, 3, 11, 13, 0));
}

#[test]
fn a_browser_closed_for_three_days_runs_once_then_at_the_next_time() {
    let mut s = schedule(daily("07:00"), utc(2024, 6, 9, 12, 0));
    s.next_run_ms = s.next_run(s.created_ms, &UTC);
    assert_at!(s.next_run_ms, utc(2024, 6, 10, 7, 0));
    // Closed from Sunday evening to Thursday 10:00: Monday, Tuesday, Wednesday and Thursday missed.
    let now = utc(2024, 6, 13, 10, 0);
    assert!(s.due(now, &UTC));
    assert!(s.catch_up(now, &UTC), "runs once");
    assert_eq!(s.last_run_ms, Some(now));
    assert_at!(s.next_run_ms, utc(2024, 6, 14, 7, 0));
    assert!(!s.due(now + 1.0, &UTC));
    assert!(!s.catch_up(now + MINUTE as f64, &UTC), "and not once per missed day");
    assert_at!(s.next_run_ms, utc(2024, 6, 14, 7, 0));
    // Every five minutes: 864 missed times, one run, then the next on the same grid.
    let t0 = utc(2024, 6, 10, 9, 0);
    let mut s = schedule(Repeat::Minutes { n: 5 }, t0);
    s.next_run_ms = s.next_run(t0, &UTC);
    let now = t0 + 3.0 * DAY as f64 + 2.0 * MINUTE as f64;
    assert!(s.catch_up(now, &UTC));
    assert_eq!(s.next_run_ms, Some(t0 + 3.0 * DAY as f64 + 5.0 * MINUTE as f64));
    assert!(!s.catch_up(now, &UTC));
}

#[test]
fn a_time_not_yet_come_is_not_run() {
    let mut s = schedule(daily("07:00"), utc(2024, 6, 9, 12, 0));
    s.next_run_ms = Some(utc(2024, 6, 10, 7, 0));
    assert!(!s.due(utc(2024, 6, 10, 6, 59), &UTC));
    assert!(!s.catch_up(utc(2024, 6, 10, 6, 59), &UTC));
    assert_eq!(s.last_run_ms, None);
    assert!(s.due(utc(2024, 6, 10, 7, 0), &UTC), "due at the time itself");
}

#[test]
fn a_schedule_without_a_next_run_counts_from_its_last_run_or_creation() {
    let mut s = schedule(daily("07:00"), utc(2024, 6, 9, 12, 0));
    assert!(!s.due(utc(2024, 6, 10, 6, 0), &UTC));
    assert!(s.due(utc(2024, 6, 10, 8, 0), &UTC), "Monday's 07:00 came after the creation");
    s.last_run_ms = Some(utc(2024, 6, 10, 7, 0));
    assert!(!s.due(utc(2024, 6, 10, 8, 0), &UTC), "and it ran");
    assert!(s.catch_up(utc(2024, 6, 11, 8, 0), &UTC));
    assert_at!(s.next_run_ms, utc(2024, 6, 12, 7, 0));
}

#[test]
fn a_change_of_time_zone_moves_a_next_run_not_yet_come() {
    let mut s = schedule(daily("07:00"), utc(2024, 6, 9, 12, 0));
    s.next_run_ms = s.next_run(s.created_ms, &UTC);
    assert_at!(s.next_run_ms, utc(2024, 6, 10, 7, 0));
    // The computer is now in Berlin: 07:00 there is 05:00 UTC.
    assert!(!s.catch_up(utc(2024, 6, 10, 4, 0), &berlin));
    assert_at!(s.next_run_ms, utc(2024, 6, 10, 5, 0));
}

#[test]
fn a_paused_schedule_has_no_next_run_and_never_runs() {
    let mut s = schedule(daily("07:00"), utc(2024, 6, 9, 12, 0));
    s.paused = true;
    s.next_run_ms = Some(utc(2024, 6, 10, 7, 0));
    assert_eq!(s.next_run(utc(2024, 6, 10, 0, 0), &UTC), None);
    assert!(!s.due(utc(2024, 6, 12, 0, 0), &UTC));
    assert!(!s.catch_up(utc(2024, 6, 12, 0, 0), &UTC));
    assert_eq!(s.next_run_ms, None);
    assert_eq!(s.last_run_ms, None);
}

#[test]
fn an_instant_no_date_holds_has_no_next_run() {
    let s = schedule(daily("07:00"), 0.0);
    assert_eq!(s.next_run(f64::NAN, &UTC), None);
    assert_eq!(s.next_run(f64::INFINITY, &UTC), None);
    assert_eq!(s.next_run(1e300, &UTC), None);
    let lost = schedule(Repeat::Minutes { n: 5 }, -1e300);
    assert_eq!(lost.next_run(utc(2024, 6, 10, 0, 0), &UTC), None, "made at no instant a Date holds");
    // A nonsense offset is held to ±18 hours, not trusted.
    let wild = |_: f64| i32::MAX;
    let next = s.next_run(utc(2024, 6, 10, 0, 0), &wild).unwrap();
    assert!(next > utc(2024, 6, 10, 0, 0) && next < utc(2024, 6, 12, 0, 0), "{}", shown(Some(next)));
}

#[test]
fn each_invalid_input_says_what_to_fix() {
    let check = |title: &str, what: ScheduledWork, when: Repeat| {
        let s = Schedule { title: title.into(), what, when, ..schedule(daily("07:00"), 0.0) };
        s.validate()
    };
    let ok = || task("Look for new mail");
    assert_eq!(check("Mail", ok(), daily("07:00")), Ok(()));
    assert_eq!(check("  ", ok(), daily("07:00")), Err(ScheduleError::NoTitle));
    assert_eq!(check(&"x".repeat(MAX_TITLE_CHARS + 1), ok(), daily("07:00")), Err(ScheduleError::TitleTooLong));
    assert_eq!(check(&"é".repeat(MAX_TITLE_CHARS), ok(), daily("07:00")), Ok(()), "characters, not bytes");
    assert_eq!(check("Mail", ok(), daily("7.30")), Err(ScheduleError::BadTime("7.30".into())));
    assert_eq!(check("Mail", ok(), weekdays("25:00")), Err(ScheduleError::BadTime("25:00".into())));
    assert_eq!(check("Mail", ok(), Repeat::Minutes { n: 1 }), Err(ScheduleError::MinutesOutOfRange(1)));
    assert_eq!(check("Mail", ok(), Repeat::Minutes { n: 0 }), Err(ScheduleError::MinutesOutOfRange(0)));
    assert_eq!(check("Mail", ok(), Repeat::Minutes { n: 1441 }), Err(ScheduleError::MinutesOutOfRange(1441)));
    assert_eq!(check("Mail", ok(), Repeat::Minutes { n: MIN_EVERY_MINUTES }), Ok(()));
    assert_eq!(check("Mail", ok(), Repeat::Minutes { n: MAX_EVERY_MINUTES }), Ok(()));
    assert_eq!(check("Mail", ok(), Repeat::Hourly { minute: 60 }), Err(ScheduleError::MinuteOutOfRange(60)));
    assert_eq!(check("Mail", ok(), Repeat::Hourly { minute: 59 }), Ok(()));
    assert_eq!(check("Mail", task(" \n"), daily("07:00")), Err(ScheduleError::NoTask));
    let at =
        |url: &str| ScheduledWork::Task { task: "Read it".into(), start_url: Some(url.into()), output_schema: None };
    assert_eq!(check("Mail", at("https://mail.example.com/inbox"), daily("07:00")), Ok(()));
    for bad in ["file:///etc/passwd", "javascript:alert(1)", "mail.example.com", "chrome://settings", ""] {
        assert_eq!(check("Mail", at(bad), daily("07:00")), Err(ScheduleError::BadStartUrl(bad.into())), "{bad}");
    }
    let replay = |url: &str, steps: Vec<Value>| ScheduledWork::Replay { start_url: url.into(), steps };
    let step = json!({"goal": "Open the inbox", "actions": [{"name": "click", "params": {"index": 3}}]});
    assert_eq!(check("Mail", replay("https://example.com", vec![step.clone()]), daily("07:00")), Ok(()));
    assert_eq!(check("Mail", replay("https://example.com", vec![]), daily("07:00")), Err(ScheduleError::NoSteps));
    assert_eq!(
        check("Mail", replay("about:blank", vec![step]), daily("07:00")),
        Err(ScheduleError::BadStartUrl("about:blank".into()))
    );
    let skill = |name: &str, params: Value| ScheduledWork::Skill {
        name: name.into(),
        params: params.as_object().cloned().unwrap_or_default(),
    };
    assert_eq!(check("Weather", skill("Weather", json!({"city": "Lisbon"})), daily("07:00")), Ok(()));
    assert_eq!(check("Weather", skill(" ", json!({})), daily("07:00")), Err(ScheduleError::NoSkill));
    assert_eq!(
        check("Weather", skill("Weather", json!({"city": 3})), daily("07:00")),
        Err(ScheduleError::SkillParamNotText("city".into()))
    );
}

#[test]
fn every_error_says_what_to_do_and_names_its_message() {
    use crate::message::Localize;
    let errors = sample_errors();
    let mut keys: Vec<String> = errors.iter().map(|e| e.locale_text().unwrap().key).collect();
    assert!(keys.iter().all(|k| k.starts_with("schedule_")), "{keys:?}");
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), errors.len(), "one message each");
    for e in &errors {
        let text = e.to_string();
        assert!(text.ends_with('.') && text.chars().next().is_some_and(|c| c.is_uppercase() || c == '"'), "{text}");
    }
    assert_eq!(
        ScheduleError::MinutesOutOfRange(1).to_string(),
        "A schedule can run every 5 to 1440 minutes, not every 1. Choose a number in that range, or a daily schedule."
    );
}

#[test]
fn a_schedule_is_stored_as_the_options_page_reads_it() {
    let mut s = schedule(weekdays("09:00"), 1_718_000_000_000.0);
    s.next_run_ms = Some(1_718_010_000_000.0);
    let value = serde_json::to_value(&s).unwrap();
    assert_eq!(
        value,
        json!({
            "id": "a",
            "title": "Check the news",
            "what": {"kind": "task", "task": "Summarise the front page of example.com"},
            "when": {"every": "weekdays", "at": "09:00"},
            "paused": false,
            "notify_success": false,
            "created_ms": 1_718_000_000_000.0,
            "next_run_ms": 1_718_010_000_000.0,
        })
    );
    assert_eq!(crate::json::read_value::<Schedule>(&value).unwrap(), s);
    let every = |value: Value| crate::json::read_value::<Repeat>(&value);
    assert_eq!(every(json!({"every": "minutes", "n": 15})).unwrap(), Repeat::Minutes { n: 15 });
    assert_eq!(every(json!({"every": "hourly", "minute": 5})).unwrap(), Repeat::Hourly { minute: 5 });
    assert!(every(json!({"every": "daily", "at": "07:00", "zone": "Europe/Berlin"})).is_err(), "unknown field");
    assert!(every(json!({"every": "monthly", "day": 1})).is_err());
    assert!(every(json!({"every": "minutes", "n": -5})).is_err());
    let work = |value: Value| crate::json::read_value::<ScheduledWork>(&value);
    assert_eq!(
        work(json!({"kind": "skill", "name": "Weather"})).unwrap(),
        ScheduledWork::Skill { name: "Weather".into(), params: Map::new() }
    );
    assert!(work(json!({"kind": "replay", "start_url": "https://example.com"})).is_err(), "steps are needed");
}

#[test]
fn a_stored_list_with_broken_entries_keeps_the_others() {
    let good = |id: &str, title: &str| {
        json!({
            "id": id, "title": title, "created_ms": 1.0,
            "what": {"kind": "task", "task": "Look for new mail"},
            "when": {"every": "daily", "at": "07:00"},
        })
    };
    let mut unknown_kind = good("b", "Broken");
    unknown_kind["what"] = json!({"kind": "dance"});
    let mut bad_task = good("e", "Bad task");
    bad_task["what"]["task"] = json!(5);
    let mut bad_time = good("f", "Bad time");
    bad_time["created_ms"] = json!("yesterday");
    let mut too_often = good("c", "Too often");
    too_often["when"] = json!({"every": "minutes", "n": 1});
    let mut no_id = good("", "No id");
    no_id["id"] = json!(" ");
    let stored = vec![
        good("a", "Mail"),
        unknown_kind,
        json!(42),
        good("d", "News"),
        too_often,
        good("a", "Mail again"),
        no_id,
        bad_task,
        bad_time,
    ];
    let (kept, left_out) = read_stored(&stored);
    assert_eq!(kept.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["a", "d"]);
    assert_eq!(left_out.len(), 7, "{left_out:#?}");
    assert_eq!(
        left_out[0],
        "schedule 2 (\"Broken\") was left out: at what: unknown variant `dance`, expected one of `task`, `replay`, `skill`"
    );
    assert!(left_out[1].starts_with("schedule 3 was left out: at .: invalid type"), "{}", left_out[1]);
    assert!(left_out[2].contains("every 1."), "{}", left_out[2]);
    assert!(left_out[3].contains("another schedule has its id \"a\""), "{}", left_out[3]);
    assert!(left_out[4].contains("it has no id"), "{}", left_out[4]);
    assert_eq!(
        left_out[5],
        "schedule 8 (\"Bad task\") was left out: at what: invalid type: integer `5`, expected a string"
    );
    assert!(
        left_out[6].starts_with("schedule 9 (\"Bad time\") was left out: at created_ms: invalid type"),
        "{}",
        left_out[6]
    );
    // More than the cap: the first are kept.
    let many: Vec<Value> = (0..MAX_SCHEDULES + 2).map(|i| good(&format!("s{i}"), "Mail")).collect();
    let (kept, left_out) = read_stored(&many);
    assert_eq!(kept.len(), MAX_SCHEDULES);
    assert_eq!(left_out.len(), 2);
    let (book, left_out) = ScheduleBook::from_stored(&[]);
    assert!(book.schedules().is_empty() && left_out.is_empty());
}

#[test]
fn the_book_adds_with_new_ids_and_keeps_at_most_fifty() {
    let mut book = ScheduleBook::default();
    let now = utc(2024, 6, 10, 8, 0);
    let first = book.add(draft("  Mail  ", daily("07:00")), now, &UTC).unwrap().clone();
    assert_eq!(first.title, "Mail");
    assert_eq!(first.created_ms, now);
    assert_at!(first.next_run_ms, utc(2024, 6, 11, 7, 0));
    let second = book.add(draft("News", daily("07:00")), now, &UTC).unwrap().id.clone();
    assert_ne!(first.id, second, "added in the same millisecond");
    let paused = book.add(ScheduleDraft { paused: true, ..draft("Later", daily("07:00")) }, now, &UTC).unwrap();
    assert_eq!(paused.next_run_ms, None);
    assert_eq!(book.add(draft("", daily("07:00")), now, &UTC).unwrap_err(), ScheduleError::NoTitle);
    while book.schedules().len() < MAX_SCHEDULES {
        book.add(draft("More", Repeat::Minutes { n: 30 }), now, &UTC).unwrap();
    }
    assert_eq!(book.add(draft("One more", daily("07:00")), now, &UTC).unwrap_err(), ScheduleError::TooMany);
    let ids: std::collections::BTreeSet<&str> = book.schedules().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), MAX_SCHEDULES);
    // What is stored reads back the same.
    let (again, left_out) = ScheduleBook::from_stored(&book.to_stored());
    assert!(left_out.is_empty(), "{left_out:?}");
    assert_eq!(again, book);
}

#[test]
fn the_book_updates_pauses_removes_and_records() {
    let mut book = ScheduleBook::default();
    let t0 = utc(2024, 6, 10, 8, 0);
    let id = book.add(draft("Mail", daily("07:00")), t0, &UTC).unwrap().id.clone();
    // A run: due, started, recorded.
    let at_seven = utc(2024, 6, 11, 7, 0);
    assert_eq!(book.due_now(at_seven, &UTC), vec![id.clone()]);
    assert!(book.due_now(at_seven, &UTC).is_empty(), "each once");
    let done = book.record_result(&id, result(at_seven + 3.0 * MINUTE as f64, true), &UTC).unwrap();
    assert_eq!(done.last_run_ms, Some(at_seven));
    assert_eq!(done.last_result.as_ref().map(|r| r.ok), Some(true));
    assert_at!(done.next_run_ms, utc(2024, 6, 12, 7, 0));
    // Changed: id, creation and last run kept; next run from the new time.
    let later = utc(2024, 6, 11, 12, 0);
    let changed = book.update(&id, draft("Mail at night", daily("22:00")), later, &UTC).unwrap();
    assert_eq!((changed.id.as_str(), changed.created_ms, changed.title.as_str()), (id.as_str(), t0, "Mail at night"));
    assert_eq!(changed.last_run_ms, Some(at_seven));
    assert_at!(changed.next_run_ms, utc(2024, 6, 11, 22, 0));
    assert_eq!(
        book.update(&id, draft("Mail", daily("22:61")), later, &UTC).unwrap_err(),
        ScheduleError::BadTime("22:61".into())
    );
    assert_eq!(book.get(&id).unwrap().title, "Mail at night", "a refused change changes nothing");
    // Paused over three days, resumed: the missed times do not run.
    assert_eq!(book.set_paused(&id, true, later, &UTC).unwrap().next_run_ms, None);
    assert!(book.alarms().is_empty());
    assert!(book.due_now(utc(2024, 6, 14, 12, 0), &UTC).is_empty());
    let resumed = book.set_paused(&id, false, utc(2024, 6, 14, 12, 0), &UTC).unwrap();
    assert_at!(resumed.next_run_ms, utc(2024, 6, 14, 22, 0));
    assert!(book.due_now(utc(2024, 6, 14, 12, 1), &UTC).is_empty());
    // Unknown ids.
    let gone = ScheduleError::NoSuchSchedule("nope".into());
    assert_eq!(book.set_paused("nope", true, later, &UTC).unwrap_err(), gone);
    assert_eq!(book.record_result("nope", result(later, true), &UTC).unwrap_err(), gone);
    assert_eq!(book.update("nope", draft("Mail", daily("07:00")), later, &UTC).unwrap_err(), gone);
    assert_eq!(book.remove("nope").unwrap_err(), gone);
    assert_eq!(book.remove(&id).unwrap().id, id);
    assert!(book.get(&id).is_none());
}

#[test]
fn a_run_longer_than_the_period_is_followed_by_the_next_time_after_it_ended() {
    let t0 = utc(2024, 6, 10, 8, 0);
    let mut book = ScheduleBook::default();
    let id = book.add(draft("Prices", Repeat::Minutes { n: 5 }), t0, &UTC).unwrap().id.clone();
    let start = t0 + 5.0 * MINUTE as f64;
    assert_eq!(book.due_now(start, &UTC), vec![id.clone()]);
    // The run took twelve minutes: the times at +10 and +15 passed during it.
    let s = book.record_result(&id, result(start + 12.0 * MINUTE as f64, false), &UTC).unwrap();
    assert_eq!(s.next_run_ms, Some(t0 + 20.0 * MINUTE as f64));
    assert!(book.due_now(start + 12.0 * MINUTE as f64, &UTC).is_empty());
}

#[test]
fn the_wake_up_is_the_earliest_unpaused_next_run_and_each_schedule_has_its_alarm() {
    let now = utc(2024, 6, 10, 8, 0);
    let mut book = ScheduleBook::default();
    assert_eq!(book.next_wake(now), None);
    let late = book.add(draft("Evening", daily("20:00")), now, &UTC).unwrap().id.clone();
    let soon = book.add(draft("Soon", daily("09:00")), now, &UTC).unwrap().id.clone();
    let paused =
        book.add(ScheduleDraft { paused: true, ..draft("Off", daily("08:30")) }, now, &UTC).unwrap().id.clone();
    assert_eq!(book.next_wake(now), Some(utc(2024, 6, 10, 9, 0)));
    assert_eq!(book.next_wake(utc(2024, 6, 10, 9, 30)), Some(utc(2024, 6, 10, 9, 30)), "a passed time is now");
    let alarms = book.alarms();
    assert_eq!(alarms, [(alarm_name(&late), utc(2024, 6, 10, 20, 0)), (alarm_name(&soon), utc(2024, 6, 10, 9, 0))]);
    assert!(!alarms.iter().any(|(name, _)| name == &alarm_name(&paused)));
    assert_eq!(alarm_name("18f"), "tabwright-schedule:18f");
    assert_eq!(schedule_of_alarm(&alarm_name(&soon)), Some(soon.as_str()));
    assert_eq!(schedule_of_alarm("tabwright-task"), None, "the running task's wake-up");
    assert_eq!(schedule_of_alarm(ALARM_PREFIX), None);
}

#[test]
fn a_failure_is_always_told_and_a_success_only_when_asked() {
    let mut s = schedule(daily("07:00"), 0.0);
    assert!(s.notifies(&result(1.0, false)));
    assert!(!s.notifies(&result(1.0, true)));
    s.notify_success = true;
    assert!(s.notifies(&result(1.0, true)));
    assert!(s.notifies(&result(1.0, false)));
}

#[test]
fn entries_left_out_are_written_back_as_they_were_stored() {
    let good = json!({
        "id": "a", "title": "Mail", "created_ms": 1.0,
        "what": {"kind": "task", "task": "Look for new mail"},
        "when": {"every": "daily", "at": "07:00"},
    });
    let newer = json!({"id": "b", "title": "From a newer version", "what": {"kind": "dance"},
        "when": {"every": "daily", "at": "07:00"}, "created_ms": 1.0});
    let (mut book, left_out) = ScheduleBook::from_stored(&[newer.clone(), good, json!("junk")]);
    assert_eq!(left_out.len(), 2);
    book.add(draft("News", daily("08:00")), 5.0, &UTC).unwrap();
    let stored = book.to_stored();
    assert_eq!(stored.len(), 4, "{stored:#?}");
    assert_eq!(&stored[2..], &[newer, json!("junk")], "after the schedules, untouched");
    let (again, left_out) = ScheduleBook::from_stored(&stored);
    assert_eq!((again.schedules().len(), left_out.len()), (2, 2));
}

#[test]
fn a_run_is_the_schedules_from_its_start_until_its_result() {
    let mut book = ScheduleBook::default();
    let t0 = utc(2024, 6, 10, 8, 0);
    let id = book.add(draft("Mail", daily("07:00")), t0, &UTC).unwrap().id.clone();
    let at_seven = utc(2024, 6, 11, 7, 0);
    assert!(!book.catch_up(&id, t0, &UTC).unwrap(), "not yet");
    assert!(book.catch_up(&id, at_seven, &UTC).unwrap());
    assert!(!book.catch_up(&id, at_seven, &UTC).unwrap(), "once");
    assert_eq!(book.catch_up("nope", at_seven, &UTC), Err(ScheduleError::NoSuchSchedule("nope".into())));
    let started = book.run_started(&id, "task-9", at_seven).unwrap();
    assert_eq!((started.run_task_id.as_deref(), started.last_run_ms), (Some("task-9"), Some(at_seven)));
    assert_eq!(book.running_as("task-9").map(|s| s.id.as_str()), Some(id.as_str()));
    // Stored with it, so a worker started again knows it.
    let (again, _) = ScheduleBook::from_stored(&book.to_stored());
    assert_eq!(again.running_as("task-9").map(|s| s.id.as_str()), Some(id.as_str()));
    let ended = book.record_result(&id, result(at_seven + MINUTE as f64, true), &UTC).unwrap();
    assert_eq!(ended.run_task_id, None);
    assert!(book.running_as("task-9").is_none());
}
