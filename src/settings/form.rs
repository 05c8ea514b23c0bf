//! The two lists the options page has a person type as text, read here and nowhere else: extra
//! headers (one `Name: value` per line) and prices (one `model input output [cached]` per line).
//! The page sends the text as typed (`PanelRequest::ReadSettingsLists`) and stores what comes
//! back; a line that cannot be read is named, with why, in the person's language. The stored
//! settings' check (`StoredSettings::validate`) holds headers to the same rules
//! (`header_problem`), so settings imported from a file cannot carry what the page refuses.

use crate::llm::pricing::ModelPrice;
use crate::message::{LocaleText, Localize};
use std::collections::BTreeMap;

/// Headers the browser never lets an extension set: fetch drops them without a word, so the
/// person would believe they were sent (the Fetch standard's forbidden request headers, checked
/// against the Web Platform Tests' cases: tests/fixtures/fetch/).
const FORBIDDEN_HEADERS: [&str; 22] = [
    "accept-charset",
    "accept-encoding",
    "access-control-request-headers",
    "access-control-request-method",
    "access-control-request-private-network",
    "connection",
    "content-length",
    "cookie",
    "cookie2",
    "date",
    "dnt",
    "expect",
    "host",
    "keep-alive",
    "origin",
    "referer",
    "set-cookie",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "via",
];

/// What is wrong with one extra header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderProblem {
    /// The name is not an HTTP token, or is empty: fetch would refuse the whole request.
    BadName,
    /// The browser does not let an extension send it.
    Forbidden,
    /// A control character other than tab in the value.
    Control,
}

/// Why a header cannot be sent, if it cannot (name and value already trimmed).
pub fn header_problem(name: &str, value: &str) -> Option<HeaderProblem> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Some(HeaderProblem::BadName);
    }
    let lower = name.to_ascii_lowercase();
    if FORBIDDEN_HEADERS.contains(&lower.as_str()) || lower.starts_with("proxy-") || lower.starts_with("sec-") {
        return Some(HeaderProblem::Forbidden);
    }
    // A method override may not name a method fetch refuses (any of its comma-separated values).
    let overrides_method = matches!(lower.as_str(), "x-http-method-override" | "x-http-method" | "x-method-override");
    let forbidden_method = |m: &str| ["connect", "trace", "track"].iter().any(|f| m.trim().eq_ignore_ascii_case(f));
    if overrides_method && value.split(',').any(forbidden_method) {
        return Some(HeaderProblem::Forbidden);
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Some(HeaderProblem::Control);
    }
    None
}

/// A line of one of the lists that cannot be read: which list, which line (from 1), the line as
/// typed (cut to 40 characters), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("Extra headers, line {line} ({text}): write Name: value, where the name is letters, digits and - (such as HTTP-Referer).")]
    HeaderName { line: usize, text: String },
    #[error("Extra headers, line {line} ({text}): the browser does not let extensions send {name}.")]
    HeaderForbidden { line: usize, text: String, name: String },
    #[error("Extra headers, line {line} ({text}): the value has a control character.")]
    HeaderControl { line: usize, text: String },
    #[error("Extra headers, line {line} ({text}): {name} is already given above.")]
    HeaderRepeated { line: usize, text: String, name: String },
    #[error("Prices, line {line} (“{text}”): write a model name and two numbers, such as gpt-4.1-mini 0.4 1.6 (or three, the last for cached input: gpt-4.1-mini 0.4 1.6 0.1).")]
    PriceLine { line: usize, text: String },
}

impl Localize for ListError {
    fn locale_text(&self) -> Option<LocaleText> {
        Some(match self {
            ListError::HeaderName { line, text } => {
                LocaleText::new("form_header_name", [line.to_string(), text.clone()])
            }
            ListError::HeaderForbidden { line, text, name } => {
                LocaleText::new("form_header_forbidden", [line.to_string(), text.clone(), name.clone()])
            }
            ListError::HeaderControl { line, text } => {
                LocaleText::new("form_header_control", [line.to_string(), text.clone()])
            }
            ListError::HeaderRepeated { line, text, name } => {
                LocaleText::new("form_header_repeated", [line.to_string(), text.clone(), name.clone()])
            }
            ListError::PriceLine { line, text } => LocaleText::new("form_price_line", [line.to_string(), text.clone()]),
        })
    }
}

/// The line as the error shows it: at most 40 characters, then `…`.
fn shown(line: &str) -> String {
    match line.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// The extra headers typed one `Name: value` per line (blank lines skipped), as stored.
pub fn read_header_lines(text: &str) -> Result<BTreeMap<String, String>, ListError> {
    let mut headers = BTreeMap::new();
    let mut seen: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (number, text) = (i + 1, shown(line));
        let (name, value) = line.split_once(':').map_or(("", ""), |(n, v)| (n.trim(), v.trim()));
        match header_problem(name, value) {
            Some(HeaderProblem::BadName) => return Err(ListError::HeaderName { line: number, text }),
            Some(HeaderProblem::Forbidden) => {
                return Err(ListError::HeaderForbidden { line: number, text, name: name.to_string() })
            }
            Some(HeaderProblem::Control) => return Err(ListError::HeaderControl { line: number, text }),
            None => {}
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(ListError::HeaderRepeated { line: number, text, name: name.to_string() });
        }
        seen.push(lower);
        headers.insert(name.to_string(), value.to_string());
    }
    Ok(headers)
}

/// A decimal number as a person types it (`0.4`, `.4`, `4.`, `1e-3`), read by serde_json's
/// number reader, which the core carries anyway (Rust's own float parser would add its tables
/// to the wasm for one field).
fn read_number(text: &str) -> Option<f64> {
    let text = text.strip_prefix('+').unwrap_or(text);
    let text = if text.starts_with('.') { format!("0{text}") } else { text.to_string() };
    let text = if text.ends_with('.') { format!("{text}0") } else { text };
    crate::json::from_text::<f64>(&text).ok()
}

/// The prices typed one `model-prefix input output [cached-input]` per line, in USD per million
/// tokens (blank lines skipped).
pub fn read_price_lines(text: &str) -> Result<Vec<ModelPrice>, ListError> {
    let mut prices = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        let number = |s: &str| read_number(s).filter(|n| n.is_finite() && *n >= 0.0);
        let numbers: Option<Vec<f64>> = parts[1..].iter().map(|p| number(p)).collect();
        match numbers.as_deref() {
            Some([input, output]) | Some([input, output, _]) => prices.push(ModelPrice {
                model_prefix: parts[0].to_string(),
                input_per_million: *input,
                output_per_million: *output,
                cached_input_per_million: numbers.as_ref().and_then(|n| n.get(2).copied()),
            }),
            _ => return Err(ListError::PriceLine { line: i + 1, text: line.to_string() }),
        }
    }
    Ok(prices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_read_line_by_line_and_a_bad_line_is_named_with_why() {
        let read = read_header_lines("X-Title: Tabwright\n\n  HTTP-Referer :  https://example.com  \n").unwrap();
        assert_eq!(read.get("X-Title").map(String::as_str), Some("Tabwright"));
        assert_eq!(read.get("HTTP-Referer").map(String::as_str), Some("https://example.com"));
        assert_eq!(read_header_lines("").unwrap().len(), 0);
        let err = |text: &str| read_header_lines(text).unwrap_err();
        assert_eq!(err("X-A: 1\nBad Name: x"), ListError::HeaderName { line: 2, text: "Bad Name: x".into() });
        assert_eq!(err("no colon here").to_string(), "Extra headers, line 1 (no colon here): write Name: value, where the name is letters, digits and - (such as HTTP-Referer).");
        assert_eq!(
            err("Cookie: a=b").to_string(),
            "Extra headers, line 1 (Cookie: a=b): the browser does not let extensions send Cookie."
        );
        assert!(matches!(err("Sec-Fetch-Mode: cors"), ListError::HeaderForbidden { .. }));
        assert!(matches!(err("Proxy-Authorization: x"), ListError::HeaderForbidden { .. }));
        assert!(matches!(err("X-A: a\u{7}b"), ListError::HeaderControl { line: 1, .. }));
        assert!(read_header_lines("X-A: a\tb").is_ok(), "a tab is allowed in a value");
        assert_eq!(err("X-A: 1\nx-a: 2").to_string(), "Extra headers, line 2 (x-a: 2): x-a is already given above.");
        let long = format!("Bad Name: {}", "v".repeat(60));
        assert!(
            matches!(err(&long), ListError::HeaderName { text, .. } if text.chars().count() == 41 && text.ends_with('…'))
        );
    }

    /// The Web Platform Tests' cases of the headers `fetch` refuses to send, and of the values
    /// a method-override header may carry (tests/fixtures/fetch/README.md).
    #[test]
    fn the_headers_fetch_refuses_are_refused_and_the_others_read() {
        let cases: serde_json::Value = crate::json::from_text(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/fetch/request-forbidden-headers.json"
        )))
        .unwrap();
        let line = |case: &serde_json::Value| {
            format!("{}: {}", case["name"].as_str().unwrap(), case["value"].as_str().unwrap())
        };
        let forbidden = cases["forbidden"].as_array().unwrap();
        assert!(forbidden.len() > 70);
        for case in forbidden {
            let read = read_header_lines(&line(case));
            assert!(matches!(read, Err(ListError::HeaderForbidden { .. })), "{}: {read:?}", line(case));
        }
        for case in cases["allowed"].as_array().unwrap() {
            assert!(read_header_lines(&line(case)).is_ok(), "{}", line(case));
        }
    }

    #[test]
    fn prices_are_read_line_by_line_and_a_bad_line_is_named() {
        let read = read_price_lines("gpt-4.1-mini 0.4 1.6\n\nclaude 3 15 0.3\n").unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(
            (read[0].input_per_million, read[0].output_per_million, read[0].cached_input_per_million),
            (0.4, 1.6, None)
        );
        assert_eq!(read[1].cached_input_per_million, Some(0.3));
        let loose = read_price_lines("m .5 2. +1e-1").unwrap();
        assert_eq!(
            (loose[0].input_per_million, loose[0].output_per_million, loose[0].cached_input_per_million),
            (0.5, 2.0, Some(0.1))
        );
        for bad in
            ["gpt-4.1 two", "gpt 1", "gpt 1 2 3 4", "gpt -1 2", "gpt 1 NaN", "gpt 1 inf", "gpt 1 0x10", "gpt 1 1..2"]
        {
            let e = read_price_lines(bad).unwrap_err();
            assert_eq!(e, ListError::PriceLine { line: 1, text: bad.into() }, "{bad}");
        }
        assert!(read_price_lines("x 1 2\ny")
            .unwrap_err()
            .to_string()
            .starts_with("Prices, line 2 (“y”): write a model name"));
    }
}
