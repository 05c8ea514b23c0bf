//! The person stays in charge of their own accounts: what no page can steer the agent into.
//!
//! Page text can talk a model into anything, so nothing here asks the model. Every action is
//! checked before it runs, by mechanism, against three rules; an act a rule holds waits for the
//! person's yes (a [`Consent`]), and a "no" goes back to the model as the action's failed result:
//! - **Scope** ([`Scope`]): the sites a task may read and act on. It starts with the site of the
//!   task's tab and the sites the task names; going to, or acting on, another site asks.
//! - **Held acts** ([`held`]): a click or a submit whose element's name, value, title or form
//!   action says buy, pay, order, send, delete, … (data: `held_words.json`), a form with a
//!   password, payment fields or files, a download of a program or an archive. The element's
//!   facts are read by the page just before the act, and the act carries them back: the page
//!   refuses it if anything changed in between.
//! - **Data crossing** ([`Ledger`]): text typed into, or put in the address of, one site that
//!   another site showed.
//!
//! The guard's state (the scope as answers grew it, the sites where held acts were allowed for
//! the task, the ledger) is plain data, saved with the task so a restarted worker keeps it.

mod held;
mod ledger;
mod scope;
mod site;

pub use held::{held, held_word, risky_download, ActFacts, FieldFacts, FormFacts, HeldBecause};
pub use ledger::{Crossing, Ledger};
pub use scope::{Scope, SitePolicy};
pub use site::{site_of_host, site_of_url, sites_named_in};

use crate::message::LocaleText;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What a consent is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConsentKind {
    /// Going to, or acting on, a site outside the task's scope.
    NewSite,
    /// An act that cannot be undone.
    HeldAct,
    /// Text one site showed, on its way to another.
    DataCrossing,
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConsentAnswer {
    AllowOnce,
    /// For a site: for the rest of the task. For a held act: such acts on this site, for the
    /// rest of the task.
    AllowForTask,
    /// The site, for this task and every later one (kept in the settings' `always_sites`).
    Always,
    Deny,
}

impl ConsentAnswer {
    pub fn allows(self) -> bool {
        self != ConsentAnswer::Deny
    }

    pub fn english(self) -> &'static str {
        match self {
            ConsentAnswer::AllowOnce => "allowed once",
            ConsentAnswer::AllowForTask => "allowed for this task",
            ConsentAnswer::Always => "always allowed",
            ConsentAnswer::Deny => "denied",
        }
    }
}

/// An act waiting for the person's yes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Consent {
    /// Unique within the task.
    pub id: u32,
    pub kind: ConsentKind,
    /// The site it concerns: the new site, the site acted on, the site the text goes to.
    pub site: String,
    /// The exact act, in English: "Open booking.com", "click \"Place order\" on shop.example".
    pub act: String,
    pub act_locale_text: LocaleText,
    /// Why it is held, in English.
    pub reason: String,
    pub reason_locale_text: LocaleText,
    /// The answers the person may give.
    pub choices: Vec<ConsentAnswer>,
}

/// A consent and its answer, as the step's record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decision {
    pub consent: Consent,
    pub answer: ConsentAnswer,
}

/// The guard's state as kept for a restarted worker: whole (every few steps, and after each
/// answer), or only the ledger's pieces added since (after every other step), each as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    Whole(String),
    Added(String),
}

/// What an action does, as far as the guard is concerned (`Action::guarded`).
#[derive(Debug, Clone, PartialEq)]
pub enum Guarded {
    /// Reads the page, or the task's own tabs and history: nothing to hold.
    Read,
    /// Opens a page: `navigate`, `open_tab`, `search`.
    Open { url: String },
    /// Acts on element `index`; `text` is what it types or chooses.
    Element { index: u32, how: ElementAct, text: Option<String> },
    /// Presses keys in the focused element; `enter` sends its form.
    Keys { text: String, enter: bool },
    /// Clicks at a point of the viewport.
    Point { x: f64, y: f64 },
    /// Runs a script in the page (`evaluate`).
    Script,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementAct {
    Click,
    Type,
    Choose,
    Drag,
    Upload,
}

/// The guard's answer for one action.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Go,
    /// Wait for the person (the consent's id is set when it is asked).
    Ask(Box<Consent>),
    /// Not allowed, and nothing to ask: the reason, for the model.
    Refuse(String),
}

/// The guard of one task: plain data, saved with the task (read back by `from_value`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Guard {
    pub scope: Scope,
    /// Sites where the person allowed held acts for the rest of the task.
    pub held_allowed: BTreeSet<String>,
    /// Sites where the task typed one of the person's secrets: a log-in form there is theirs.
    pub secret_sites: BTreeSet<String>,
    pub ledger: Ledger,
    /// The last consent's id.
    pub last_id: u32,
}

/// What the check of one action is given: the action, the facts of its element when it has
/// one, the page's URL, and the kinds of consent already given for this very action.
pub struct Check<'a> {
    pub guarded: &'a Guarded,
    /// The action as people read it ("click \"Place order\"").
    pub described: &'a crate::message::Said,
    pub facts: Option<&'a ActFacts>,
    pub page_url: &'a str,
    /// The consents (kind and site) the person gave once for this very action.
    pub allowed_once: &'a [(ConsentKind, String)],
}

impl Guard {
    pub fn new(policy: SitePolicy, always: &[String], start_url: &str, task: &str) -> Guard {
        let mut ledger = Ledger::default();
        ledger.note_own(task);
        Guard { scope: Scope::new(policy, always, start_url, task), ledger, ..Guard::default() }
    }

    /// A guard as `serde_json` wrote it (the saved task's), or `None` for anything else: a
    /// restored task without its guard starts a new one from its page, asking again.
    pub fn from_value(value: &serde_json::Value) -> Option<Guard> {
        let sites = |key: &str| -> Option<BTreeSet<String>> {
            value[key].as_array()?.iter().map(|s| s.as_str().map(str::to_string)).collect()
        };
        Some(Guard {
            scope: Scope::from_value(&value["scope"])?,
            held_allowed: sites("held_allowed")?,
            secret_sites: sites("secret_sites")?,
            ledger: Ledger::from_value(&value["ledger"])?,
            last_id: u32::try_from(value["last_id"].as_u64()?).ok()?,
        })
    }

    /// Lets the task read `url`'s site, and carry data to it, without asking (a search
    /// engine): acting there still asks.
    pub fn allow_reading_freely(&mut self, url: &str) {
        if let Some(site) = site_of_url(url) {
            self.scope.read.insert(site.clone());
            self.scope.start.insert(site);
        }
    }

    /// Whether one action may run now.
    pub fn check(&self, c: &Check<'_>) -> Verdict {
        let once = |kind: ConsentKind, site: &str| c.allowed_once.iter().any(|(k, s)| *k == kind && s == site);
        let page_site = site_of_url(c.page_url).unwrap_or_default();
        let doc_site = c.facts.and_then(|f| site_of_url(&f.document_url)).unwrap_or_else(|| page_site.clone());
        match c.guarded {
            Guarded::Read => Verdict::Go,
            Guarded::Open { url } => {
                let Some(site) = site_of_url(url) else { return Verdict::Go };
                if !once(ConsentKind::NewSite, &site) && !self.scope.may_read(&site) {
                    return self.new_site(&site, false, c.described);
                }
                if let Some(file) = risky_download(url).filter(|_| !once(ConsentKind::HeldAct, &site)) {
                    return self.held_act(&site, c.described, &HeldBecause::Download { file });
                }
                self.crossing(&url_data(url), &site, c, "address")
            }
            Guarded::Element { how, text, .. } => {
                // A link to another site is read there, not acted on.
                if let Some(facts) = c.facts.filter(|f| *how == ElementAct::Click && !f.href.is_empty() && !f.submits) {
                    if let Some(site) = site_of_url(&facts.href).filter(|s| *s != doc_site) {
                        if !once(ConsentKind::NewSite, &site) && !self.scope.may_read(&site) {
                            return self.new_site(&site, false, c.described);
                        }
                    }
                }
                if !once(ConsentKind::NewSite, &doc_site) && !self.scope.may_act(&doc_site) {
                    return self.new_site(&doc_site, true, c.described);
                }
                if matches!(how, ElementAct::Click) {
                    if let Some(verdict) = self.form_elsewhere(&doc_site, c) {
                        return verdict;
                    }
                }
                // A choice in a dropdown may end in a real click on the control and on the
                // option, as a click does: the control's facts and the option's words are held
                // alike.
                if matches!(how, ElementAct::Click | ElementAct::Choose) && !once(ConsentKind::HeldAct, &doc_site) {
                    if let Some(verdict) = self.held_facts(&doc_site, c) {
                        return verdict;
                    }
                    let option = text
                        .as_deref()
                        .filter(|_| *how == ElementAct::Choose && !self.held_allowed.contains(&doc_site));
                    if let Some(word) = option.and_then(|t| held_word(t, false)) {
                        return self.held_act(&doc_site, c.described, &HeldBecause::Says { word, place: "text" });
                    }
                }
                match text {
                    Some(text) => self.crossing(text, &doc_site, c, "field"),
                    None => Verdict::Go,
                }
            }
            Guarded::Keys { text, enter } => {
                if !once(ConsentKind::NewSite, &doc_site) && !self.scope.may_act(&doc_site) {
                    return self.new_site(&doc_site, true, c.described);
                }
                if *enter {
                    if let Some(verdict) = self.form_elsewhere(&doc_site, c) {
                        return verdict;
                    }
                }
                if *enter && !once(ConsentKind::HeldAct, &doc_site) {
                    if let Some(verdict) = self.held_facts(&doc_site, c) {
                        return verdict;
                    }
                }
                self.crossing(text, &doc_site, c, "field")
            }
            Guarded::Point { .. } => {
                if !once(ConsentKind::NewSite, &doc_site) && !self.scope.may_act(&doc_site) {
                    return self.new_site(&doc_site, true, c.described);
                }
                if let Some(verdict) = self.form_elsewhere(&doc_site, c) {
                    return verdict;
                }
                if once(ConsentKind::HeldAct, &doc_site) {
                    return Verdict::Go;
                }
                self.held_facts(&doc_site, c).unwrap_or(Verdict::Go)
            }
            Guarded::Script => {
                if !once(ConsentKind::NewSite, &page_site) && !self.scope.may_act(&page_site) {
                    return self.new_site(&page_site, true, c.described);
                }
                if once(ConsentKind::HeldAct, &page_site) || self.held_allowed.contains(&page_site) {
                    return Verdict::Go;
                }
                self.consent(
                    ConsentKind::HeldAct,
                    &page_site,
                    act_on(c.described, &page_site),
                    ("a script can do anything on the page".into(), LocaleText::plain("held_script")),
                    vec![ConsentAnswer::AllowOnce, ConsentAnswer::AllowForTask, ConsentAnswer::Deny],
                )
            }
        }
    }

    /// The page the task is on now: reading it may need a yes (a redirect, a script that
    /// moved the page, a tab a page opened).
    pub fn check_page(&mut self, url: &str) -> Verdict {
        let Some(site) = site_of_url(url) else { return Verdict::Go };
        self.scope.now_on(&site);
        if self.scope.may_read(&site) {
            return Verdict::Go;
        }
        let said = crate::message::Said::new("consent_stay_on", format!("Read {site}, where the page went"), [&site]);
        let consent = self.consent(
            ConsentKind::NewSite,
            &site,
            said,
            (
                format!("{site} is not among the sites of this task"),
                LocaleText::new("consent_reason_new_site", [&site]),
            ),
            self.site_choices(),
        );
        match (self.scope.policy, consent) {
            (SitePolicy::Listed, _) => Verdict::Refuse(format!(
                "{site} is not among the sites this task may open (the settings allow only those listed)"
            )),
            (_, consent) => consent,
        }
    }

    /// Notes the person's answer; true when the act may go on.
    pub fn answered(&mut self, consent: &Consent, answer: ConsentAnswer) -> bool {
        let site = consent.site.clone();
        match (consent.kind, answer) {
            (_, ConsentAnswer::Deny) => return false,
            (ConsentKind::NewSite, ConsentAnswer::AllowOnce) => {
                if self.scope.read.contains(&site) {
                    // Asked to act on a site it may read: once means this act only.
                } else {
                    self.scope.visiting = Some(site);
                }
            }
            (ConsentKind::NewSite, ConsentAnswer::AllowForTask | ConsentAnswer::Always) => {
                self.scope.read.insert(site.clone());
                let only_reads =
                    consent.act_locale_text.key == "consent_open" || consent.act_locale_text.key == "consent_stay_on";
                if !only_reads || answer == ConsentAnswer::Always {
                    self.scope.act.insert(site);
                }
            }
            (ConsentKind::HeldAct, ConsentAnswer::AllowForTask) => {
                self.held_allowed.insert(site);
            }
            _ => {}
        }
        true
    }

    /// What the page showed, for the ledger (`document_url`'s site).
    pub fn note_read(&mut self, document_url: &str, text: &str) {
        if let Some(site) = site_of_url(document_url) {
            self.ledger.note(&site, text);
        }
    }

    /// Text the person wrote (an answer): it may go anywhere.
    pub fn note_own(&mut self, text: &str) {
        self.ledger.note_own(text);
    }

    /// A form the act sends to another site than its page's: that site must be one the task
    /// may act on, and what the form carries must not be another site's data.
    fn form_elsewhere(&self, doc_site: &str, c: &Check<'_>) -> Option<Verdict> {
        let form = c.facts?.form_sent()?;
        let to = site_of_url(&form.action).filter(|to| to != doc_site)?;
        let once = c.allowed_once.iter().any(|(k, s)| *k == ConsentKind::NewSite && *s == to);
        if !once && !self.scope.may_act(&to) {
            if self.scope.policy == SitePolicy::Listed {
                return Some(Verdict::Refuse(format!(
                    "It sends a form to {to}, which is not among the sites this task may act on (the settings allow only the task's own sites and those listed)."
                )));
            }
            return Some(self.consent(
                ConsentKind::NewSite,
                &to,
                act_on(c.described, doc_site),
                (
                    format!("it sends a form to {to}, which is not among the sites of this task"),
                    LocaleText::new("consent_reason_form_elsewhere", [&to]),
                ),
                self.site_choices(),
            ));
        }
        let values: Vec<&str> = form.fields.iter().map(|f| f.value.as_str()).filter(|v| !v.is_empty()).collect();
        match self.crossing(&values.join("\n"), &to, c, "form") {
            Verdict::Go => None,
            verdict => Some(verdict),
        }
    }

    fn held_facts(&self, site: &str, c: &Check<'_>) -> Option<Verdict> {
        let because = held(c.facts?)?;
        if self.held_allowed.contains(site) {
            return None;
        }
        if because == HeldBecause::Password && self.secret_sites.contains(site) {
            return None;
        }
        Some(self.held_act(site, c.described, &because))
    }

    fn held_act(&self, site: &str, described: &crate::message::Said, because: &HeldBecause) -> Verdict {
        self.consent(
            ConsentKind::HeldAct,
            site,
            act_on(described, site),
            (because.english(), because.locale_text()),
            vec![ConsentAnswer::AllowOnce, ConsentAnswer::AllowForTask, ConsentAnswer::Deny],
        )
    }

    fn new_site(&self, site: &str, acting: bool, described: &crate::message::Said) -> Verdict {
        if self.scope.policy == SitePolicy::Listed {
            return Verdict::Refuse(format!(
                "{site} is not among the sites this task may {} (the settings allow only the task's own sites and those listed). Stay on the task's sites.",
                if acting { "act on" } else { "open" }
            ));
        }
        let (said, reason) = if acting {
            let reason = if self.scope.may_read(site) {
                (
                    format!("this task may read {site} but not act on it"),
                    LocaleText::new("consent_reason_read_only", [site]),
                )
            } else {
                (
                    format!("{site} is not among the sites of this task"),
                    LocaleText::new("consent_reason_new_site", [site]),
                )
            };
            (act_on(described, site), reason)
        } else {
            let said = crate::message::Said::new("consent_open", format!("Open {site}"), [site]);
            (
                said,
                (
                    format!("{site} is not among the sites of this task"),
                    LocaleText::new("consent_reason_new_site", [site]),
                ),
            )
        };
        self.consent(ConsentKind::NewSite, site, said, reason, self.site_choices())
    }

    fn site_choices(&self) -> Vec<ConsentAnswer> {
        vec![ConsentAnswer::AllowOnce, ConsentAnswer::AllowForTask, ConsentAnswer::Always, ConsentAnswer::Deny]
    }

    fn crossing(&self, text: &str, to_site: &str, c: &Check<'_>, into: &str) -> Verdict {
        let once = c.allowed_once.iter().any(|(k, s)| *k == ConsentKind::DataCrossing && s == to_site);
        if once || crate::safety::only_placeholders(text) {
            return Verdict::Go;
        }
        let free: Vec<String> = self.scope.start.iter().cloned().collect();
        let Some(crossing) = self.ledger.crossing(text, to_site, &free) else { return Verdict::Go };
        let from = crossing.from_site;
        let excerpt = crate::dom::untrusted(&crossing.excerpt, 60);
        let (english, key) = match into {
            "address" => (
                format!("Send \u{201c}{excerpt}\u{201d}, read on {from}, to {to_site} in an address"),
                "consent_data_address",
            ),
            "form" => {
                (format!("Send \u{201c}{excerpt}\u{201d}, read on {from}, to {to_site} in a form"), "consent_data_form")
            }
            _ => (format!("Type \u{201c}{excerpt}\u{201d}, read on {from}, into {to_site}"), "consent_data_field"),
        };
        self.consent(
            ConsentKind::DataCrossing,
            to_site,
            crate::message::Said::new(key, english, [excerpt.as_str(), from.as_str(), to_site]),
            (
                format!("it was read on {from}; what a site showed stays with it unless the person says yes"),
                LocaleText::new("consent_reason_data", [&from]),
            ),
            vec![ConsentAnswer::AllowOnce, ConsentAnswer::Deny],
        )
    }

    fn consent(
        &self,
        kind: ConsentKind,
        site: &str,
        said: crate::message::Said,
        (reason, reason_locale_text): (String, LocaleText),
        choices: Vec<ConsentAnswer>,
    ) -> Verdict {
        Verdict::Ask(Box::new(Consent {
            id: 0,
            kind,
            site: site.to_string(),
            act: said.english,
            act_locale_text: said.text,
            reason,
            reason_locale_text,
            choices,
        }))
    }

    /// The next consent's id.
    pub fn next_id(&mut self) -> u32 {
        self.last_id += 1;
        self.last_id
    }
}

/// "click Place order on shop.example": the act as the person reads it, without the number
/// the model knows the element by.
fn act_on(described: &crate::message::Said, site: &str) -> crate::message::Said {
    let mut text = described.text.clone();
    text.args = text.args.iter().map(|a| without_index(a)).collect();
    crate::message::Said {
        english: format!("{} on {site}", without_index(&described.english)),
        text: LocaleText::new("consent_act_on", [site]).because(text),
    }
}

/// `text` without an element's number (`[12] `) where it has one.
fn without_index(text: &str) -> String {
    if let Some(open) = text.find('[') {
        if let Some(close) = text[open..].find("] ").map(|c| open + c) {
            if close > open + 1 && text[open + 1..close].bytes().all(|b| b.is_ascii_digit()) {
                return format!("{}{}", &text[..open], &text[close + 2..]);
            }
        }
    }
    text.to_string()
}

/// The part of a URL that can carry data (its path, query and fragment), its escapes read.
fn url_data(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let data = rest.find(['/', '?', '#']).map_or("", |at| &rest[at..]).replace('+', " ");
    percent_encoding::percent_decode_str(&data).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
pub(crate) mod tests;
