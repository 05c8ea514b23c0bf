//! What the agent sees of a page.
//!
//! Each frame's content script indexes what a person could see and use in that frame and sends
//! a [`FrameSnapshot`]: a small, versioned, pre-order list of nodes (indexed elements, free text,
//! and placeholders where a child frame sits). The worker collects the snapshots of the frames
//! and [`Stitcher`] joins them into one page [`Snapshot`] with one numbering across frames — an
//! element keeps its number for as long as it lives in its document — and remembers which frame
//! and local index each number stands for, so actions reach the right element.
//!
//! Nothing from a page is trusted: [`FrameSnapshot::from_json`] checks the version, the shape and
//! every bound, and returns a [`SnapshotError`] rather than panicking. [`page_text`] turns a page
//! into the text the LLM reads.

mod fingerprint;
mod frame;
mod frame_waits;
mod serialize;
mod stitch;

pub use fingerprint::{find as find_element, ElementFingerprint, Found};
pub use frame::{FrameNode, FrameSnapshot, SNAPSHOT_VERSION};
pub use frame_waits::{ChildFrame, FrameWaits};
pub use serialize::{element_line, page_text, untrusted, untrusted_block};
pub use stitch::{FrameSet, Stitcher, Target};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Upper bounds that keep a hostile or broken page from exhausting memory or the prompt.
pub mod limits {
    pub const MAX_NODES: usize = 200_000;
    pub const MAX_ATTRIBUTES: usize = 64;
    pub const MAX_NAME_LEN: usize = 64;
    pub const MAX_URL_LEN: usize = 16_384;
    pub const MAX_TEXT_LEN: usize = 100_000;
    pub const MAX_DEPTH: u16 = 512;
    pub const MAX_FRAMES: usize = 256;
}

/// How far something can scroll, in CSS pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrollInfo {
    pub above_px: u32,
    pub below_px: u32,
}

/// A whole page as the agent sees it: every frame stitched into one list, in page order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    pub url: String,
    pub title: String,
    /// How far the top page can scroll above and below the viewport.
    pub scroll: ScrollInfo,
    pub nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Node {
    Element(Element),
    /// Visible text that belongs to no indexed element.
    Text {
        depth: u16,
        text: String,
    },
    /// Where a frame's content begins; its nodes follow, one level deeper.
    Frame {
        depth: u16,
        url: String,
    },
}

/// One interactive element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Element {
    /// The element's number for the LLM, unique across the page's frames.
    pub index: u32,
    pub tag: String,
    pub attributes: BTreeMap<String, String>,
    /// The visible text that belongs to this element (not to an indexed descendant).
    pub text: String,
    /// Not in the previous snapshot of this document.
    pub is_new: bool,
    /// Nesting among the listed nodes, for indentation.
    pub depth: u16,
    /// Set for a scrollable container: how far it can scroll.
    pub scroll: Option<ScrollInfo>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    #[error("the page snapshot is not valid JSON of the expected shape ({0}); reload the page so the content script is current")]
    Shape(String),
    #[error("the page snapshot has version {found} but this core reads version {expected}; reload the extension and the page")]
    Version { found: u32, expected: u32 },
    #[error("the page snapshot is malformed: {0}")]
    Invalid(String),
}

impl Snapshot {
    /// A page with no frames to stitch, e.g. a blank tab or a test page.
    pub fn with_elements(url: &str, title: &str, elements: Vec<Element>) -> Self {
        Snapshot {
            url: url.to_string(),
            title: title.to_string(),
            scroll: ScrollInfo::default(),
            nodes: elements.into_iter().map(Node::Element).collect(),
        }
    }

    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.nodes.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            _ => None,
        })
    }

    pub fn has_elements(&self) -> bool {
        self.elements().next().is_some()
    }

    /// The element with this index, if the page still has it.
    pub fn element(&self, index: u32) -> Option<&Element> {
        self.elements().find(|e| e.index == index)
    }

    /// The address of the document element `index` belongs to: the innermost frame around it
    /// (empty for a frame that could not be read), or the page's own. What an action gives an
    /// element goes to that document, whatever the page around it.
    pub fn document_url_of(&self, index: u32) -> Option<&str> {
        let mut frames: Vec<(u16, &str)> = Vec::new();
        for node in &self.nodes {
            let depth = match node {
                Node::Element(e) => e.depth,
                Node::Text { depth, .. } | Node::Frame { depth, .. } => *depth,
            };
            // A node no deeper than a frame's placeholder is outside that frame.
            while frames.last().is_some_and(|(frame_depth, _)| depth <= *frame_depth) {
                frames.pop();
            }
            match node {
                Node::Frame { depth, url } => frames.push((*depth, url)),
                Node::Element(e) if e.index == index => {
                    return Some(frames.last().map_or(self.url.as_str(), |(_, url)| url));
                }
                _ => {}
            }
        }
        None
    }
}

impl Snapshot {
    /// Calls `f` with each document's address and the text the page showed of it: the
    /// elements' text and the values of their attributes, and the free text. A frame's text is
    /// its own document's (another site's, perhaps), not the page's around it.
    pub fn each_document_text(&self, mut f: impl FnMut(&str, &str)) {
        let mut frames: Vec<(u16, &str)> = Vec::new();
        let mut texts: Vec<(String, String)> = vec![(self.url.clone(), String::new())];
        let mut at = 0;
        for node in &self.nodes {
            let depth = match node {
                Node::Element(e) => e.depth,
                Node::Text { depth, .. } | Node::Frame { depth, .. } => *depth,
            };
            let mut moved = false;
            while frames.last().is_some_and(|(frame_depth, _)| depth <= *frame_depth) {
                frames.pop();
                moved = true;
            }
            if let Node::Frame { depth, url } = node {
                frames.push((*depth, url));
                moved = true;
            }
            if moved {
                let url = frames.last().map_or(self.url.as_str(), |(_, url)| url);
                at = match texts.iter().position(|(u, _)| u == url) {
                    Some(at) => at,
                    None => {
                        texts.push((url.to_string(), String::new()));
                        texts.len() - 1
                    }
                };
            }
            let text = &mut texts[at].1;
            match node {
                Node::Element(e) => {
                    for (name, value) in &e.attributes {
                        if name != "href" && name != "type" && name != "role" {
                            text.push_str(value);
                            text.push('\n');
                        }
                    }
                    text.push_str(&e.text);
                    text.push('\n');
                }
                Node::Text { text: free, .. } => {
                    text.push_str(free);
                    text.push('\n');
                }
                Node::Frame { .. } => {}
            }
        }
        for (url, text) in &texts {
            f(url, text);
        }
    }
}

impl Element {
    /// A top-level element with no scroll, for pages built in code.
    pub fn new(index: u32, tag: &str, attributes: &[(&str, &str)], text: &str) -> Self {
        Element {
            index,
            tag: tag.to_string(),
            attributes: attributes.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            text: text.to_string(),
            is_new: false,
            depth: 0,
            scroll: None,
        }
    }
}

#[cfg(test)]
mod document_tests {
    use super::*;

    #[test]
    fn an_element_belongs_to_the_innermost_frame_around_it() {
        let at = |index: u32, depth: u16| Node::Element(Element { depth, ..Element::new(index, "input", &[], "") });
        let snapshot = Snapshot {
            url: "https://shop.example/".into(),
            title: String::new(),
            scroll: ScrollInfo::default(),
            nodes: vec![
                at(1, 0),
                Node::Frame { depth: 0, url: "https://pay.example/card".into() },
                at(2, 1),
                Node::Frame { depth: 1, url: "https://ads.example/".into() },
                at(3, 2),
                at(4, 1),
                at(5, 0),
                Node::Frame { depth: 0, url: String::new() },
                at(6, 1),
            ],
        };
        let of = |i| snapshot.document_url_of(i);
        assert_eq!(of(1), Some("https://shop.example/"));
        assert_eq!(of(2), Some("https://pay.example/card"));
        assert_eq!(of(3), Some("https://ads.example/"));
        assert_eq!(of(4), Some("https://pay.example/card"), "back in the outer frame");
        assert_eq!(of(5), Some("https://shop.example/"), "back on the page");
        assert_eq!(of(6), Some(""), "a frame that could not be read");
        assert_eq!(of(7), None);
    }
}
