//! Where a task may go and act: the sites it may read and the sites it may act on.
//!
//! A task starts with the site of its tab and the sites its text names, for reading and acting
//! (the person sent it there), and the sites the person always allows. Anything else is asked
//! ("Ask before new sites", the default), refused ("Only the sites I list"), or let through
//! ("Act without asking", the person's explicit choice).

use serde::Serialize;
use std::collections::BTreeSet;

/// What the person chose for sites outside a task's scope.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SitePolicy {
    /// Ask before going to, or acting on, a new site.
    #[default]
    Ask,
    /// Only the task's own sites and those listed as always allowed; nothing is asked.
    Listed,
    /// Go and act anywhere without asking (held acts and data crossing still ask).
    Free,
}

/// The sites of one task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Scope {
    pub policy: SitePolicy,
    /// The sites the task started with: its tab's and those the task names. Data goes freely
    /// between them.
    pub start: BTreeSet<String>,
    /// Sites the task may read (acting ones included).
    pub read: BTreeSet<String>,
    /// Sites the task may act on.
    pub act: BTreeSet<String>,
    /// A site the person let the task read once: it may stay there until it leaves.
    pub visiting: Option<String>,
}

impl Scope {
    /// A task's scope as it starts: on `start_url`'s site, with the sites `task` names and the
    /// sites always allowed.
    pub fn new(policy: SitePolicy, always: &[String], start_url: &str, task: &str) -> Scope {
        let mut start: BTreeSet<String> = super::site::sites_named_in(task).into_iter().collect();
        start.extend(super::site::site_of_url(start_url));
        let mut act = start.clone();
        act.extend(always.iter().map(|s| super::site::site_of_host(s.trim())).filter(|s| !s.is_empty()));
        Scope { policy, read: act.clone(), act, start, visiting: None }
    }

    /// A scope as `serde_json` wrote it (the saved task's), or `None` for anything else.
    pub fn from_value(value: &serde_json::Value) -> Option<Scope> {
        let sites = |key: &str| -> Option<BTreeSet<String>> {
            value[key].as_array()?.iter().map(|s| s.as_str().map(str::to_string)).collect()
        };
        let policy = match value["policy"].as_str()? {
            "ask" => SitePolicy::Ask,
            "listed" => SitePolicy::Listed,
            "free" => SitePolicy::Free,
            _ => return None,
        };
        Some(Scope {
            policy,
            start: sites("start")?,
            read: sites("read")?,
            act: sites("act")?,
            visiting: value["visiting"].as_str().map(str::to_string),
        })
    }

    pub fn may_read(&self, site: &str) -> bool {
        self.policy == SitePolicy::Free || self.read.contains(site) || self.visiting.as_deref() == Some(site)
    }

    pub fn may_act(&self, site: &str) -> bool {
        self.policy == SitePolicy::Free || self.act.contains(site)
    }

    /// The task's page is now on `site`: a one-time visit elsewhere is over.
    pub fn now_on(&mut self, site: &str) {
        if self.visiting.as_deref().is_some_and(|v| v != site) {
            self.visiting = None;
        }
    }

    /// A line for the prompt, so the model plans within the scope.
    pub fn prompt_line(&self) -> String {
        let list = |sites: &BTreeSet<String>| sites.iter().map(String::as_str).collect::<Vec<_>>().join(", ");
        let read_only: BTreeSet<String> = self.read.difference(&self.act).cloned().collect();
        let mut line = match self.policy {
            SitePolicy::Free => "This task may go to and act on any site.".to_string(),
            _ => {
                let mut line = format!(
                    "Sites this task may read and act on: {}.",
                    if self.act.is_empty() { "none yet".into() } else { list(&self.act) }
                );
                if !read_only.is_empty() {
                    line.push_str(&format!(" Sites it may only read: {}.", list(&read_only)));
                }
                if let Some(site) = &self.visiting {
                    line.push_str(&format!(" It may read {site} for this visit."));
                }
                line.push_str(match self.policy {
                    SitePolicy::Listed => " Other sites are refused.",
                    _ => " Going to or acting on another site waits for the person's yes.",
                });
                line
            }
        };
        line.push_str(" Acts that buy, pay, send, post or delete, forms with passwords, payment fields or files, downloads of programs, and text read on one site typed into or sent to another wait for the person's yes; if the person says no, do not try again.");
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_starts_on_its_tab_the_sites_it_names_and_those_always_allowed() {
        let scope = Scope::new(
            SitePolicy::Ask,
            &["Booking.com".into()],
            "https://mail.example.com/inbox",
            "Forward it to forum.example.org",
        );
        assert!(scope.may_act("example.com") && scope.may_act("example.org") && scope.may_act("booking.com"));
        assert!(!scope.may_read("evil.example"));
        assert_eq!(scope.start.iter().collect::<Vec<_>>(), ["example.com", "example.org"]);
        let line = scope.prompt_line();
        assert!(line.contains("booking.com, example.com, example.org"), "{line}");
        assert!(line.contains("waits for the person's yes"), "{line}");
        let free = Scope { policy: SitePolicy::Free, ..Scope::default() };
        assert!(
            free.may_act("anything.example")
                && free.prompt_line().starts_with("This task may go to and act on any site.")
        );
    }

    #[test]
    fn a_visit_allowed_once_ends_when_the_task_leaves() {
        let mut scope = Scope::new(SitePolicy::Ask, &[], "https://a.example/", "");
        scope.visiting = Some("b.example".into());
        assert!(scope.may_read("b.example") && !scope.may_act("b.example"));
        scope.now_on("b.example");
        assert!(scope.may_read("b.example"));
        scope.now_on("a.example");
        assert!(!scope.may_read("b.example"));
    }
}
