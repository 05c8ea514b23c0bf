//! Just enough URL handling for domain rules: the host of a URL and host globs.

/// The lower-cased host of an absolute URL (`https://user@Example.com:8080/x` → `example.com`).
pub fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host =
        if let Some(v6) = host_port.strip_prefix('[') { v6.split(']').next()? } else { host_port.split(':').next()? };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Whether `host` matches a glob: `example.com` exactly, `*.example.com` the domain and any
/// subdomain, `*` anything.
pub fn host_matches(host: &str, glob: &str) -> bool {
    let glob = glob.trim().to_ascii_lowercase();
    if glob == "*" {
        return true;
    }
    match glob.strip_prefix("*.") {
        Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
        None => host == glob,
    }
}

/// Whether `glob` is a host glob [`host_matches`] understands: `*`, `example.com`,
/// `*.example.com`, `localhost`, an IP address.
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

/// Percent-encodes text for a URL query value (`a b&c` → `a%20b%26c`).
pub fn encode_query_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Whether a URL may be navigated to by the agent: http(s) only.
pub fn is_web_url(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")) && host_of(url).is_some()
}

/// Whether Chrome forbids extensions to script this page: anything but http(s), and the
/// Chrome Web Store.
pub fn is_restricted(url: &str) -> bool {
    if !is_web_url(url) {
        return true;
    }
    let host = host_of(url).unwrap_or_default();
    let path = url.split_once("://").map(|(_, r)| r.split_once('/').map_or("", |(_, p)| p)).unwrap_or("");
    host == "chromewebstore.google.com" || (host == "chrome.google.com" && path.starts_with("webstore"))
}

/// A blank or new-tab page: nothing to index, but a fine place to start a task and navigate
/// away from.
pub fn is_blank_page(url: &str) -> bool {
    let u = url.trim().to_ascii_lowercase();
    u.is_empty() || u == "about:blank" || u.starts_with("chrome://newtab") || u.starts_with("chrome://new-tab-page")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_extracted_without_user_port_or_path() {
        assert_eq!(host_of("https://user:pw@Example.COM:8080/a?b#c").as_deref(), Some("example.com"));
        assert_eq!(host_of("http://127.0.0.1:9000").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_of("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(host_of("not a url"), None);
    }

    #[test]
    fn globs_match_domains_and_subdomains() {
        assert!(host_matches("example.com", "*.example.com"));
        assert!(host_matches("a.b.example.com", "*.example.com"));
        assert!(!host_matches("badexample.com", "*.example.com"));
        assert!(host_matches("example.com", "Example.com"));
        assert!(!host_matches("www.example.com", "example.com"));
    }

    #[test]
    fn browser_pages_and_the_web_store_are_restricted() {
        for url in [
            "chrome://extensions",
            "about:blank",
            "https://chromewebstore.google.com/detail/x",
            "https://chrome.google.com/webstore/x",
            "view-source:https://a.com",
        ] {
            assert!(is_restricted(url), "{url}");
        }
        assert!(!is_restricted("https://chrome.google.com/other"));
        assert!(!is_restricted("http://127.0.0.1:8080/login.html"));
    }

    #[test]
    fn host_globs_are_checked_and_queries_encoded() {
        for good in ["*", "example.com", "*.example.com", "localhost", "127.0.0.1", "my-site.co.uk"] {
            assert!(is_host_glob(good), "{good}");
        }
        for bad in ["", "*.", "https://example.com", "example.com/path", "a..b", "**.x.com", "ex ample.com"] {
            assert!(!is_host_glob(bad), "{bad}");
        }
        assert_eq!(encode_query_component("rust wasm & co/é"), "rust%20wasm%20%26%20co%2F%C3%A9");
    }

    #[test]
    fn new_tab_pages_are_blank() {
        assert!(is_blank_page("about:blank"));
        assert!(is_blank_page("chrome://newtab/"));
        assert!(!is_blank_page("chrome://settings"));
    }

    #[test]
    fn only_web_urls_are_navigable() {
        assert!(is_web_url("https://example.com"));
        for bad in ["javascript:alert(1)", "chrome://settings", "file:///etc/passwd", "data:text/html,x", "http://"] {
            assert!(!is_web_url(bad), "{bad}");
        }
    }
}
