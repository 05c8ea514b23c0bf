//! Messages for the person, in the browser's language.
//!
//! The core writes its refusals and errors in English: the model reads many of them, and the
//! history and its exports keep them. The person may read Chinese. So a message a person is
//! shown also carries a [`LocaleText`]: the name of the same message in
//! `extension/_locales/*/messages.json` (as `core_<key>`) and the values of its placeholders,
//! in order. The extension's pages show that message through chrome.i18n, and the English when
//! it has none. A test renders every key through `_locales/en` and checks that it reads exactly
//! as the English here, so the two cannot drift apart.

use serde::{Deserialize, Serialize};

/// Where a page finds a core message in its own language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LocaleText {
    /// The message's name in `_locales`, without the `core_` every core message has there.
    pub key: String,
    /// The values of its placeholders, `$1` first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Another message, shown in its place after `args`: the message's last placeholder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Box<LocaleText>>,
    /// Words that were not written for the person (what the model was told), kept as they
    /// are: the pages show them under the message, folded, for whoever wants to know more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What the person can do about it from where they read it (a button beside the message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remedy: Option<Remedy>,
}

/// A way to set right what a message tells of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Remedy {
    /// Tabwright's settings can fix it: the pages offer to open them.
    OpenSettings,
}

impl LocaleText {
    pub fn new<A: ToString>(key: &str, args: impl IntoIterator<Item = A>) -> Self {
        LocaleText {
            key: key.to_string(),
            args: args.into_iter().map(|a| a.to_string()).collect(),
            cause: None,
            detail: None,
            remedy: None,
        }
    }

    /// A message with no placeholders.
    pub fn plain(key: &str) -> Self {
        Self::new::<&str>(key, [])
    }

    /// The message with `cause` as its last placeholder.
    pub fn because(mut self, cause: LocaleText) -> Self {
        self.cause = Some(Box::new(cause));
        self
    }

    /// The message with words for whoever wants more (see `detail`).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The message of something the settings can fix.
    pub fn fixed_in_settings(mut self) -> Self {
        self.remedy = Some(Remedy::OpenSettings);
        self
    }

    /// Whether the settings can fix what this message, or its cause, tells of.
    pub fn settings_can_fix(&self) -> bool {
        self.remedy == Some(Remedy::OpenSettings) || self.cause.as_ref().is_some_and(|c| c.settings_can_fix())
    }
}

/// Words for people in English, with the message the pages show in their own language: what
/// the core writes where no error is involved (an action's description).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub english: String,
    pub text: LocaleText,
}

impl Said {
    /// `english` as `core_<key>` of the pages' messages says it with `args`.
    pub fn new<A: ToString>(key: &str, english: String, args: impl IntoIterator<Item = A>) -> Self {
        Said { english, text: LocaleText::new(key, args) }
    }
}

/// An error or refusal a person may read. `None`: it is shown in English, as it is written
/// (an error the model reads and answers, not one addressed to the person).
pub trait Localize: std::fmt::Display {
    fn locale_text(&self) -> Option<LocaleText>;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `extension/_locales/<locale>/messages.json`.
    pub fn messages(locale: &str) -> serde_json::Map<String, serde_json::Value> {
        let path = format!("{}/extension/_locales/{locale}/messages.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        match crate::json::from_text(&text) {
            Ok(serde_json::Value::Object(map)) => map,
            other => panic!("{path} is not a JSON object: {other:?}"),
        }
    }

    /// `text` as chrome.i18n.getMessage renders it: each `$NAME$` becomes its placeholder's
    /// content, in which `$1`…`$9` are the substitutions; `$$` is a dollar sign.
    pub fn render(messages: &serde_json::Map<String, serde_json::Value>, text: &LocaleText) -> String {
        let name = format!("core_{}", text.key);
        let entry = messages.get(&name).unwrap_or_else(|| panic!("{name} is not in the messages"));
        let mut args = text.args.clone();
        if let Some(cause) = &text.cause {
            args.push(render(messages, cause));
        }
        let template = entry["message"].as_str().unwrap_or_else(|| panic!("{name} has no message"));
        let placeholders = entry.get("placeholders").and_then(|p| p.as_object());
        let mut out = String::new();
        let mut rest = template;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            rest = &rest[at + 1..];
            if let Some(after) = rest.strip_prefix('$') {
                out.push('$');
                rest = after;
                continue;
            }
            let end = rest.find('$').unwrap_or_else(|| panic!("{name}: a $ with no closing $"));
            let placeholder = rest[..end].to_ascii_lowercase();
            rest = &rest[end + 1..];
            let content = placeholders
                .and_then(|p| p.get(&placeholder))
                .and_then(|p| p["content"].as_str())
                .unwrap_or_else(|| panic!("{name}: ${placeholder}$ is not declared"));
            let n: usize = content
                .strip_prefix('$')
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{name}: placeholder {placeholder} is not $1…$9"));
            let arg = args.get(n - 1).unwrap_or_else(|| panic!("{name}: no value for ${n} in {args:?}"));
            out.push_str(arg);
        }
        out.push_str(rest);
        out
    }

    /// The English of `error` and where the pages find it.
    fn said(error: &impl Localize) -> (String, Option<LocaleText>) {
        (error.to_string(), error.locale_text())
    }

    /// One of every message a person may be shown, as the core writes it in English.
    fn every_message() -> Vec<(String, Option<LocaleText>)> {
        use crate::agent::skill::SkillError;
        use crate::agent::TaskEnd;
        use crate::browser::BrowserError;
        use crate::llm::LlmError;
        use crate::protocol::{ProtocolError, Refusal};
        use crate::safety::SafetyError;
        use crate::settings::SettingsError;
        let mut out = Vec::new();
        let settings = crate::settings::tests::samples();
        out.extend(settings.iter().map(said));
        use crate::settings::form::ListError;
        let lists = [
            ListError::HeaderName { line: 2, text: "Bad Name: x".into() },
            ListError::HeaderForbidden { line: 1, text: "Cookie: a".into(), name: "Cookie".into() },
            ListError::HeaderControl { line: 3, text: "X-A: \u{7}".into() },
            ListError::HeaderRepeated { line: 2, text: "x-a: 2".into(), name: "x-a".into() },
            ListError::PriceLine { line: 1, text: "gpt two".into() },
        ];
        out.extend(lists.iter().map(said));
        let safety = [
            SafetyError::SecretWithoutName { position: 2 },
            SafetyError::BadSecretName { name: "a b".into() },
            SafetyError::EmptySecretValue { name: "password".into() },
            SafetyError::DuplicateSecret { name: "password".into(), overlap: "example.com".into() },
            SafetyError::BadSecretDomain { name: "password".into(), glob: "*x*".into() },
            SafetyError::BadFirewallDomain { list: "deny", glob: "http://x".into() },
        ];
        out.extend(safety.iter().map(said));
        let skills = [
            SkillError::NoName,
            SkillError::NameTooLong,
            SkillError::NoSteps,
            SkillError::NoSite("about:blank".into()),
            SkillError::TypedPassword(3),
            SkillError::BadParamName("City".into()),
            SkillError::SameParamName("city".into()),
            SkillError::NotTyped("Lisbon".into()),
            SkillError::NameTaken { name: "Weather".into(), domain: "example.com".into() },
        ];
        out.extend(skills.iter().map(said));
        let http =
            |url: &str, status, message: &str| LlmError::Http { url: url.into(), status, message: message.into() };
        let llm = [
            LlmError::Unreachable { url: "http://localhost:11434/api/chat".into(), reason: "Failed to fetch".into() },
            http("https://api.openai.com/v1/chat/completions", 401, "Incorrect API key provided."),
            http("https://generativelanguage.googleapis.com/v1beta/models/x", 400, "API key not valid."),
            http("http://localhost:11434/api/chat", 403, "forbidden"),
            http("https://api.openai.com/v1/chat/completions", 404, "The model does not exist"),
            http("https://api.anthropic.com/v1/messages", 429, "rate_limit_error"),
            http("https://api.anthropic.com/v1/messages", 529, "Overloaded"),
            http("https://api.openai.com/v1/chat/completions", 418, "I'm a teapot"),
            LlmError::Refusal("I can't help with that.".into()),
            LlmError::RefusedMidAnswer { written: "Here is how to".into(), category: None },
            LlmError::RefusedMidAnswer { written: "Here is how to".into(), category: Some("cyber".into()) },
            LlmError::Billed {
                error: Box::new(LlmError::Truncated),
                usage: crate::llm::Usage::new(42, 1),
                model: "m".into(),
            },
            LlmError::Truncated,
            LlmError::ContextWindowExceeded,
            LlmError::Malformed("expected value at line 1 column 1".into()),
            LlmError::FallbackFailed {
                model: "a".into(),
                error: Box::new(LlmError::Truncated),
                fallback: "b".into(),
                fallback_error: Box::new(LlmError::Truncated),
            },
        ];
        out.extend(llm.iter().map(said));
        let browser = [
            BrowserError::RestrictedPage { url: "chrome://settings".into() },
            BrowserError::TabClosed,
            BrowserError::ElementGone { index: 4 },
        ];
        out.extend(browser.iter().map(said));
        let protocol =
            [ProtocolError::Unreadable("at type: unknown variant".into()), ProtocolError::Version { found: 9 }];
        out.extend(protocol.iter().map(said));
        let refusals = [
            Refusal::NoTaskRunning,
            Refusal::NoTaskPaused,
            Refusal::EmptyAnswer,
            Refusal::NoQuestion,
            Refusal::NoConsent,
            Refusal::EmptyTask,
            Refusal::TaskTooLong { chars: 100_000, max: 20_000 },
            Refusal::EmptyReplay,
            Refusal::BadOutputSchema,
            Refusal::UnsupportedOutputSchema("`pattern` at the top".into()),
            Refusal::BadFiles("two files are named \"cv.pdf\"; rename one".into()),
            Refusal::Restoring,
            Refusal::TabTaken,
            Refusal::ClientActsEnded("Claude Code".into()),
            Refusal::QueueFull(20),
            Refusal::NoSuchTask,
            Refusal::SettingsUnreadable("QUOTA_BYTES exceeded".into()),
            Refusal::SkillsUnreadable("QUOTA_BYTES exceeded".into()),
            Refusal::SkillNotSaved("QUOTA_BYTES exceeded".into()),
            Refusal::SecretExists("bank_password".into()),
            Refusal::SecretNotSaved("QUOTA_BYTES exceeded".into()),
            Refusal::CurrentTabUnknown("No window".into()),
            Refusal::NoOpenTab,
            Refusal::BadStartUrl("file:///etc".into()),
            Refusal::TabNotOpenedAt { url: "https://example.com".into(), reason: "No window".into() },
            Refusal::NewTabNotOpened("No window".into()),
            Refusal::TabWithoutId,
            Refusal::RestrictedStart { url: "chrome://newtab".into() },
            Refusal::Browser(BrowserError::TabClosed),
            Refusal::Settings(SettingsError::NoApiVersion),
            Refusal::Skill(SkillError::NoName),
            Refusal::Llm(LlmError::Truncated),
            Refusal::Protocol(ProtocolError::Version { found: 9 }),
            Refusal::Schedule(crate::schedule::ScheduleError::NoTitle),
        ];
        out.extend(refusals.iter().map(said));
        // Schedules: what is wrong with one, and what the person is told of its runs.
        out.extend(crate::schedule::sample_errors().iter().map(said));
        out.extend(crate::worker::schedules::sample_texts());
        out.extend(crate::worker::clients::sample_texts());
        for end in [
            TaskEnd::not_resumed(&Refusal::Settings(SettingsError::SessionKeyGone)),
            TaskEnd::not_resumed(&Refusal::Browser(BrowserError::TabClosed)),
        ] {
            let TaskEnd::Error { message, locale_text } = end else { unreachable!() };
            out.push((message, locale_text));
        }
        // What the person is asked before an act (`crate::guard`), and why.
        for consent in crate::guard::tests::samples() {
            out.push((consent.act, Some(consent.act_locale_text)));
            out.push((consent.reason, Some(consent.reason_locale_text)));
        }
        // What each action is shown as.
        out.extend(crate::actions::sample_descriptions().into_iter().map(|said| (said.english, Some(said.text))));
        // What the person reads of words written for the model (those are the detail).
        out.push((
            "The model's answer could not be used, so it was told what was wrong and asked again.".into(),
            Some(LocaleText::plain("model_answer_unusable").with_detail("Your answer was not valid JSON.")),
        ));
        out.push((
            "An action failed: click [12] Submit.".into(),
            Some(LocaleText::new("action_failed", ["click [12] Submit"]).with_detail("Element [12] is gone.")),
        ));
        out
    }

    #[test]
    fn what_the_settings_can_fix_offers_them() {
        use crate::llm::LlmError;
        use crate::protocol::Refusal;
        use crate::settings::SettingsError;
        let fixable = |e: &dyn Fn() -> Option<LocaleText>| e().is_some_and(|t| t.settings_can_fix());
        assert!(fixable(&|| SettingsError::NoModel.locale_text()));
        assert!(fixable(&|| Refusal::Settings(SettingsError::NoBaseUrl).locale_text()));
        let http = |status| LlmError::Http { url: "https://api.example/v1".into(), status, message: "no".into() };
        assert!(fixable(&|| http(401).locale_text()), "a refused key");
        assert!(fixable(&|| http(404).locale_text()), "a wrong model or base URL");
        assert!(!fixable(&|| http(429).locale_text()), "rate limits pass with time, not settings");
        assert!(!fixable(&|| http(500).locale_text()));
        let not_resumed = crate::agent::TaskEnd::not_resumed(&Refusal::Settings(SettingsError::SessionKeyGone));
        let crate::agent::TaskEnd::Error { locale_text, .. } = not_resumed else { unreachable!() };
        assert!(locale_text.unwrap().settings_can_fix(), "through its cause");
        assert!(!fixable(&|| Refusal::NoOpenTab.locale_text()));
    }

    #[test]
    fn every_core_message_reads_in_english_exactly_as_the_core_writes_it() {
        let en = messages("en");
        let mut keys = std::collections::BTreeSet::new();
        for (english, text) in every_message() {
            let Some(text) = text else { continue };
            assert_eq!(render(&en, &text), english, "core_{}", text.key);
            keys.insert(format!("core_{}", text.key));
            if let Some(cause) = &text.cause {
                keys.insert(format!("core_{}", cause.key));
            }
        }
        let in_locales: std::collections::BTreeSet<_> = en.keys().filter(|k| k.starts_with("core_")).cloned().collect();
        assert_eq!(in_locales, keys, "_locales/en has exactly the core messages (each shown above)");
    }

    #[test]
    fn every_core_message_is_in_chinese() {
        let zh = messages("zh_CN");
        for (english, text) in every_message() {
            let Some(text) = text else { continue };
            let chinese = render(&zh, &text);
            assert!(chinese.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "core_{}: {chinese}", text.key);
            for arg in &text.args {
                assert!(chinese.contains(arg.as_str()), "core_{}: {chinese} lacks {arg} (from {english})", text.key);
            }
        }
    }

    #[test]
    fn only_errors_for_the_model_stay_english() {
        let english_only: Vec<_> = every_message().into_iter().filter(|(_, t)| t.is_none()).map(|(e, _)| e).collect();
        assert_eq!(english_only.len(), 2, "{english_only:?}");
        assert!(english_only[0].starts_with("With the model a:"), "{english_only:?}");
        assert!(english_only[1].starts_with("Element [4] is no longer on the page"), "{english_only:?}");
    }

    #[test]
    fn rendering_follows_chrome() {
        let mut messages = serde_json::Map::new();
        messages.insert(
            "core_x".into(),
            serde_json::json!({"message": "A $NAME$ costs $$$COST$, $name$.", "placeholders": {
                "name": {"content": "$1"}, "cost": {"content": "$2"}}}),
        );
        assert_eq!(render(&messages, &LocaleText::new("x", ["pen", "2"])), "A pen costs $2, pen.");
    }
}
