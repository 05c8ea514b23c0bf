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
