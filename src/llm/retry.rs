//! When and how long to wait before asking a provider again.
//!
//! Rate limits (HTTP 429), server errors (5xx, including Anthropic's 529 "overloaded") and
//! requests that never reached the server usually pass within seconds, so they are retried a few
//! times; any other answer would only come back the same. Waits grow exponentially with "full
//! jitter" (a random wait between zero and the exponential ceiling), so many clients limited at
//! the same moment do not all come back at the same moment. A provider that says when to come
//! back (`retry-after`, or the millisecond `retry-after-ms` some OpenAI-style servers send) is
//! believed, up to a minute.
//!
//! Everything here is pure: the randomness comes in as a number, and the caller sleeps.

use super::HttpResponse;

/// How many times a request is sent again after its first try.
pub const MAX_RETRIES: u32 = 3;
/// The ceiling of the first wait; each retry doubles it.
pub const BASE_DELAY_MS: u32 = 1_000;
/// The ceiling of a computed wait.
pub const MAX_DELAY_MS: u32 = 20_000;
/// The longest wait a provider may ask for with `retry-after`.
pub const MAX_RETRY_AFTER_MS: u32 = 60_000;
/// The wait used when `retry-after` holds a date that cannot be read or compared.
pub const UNREADABLE_DATE_DELAY_MS: u32 = 5_000;

/// Whether an HTTP status may change if the same request is sent again.
pub fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// The wait before retry number `retry` (0 for the first): a random fraction (`random`, from
/// 0 to 1) of `min(MAX_DELAY_MS, BASE_DELAY_MS × 2^retry)`.
pub fn backoff_ms(retry: u32, random: f64) -> u32 {
    let ceiling = BASE_DELAY_MS.saturating_mul(1u32.checked_shl(retry).unwrap_or(u32::MAX)).min(MAX_DELAY_MS);
    let fraction = if random.is_finite() { random.clamp(0.0, 1.0) } else { 0.5 };
    (f64::from(ceiling) * fraction).round() as u32
}

/// The wait the provider asked for, if it did: `retry-after-ms` (milliseconds), else
/// `retry-after` as seconds or as an HTTP date. A date is measured from the response's own
/// `date` header (so the local clock does not matter); when either cannot be read the wait is
/// [`UNREADABLE_DATE_DELAY_MS`]. Every wait is capped at [`MAX_RETRY_AFTER_MS`].
pub fn retry_after_ms(response: &HttpResponse) -> Option<u32> {
    let cap = |ms: f64| ms.clamp(0.0, f64::from(MAX_RETRY_AFTER_MS)).round() as u32;
    if let Some(ms) = response.header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() {
            return Some(cap(ms));
        }
    }
    let value = response.header("retry-after")?.trim();
    if value.is_empty() {
        return None;
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return Some(if seconds.is_finite() { cap(seconds * 1000.0) } else { UNREADABLE_DATE_DELAY_MS });
    }
    let delay = match (http_date_seconds(value), response.header("date").and_then(http_date_seconds)) {
        (Some(at), Some(now)) => cap((at - now) as f64 * 1000.0),
        _ => UNREADABLE_DATE_DELAY_MS,
    };
    Some(delay)
}

/// Seconds since 1970 for an IMF-fixdate such as `Wed, 21 Oct 2015 07:28:00 GMT`, the form
/// HTTP servers must send; the obsolete forms are not read.
fn http_date_seconds(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_weekday, day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? as i64 + 1;
    let day: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let year: i64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let hms: Vec<i64> = time.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else { return None };
    if !(0..24).contains(h) || !(0..60).contains(m) || !(0..=60).contains(s) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3_600 + m * 60 + s)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (month 1..=12).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Counted in years that begin on 1 March, so the leap day ends its year.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_headers(headers: &[(&str, &str)]) -> HttpResponse {
        HttpResponse {
            status: 429,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: String::new(),
        }
    }

    #[test]
    fn backoff_is_a_random_share_of_a_doubling_capped_ceiling() {
        assert_eq!(backoff_ms(0, 1.0), 1_000);
        assert_eq!(backoff_ms(1, 1.0), 2_000);
        assert_eq!(backoff_ms(2, 0.5), 2_000);
        assert_eq!(backoff_ms(5, 1.0), 20_000);
        assert_eq!(backoff_ms(40, 1.0), 20_000);
        assert_eq!(backoff_ms(3, 0.0), 0);
        assert_eq!(backoff_ms(0, 7.0), 1_000);
        assert_eq!(backoff_ms(0, f64::NAN), 500);
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_or_a_date() {
        assert_eq!(retry_after_ms(&with_headers(&[])), None);
        assert_eq!(retry_after_ms(&with_headers(&[("retry-after", "2")])), Some(2_000));
        assert_eq!(retry_after_ms(&with_headers(&[("retry-after", "0.5")])), Some(500));
        assert_eq!(retry_after_ms(&with_headers(&[("retry-after", "3600")])), Some(60_000));
        assert_eq!(retry_after_ms(&with_headers(&[("retry-after", "-3")])), Some(0));
        assert_eq!(retry_after_ms(&with_headers(&[("retry-after-ms", "750"), ("retry-after", "1")])), Some(750));
        let dated = with_headers(&[
            ("date", "Wed, 21 Oct 2015 07:28:00 GMT"),
            ("retry-after", "Wed, 21 Oct 2015 07:28:12 GMT"),
        ]);
        assert_eq!(retry_after_ms(&dated), Some(12_000));
        let across_a_leap_day = with_headers(&[
            ("date", "Thu, 29 Feb 2024 23:59:50 GMT"),
            ("retry-after", "Fri, 01 Mar 2024 00:00:10 GMT"),
        ]);
        assert_eq!(retry_after_ms(&across_a_leap_day), Some(20_000));
        let far = with_headers(&[
            ("date", "Thu, 29 Feb 2024 23:59:50 GMT"),
            ("retry-after", "Fri, 01 Mar 2024 01:00:00 GMT"),
        ]);
        assert_eq!(retry_after_ms(&far), Some(60_000));
        let no_date = with_headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:12 GMT")]);
        assert_eq!(retry_after_ms(&no_date), Some(UNREADABLE_DATE_DELAY_MS));
        let garbage = with_headers(&[("retry-after", "soon-ish")]);
        assert_eq!(retry_after_ms(&garbage), Some(UNREADABLE_DATE_DELAY_MS));
    }

    #[test]
    fn http_dates_are_read_exactly() {
        assert_eq!(http_date_seconds("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(http_date_seconds("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(http_date_seconds("Sat, 29 Feb 2020 12:00:00 GMT"), Some(1_582_977_600));
        assert_eq!(http_date_seconds("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(http_date_seconds("Sun, 06 Nov 1994 25:49:37 GMT"), None);
        assert_eq!(http_date_seconds(""), None);
    }

    #[test]
    fn only_rate_limits_and_server_errors_are_retryable() {
        for status in [429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [200, 400, 401, 403, 404, 408, 413, 422] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }
}
