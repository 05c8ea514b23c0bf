//! The URL firewall: which pages the agent may open.
//!
//! The user keeps an allow list and a deny list of host globs (`example.com`, `*.example.com`,
//! `*`). The deny list wins; an empty allow list lets every web host through, a non-empty one
//! only the hosts it names. Some pages are never opened whatever the lists say: browser and
//! extension pages, script, file and data URLs, and the Chrome Web Store — an agent has no
//! business there, and several of them can run code or change the browser itself.
//!
//! The answer is a [`Blocked`] whose message names the rule, because it goes both to the LLM
//! (as the action's error, so it stops trying) and to the user (who may want to change a list).

use super::SafetyError;
use crate::web::{host_matches, is_blank_page, is_host_glob, NotWeb, WebUrl};
use std::fmt;

/// Schemes never opened: browser and extension pages, and URLs that run code or carry content.
const NEVER_OPENED: &[&str] = &[
    "javascript",
    "chrome",
    "chrome-extension",
    "chrome-untrusted",
    "devtools",
    "edge",
    "about",
    "file",
    "data",
    "view-source",
    "blob",
    "filesystem",
];

/// At most this many allowed sites are listed in a message.
const LISTED_SITES: usize = 20;
/// URLs in messages are cut past this many characters.
const SHOWN_URL_CHARS: usize = 200;

/// Allow and deny lists of host globs, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Firewall {
    allowed: Vec<String>,
    denied: Vec<String>,
}

impl Firewall {
    /// Checks the lists as stored: blank entries are skipped, globs are trimmed and
    /// lower-cased, and anything else than a host glob is an error naming the list.
    pub fn from_settings(allowed: &[String], blocked: &[String]) -> Result<Firewall, SafetyError> {
        Ok(Firewall { allowed: globs("allow", allowed)?, denied: globs("deny", blocked)? })
    }

    /// The allow list; empty = every web host.
    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }

    /// The deny list.
    pub fn denied(&self) -> &[String] {
        &self.denied
    }

    /// Whether `url` may be opened (or stayed on, after a redirect).
    pub fn check(&self, url: &str) -> Result<(), Blocked> {
        self.rule_for(url)
            .map_or(Ok(()), |rule| Err(Blocked { url: crate::dom::untrusted(url, SHOWN_URL_CHARS), rule }))
    }

    /// A sentence for the prompt when the lists restrict anything, so the LLM does not waste
    /// steps on sites it cannot open.
    pub fn summary(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.allowed.is_empty() && !self.allowed.iter().any(|g| g == "*") {
            parts.push(format!("Only these sites can be opened: {}.", listed(&self.allowed)));
        }
        if !self.denied.is_empty() {
            parts.push(format!("These sites are blocked: {}.", listed(&self.denied)));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    fn rule_for(&self, url: &str) -> Option<BlockRule> {
        let web = match WebUrl::parse(url) {
            Ok(web) => web,
            Err(NotWeb::NotAbsolute) => return Some(BlockRule::NotAbsolute),
            Err(NotWeb::Invalid) => return Some(BlockRule::Invalid),
            Err(NotWeb::Scheme(scheme)) if scheme == "about" && is_blank_page(url) => return None,
            Err(NotWeb::Scheme(scheme)) if NEVER_OPENED.contains(&scheme.as_str()) => {
                return Some(BlockRule::NeverOpened { scheme })
            }
            Err(NotWeb::Scheme(scheme)) => {
                return Some(BlockRule::NotWeb { scheme: crate::dom::untrusted(&scheme, 40) })
            }
        };
        if web.is_web_store() {
            return Some(BlockRule::WebStore);
        }
        let host = web.host();
        if let Some(glob) = self.denied.iter().find(|g| host_matches(host, g)) {
            return Some(BlockRule::Denied { host: crate::dom::untrusted(host, 100), glob: glob.clone() });
        }
        if !self.allowed.is_empty() && !self.allowed.iter().any(|g| host_matches(host, g)) {
            return Some(BlockRule::NotAllowed { allowed: self.allowed.clone() });
        }
        None
    }
}

fn globs(list: &'static str, stored: &[String]) -> Result<Vec<String>, SafetyError> {
    let mut out: Vec<String> = Vec::new();
    for glob in stored {
        let glob = glob.trim().to_ascii_lowercase();
        if glob.is_empty() || out.contains(&glob) {
            continue;
        }
        if !is_host_glob(&glob) {
            return Err(SafetyError::BadFirewallDomain { list, glob });
        }
        out.push(glob);
    }
    Ok(out)
}

fn listed(globs: &[String]) -> String {
    let mut text = globs.iter().take(LISTED_SITES).cloned().collect::<Vec<_>>().join(", ");
    if globs.len() > LISTED_SITES {
        text.push_str(&format!(" and {} more", globs.len() - LISTED_SITES));
    }
    text
}

/// Why the firewall refused a URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Tabwright's URL firewall blocks {url}: {rule}.")]
pub struct Blocked {
    /// The URL as shown: cut and escaped, safe to put in a prompt.
    pub url: String,
    pub rule: BlockRule,
}

/// The rule that refused a URL; its text completes "Tabwright's URL firewall blocks <url>: …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockRule {
    /// Browser, extension, script, file and data URLs.
    NeverOpened {
        scheme: String,
    },
    /// Another scheme than http(s) (ftp:, mailto:, …).
    NotWeb {
        scheme: String,
    },
    /// No scheme at all.
    NotAbsolute,
    /// An http(s) URL a browser would refuse: no host, or a host or port it cannot read.
    Invalid,
    WebStore,
    Denied {
        host: String,
        glob: String,
    },
    NotAllowed {
        allowed: Vec<String>,
    },
}

impl fmt::Display for BlockRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockRule::NeverOpened { scheme } => write!(f, "{scheme}: URLs are never opened"),
            BlockRule::NotWeb { scheme } => {
                write!(f, "{scheme}: URLs are not web pages; only http:// and https:// URLs are opened")
            }
            BlockRule::NotAbsolute => write!(f, "it is not a full URL; write it with https:// (or http://)"),
            BlockRule::Invalid => {
                write!(f, "it is not a URL a browser can open (its host name or port cannot be read)")
            }
            BlockRule::WebStore => {
                write!(f, "the Chrome Web Store is never opened (Chrome does not let extensions act there)")
            }
            BlockRule::Denied { host, glob } if host == glob => {
                write!(f, "{host} is on the deny list (set in Tabwright's settings)")
            }
            BlockRule::Denied { host, glob } => {
                write!(f, "{host} matches {glob} on the deny list (set in Tabwright's settings)")
            }
            BlockRule::NotAllowed { allowed } => {
                write!(f, "only these sites are allowed: {} (set in Tabwright's settings)", listed(allowed))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn firewall(allowed: &[&str], blocked: &[&str]) -> Firewall {
        let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Firewall::from_settings(&list(allowed), &list(blocked)).unwrap()
    }

    fn reason(fw: &Firewall, url: &str) -> String {
        fw.check(url).expect_err(url).to_string()
    }

    #[test]
    fn open_lists_let_every_web_page_through() {
        let fw = Firewall::default();
        for url in
            ["https://example.com/", "http://127.0.0.1:8080/login", "https://[::1]/", "about:blank", "about:blank#top"]
        {
            assert_eq!(fw.check(url), Ok(()), "{url}");
        }
        assert_eq!(fw.summary(), None);
    }

    #[test]
    fn some_pages_are_never_opened_whatever_the_lists_say() {
        let fw = firewall(&["*"], &[]);
        for (url, words) in [
            ("javascript:alert(1)", "javascript: URLs are never opened"),
            ("  JavaScript:alert(1)", "javascript: URLs are never opened"),
            ("chrome://settings", "chrome: URLs"),
            ("chrome://newtab/", "chrome: URLs"),
            ("chrome-extension://abcdef/options.html", "chrome-extension: URLs"),
            ("edge://flags", "edge: URLs"),
            ("about:config", "about: URLs"),
            ("file:///etc/passwd", "file: URLs"),
            ("data:text/html,<script>x</script>", "data: URLs"),
            ("view-source:https://example.com", "view-source: URLs"),
            ("blob:https://example.com/uuid", "blob: URLs"),
            ("https://chromewebstore.google.com/detail/x", "Chrome Web Store"),
            ("https://CHROME.google.com/webstore/detail/x", "Chrome Web Store"),
            ("https://chrome.google.com/%77ebstore", "Chrome Web Store"),
            ("ftp://example.com/x", "only http:// and https:// URLs"),
            ("mailto:a@example.com", "only http:// and https:// URLs"),
            ("example.com/path", "not a full URL"),
            ("https://", "not a URL a browser can open"),
            ("https://user@:8080/x", "not a URL a browser can open"),
            ("https://evil.com%2f.good.com/", "not a URL a browser can open"),
        ] {
            let text = reason(&fw, url);
            assert!(text.contains(words), "{url}: {text}");
            assert!(text.starts_with("Tabwright's URL firewall blocks "), "{text}");
        }
        assert_eq!(fw.check("https://chrome.google.com/other"), Ok(()));
    }

    #[test]
    fn the_deny_list_blocks_hosts_and_subdomains() {
        let fw = firewall(&[], &["evil.example", "*.tracker.test"]);
        assert_eq!(
            reason(&fw, "https://evil.example/x"),
            "Tabwright's URL firewall blocks https://evil.example/x: evil.example is on the deny list (set in Tabwright's settings)."
        );
        assert!(
            reason(&fw, "https://a.tracker.test/").contains("a.tracker.test matches *.tracker.test on the deny list")
        );
        assert!(fw.check("https://tracker.test/").is_err());
        assert_eq!(fw.check("https://www.evil.example/"), Ok(()));
        assert_eq!(fw.check("https://good.example/"), Ok(()));
    }

    #[test]
    fn a_non_empty_allow_list_lets_only_its_hosts_through() {
        let fw = firewall(&["a.com", "*.b.com"], &[]);
        assert_eq!(fw.check("https://a.com/x"), Ok(()));
        assert_eq!(fw.check("https://b.com/"), Ok(()));
        assert_eq!(fw.check("https://x.y.b.com/"), Ok(()));
        assert_eq!(fw.check("about:blank"), Ok(()));
        assert_eq!(
            reason(&fw, "https://c.com/"),
            "Tabwright's URL firewall blocks https://c.com/: only these sites are allowed: a.com, *.b.com (set in Tabwright's settings)."
        );
        assert!(fw.check("https://www.a.com/").is_err());
        assert!(fw.check("https://nota.com/").is_err());
        assert_eq!(fw.summary().as_deref(), Some("Only these sites can be opened: a.com, *.b.com."));
    }

    #[test]
    fn deny_wins_over_allow() {
        let fw = firewall(&["*.example.com"], &["admin.example.com"]);
        assert_eq!(fw.check("https://shop.example.com/"), Ok(()));
        assert!(reason(&fw, "https://admin.example.com/").contains("on the deny list"));
        let fw = firewall(&["*"], &["*"]);
        assert!(reason(&fw, "https://anything.test/").contains("matches * on the deny list"));
    }

    #[test]
    fn odd_spellings_of_a_host_do_not_slip_past() {
        let fw = firewall(&[], &["evil.com", "127.0.0.1"]);
        for url in [
            "https://EVIL.COM/",
            "https://evil.com.:443/",
            "https://good.com@evil.com/",
            "https://user:pass@evil.com:8443/x",
            "https:\\\\evil.com\\x",
            "https:evil.com",
            "https://ev\til.com/",
            "https://%65vil.com/",
            "http://2130706433/",
            "http://0x7f.0.0.1/",
            "http://127.1/",
        ] {
            assert!(reason(&fw, url).contains("on the deny list"), "{url}");
        }
        // The host is what follows the last @ and precedes a backslash, as in browsers.
        assert!(fw.check("https://evil.com\\@good.com/").is_err());
        assert_eq!(fw.check("https://evil.com.good.com/"), Ok(()));
        // An international name is compared in the form the browser sends: another host.
        assert_eq!(fw.check("https://évil.com/"), Ok(()));
        let puny = crate::web::host_of("https://évil.com/").unwrap();
        assert!(puny.starts_with("xn--") && puny.ends_with(".com"), "{puny}");
        assert!(firewall(&[], &[&puny]).check("https://évil.com/").is_err());
        let open = firewall(&["*.example.com"], &[]);
        assert_eq!(open.check("https://bücher.example.com/"), Ok(()));
        assert!(open.check("https://example.com.evil.net/").is_err());
        assert!(open.check("https://example.com@evil.net/").is_err());
    }

    #[test]
    fn ports_userinfo_and_ipv6_hosts() {
        let fw = firewall(&["localhost", "10.0.0.5"], &[]);
        assert_eq!(fw.check("http://localhost:3000/app"), Ok(()));
        assert_eq!(fw.check("http://admin:pw@LOCALHOST:3000/"), Ok(()));
        assert_eq!(fw.check("http://10.0.0.5:8080/"), Ok(()));
        assert!(fw.check("http://[::1]:3000/").is_err());
        assert_eq!(firewall(&["*"], &[]).check("http://[2001:db8::1]:8080/"), Ok(()));
    }

    #[test]
    fn lists_are_checked_and_normalised() {
        let bad = Firewall::from_settings(&["https://a.com".into()], &[]).unwrap_err();
        assert_eq!(bad, SafetyError::BadFirewallDomain { list: "allow", glob: "https://a.com".into() });
        assert!(bad.to_string().contains("Tabwright's settings"), "{bad}");
        let bad = Firewall::from_settings(&[], &["a.com/x".into()]).unwrap_err();
        assert!(matches!(bad, SafetyError::BadFirewallDomain { list: "deny", .. }));
        let fw = Firewall::from_settings(&[" A.com ".into(), "".into(), "a.com".into()], &[]).unwrap();
        assert_eq!(fw.allowed(), ["a.com"]);
    }

    #[test]
    fn shown_urls_are_cut_and_escaped() {
        let fw = firewall(&[], &["evil.com"]);
        let long = format!("https://evil.com/{}<b>", "x".repeat(500));
        let err = fw.check(&long).unwrap_err();
        assert!(err.url.chars().count() <= SHOWN_URL_CHARS + 1 && err.url.ends_with('…'), "{}", err.url);
        assert!(!fw.check("javascript:'<img>'").unwrap_err().to_string().contains('<'));
    }
}
