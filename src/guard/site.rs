//! Sites: what a scope is made of. A site is a host's registrable part (`mail.example.com` and
//! `www.example.com` are both `example.com`), the unit a person thinks in when they say "on my
//! shop". Without the whole public-suffix list, the common two-label suffixes of country
//! domains (`co.uk`, `com.au`, `com.cn`, …) are known; an IP address or a one-label host
//! (`localhost`) is a site of its own.

/// Second-level labels that, under a two-letter country domain, are a public suffix
/// (`example.co.uk` is a site, `co.uk` is not).
const SECOND_LEVEL: &[&str] = &["co", "com", "net", "org", "gov", "edu", "ac", "or", "ne", "go", "gob", "mil", "nic"];

/// The site a host belongs to (lower case, as the URL reader gives hosts).
pub fn site_of_host(host: &str) -> String {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let is_ip = host.contains(':')
        || host.split('.').all(|label| !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()));
    if is_ip || !host.contains('.') {
        return host;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let n = labels.len();
    let keep = if n >= 3 && labels[n - 1].len() == 2 && SECOND_LEVEL.contains(&labels[n - 2]) { 3 } else { 2 };
    labels[n.saturating_sub(keep)..].join(".")
}

/// The site of a web page's URL; `None` for anything but http(s) URLs with a host.
pub fn site_of_url(url: &str) -> Option<String> {
    crate::web::host_of(url).map(|host| site_of_host(&host))
}

/// The sites a task's text names: web addresses (`https://booking.com/…`) and host names
/// (`booking.com`, `mail.example.org`), each as its site. Words that merely contain a dot
/// ("e.g.", "3.5") are not hosts: the last label must be letters, or the host an IPv4 address
/// or `localhost` with a scheme or a port.
pub fn sites_named_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let separators = |c: char| c.is_whitespace() || "\"'<>()[]{},;!|`“”‘’「」（），；".contains(c);
    for word in text.split(separators) {
        let lower = word.to_ascii_lowercase();
        let (rest, with_scheme) = match lower.split_once("://") {
            Some((scheme, rest)) if scheme == "http" || scheme == "https" => (rest.to_string(), true),
            Some(_) => continue,
            None => (lower.clone(), false),
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let authority = authority.rsplit('@').next().unwrap_or_default();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => (host, true),
            _ => (authority, false),
        };
        let host = host.trim_end_matches(['.', ':']);
        if let Some(site) = named_host(host, with_scheme || port) {
            if !out.contains(&site) {
                out.push(site);
            }
        }
    }
    out
}

fn named_host(host: &str, addressed: bool) -> Option<String> {
    if host == "localhost" {
        return addressed.then(|| host.to_string());
    }
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() < 2
        || labels.iter().any(|l| l.is_empty() || !l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    {
        return None;
    }
    let numeric = labels.iter().all(|l| l.bytes().all(|b| b.is_ascii_digit()));
    if numeric {
        return (labels.len() == 4 && labels.iter().all(|l| l.parse::<u8>().is_ok())).then(|| host.to_string());
    }
    let tld = labels[labels.len() - 1];
    (tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic())).then(|| site_of_host(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_the_registrable_part_of_a_host() {
        assert_eq!(site_of_host("mail.example.com"), "example.com");
        assert_eq!(site_of_host("www.shop.example.co.uk"), "example.co.uk");
        assert_eq!(site_of_host("example.com."), "example.com");
        assert_eq!(site_of_host("WWW.Example.COM"), "example.com");
        assert_eq!(site_of_host("127.0.0.1"), "127.0.0.1");
        assert_eq!(site_of_host("localhost"), "localhost");
        assert_eq!(site_of_host("[::1]"), "[::1]");
        assert_eq!(site_of_host("a.b.github.io"), "github.io");
        assert_eq!(site_of_url("https://accounts.google.com/x?y"), Some("google.com".into()));
        assert_eq!(site_of_url("chrome://settings"), None);
    }

    #[test]
    fn the_sites_a_task_names() {
        assert_eq!(
            sites_named_in("Book a room on booking.com, then mail it from https://mail.example.org/inbox?x=1."),
            ["booking.com", "example.org"]
        );
        assert_eq!(sites_named_in("在 taobao.com 上买（jd.com 比价）"), ["taobao.com", "jd.com"]);
        assert_eq!(sites_named_in("Open http://127.0.0.1:8080/a and localhost:3000"), ["127.0.0.1", "localhost"]);
        // Words with dots that are not hosts.
        assert!(sites_named_in("e.g. use version 3.5, see file.1 and localhost").is_empty());
        assert!(sites_named_in("javascript://evil.example").is_empty());
    }
}
