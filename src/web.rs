//! URLs and hosts as the browser reads them, for every decision that depends on a page's site:
//! the URL firewall, which secrets a page may receive, where scripts may run, which actions and
//! skills a site is offered.
//!
//! One parser decides, the WHATWG URL standard's (userinfo, IPv6 and numeric IPv4 hosts,
//! backslashes, tabs and newlines inside, trailing dots, international names turned into their
//! `xn--` form): in the extension, Chrome's own (`URL`, through web-sys), so that a rule reads a
//! URL exactly as the tab will; natively, the `url` crate, which implements the same standard
//! (and would add 50 to 160 KB to the wasm, with or without its international-name tables).
//! Two checks that read the same URL differently are how a rule gets around another; so nothing
//! here splits a URL by hand.

/// An absolute http(s) URL with a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebUrl {
    /// The host as rules compare it (see [`WebUrl::host`]).
    host: String,
    /// The host as the URL writes it, as a page reads it in `location.hostname`.
    hostname: String,
    /// The path, as written (escapes kept).
    path: String,
}

/// A URL as the standard parser reads it.
struct Parsed {
    /// Lower-case, without the colon.
    scheme: String,
    /// As the URL writes it: IPv6 in brackets, international names in `xn--` form; empty when
    /// none.
    host: String,
    path: String,
}

/// Chrome's own reading (the service worker's `URL`).
#[cfg(target_arch = "wasm32")]
fn parse_url(text: &str) -> Option<Parsed> {
    let url = web_sys::Url::new(text).ok()?;
    Some(Parsed {
        scheme: url.protocol().trim_end_matches(':').to_ascii_lowercase(),
        host: url.hostname(),
        path: url.pathname(),
    })
}

/// The `url` crate's reading, the same standard's.
#[cfg(not(target_arch = "wasm32"))]
fn parse_url(text: &str) -> Option<Parsed> {
    let url = url::Url::parse(text).ok()?;
    Some(Parsed {
        scheme: url.scheme().to_string(),
        host: url.host_str().unwrap_or_default().to_string(),
        path: url.path().to_string(),
    })
}

/// Why a text is not a [`WebUrl`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotWeb {
    /// No scheme: a relative URL, or not a URL at all.
    NotAbsolute,
    /// A URL of another scheme (lower-cased: `javascript`, `file`, `about`, …).
    Scheme(String),
    /// An http(s) URL the browser would refuse (a host with a space or a `%2f`, a bad port).
    Invalid,
}

impl WebUrl {
    /// Reads `text` as the browser would, after dropping the spaces around it.
    pub fn parse(text: &str) -> Result<WebUrl, NotWeb> {
        let text = text.trim();
        let Some(parsed) = parse_url(text) else {
            // Why it does not parse: no scheme, or one whose URL is malformed (a browser page
            // with odd characters is still a browser page).
            return Err(match scheme_of(text) {
                None => NotWeb::NotAbsolute,
                Some(scheme) if scheme == "http" || scheme == "https" => NotWeb::Invalid,
                Some(scheme) => NotWeb::Scheme(scheme),
            });
        };
        if parsed.scheme != "http" && parsed.scheme != "https" {
            return Err(NotWeb::Scheme(parsed.scheme));
        }
        // IPv6 without its brackets; a domain without its trailing dot.
        let host = parsed.host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            return Err(NotWeb::Invalid);
        }
        Ok(WebUrl { host, hostname: parsed.host, path: parsed.path })
    }

    /// The host as rules compare it: lower-case, international names in their `xn--` form,
    /// IPv4 addresses as four decimal numbers, IPv6 without brackets, no trailing dot, no port
    /// and no userinfo.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The host exactly as the page itself reads it (`location.hostname`: IPv6 in brackets, a
    /// trailing dot kept).
    pub fn hostname(&self) -> &str {
        &self.hostname
    }

    /// The Chrome Web Store, where extensions may not act (its old address's path read with
    /// its escapes decoded, as the server reads it).
    pub fn is_web_store(&self) -> bool {
        let path = || percent_encoding::percent_decode_str(&self.path).decode_utf8_lossy().to_ascii_lowercase();
        self.host == "chromewebstore.google.com"
            || (self.host == "chrome.google.com" && path().starts_with("/webstore"))
    }
}

/// The lower-cased scheme `text` starts with, if it starts with one.
pub fn scheme_of(text: &str) -> Option<String> {
    let cleaned: String = text.trim().chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let (scheme, _) = cleaned.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| scheme.to_ascii_lowercase())
}

/// The host of an http(s) URL as rules compare it ([`WebUrl::host`]); `None` for any other.
pub fn host_of(url: &str) -> Option<String> {
    WebUrl::parse(url).ok().map(|u| u.host)
}

/// Whether `text` is an http(s) URL with a host, which the agent may be sent to.
pub fn is_web_url(text: &str) -> bool {
    WebUrl::parse(text).is_ok()
}

/// `about:blank` (with a query or fragment, if any) and Chrome's new-tab pages: nothing to
/// index, but a fine place to start a task and navigate away from.
pub fn is_blank_page(text: &str) -> bool {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return true;
    }
    let Some(url) = parse_url(trimmed) else { return false };
    match url.scheme.as_str() {
        "about" => url.path.eq_ignore_ascii_case("blank"),
        "chrome" => matches!(url.host.as_str(), "newtab" | "new-tab-page"),
        _ => false,
    }
}

/// Whether Chrome forbids extensions to script this page: anything but http(s), and the
/// Chrome Web Store.
pub fn is_restricted(text: &str) -> bool {
    WebUrl::parse(text).map_or(true, |url| url.is_web_store())
}

/// Percent-encodes text for a URL query value (`a b&c` → `a%20b%26c`): everything but ASCII
/// letters, digits and `-_.~`.
pub fn encode_query_component(text: &str) -> String {
    const QUERY_VALUE: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(text, QUERY_VALUE).to_string()
}

/// Decodes `%xx` escapes; `None` when the result is not UTF-8.
pub fn percent_decode(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text).decode_utf8().ok().map(|s| s.into_owned())
}

/// Whether `host` (as [`WebUrl::host`] gives it) matches a glob: `example.com` exactly,
/// `*.example.com` the domain and any subdomain, `*` anything. A glob written with capitals or
/// a trailing dot means the same host.
pub fn host_matches(host: &str, glob: &str) -> bool {
    let glob = glob.trim().trim_end_matches('.').to_ascii_lowercase();
    if glob == "*" {
        return true;
    }
    match glob.strip_prefix("*.") {
        Some(domain) => host == domain || host.strip_suffix(domain).is_some_and(|sub| sub.ends_with('.')),
        None => host == glob,
    }
}

/// Whether `glob` is a host glob [`host_matches`] understands: `*`, `example.com`,
/// `*.example.com`, `localhost`, an IPv4 address. (An IPv6 address, or a name outside ASCII,
/// is not: write the site as the browser shows it.)
pub fn is_host_glob(glob: &str) -> bool {
    let host = glob.strip_prefix("*.").unwrap_or(glob);
    glob == "*"
        || (!host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(url: &str) -> Option<String> {
        host_of(url)
    }

    /// URLs built to make two readers disagree about the host, each with what Chrome's address
    /// bar makes of it (the WHATWG URL standard's answers).
    #[test]
    fn hostile_urls_have_the_host_a_browser_gives_them() {
        let table: &[(&str, Option<&str>)] = &[
            ("https://user:pass@evil.com@good.com/", Some("good.com")),
            ("https://good.com@evil.com/", Some("evil.com")),
            ("https://good.com\\@evil.com/", Some("good.com")),
            ("https:\\\\evil.com\\path", Some("evil.com")),
            ("https:evil.com/", Some("evil.com")),
            ("HTTPS://GOOD.com/", Some("good.com")),
            ("https://good.com./", Some("good.com")),
            ("https://good.com:8443/x", Some("good.com")),
            ("https://[::1]:8080/", Some("::1")),
            ("http://[::ffff:127.0.0.1]/", Some("::ffff:7f00:1")),
            ("http://0x7f.1/", Some("127.0.0.1")),
            ("http://2130706433/", Some("127.0.0.1")),
            ("http://0177.0.0.1/", Some("127.0.0.1")),
            ("https://аррӏе.com/", Some("xn--80ak6aa92e.com")),
            ("https://ev\til.com/", Some("evil.com")),
            ("  https://good.com/  ", Some("good.com")),
            ("https://%65vil%2Ecom/", Some("evil.com")),
            ("https:\\\\evil.com\\@good.com/", Some("evil.com")),
            ("https://ev\nil.com/", Some("evil.com")),
            ("https://evil.com%2f.good.com/", None),
            ("https://%ff.com/", None),
            ("http://@/", None),
            ("mailto:a@b.com", None),
            ("http://1.2.3.4.5/", None),
            ("https://exa mple.com/", None),
            ("//evil.com/path", None),
            ("evil.com", None),
            ("javascript:alert(1)//https://good.com/", None),
            ("blob:https://good.com/0b8b", None),
            ("view-source:https://good.com/", None),
            ("data:text/html,<b>x</b>", None),
            ("file:///etc/passwd", None),
            ("", None),
        ];
        for (url, expected) in table {
            assert_eq!(host(url).as_deref(), *expected, "{url:?}");
        }
    }

    #[test]
    fn only_web_urls_are_navigable() {
        assert!(is_web_url("https://example.com") && is_web_url("http://127.0.0.1:8080/login.html"));
        for bad in [
            "javascript:alert(1)",
            "chrome://settings",
            "file:///etc/passwd",
            "data:text/html,x",
            "http://",
            "https://",
        ] {
            assert!(!is_web_url(bad), "{bad}");
        }
    }

    #[test]
    fn what_is_not_a_web_url_says_why() {
        assert_eq!(WebUrl::parse("javascript:alert(1)"), Err(NotWeb::Scheme("javascript".into())));
        assert_eq!(WebUrl::parse("CHROME://settings"), Err(NotWeb::Scheme("chrome".into())));
        assert_eq!(WebUrl::parse("/relative"), Err(NotWeb::NotAbsolute));
        assert_eq!(WebUrl::parse("https://evil.com%2f.good.com/"), Err(NotWeb::Invalid));
        assert_eq!(WebUrl::parse("https://good.com:99999/"), Err(NotWeb::Invalid));
    }

    #[test]
    fn globs_match_hosts_and_their_subdomains() {
        assert!(host_matches("good.com", "good.com"));
        assert!(host_matches("good.com", "GOOD.com."));
        assert!(host_matches("a.b.good.com", "*.good.com"));
        assert!(host_matches("good.com", "*.good.com"));
        assert!(!host_matches("notgood.com", "*.good.com"), "a suffix is not a subdomain");
        assert!(!host_matches("good.com.evil.net", "good.com"));
        assert!(host_matches("anything", "*"));
        // What the browser reads a hostile URL as is what the glob sees.
        let of = |u: &str| host_of(u).unwrap();
        assert!(!host_matches(&of("https://good.com@evil.com/"), "good.com"));
        assert!(host_matches(&of("https://good.com./"), "good.com"));
        assert!(host_matches(&of("http://2130706433/"), "127.0.0.1"));
        for good in ["*", "example.com", "*.example.com", "localhost", "127.0.0.1", "my-site.co.uk"] {
            assert!(is_host_glob(good), "{good}");
        }
        for bad in ["", "*.", "https://example.com", "example.com/path", "a..b", "**.x.com", "ex ample.com", "::1"] {
            assert!(!is_host_glob(bad), "{bad}");
        }
    }

    #[test]
    fn query_values_are_encoded_and_escapes_decoded() {
        assert_eq!(encode_query_component("a b&c=d/é~"), "a%20b%26c%3Dd%2F%C3%A9~");
        assert_eq!(percent_decode("a%20b%2Fc").as_deref(), Some("a b/c"));
        assert_eq!(percent_decode("%ff"), None);
    }

    #[test]
    fn blank_pages_and_restricted_pages() {
        for blank in ["", "about:blank", "about:blank#x", "ABOUT:BLANK?q", "chrome://newtab/", "chrome://new-tab-page/"]
        {
            assert!(is_blank_page(blank), "{blank}");
        }
        for other in ["about:blankets", "chrome://newtabx/", "chrome://settings", "https://about.blank/"] {
            assert!(!is_blank_page(other), "{other}");
        }
        assert!(is_restricted("https://chromewebstore.google.com/detail/x"));
        assert!(is_restricted("https://chrome.google.com/webstore/category"));
        assert!(
            is_restricted("https://chrome.google.com/%77ebstore")
                == is_restricted("https://chrome.google.com/webstore")
        );
        assert!(is_restricted("chrome://extensions") && is_restricted("file:///tmp/x"));
        assert!(!is_restricted("https://chrome.google.com/intl/en/chrome/"));
        assert!(!is_restricted("https://example.com/"));
    }
}
