//! What keeps a task inside the limits the user set: secrets the LLM may use without seeing
//! them, and a URL firewall that decides which pages the agent may open.
//!
//! Both are built once from the stored settings (so a mistake there is reported before a task
//! starts, with what to fix in Tabwright's options) and are then plain data the loop consults:
//! - [`Secrets`]: the LLM writes `<secret>name</secret>`; the loop swaps in the value only when
//!   the action runs on a site the secret is meant for, and masks values in everything shown
//!   or stored (prompts, history, events).
//! - [`Firewall`]: allow and deny lists of host globs plus pages that are never opened
//!   (browser pages, script and file URLs, the Chrome Web Store).
//!
//! Host names are read the way a browser reads them (backslashes, percent-escapes, numeric
//! IPv4 forms, a trailing dot), so a URL cannot slip past a rule by being spelled oddly.

mod firewall;
mod secrets;

pub use firewall::{BlockRule, Blocked, Firewall};
pub use secrets::{only_placeholders, Secret, SecretUseError, Secrets, StoredSecret, UseProblem};

/// Everything the safety settings produce, ready for the loop.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Safety {
    pub secrets: Secrets,
    pub firewall: Firewall,
}

impl Safety {
    /// Checks the stored secrets and domain lists.
    pub fn from_settings(
        secrets: &[StoredSecret],
        allowed: &[String],
        blocked: &[String],
    ) -> Result<Self, SafetyError> {
        Ok(Safety { secrets: Secrets::from_settings(secrets)?, firewall: Firewall::from_settings(allowed, blocked)? })
    }
}

/// A safety setting that cannot be used; the message says what to change in the options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SafetyError {
    #[error("Secret number {position} has no name. Give it a name made of letters, digits, _, . or - (or remove it) in Tabwright's options, under Secrets.")]
    SecretWithoutName { position: usize },
    #[error("The secret name \"{name}\" may only contain letters, digits, _, . and -. Rename it in Tabwright's options, under Secrets.")]
    BadSecretName { name: String },
    #[error("The secret \"{name}\" has no value. Enter its value, or remove the secret, in Tabwright's options, under Secrets.")]
    EmptySecretValue { name: String },
    #[error("Two secrets are named \"{name}\" and both apply to {overlap}, so Tabwright cannot tell which to use. Rename one, or give them sites that do not overlap, in Tabwright's options, under Secrets.")]
    DuplicateSecret { name: String, overlap: String },
    #[error("The site \"{glob}\" of the secret \"{name}\" is not valid: use a host name such as example.com or *.example.com, or leave the list empty for every site. Fix it in Tabwright's options, under Secrets.")]
    BadSecretDomain { name: String, glob: String },
    #[error("The site \"{glob}\" on the {list} list is not valid: use a host name such as example.com, *.example.com, or * for every site. Fix it in Tabwright's options, under \"Sites the agent may open\".")]
    BadFirewallDomain { list: &'static str, glob: String },
}

impl crate::message::Localize for SafetyError {
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        use crate::message::LocaleText as L;
        Some(match self {
            SafetyError::SecretWithoutName { position } => L::new("safety_secret_without_name", [position]),
            SafetyError::BadSecretName { name } => L::new("safety_bad_secret_name", [name]),
            SafetyError::EmptySecretValue { name } => L::new("safety_empty_secret_value", [name]),
            SafetyError::DuplicateSecret { name, overlap } => L::new("safety_duplicate_secret", [name, overlap]),
            SafetyError::BadSecretDomain { name, glob } => L::new("safety_bad_secret_domain", [name, glob]),
            SafetyError::BadFirewallDomain { list, glob } => L::new("safety_bad_firewall_domain", [*list, glob]),
        })
    }
}

/// A URL as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleUrl {
    /// Lower-cased, without the colon; empty when the URL has none (a relative URL).
    pub scheme: String,
    /// For http(s): the host as a browser resolves it, lower-cased, without port, userinfo,
    /// brackets or trailing dots, numeric IPv4 forms written as a.b.c.d. `None` when empty.
    pub host: Option<String>,
    /// For http(s): what follows the host (path, query, fragment), percent-decoded where
    /// possible and lower-cased.
    pub rest: String,
}

impl RuleUrl {
    pub fn parse(url: &str) -> RuleUrl {
        // Browsers drop surrounding spaces and control characters, and tabs and newlines
        // anywhere.
        let cleaned: String =
            url.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
        let Some((scheme, after)) = split_scheme(&cleaned) else {
            return RuleUrl { scheme: String::new(), host: None, rest: String::new() };
        };
        if scheme != "http" && scheme != "https" {
            return RuleUrl { scheme, host: None, rest: after.to_ascii_lowercase() };
        }
        // Web URLs: any run of slashes or backslashes before the host is ignored.
        let after = after.trim_start_matches(['/', '\\']);
        let end = after.find(['/', '\\', '?', '#']).unwrap_or(after.len());
        let (authority, rest) = after.split_at(end);
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let raw_host = match host_port.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(""),
            None => host_port.split(':').next().unwrap_or(""),
        };
        let host = percent_decode(raw_host).map(|h| canonical_host(&h)).filter(|h| !h.is_empty());
        let rest = percent_decode(rest).unwrap_or_else(|| rest.to_string()).to_lowercase();
        RuleUrl { scheme, host, rest }
    }

    pub fn is_web(&self) -> bool {
        self.scheme == "http" || self.scheme == "https"
    }
}

/// The host of a page for domain rules: `None` for anything but http(s) URLs with a host.
pub(crate) fn rule_host(url: &str) -> Option<String> {
    let parsed = RuleUrl::parse(url);
    if parsed.is_web() {
        parsed.host
    } else {
        None
    }
}

/// `("https", rest)` for `HTTPS:rest`; `None` when the text does not start with a scheme.
fn split_scheme(url: &str) -> Option<(String, &str)> {
    let (scheme, rest) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| (scheme.to_ascii_lowercase(), rest))
}

/// Decodes `%xx` escapes; `None` when the result is not UTF-8 (a browser rejects such a host).
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Lower-cases a host, writes numeric IPv4 forms (`0x7f.1`, `2130706433`) as dotted decimal,
/// and drops trailing dots.
fn canonical_host(host: &str) -> String {
    let lower = host.to_lowercase();
    let trimmed = lower.trim_end_matches('.');
    match parse_ipv4(trimmed) {
        Some([a, b, c, d]) => format!("{a}.{b}.{c}.{d}"),
        None => trimmed.to_string(),
    }
}

/// The IPv4 address a browser reads in a host whose last label is a number, in any of the
/// forms URLs allow: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x).
fn parse_ipv4(host: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = host.split('.').collect();
    let last = parts.last()?;
    if last.is_empty() || parts.len() > 4 {
        return None;
    }
    let number = |p: &str| -> Option<u64> {
        if p.is_empty() {
            return None;
        }
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (p, 10)
        };
        if digits.is_empty() {
            return Some(0);
        }
        if !digits.chars().all(|c| c.is_digit(radix)) || digits.len() > 20 {
            return None;
        }
        u64::from_str_radix(digits, radix).ok()
    };
    let values: Vec<u64> = parts.iter().map(|p| number(p)).collect::<Option<_>>()?;
    let (head, tail) = values.split_at(values.len() - 1);
    if head.iter().any(|&v| v > 255) {
        return None;
    }
    let tail_bits = 8 * (5 - values.len() as u32);
    if tail[0] >= 1u64 << tail_bits {
        return None;
    }
    let mut address = tail[0];
    for (i, &v) in head.iter().enumerate() {
        address |= v << (8 * (3 - i as u32));
    }
    Some((address as u32).to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(url: &str) -> Option<String> {
        RuleUrl::parse(url).host
    }

    #[test]
    fn stored_settings_carry_secrets_and_lists() {
        use crate::settings::{SettingsError, StoredSettings};
        use serde_json::json;
        let llm = json!({"base_url": "http://127.0.0.1:9/v1", "model": "m"});
        // An older store without these fields still validates, with nothing restricted.
        let old = StoredSettings::from_json(json!({ "llm": llm })).unwrap().validate().unwrap();
        assert_eq!(old.safety, Safety::default());
        let stored = StoredSettings::from_json(json!({
            "llm": llm,
            "secrets": [{"name": "pw", "value": "hunter2-x", "domains": ["*.bank.example"]}, {"name": "mail", "value": "a@b.test"}],
            "allowed_domains": ["*.bank.example", "Example.com"],
            "blocked_domains": ["evil.example"],
        }))
        .unwrap();
        assert!(!format!("{stored:?}").contains("hunter2"));
        let settings = stored.validate().unwrap();
        assert_eq!(settings.safety.secrets.names_for("https://www.bank.example/"), ["pw", "mail"]);
        assert_eq!(settings.safety.firewall.allowed(), ["*.bank.example", "example.com"]);
        assert!(settings.safety.firewall.check("https://evil.example/").is_err());
        assert!(!format!("{settings:?}").contains("hunter2"));
        let bad = StoredSettings::from_json(json!({"llm": llm, "blocked_domains": ["http://x.com"]})).unwrap();
        let err = bad.validate().unwrap_err();
        assert!(matches!(err, SettingsError::Safety(SafetyError::BadFirewallDomain { list: "deny", .. })));
        assert!(err.to_string().contains("Tabwright's options"), "{err}");
        let bad = StoredSettings::from_json(json!({"llm": llm, "secrets": [{"name": "a b", "value": "v"}]})).unwrap();
        assert!(matches!(bad.validate(), Err(SettingsError::Safety(SafetyError::BadSecretName { .. }))));
    }

    #[test]
    fn hosts_are_read_as_a_browser_reads_them() {
        assert_eq!(host("https://user:pw@Example.COM:8080/a?b#c").as_deref(), Some("example.com"));
        assert_eq!(host("  HTTPS://Example.com./").as_deref(), Some("example.com"));
        assert_eq!(host("https:\\\\evil.com\\@good.com/").as_deref(), Some("evil.com"));
        assert_eq!(host("https:evil.com").as_deref(), Some("evil.com"));
        assert_eq!(host("https://ev\nil.com/").as_deref(), Some("evil.com"));
        assert_eq!(host("https://%65vil%2Ecom/").as_deref(), Some("evil.com"));
        assert_eq!(host("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(host("http://2130706433/").as_deref(), Some("127.0.0.1"));
        assert_eq!(host("http://0x7f.1/").as_deref(), Some("127.0.0.1"));
        assert_eq!(host("http://0177.0.0.01/").as_deref(), Some("127.0.0.1"));
        assert_eq!(host("http://1.2.3.4.5/").as_deref(), Some("1.2.3.4.5"));
        assert_eq!(host("http://@/"), None);
        assert_eq!(host("https://%zz.com/").as_deref(), Some("%zz.com"));
        assert_eq!(host("https://%ff.com/"), None);
        assert_eq!(host("mailto:a@b.com"), None);
        assert_eq!(RuleUrl::parse("JavaScript:alert(1)").scheme, "javascript");
        assert_eq!(RuleUrl::parse("example.com/x").scheme, "");
        assert_eq!(rule_host("about:blank"), None);
        assert_eq!(rule_host("https://a.com").as_deref(), Some("a.com"));
    }
}
