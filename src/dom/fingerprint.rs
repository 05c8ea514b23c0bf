//! Finding an element again on a later visit, when its number has changed.
//!
//! Indices are good only for one look at a page: the next visit (a replay of a saved task, a
//! skill run on another day) numbers the page afresh, and the page itself may have changed a
//! little. So when an action targets an element, the step's record keeps the element's stable
//! features — [`ElementFingerprint`]: tag, text, the attributes a page rarely changes, its place
//! among the listed ancestors, and its rank among elements of its tag — and [`find`] scores every
//! element of a new page against them. A match must have the same tag and enough agreeing
//! features to be trusted; when two elements score the same, the one nearest the old rank wins,
//! and a tie that even that cannot break is refused rather than guessed.

use super::{Element, Node, Snapshot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Attributes that say what an element is (not how it looks), with the weight of each agreeing.
const STABLE_ATTRIBUTES: &[(&str, u32)] = &[
    ("id", 4),
    ("name", 4),
    ("aria-label", 3),
    ("label", 3),
    ("placeholder", 3),
    ("href", 2),
    ("title", 2),
    ("alt", 2),
    ("type", 1),
    ("role", 1),
    ("for", 1),
];
/// Texts are compared up to this many characters.
const TEXT_CHARS: usize = 120;
/// Ancestors kept (the nearest first).
const ANCESTORS: usize = 4;
/// Below this score a candidate is not the element, whatever else there is.
const MIN_SCORE: u32 = 4;

/// What identifies an element across visits (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ElementFingerprint {
    pub tag: String,
    /// Its own visible text, whitespace folded, cut.
    #[serde(default)]
    pub text: String,
    /// The stable attributes it had.
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    /// The listed elements it sat in, nearest first, as `tag` or `tag "text"`.
    #[serde(default)]
    pub ancestors: Vec<String>,
    /// Its rank among the page's elements of the same tag, from 0.
    #[serde(default)]
    pub rank: u32,
}

/// How an element was found again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub index: u32,
    /// Agreement with the fingerprint; higher is surer.
    pub score: u32,
    /// Every feature agreed.
    pub exact: bool,
}

fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(TEXT_CHARS).collect()
}

/// How a listed node shows in a descendant's ancestor list: `tag`, `tag "text"` or `frame url`.
fn label(node: &Node) -> Option<(u16, String)> {
    match node {
        Node::Element(e) => {
            let short: String = fold(&e.text).chars().take(30).collect();
            Some((e.depth, if short.is_empty() { e.tag.clone() } else { format!("{} \"{short}\"", e.tag) }))
        }
        Node::Frame { depth, url } => Some((*depth, format!("frame {url}"))),
        Node::Text { .. } => None,
    }
}

fn features(e: &Element, ancestors: Vec<String>, rank: u32) -> ElementFingerprint {
    let attributes = STABLE_ATTRIBUTES
        .iter()
        .filter_map(|(name, _)| e.attributes.get(*name).map(|v| (name.to_string(), fold(v))))
        .collect();
    ElementFingerprint { tag: e.tag.clone(), text: fold(&e.text), attributes, ancestors, rank }
}

/// The fingerprints of the page's elements that `wanted` picks, in page order, from one walk
/// of the page (ancestors and ranks are known only by walking from the top).
fn fingerprints(page: &Snapshot, wanted: impl Fn(&Element) -> bool) -> Vec<(u32, ElementFingerprint)> {
    let mut chain: Vec<(u16, String)> = Vec::new();
    let mut ranks: BTreeMap<&str, u32> = BTreeMap::new();
    let mut out = Vec::new();
    for node in &page.nodes {
        let Some((depth, label)) = label(node) else { continue };
        chain.retain(|(d, _)| *d < depth);
        if let Node::Element(e) = node {
            let rank = ranks.entry(e.tag.as_str()).or_default();
            if wanted(e) {
                let ancestors = chain.iter().rev().take(ANCESTORS).map(|(_, l)| l.clone()).collect();
                out.push((e.index, features(e, ancestors, *rank)));
            }
            *rank += 1;
        }
        chain.push((depth, label));
    }
    out
}

impl ElementFingerprint {
    /// The fingerprint of element `index` on `page`; None if the page does not list it.
    ///
    /// This runs for every element action of a step, so it labels only the element's own
    /// ancestors (found walking back from it: each is the nearest earlier node less deep than
    /// the last) instead of every node of the page.
    pub fn of(page: &Snapshot, index: u32) -> Option<Self> {
        let at = page.nodes.iter().position(|n| matches!(n, Node::Element(e) if e.index == index))?;
        let Node::Element(element) = &page.nodes[at] else { return None };
        let rank = page.nodes[..at].iter().filter(|n| matches!(n, Node::Element(e) if e.tag == element.tag)).count();
        let mut ancestors = Vec::new();
        let mut depth = element.depth;
        for node in page.nodes[..at].iter().rev() {
            if ancestors.len() == ANCESTORS || depth == 0 {
                break;
            }
            let node_depth = match node {
                Node::Element(e) => e.depth,
                Node::Frame { depth, .. } => *depth,
                Node::Text { .. } => continue,
            };
            if node_depth < depth {
                depth = node_depth;
                ancestors.extend(label(node).map(|(_, l)| l));
            }
        }
        Some(features(element, ancestors, rank as u32))
    }

    /// How well `other` (an element's fingerprint on the new page) agrees with this one.
    fn score(&self, other: &ElementFingerprint) -> (u32, bool) {
        if other.tag != self.tag {
            return (0, false);
        }
        let mut score = 0;
        let mut exact = true;
        if !self.text.is_empty() || !other.text.is_empty() {
            let (a, b) = (self.text.to_lowercase(), other.text.to_lowercase());
            if a == b {
                score += 4;
            } else {
                exact = false;
                if !a.is_empty() && !b.is_empty() && (a.contains(&b) || b.contains(&a)) {
                    score += 2;
                }
            }
        }
        for (name, weight) in STABLE_ATTRIBUTES {
            match (self.attributes.get(*name), other.attributes.get(*name)) {
                (Some(a), Some(b)) if a == b => score += weight,
                (None, None) => {}
                _ => exact = false,
            }
        }
        let shared = self.ancestors.iter().zip(&other.ancestors).take_while(|(a, b)| a == b).count();
        score += shared as u32;
        exact &= shared == self.ancestors.len() && shared == other.ancestors.len() && self.rank == other.rank;
        (score, exact)
    }
}

/// The element of `page` that `fingerprint` describes, if one can be told apart with
/// confidence (see the module documentation).
pub fn find(page: &Snapshot, fingerprint: &ElementFingerprint) -> Option<Found> {
    let mut best: Option<(Found, u32)> = None; // and its distance from the old rank
    let mut tie = false;
    for (index, candidate) in fingerprints(page, |e| e.tag == fingerprint.tag) {
        let (score, exact) = fingerprint.score(&candidate);
        if score < MIN_SCORE {
            continue;
        }
        let distance = candidate.rank.abs_diff(fingerprint.rank);
        let found = Found { index, score, exact };
        match &best {
            Some((b, d)) if (b.score, std::cmp::Reverse(*d)) > (score, std::cmp::Reverse(distance)) => {}
            Some((b, d)) if b.score == score && *d == distance => tie = true,
            _ => {
                best = Some((found, distance));
                tie = false;
            }
        }
    }
    if tie {
        return None;
    }
    best.map(|(found, _)| found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(depth: u16, mut e: Element) -> Element {
        e.depth = depth;
        e
    }

    fn page(elements: Vec<Element>) -> Snapshot {
        Snapshot::with_elements("https://shop.example/", "Shop", elements)
    }

    fn form(first: u32) -> Vec<Element> {
        vec![
            at(0, Element::new(first, "form", &[("name", "login")], "")),
            at(1, Element::new(first + 1, "input", &[("name", "user"), ("placeholder", "User name")], "")),
            at(1, Element::new(first + 2, "input", &[("name", "pass"), ("type", "password")], "")),
            at(1, Element::new(first + 3, "button", &[("type", "submit")], "Sign in")),
        ]
    }

    #[test]
    fn one_elements_fingerprint_agrees_with_the_walk_of_the_whole_page() {
        let mut nodes = Vec::new();
        for (i, depth) in [0u16, 1, 2, 2, 3, 1, 2, 6, 4, 0, 1].into_iter().enumerate() {
            let tag = ["div", "a", "button"][i % 3];
            nodes.push(Node::Element(at(depth, Element::new(i as u32 + 1, tag, &[("id", "x")], &format!("item {i}")))));
            if i == 4 {
                nodes.push(Node::Text { depth: 2, text: "loose text".into() });
                nodes.push(Node::Frame { depth: 1, url: "https://frame.example/".into() });
            }
        }
        let page = Snapshot { nodes, ..page(vec![]) };
        for index in 1..=11 {
            let walked = fingerprints(&page, |e| e.index == index).pop().map(|(_, f)| f);
            assert_eq!(ElementFingerprint::of(&page, index), walked, "element {index}");
        }
    }

    #[test]
    fn the_same_page_numbered_afresh_is_matched_exactly() {
        let before = page(form(1));
        let after = page(form(40));
        for (old, new) in [(2, 41), (3, 42), (4, 43)] {
            let fp = ElementFingerprint::of(&before, old).unwrap();
            let found = find(&after, &fp).unwrap();
            assert_eq!((found.index, found.exact), (new, true), "{fp:?}");
        }
    }

    #[test]
    fn a_changed_page_is_matched_by_what_stayed() {
        let before = page(form(1));
        let fp = ElementFingerprint::of(&before, 4).unwrap();
        assert_eq!(fp.ancestors, vec!["form".to_string()]);
        // A banner came first and the button's text changed case; its type and place remain.
        let mut changed = vec![at(0, Element::new(7, "button", &[], "Accept cookies"))];
        changed.extend(form(10));
        if let Some(e) = changed.iter_mut().find(|e| e.text == "Sign in") {
            e.text = "SIGN IN".into();
        }
        let found = find(&page(changed), &fp).unwrap();
        assert_eq!(found.index, 13);
        assert!(!found.exact, "its rank among buttons changed");
    }

    #[test]
    fn an_element_that_is_gone_or_cannot_be_told_apart_is_not_guessed() {
        let before = page(form(1));
        let fp = ElementFingerprint::of(&before, 4).unwrap();
        let without = page(form(1).into_iter().filter(|e| e.tag != "button").collect());
        assert_eq!(find(&without, &fp), None, "no button at all");
        let other_buttons = page(vec![Element::new(1, "button", &[], "Delete account")]);
        assert_eq!(find(&other_buttons, &fp), None, "a button that agrees on nothing");
        // Two identical links, neither at the old rank: refused rather than picked at random.
        let link = |i| Element::new(i, "a", &[("href", "/item")], "Open");
        let fp = ElementFingerprint::of(&page(vec![Element::new(1, "a", &[], "x"), link(2)]), 2).unwrap();
        assert_eq!(fp.rank, 1);
        let twins = page(vec![Element::new(7, "a", &[], "x"), link(5), link(6)]);
        assert_eq!(find(&twins, &fp).map(|f| f.index), Some(5), "the one at the old rank");
        let around = page(vec![link(5), Element::new(7, "a", &[], "x"), link(6)]);
        assert_eq!(find(&around, &fp), None, "one on each side of the old rank");
        assert_eq!(ElementFingerprint::of(&before, 99), None);
    }
}
