//! Secrets the LLM can use without ever seeing them.
//!
//! The user stores named values (passwords, card numbers, codes), each optionally limited to
//! some sites. The LLM is told only the names and writes `<secret>name</secret>` where a value
//! goes; [`Secrets::substitute`] swaps the value in just before the action runs, and only when
//! the page's host is one the secret is meant for — so a page that talks the LLM into typing a
//! password elsewhere gets an error, not the password. Values that show up anyway (typed into a
//! field and read back, echoed in a URL) are masked by [`Secrets::redact`] in everything shown
//! to the LLM or the user and in everything stored.

use super::{rule_host, SafetyError};
use crate::web::{host_matches, is_host_glob};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

const OPEN_TAG: &str = "<secret>";
const CLOSE_TAG: &str = "</secret>";
/// Values shorter than this are not masked: they would hide ordinary words and digits.
const MIN_REDACTED_CHARS: usize = 3;
/// What a secret's value looks like in logs and debug output.
const MASK: &str = "•••";

/// Whether `text` is nothing but `<secret>name</secret>` placeholders (and spaces): the
/// model's words for a value, not a value, so a record may keep it (a replay types it again).
pub fn only_placeholders(text: &str) -> bool {
    let lower = text.trim().to_ascii_lowercase();
    let mut rest = lower.as_str();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some(after_open) = rest.strip_prefix(OPEN_TAG) else { return false };
        let Some(end) = after_open.find(CLOSE_TAG) else { return false };
        let name = &after_open[..end];
        if name.trim().is_empty() || name.contains('<') {
            return false;
        }
        rest = after_open[end + CLOSE_TAG.len()..].trim_start();
    }
    true
}

/// A secret as stored by the options page.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct StoredSecret {
    pub name: String,
    pub value: String,
    /// Host globs where the secret may be used; empty = every site.
    pub domains: Vec<String>,
}

impl fmt::Debug for StoredSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredSecret")
            .field("name", &self.name)
            .field("value", &MASK)
            .field("domains", &self.domains)
            .finish()
    }
}

/// A checked secret: a valid name, a non-blank value, lower-cased host globs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    pub name: String,
    pub value: String,
    /// Host globs where the secret may be used; empty = every site.
    pub domains: Vec<String>,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret")
            .field("name", &self.name)
            .field("value", &MASK)
            .field("domains", &self.domains)
            .finish()
    }
}

impl Secret {
    /// Whether the secret may be used on a page with this host (`None`: not a web page).
    fn applies_to(&self, host: Option<&str>) -> bool {
        self.domains.is_empty() || host.is_some_and(|h| self.domains.iter().any(|g| host_matches(h, g)))
    }
}

/// The user's secrets, checked, with what is needed to mask their values quickly.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    list: Vec<Secret>,
    /// Every form a value is masked in, longest first.
    patterns: Vec<Pattern>,
}

#[derive(Clone, PartialEq, Eq)]
struct Pattern {
    text: String,
    /// Index of the secret in `list`.
    secret: usize,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.list).finish()
    }
}

impl Secrets {
    /// Checks the stored secrets: names, values, domains, and that no two secrets with the
    /// same name could apply to the same site.
    pub fn from_settings(stored: &[StoredSecret]) -> Result<Secrets, SafetyError> {
        let mut list: Vec<Secret> = Vec::with_capacity(stored.len());
        for (i, s) in stored.iter().enumerate() {
            let name = s.name.trim().to_string();
            if name.is_empty() {
                return Err(SafetyError::SecretWithoutName { position: i + 1 });
            }
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) {
                return Err(SafetyError::BadSecretName { name });
            }
            if s.value.trim().is_empty() {
                return Err(SafetyError::EmptySecretValue { name });
            }
            let mut domains: Vec<String> = Vec::new();
            for glob in &s.domains {
                let glob = glob.trim().to_ascii_lowercase();
                if glob.is_empty() || domains.contains(&glob) {
                    continue;
                }
                if !is_host_glob(&glob) {
                    return Err(SafetyError::BadSecretDomain { name, glob });
                }
                domains.push(glob);
            }
            let secret = Secret { name, value: s.value.clone(), domains };
            if let Some(overlap) = list.iter().filter(|o| o.name == secret.name).find_map(|o| overlap(o, &secret)) {
                return Err(SafetyError::DuplicateSecret { name: secret.name, overlap });
            }
            list.push(secret);
        }
        let mut patterns: Vec<Pattern> = Vec::new();
        for (i, secret) in list.iter().enumerate() {
            for text in masked_forms(&secret.value) {
                if !patterns.iter().any(|p| p.text == text) {
                    patterns.push(Pattern { text, secret: i });
                }
            }
        }
        // Longest first: where values overlap, the longer one names the masked text.
        patterns.sort_by_key(|p| std::cmp::Reverse(p.text.len()));
        Ok(Secrets { list, patterns })
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn list(&self) -> &[Secret] {
        &self.list
    }

    /// The names usable on the page at `url`, in the order the user stored them.
    pub fn names_for(&self, url: &str) -> Vec<&str> {
        self.usable(rule_host(url).as_deref())
    }

    fn usable(&self, host: Option<&str>) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for s in self.list.iter().filter(|s| s.applies_to(host)) {
            if !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
        names
    }

    /// A line for the prompt naming the secrets usable on the page; `None` when there are none.
    pub fn prompt_line(&self, url: &str) -> Option<String> {
        let names = self.names_for(url);
        (!names.is_empty()).then(|| {
            format!(
                "You can use these secrets by writing the tag where the value goes, e.g. as the text to type: {}. Their values are hidden from you and filled in when the action runs.",
                tags(&names)
            )
        })
    }

    /// Replaces every `<secret>name</secret>` in the strings of `params` (at any depth) by the
    /// value, for an action about to run on the page at `url`. A name that is unknown or not
    /// meant for this site is an error for the LLM; it never contains a value.
    pub fn substitute(&self, params: &Value, url: &str) -> Result<Value, SecretUseError> {
        let host = rule_host(url);
        self.substitute_in(params, host.as_deref())
    }

    fn substitute_in(&self, value: &Value, host: Option<&str>) -> Result<Value, SecretUseError> {
        Ok(match value {
            Value::String(s) => Value::String(self.substitute_str(s, host)?),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.substitute_in(v, host)).collect::<Result<_, _>>()?)
            }
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| Ok((k.clone(), self.substitute_in(v, host)?))).collect::<Result<
                    _,
                    SecretUseError,
                >>(
                )?)
            }
            other => other.clone(),
        })
    }

    fn substitute_str(&self, text: &str, host: Option<&str>) -> Result<String, SecretUseError> {
        // Tags are matched in any letter case; lower-casing ASCII keeps byte offsets.
        let lower = text.to_ascii_lowercase();
        if !lower.contains(OPEN_TAG) {
            return Ok(text.to_string());
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        while let Some(open) = lower[at..].find(OPEN_TAG).map(|i| at + i) {
            let name_start = open + OPEN_TAG.len();
            let Some(close) = lower[name_start..].find(CLOSE_TAG).map(|i| name_start + i) else {
                return Err(self.use_error(UseProblem::Unclosed, host));
            };
            let name = text[name_start..close].trim();
            let value = self.value_for(name, host)?;
            out.push_str(&text[at..open]);
            out.push_str(value);
            at = close + CLOSE_TAG.len();
        }
        out.push_str(&text[at..]);
        Ok(out)
    }

    fn value_for(&self, name: &str, host: Option<&str>) -> Result<&str, SecretUseError> {
        let mut named = self.list.iter().filter(|s| s.name == name).peekable();
        if named.peek().is_none() {
            return Err(self.use_error(UseProblem::Unknown { name: self.shown_name(name) }, host));
        }
        let mut sites: Vec<String> = Vec::new();
        for secret in named {
            if secret.applies_to(host) {
                return Ok(&secret.value);
            }
            sites.extend(secret.domains.iter().cloned());
        }
        Err(self.use_error(UseProblem::NotHere { name: name.to_string(), sites }, host))
    }

    /// A name as the LLM wrote it, safe to repeat: masked (in case it wrote a value) and cut.
    fn shown_name(&self, name: &str) -> String {
        crate::dom::untrusted(&self.redact(name), 60)
    }

    fn use_error(&self, problem: UseProblem, host: Option<&str>) -> SecretUseError {
        let usable = self.usable(host).into_iter().map(str::to_string).collect();
        SecretUseError { problem, host: host.map(str::to_string), usable }
    }

    /// `text` with every secret value (and its URL-encoded, JSON- and HTML-escaped forms)
    /// replaced by `<secret>name</secret>`. Values shorter than 3 characters are left alone.
    pub fn redact(&self, text: &str) -> String {
        if self.patterns.is_empty() || text.len() < MIN_REDACTED_CHARS {
            return text.to_string();
        }
        // Every occurrence of every form, then merged left to right: text covered by any
        // occurrence is masked, so overlapping values leak no part of either.
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for p in &self.patterns {
            found.extend(text.match_indices(p.text.as_str()).map(|(i, m)| (i, i + m.len(), p.secret)));
        }
        if found.is_empty() {
            return text.to_string();
        }
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut i = 0;
        while i < found.len() {
            let (start, mut end, secret) = found[i];
            out.push_str(&text[copied..start]);
            let mut names = vec![secret];
            i += 1;
            while i < found.len() && found[i].0 < end {
                let (_, next_end, next_secret) = found[i];
                if next_end > end {
                    end = next_end;
                    if !names.contains(&next_secret) {
                        names.push(next_secret);
                    }
                }
                i += 1;
            }
            for n in names {
                out.push_str(OPEN_TAG);
                out.push_str(&self.list[n].name);
                out.push_str(CLOSE_TAG);
            }
            copied = end;
        }
        out.push_str(&text[copied..]);
        out
    }

    /// [`Self::redact`] applied to every string of a JSON value, object keys included.
    pub fn redact_value(&self, value: &Value) -> Value {
        if self.patterns.is_empty() {
            return value.clone();
        }
        match value {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.redact_value(v)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (self.redact(k), self.redact_value(v))).collect())
            }
            other => other.clone(),
        }
    }
}

/// Where two same-named secrets would both apply, in words; `None` when their sites are apart.
fn overlap(a: &Secret, b: &Secret) -> Option<String> {
    match (a.domains.is_empty(), b.domains.is_empty()) {
        (true, true) => Some("every site".into()),
        (true, false) => Some(b.domains.join(", ")),
        (false, true) => Some(a.domains.join(", ")),
        (false, false) => a.domains.iter().find_map(|x| b.domains.iter().find_map(|y| narrower(x, y))),
    }
}

/// Host globs are nested or apart: when two share a host, the narrower is what they share.
fn narrower(a: &str, b: &str) -> Option<String> {
    if covers(a, b) {
        Some(b.to_string())
    } else if covers(b, a) {
        Some(a.to_string())
    } else {
        None
    }
}

/// Whether every host `inner` matches is matched by `outer`.
fn covers(outer: &str, inner: &str) -> bool {
    if outer == "*" {
        return true;
    }
    if inner == "*" {
        return false;
    }
    match outer.strip_prefix("*.") {
        // `*.d` covers d, its subdomains, and wildcards of its subdomains.
        Some(_) => host_matches(inner.strip_prefix("*.").unwrap_or(inner), outer),
        None => outer == inner,
    }
}

/// The forms a value is masked in: as is, JSON-escaped, HTML-escaped, as the page text shows it,
/// and percent-encoded the ways browsers and scripts encode it.
fn masked_forms(value: &str) -> Vec<String> {
    if value.chars().count() < MIN_REDACTED_CHARS {
        return Vec::new();
    }
    let mut forms = vec![value.to_string()];
    let mut add = |form: String| {
        if !form.is_empty() && !forms.contains(&form) {
            forms.push(form);
        }
    };
    let json = serde_json::to_string(value).unwrap_or_default();
    add(json.get(1..json.len().saturating_sub(1)).unwrap_or_default().to_string());
    add(value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;"));
    let folded = value.split_whitespace().collect::<Vec<_>>().join(" ");
    let page = folded.replace('<', "&lt;").replace('>', "&gt;");
    add(page.replace('\'', "\\'"));
    add(page);
    add(folded);
    for keep_marks in [false, true] {
        for plus in [false, true] {
            for lower_hex in [false, true] {
                add(percent_encode(value, keep_marks, plus, lower_hex));
            }
        }
    }
    forms
}

/// Percent-encodes all but unreserved characters (and `!*'()` with `keep_marks`, as
/// `encodeURIComponent` does), spaces as `+` with `plus` (form encoding).
fn percent_encode(value: &str, keep_marks: bool, plus: bool, lower_hex: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            b'!' | b'*' | b'\'' | b'(' | b')' if keep_marks => out.push(byte as char),
            b' ' if plus => out.push('+'),
            _ if lower_hex => out.push_str(&format!("%{byte:02x}")),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn tags(names: &[impl AsRef<str>]) -> String {
    names.iter().map(|n| format!("{OPEN_TAG}{}{CLOSE_TAG}", n.as_ref())).collect::<Vec<_>>().join(", ")
}

/// A `<secret>` tag that cannot be filled in on this page. The message is meant for the LLM
/// (as the action's error) and names no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretUseError {
    pub problem: UseProblem,
    /// The page's host; `None` when the page is not a web page.
    pub host: Option<String>,
    /// The names usable on this page.
    pub usable: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UseProblem {
    /// No secret has this name.
    Unknown { name: String },
    /// Secrets with this name exist, for these sites only.
    NotHere { name: String, sites: Vec<String> },
    /// `<secret>` without `</secret>`.
    Unclosed,
}

impl std::error::Error for SecretUseError {}

impl fmt::Display for SecretUseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let here = self.host.as_deref().map_or("this page".to_string(), |h| crate::dom::untrusted(h, 100));
        match &self.problem {
            UseProblem::Unknown { name } => write!(f, "There is no secret named \"{name}\" (wanted on {here}).")?,
            UseProblem::NotHere { name, sites } => write!(
                f,
                "The secret \"{name}\" may not be used on {here}: it is only for {}. Open one of those sites first if the task needs it there.",
                sites.join(", ")
            )?,
            UseProblem::Unclosed => {
                write!(f, "A {OPEN_TAG} tag is not closed (on {here}): write {OPEN_TAG}name{CLOSE_TAG}.")?
            }
        }
        if self.usable.is_empty() {
            write!(f, " No secrets can be used on {here}.")
        } else {
            write!(f, " Secrets usable on {here}: {}.", tags(&self.usable))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(name: &str, value: &str, domains: &[&str]) -> StoredSecret {
        StoredSecret {
            name: name.into(),
            value: value.into(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
        }
    }

    fn secrets(list: &[(&str, &str, &[&str])]) -> Secrets {
        Secrets::from_settings(&list.iter().map(|(n, v, d)| stored(n, v, d)).collect::<Vec<_>>()).unwrap()
    }

    fn sample() -> Secrets {
        secrets(&[
            ("password", "hunter2-Secret!", &["*.bank.example"]),
            ("user", "jane.doe@mail.test", &[]),
            ("card", "4111 1111 1111 1111", &["shop.example", "*.pay.example"]),
        ])
    }

    #[test]
    fn names_are_offered_only_where_they_may_be_used() {
        let s = sample();
        assert_eq!(s.names_for("https://login.bank.example/signin"), ["password", "user"]);
        assert_eq!(s.names_for("https://shop.example/cart"), ["user", "card"]);
        assert_eq!(s.names_for("https://elsewhere.test/"), ["user"]);
        assert_eq!(s.names_for("about:blank"), ["user"]);
        let line = s.prompt_line("https://shop.example/").unwrap();
        assert!(line.contains("<secret>user</secret>, <secret>card</secret>"), "{line}");
        assert!(
            only_placeholders("<secret>pw</secret>") && only_placeholders(" <SECRET>a</SECRET> <secret>b</secret>")
        );
        for text in ["hunter2", "x<secret>pw</secret>", "<secret>pw</secret>!", "<secret></secret>", "<secret>pw", ""] {
            assert!(!only_placeholders(text), "{text}");
        }
        assert_eq!(Secrets::default().prompt_line("https://a.com/"), None);
    }

    #[test]
    fn substitution_fills_nested_params() {
        let s = sample();
        let params = json!({
            "index": 4,
            "text": "<secret>password</secret>",
            "fields": [{"value": "me: <SECRET> user </SECRET>, again <secret>user</secret>"}, 7, null],
        });
        let filled = s.substitute(&params, "https://www.bank.example/login").unwrap();
        assert_eq!(
            filled,
            json!({
                "index": 4,
                "text": "hunter2-Secret!",
                "fields": [{"value": "me: jane.doe@mail.test, again jane.doe@mail.test"}, 7, null],
            })
        );
        let plain = json!({"text": "no tags here", "n": 1.5});
        assert_eq!(s.substitute(&plain, "https://a.com/").unwrap(), plain);
    }

    #[test]
    fn substitution_is_refused_on_the_wrong_site() {
        let s = sample();
        let err =
            s.substitute(&json!({"text": "<secret>password</secret>"}), "https://evil.example/phish").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err.problem, UseProblem::NotHere { .. }));
        assert!(text.contains("\"password\" may not be used on evil.example"), "{text}");
        assert!(text.contains("only for *.bank.example"), "{text}");
        assert!(text.contains("Secrets usable on evil.example: <secret>user</secret>."), "{text}");
        // Lookalike hosts and odd spellings get nothing either.
        for url in [
            "https://bank.example.evil.test/",
            "https://bank.example@evil.test/",
            "https:\\\\evil.test\\@x.bank.example",
        ] {
            assert!(s.substitute(&json!("<secret>password</secret>"), url).is_err(), "{url}");
        }
        let err = s.substitute(&json!("<secret>card</secret>"), "chrome://settings").unwrap_err();
        assert!(err.to_string().contains("on this page"), "{err}");
    }

    #[test]
    fn unknown_and_unclosed_tags_are_errors_naming_what_is_usable() {
        let s = sample();
        let err = s.substitute(&json!(["<secret>pin</secret>"]), "https://shop.example/").unwrap_err();
        assert_eq!(
            err.to_string(),
            "There is no secret named \"pin\" (wanted on shop.example). Secrets usable on shop.example: <secret>user</secret>, <secret>card</secret>."
        );
        let err = s.substitute(&json!("<secret>user"), "https://shop.example/").unwrap_err();
        assert_eq!(err.problem, UseProblem::Unclosed);
        let err = Secrets::default().substitute(&json!("<secret>x</secret>"), "https://a.com/").unwrap_err();
        assert!(err.to_string().ends_with("No secrets can be used on a.com."), "{err}");
    }

    #[test]
    fn error_messages_never_contain_values() {
        let s = sample();
        let values = ["hunter2-Secret!", "jane.doe@mail.test", "4111 1111 1111 1111"];
        for (params, url) in [
            (json!("<secret>password</secret>"), "https://evil.test/"),
            (json!("<secret>hunter2-Secret!</secret>"), "https://x.bank.example/"),
            (json!("<secret>card</secret> <secret>user"), "https://shop.example/"),
            (json!("<secret>nope</secret>"), "https://x.bank.example/"),
        ] {
            let err = s.substitute(&params, url).unwrap_err();
            let shown = format!("{err} {err:?}");
            for v in values {
                assert!(!shown.contains(v), "{shown}");
            }
        }
    }

    #[test]
    fn values_in_page_text_and_urls_are_masked() {
        let s = sample();
        let page = "Welcome jane.doe@mail.test! Card 4111 1111 1111 1111 saved.";
        assert_eq!(s.redact(page), "Welcome <secret>user</secret>! Card <secret>card</secret> saved.");
        let url = "https://x.test/cb?email=jane.doe%40mail.test&pw=hunter2-Secret%21&c=4111+1111+1111+1111";
        assert_eq!(
            s.redact(url),
            "https://x.test/cb?email=<secret>user</secret>&pw=<secret>password</secret>&c=<secret>card</secret>"
        );
        assert_eq!(
            s.redact("lower hex: jane.doe%40mail.test hunter2-Secret%21"),
            "lower hex: <secret>user</secret> <secret>password</secret>"
        );
        let json = secrets(&[("q", "say \"hi\"\\now", &[])]);
        assert_eq!(json.redact(r#"{"text":"say \"hi\"\\now"}"#), r#"{"text":"<secret>q</secret>"}"#);
        let html = secrets(&[("h", "a<b>&c", &[])]);
        assert_eq!(html.redact("x a&lt;b&gt;&amp;c y a&lt;b&gt;&c"), "x <secret>h</secret> y <secret>h</secret>");
        assert_eq!(s.redact("nothing to hide"), "nothing to hide");
    }

    #[test]
    fn overlapping_values_leak_no_part_of_either() {
        let s = secrets(&[("short", "abc123", &[]), ("long", "xxabc123yy", &[]), ("tail", "123yyzz", &[])]);
        assert_eq!(s.redact("1 abc123 2 xxabc123yy 3"), "1 <secret>short</secret> 2 <secret>long</secret> 3");
        // Partly overlapping occurrences are masked together, naming both.
        let masked = s.redact("xxabc123yyzz!");
        assert_eq!(masked, "<secret>long</secret><secret>tail</secret>!");
        // A value inside the masking tag's own text is not masked again.
        let tagged = secrets(&[("secret", "secret", &[]), ("s2", "cre", &[])]);
        assert_eq!(tagged.redact("my secret"), "my <secret>secret</secret>");
        // Repeated characters.
        assert_eq!(secrets(&[("a", "aaa", &[])]).redact("aaaa"), "<secret>a</secret>a");
    }

    #[test]
    fn unicode_values_are_substituted_and_masked() {
        let s = secrets(&[("pass", "Пароль-日本語-🔑", &[]), ("k", "é ü", &[])]);
        assert_eq!(s.substitute(&json!("<secret>pass</secret>"), "https://a.com").unwrap(), json!("Пароль-日本語-🔑"));
        assert_eq!(s.redact("→Пароль-日本語-🔑←"), "→<secret>pass</secret>←");
        assert_eq!(
            s.redact("q=%D0%9F%D0%B0%D1%80%D0%BE%D0%BB%D1%8C-%E6%97%A5%E6%9C%AC%E8%AA%9E-%F0%9F%94%91"),
            "q=<secret>pass</secret>"
        );
        assert_eq!(
            s.redact("é ü and %C3%A9+%C3%BC and %c3%a9%20%c3%bc"),
            "<secret>k</secret> and <secret>k</secret> and <secret>k</secret>"
        );
        // Short values are not masked: they would hide ordinary text.
        assert_eq!(secrets(&[("pin", "42", &[])]).redact("42 is 42"), "42 is 42");
    }

    #[test]
    fn json_values_are_masked_everywhere() {
        let s = sample();
        let value =
            json!({"a": ["jane.doe@mail.test", 3], "jane.doe@mail.test": {"x": "pw hunter2-Secret!"}, "n": null});
        assert_eq!(
            s.redact_value(&value),
            json!({"a": ["<secret>user</secret>", 3], "<secret>user</secret>": {"x": "pw <secret>password</secret>"}, "n": null})
        );
    }

    #[test]
    fn masking_a_large_page_is_fast() {
        let list: Vec<StoredSecret> =
            (0..20).map(|i| stored(&format!("s{i}"), &format!("value number {i} with spaces & marks!"), &[])).collect();
        let s = Secrets::from_settings(&list).unwrap();
        let mut page = String::new();
        while page.len() < 40_000 {
            page.push_str("[12]<button aria-label='Buy now'>Add to cart é 日本 /> some text value number ");
        }
        page.push_str("value number 7 with spaces & marks!");
        let started = std::time::Instant::now();
        for _ in 0..10 {
            let out = s.redact(&page);
            assert!(out.ends_with("<secret>s7</secret>"));
        }
        assert!(started.elapsed().as_millis() < 1_000, "{:?} for 10 runs", started.elapsed());
    }

    #[test]
    fn stored_secrets_are_checked() {
        let check = |list: &[StoredSecret]| Secrets::from_settings(list).unwrap_err();
        assert_eq!(check(&[stored(" ", "v", &[])]), SafetyError::SecretWithoutName { position: 1 });
        assert_eq!(check(&[stored("my pass", "value", &[])]), SafetyError::BadSecretName { name: "my pass".into() });
        assert!(matches!(check(&[stored("pässword", "value", &[])]), SafetyError::BadSecretName { .. }));
        assert_eq!(check(&[stored("pw", "   ", &[])]), SafetyError::EmptySecretValue { name: "pw".into() });
        assert_eq!(
            check(&[stored("pw", "value", &["https://a.com"])]),
            SafetyError::BadSecretDomain { name: "pw".into(), glob: "https://a.com".into() }
        );
        let dup = check(&[stored("pw", "first-value", &["*.a.com"]), stored("pw", "second-value", &["x.a.com"])]);
        assert_eq!(dup, SafetyError::DuplicateSecret { name: "pw".into(), overlap: "x.a.com".into() });
        assert!(dup.to_string().contains("Tabwright's settings"), "{dup}");
        assert!(!format!("{dup} {dup:?}").contains("-value"), "{dup}");
        assert!(matches!(
            check(&[stored("pw", "one", &[]), stored("pw", "two", &["b.com"])]),
            SafetyError::DuplicateSecret { .. }
        ));
        assert!(matches!(
            check(&[stored("pw", "one", &["*.a.com"]), stored("pw", "two", &["*.x.a.com"])]),
            SafetyError::DuplicateSecret { .. }
        ));
        // The same name on sites that do not meet is fine: each site gets its own value.
        let s = secrets(&[("pw", "for-a-site", &["a.com"]), ("pw", "for-b-site", &["*.b.com", "B.com"])]);
        assert_eq!(s.list()[1].domains, ["*.b.com", "b.com"]);
        assert_eq!(s.substitute(&json!("<secret>pw</secret>"), "https://a.com/").unwrap(), json!("for-a-site"));
        assert_eq!(s.substitute(&json!("<secret>pw</secret>"), "https://x.b.com/").unwrap(), json!("for-b-site"));
        let err = s.substitute(&json!("<secret>pw</secret>"), "https://c.com/").unwrap_err();
        assert!(err.to_string().contains("only for a.com, *.b.com, b.com"), "{err}");
    }

    #[test]
    fn debug_output_hides_values() {
        let s = sample();
        let shown = format!("{s:?} {:?} {:?}", s.list()[0], stored("n", "hunter2-Secret!", &[]));
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("•••") && shown.contains("password"), "{shown}");
    }

    #[test]
    fn glob_overlap_follows_nesting() {
        assert!(covers("*", "a.com") && covers("*", "*.a.com") && !covers("a.com", "*"));
        assert!(covers("*.a.com", "a.com") && covers("*.a.com", "*.b.a.com") && covers("*.a.com", "x.a.com"));
        assert!(!covers("a.com", "*.a.com") && !covers("*.b.a.com", "a.com") && !covers("*.a.com", "*.ba.com"));
        assert!(covers("a.com", "a.com") && !covers("a.com", "b.com"));
        assert_eq!(narrower("a.com", "*.b.a.com"), None);
    }
}
