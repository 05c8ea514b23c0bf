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
    let cap = |ms: u64| ms.min(u64::from(MAX_RETRY_AFTER_MS)) as u32;
    if let Some(ms) = response.header("retry-after-ms").and_then(|v| decimal_thousandths(v, 1)) {
        return Some(cap(ms));
    }
    let value = response.header("retry-after")?.trim();
    if value.is_empty() {
        return None;
    }
    if let Some(ms) = decimal_thousandths(value, 1000) {
        return Some(cap(ms));
    }
    let delay = match (httpdate::parse_http_date(value), response.header("date").map(httpdate::parse_http_date)) {
        (Ok(at), Some(Ok(now))) => cap(at.duration_since(now).map_or(0, |d| d.as_millis() as u64)),
        _ => UNREADABLE_DATE_DELAY_MS,
    };
    Some(delay)
}

/// A decimal number of seconds (`scale` 1000) or milliseconds (`scale` 1) as whole
/// milliseconds, read with integers: `2`, `0.5`, `-3` (a wait of nothing). `None` for
/// anything else, such as an HTTP date.
fn decimal_thousandths(text: &str, scale: u64) -> Option<u64> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) || whole.len() > 12 {
        return None;
    }
    if negative {
        return Some(0);
    }
    let whole: u64 = whole.parse().ok()?;
    // The fraction to three places, as thousandths of a unit.
    let thousandths =
        fraction.bytes().chain(std::iter::repeat(b'0')).take(3).fold(0, |n, b| n * 10 + u64::from(b - b'0'));
    Some(whole.saturating_mul(scale) + thousandths * scale / 1000)
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
    fn every_http_date_form_is_read() {
        let at = |date: &str, retry: &str| retry_after_ms(&with_headers(&[("date", date), ("retry-after", retry)]));
        // The IMF-fixdate servers must send, and the two obsolete forms a reader must accept.
        assert_eq!(at("Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:40 GMT"), Some(3_000));
        assert_eq!(at("Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:41 GMT"), Some(4_000));
        assert_eq!(at("Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:42 GMT"), Some(5_000));
        // A date in the past is no wait; an hour is capped.
        assert_eq!(at("Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:00 GMT"), Some(0));
        assert_eq!(
            at("Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:40 GMT"),
            Some(UNREADABLE_DATE_DELAY_MS)
        );
        assert_eq!(decimal_thousandths("1.2345", 1000), Some(1_234));
        assert_eq!(decimal_thousandths("12.", 1000), Some(12_000));
        assert_eq!(decimal_thousandths(".5", 1000), None);
        assert_eq!(decimal_thousandths("1e3", 1000), None);
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
