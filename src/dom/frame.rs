//! The snapshot one frame's content script sends (format version 3), and its validation.
//!
//! On the wire a snapshot is
//! `{"version": 2, "doc": "…", "url": "…", "title": "…", "scroll": {"above_px", "below_px"},
//!   "viewport": [width, height], "nodes": [...]}`, where `doc` names this document instance (a
//! reloaded frame gets a new one), `viewport` is the frame's window size, and `nodes` is a
//! pre-order list. Each node has a depth `d` (nesting among listed nodes) and is
//! one of:
//! - an element: `{"d", "i": local index, "tag", "attrs"?, "text"?, "new"?, "scroll"?}`
//! - free text: `{"d", "text"}`
//! - a child frame: `{"d", "token", "at": [x, y]}`: the token the child's content script got from
//!   the worker and posted up (empty when it did not answer: see extension/content/frames.js),
//!   which the worker turns into the child's frame id, and where the frame's content box lies in
//!   this frame's viewport.
//!
//! Keys are short because a snapshot crosses a message channel every step.

use super::{limits, ScrollInfo, SnapshotError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

/// The snapshot format version this core understands.
pub const SNAPSHOT_VERSION: u32 = 3;
/// A frame token is at most this long (extension/background.js issues 32 hex characters).
const MAX_TOKEN_LEN: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub struct FrameSnapshot {
    pub doc: String,
    pub url: String,
    pub title: String,
    pub scroll: ScrollInfo,
    /// The frame's window size in CSS pixels, when it said.
    pub viewport: Option<(f64, f64)>,
    pub nodes: Vec<FrameNode>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FrameNode {
    Element {
        depth: u16,
        local: u32,
        tag: String,
        attributes: BTreeMap<String, String>,
        text: String,
        is_new: bool,
        scroll: Option<ScrollInfo>,
    },
    Text {
        depth: u16,
        text: String,
    },
    Frame {
        depth: u16,
        /// Chrome's id of the child frame, once the worker has turned the token into it; -1 until
        /// then, and for a frame whose token is unknown.
        frame_id: i64,
        /// What the child's content script posted up (empty: it did not answer).
        token: String,
        at: (f64, f64),
    },
}

impl FrameNode {
    pub fn depth(&self) -> u16 {
        match self {
            FrameNode::Element { depth, .. } | FrameNode::Text { depth, .. } | FrameNode::Frame { depth, .. } => *depth,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    version: u32,
    doc: String,
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    scroll: ScrollInfo,
    #[serde(default)]
    viewport: Option<(f64, f64)>,
    nodes: Vec<WireNode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireNode {
    d: u16,
    #[serde(default)]
    i: Option<u32>,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    attrs: BTreeMap<String, String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    new: bool,
    #[serde(default)]
    scroll: Option<ScrollInfo>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    at: Option<(f64, f64)>,
}

impl FrameSnapshot {
    /// Parses and checks a snapshot given as a JSON value (tests and tools).
    pub fn from_json(value: serde_json::Value) -> Result<Self, SnapshotError> {
        Self::from_json_text(&value.to_string())
    }

    /// Parses and checks a snapshot sent by a content script as JSON text (read straight into
    /// its shape, with no `serde_json::Value` in between).
    pub fn from_json_text(text: &str) -> Result<Self, SnapshotError> {
        #[derive(Deserialize)]
        struct VersionOnly {
            #[serde(default)]
            version: Option<u64>,
        }
        let version_error = |found: u64| SnapshotError::Version {
            found: u32::try_from(found).unwrap_or(u32::MAX),
            expected: SNAPSHOT_VERSION,
        };
        let wire: Wire = match crate::json::read(text) {
            Ok(wire) => wire,
            // A newer format says so, rather than failing on a field this core does not know.
            Err(e) => {
                return Err(match crate::json::read::<VersionOnly>(text).ok().and_then(|v| v.version) {
                    Some(found) if found != u64::from(SNAPSHOT_VERSION) => version_error(found),
                    _ => SnapshotError::Shape(e.to_string()),
                })
            }
        };
        if wire.version != SNAPSHOT_VERSION {
            return Err(version_error(u64::from(wire.version)));
        }
        let invalid = |m: String| Err(SnapshotError::Invalid(m));
        if wire.doc.is_empty() || wire.doc.len() > 64 {
            return invalid("the document id is empty or too long".into());
        }
        if wire.url.len() > limits::MAX_URL_LEN {
            return invalid(format!("the URL is {} bytes long", wire.url.len()));
        }
        if wire.nodes.len() > limits::MAX_NODES {
            return invalid(format!(
                "{} nodes, more than the {} this core accepts",
                wire.nodes.len(),
                limits::MAX_NODES
            ));
        }
        let mut seen = HashSet::with_capacity(wire.nodes.len());
        let mut frames = 0usize;
        let mut nodes = Vec::with_capacity(wire.nodes.len());
        let mut previous_depth: Option<u16> = None;
        for (position, node) in wire.nodes.into_iter().enumerate() {
            let depth = node.d;
            // Pre-order: the first node is at depth 0, and each node is at most one level
            // deeper than the one before it.
            let max_depth = previous_depth.map_or(0, |d| d.saturating_add(1));
            if depth > max_depth || depth > limits::MAX_DEPTH {
                return invalid(format!("node {position} jumps to depth {depth}"));
            }
            previous_depth = Some(depth);
            let text = node.text.unwrap_or_default();
            if text.len() > limits::MAX_TEXT_LEN {
                return invalid(format!("node {position} has {} bytes of text", text.len()));
            }
            let parsed = match (node.i, node.tag, node.token) {
                (Some(local), Some(tag), None) => {
                    if local == 0 || !seen.insert(local) {
                        return invalid(format!("element index {local} is zero or appears twice"));
                    }
                    if !is_name(&tag) {
                        return invalid(format!("element [{local}] has an unusable tag name"));
                    }
                    if node.attrs.len() > limits::MAX_ATTRIBUTES {
                        return invalid(format!("element [{local}] has {} attributes", node.attrs.len()));
                    }
                    if let Some(name) = node.attrs.keys().find(|n| !is_name(n)) {
                        return invalid(format!("element [{local}] has an unusable attribute name {name:?}"));
                    }
                    if let Some((name, _)) = node.attrs.iter().find(|(_, v)| v.len() > limits::MAX_TEXT_LEN) {
                        return invalid(format!("element [{local}] has an oversized attribute {name}"));
                    }
                    FrameNode::Element {
                        depth,
                        local,
                        tag: tag.to_ascii_lowercase(),
                        attributes: node.attrs,
                        text,
                        is_new: node.new,
                        scroll: node.scroll,
                    }
                }
                (None, None, Some(token)) => {
                    frames += 1;
                    if frames > limits::MAX_FRAMES {
                        return invalid(format!("more than {} frames", limits::MAX_FRAMES));
                    }
                    if token.len() > MAX_TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_alphanumeric()) {
                        return invalid(format!("node {position} has an unusable frame token"));
                    }
                    let at = node.at.unwrap_or((0.0, 0.0));
                    if !(at.0.is_finite() && at.1.is_finite()) {
                        return invalid(format!("node {position}, a frame, has a non-finite position"));
                    }
                    FrameNode::Frame { depth, frame_id: -1, token, at }
                }
                (None, None, None) if !text.is_empty() => FrameNode::Text { depth, text },
                _ => return invalid(format!("node {position} is neither an element, a text nor a frame")),
            };
            nodes.push(parsed);
        }
        let viewport = wire.viewport.filter(|(w, h)| w.is_finite() && h.is_finite() && *w >= 0.0 && *h >= 0.0);
        Ok(FrameSnapshot { doc: wire.doc, url: wire.url, title: wire.title, scroll: wire.scroll, viewport, nodes })
    }
}

impl FrameSnapshot {
    /// The tokens of the child frames this frame shows, in page order (empty ones left out).
    pub fn frame_tokens(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().filter_map(|n| match n {
            FrameNode::Frame { token, .. } if !token.is_empty() => Some(token.as_str()),
            _ => None,
        })
    }

    /// How many child frames could not be named (their scripts never answered).
    pub fn unread_frames(&self) -> usize {
        self.nodes.iter().filter(|n| matches!(n, FrameNode::Frame { frame_id, .. } if *frame_id < 0)).count()
    }

    /// Names each child frame by the id its token stands for (`id_of`); a token it does not
    /// know leaves the frame unnamed (-1), shown as unread.
    pub fn resolve_frames(&mut self, id_of: impl Fn(&str) -> Option<i64>) {
        for node in &mut self.nodes {
            if let FrameNode::Frame { frame_id, token, .. } = node {
                *frame_id = if token.is_empty() { -1 } else { id_of(token).filter(|id| *id > 0).unwrap_or(-1) };
            }
        }
    }
}

/// A tag or attribute name that cannot break the element line it is printed in.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= limits::MAX_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame() -> serde_json::Value {
        json!({
            "version": 3, "doc": "d1", "url": "http://127.0.0.1/login", "title": "Log in",
            "scroll": {"above_px": 0, "below_px": 40},
            "nodes": [
                {"d": 0, "text": "Sign in"},
                {"d": 0, "i": 1, "tag": "input", "attrs": {"name": "username"}},
                {"d": 0, "i": 2, "tag": "div", "attrs": {"role": "list"}, "scroll": {"above_px": 0, "below_px": 300}},
                {"d": 1, "i": 3, "tag": "button", "text": "Submit", "new": true},
                {"d": 1, "token": "a1b2c3", "at": [10, 200]}
            ]
        })
    }

    #[test]
    fn a_well_formed_frame_parses_into_typed_nodes() {
        let f = FrameSnapshot::from_json(frame()).unwrap();
        assert_eq!(f.nodes.len(), 5);
        assert_eq!(f.nodes[0], FrameNode::Text { depth: 0, text: "Sign in".into() });
        assert!(matches!(&f.nodes[2], FrameNode::Element { scroll: Some(ScrollInfo { below_px: 300, .. }), .. }));
        assert!(matches!(&f.nodes[3], FrameNode::Element { local: 3, is_new: true, depth: 1, .. }));
        assert_eq!(f.nodes[4], FrameNode::Frame { depth: 1, frame_id: -1, token: "a1b2c3".into(), at: (10.0, 200.0) });
    }

    #[test]
    fn the_json_text_a_content_script_sends_parses_the_same_and_broken_text_is_a_shape_error() {
        assert_eq!(
            FrameSnapshot::from_json_text(&frame().to_string()).unwrap(),
            FrameSnapshot::from_json(frame()).unwrap()
        );
        let cut = frame().to_string();
        let err = FrameSnapshot::from_json_text(&cut[..cut.len() / 2]).unwrap_err();
        assert!(matches!(err, SnapshotError::Shape(_)), "{err:?}");
        assert!(err.to_string().contains("reload the page"));
    }

    #[test]
    fn another_version_is_refused_naming_both() {
        let mut v = frame();
        v["version"] = json!(1);
        assert_eq!(FrameSnapshot::from_json(v).unwrap_err(), SnapshotError::Version { found: 1, expected: 3 });
    }

    #[test]
    fn duplicate_or_zero_indices_are_malformed() {
        let mut v = frame();
        v["nodes"][3]["i"] = json!(1);
        assert!(matches!(FrameSnapshot::from_json(v), Err(SnapshotError::Invalid(m)) if m.contains("twice")));
        let mut v = frame();
        v["nodes"][1]["i"] = json!(0);
        assert!(FrameSnapshot::from_json(v).is_err());
    }

    #[test]
    fn depth_may_not_jump() {
        let mut v = frame();
        v["nodes"][1]["d"] = json!(3);
        assert!(matches!(FrameSnapshot::from_json(v), Err(SnapshotError::Invalid(m)) if m.contains("depth")));
        let mut v = frame();
        v["nodes"][0]["d"] = json!(1);
        assert!(FrameSnapshot::from_json(v).is_err());
    }

    #[test]
    fn hostile_names_and_mixed_nodes_are_refused() {
        let mut v = frame();
        v["nodes"][1]["tag"] = json!("input onfocus=alert(1)");
        assert!(FrameSnapshot::from_json(v).is_err());
        let mut v = frame();
        v["nodes"][1]["attrs"] = json!({"a>b": "x"});
        assert!(FrameSnapshot::from_json(v).is_err());
        let mut v = frame();
        v["nodes"][1]["token"] = json!("abc");
        assert!(FrameSnapshot::from_json(v).is_err(), "an element that is also a frame");
        let mut v = frame();
        v["nodes"][4]["token"] = json!("x'><script>");
        assert!(FrameSnapshot::from_json(v).is_err(), "a token that could break out of anything");
        let mut v = frame();
        v["nodes"][0] = json!({"d": 0});
        assert!(FrameSnapshot::from_json(v).is_err(), "an empty node");
    }

    #[test]
    fn wrong_types_name_the_path() {
        let mut v = frame();
        v["nodes"][3]["i"] = json!("three");
        let err = FrameSnapshot::from_json(v).unwrap_err().to_string();
        assert!(err.contains("nodes[3].i"), "{err}");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let mut v = frame();
        v["nodes"][1]["onclick"] = json!("x");
        assert!(matches!(FrameSnapshot::from_json(v), Err(SnapshotError::Shape(_))));
    }
}
