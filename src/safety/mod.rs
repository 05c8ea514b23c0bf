//! What keeps a task inside the limits the user set: secrets the LLM may use without seeing
//! them, and a URL firewall that decides which pages the agent may open.
//!
//! Both are built once from the stored settings (so a mistake there is reported before a task
//! starts, with what to fix in Tabwright's settings) and are then plain data the loop consults:
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
    #[error("Secret number {position} has no name. Give it a name made of letters, digits, _, . or - (or remove it) in Tabwright's settings, under Secrets.")]
    SecretWithoutName { position: usize },
    #[error("The secret name \"{name}\" may only contain letters, digits, _, . and -. Rename it in Tabwright's settings, under Secrets.")]
    BadSecretName { name: String },
    #[error("The secret \"{name}\" has no value. Enter its value, or remove the secret, in Tabwright's settings, under Secrets.")]
    EmptySecretValue { name: String },
    #[error("Two secrets are named \"{name}\" and both apply to {overlap}, so Tabwright cannot tell which to use. Rename one, or give them sites that do not overlap, in Tabwright's settings, under Secrets.")]
    DuplicateSecret { name: String, overlap: String },
    #[error("The site \"{glob}\" of the secret \"{name}\" is not valid: use a host name such as example.com or *.example.com, or leave the list empty for every site. Fix it in Tabwright's settings, under Secrets.")]
    BadSecretDomain { name: String, glob: String },
    #[error("The site \"{glob}\" on the {list} list is not valid: use a host name such as example.com, *.example.com, or * for every site. Fix it in Tabwright's settings, under \"Sites the agent may open\".")]
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

/// The host of a page for domain rules: `None` for anything but http(s) URLs with a host.
pub(crate) fn rule_host(url: &str) -> Option<String> {
    crate::web::host_of(url)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(err.to_string().contains("Tabwright's settings"), "{err}");
        let bad = StoredSettings::from_json(json!({"llm": llm, "secrets": [{"name": "a b", "value": "v"}]})).unwrap();
        assert!(matches!(bad.validate(), Err(SettingsError::Safety(SafetyError::BadSecretName { .. }))));
    }
}
