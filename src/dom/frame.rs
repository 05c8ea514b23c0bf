//! The snapshot one frame's content script sends (format version 2), and its validation.
//!
//! On the wire a snapshot is
//! `{"version": 2, "doc": "…", "url": "…", "title": "…", "scroll": {"above_px", "below_px"},
//!   "viewport": [width, height], "nodes": [...]}`, where `doc` names this document instance (a
//! reloaded frame gets a new one), `viewport` is the frame's window size, and `nodes` is a
//! pre-order list. Each node has a depth `d` (nesting among listed nodes) and is
//! one of:
//! - an element: `{"d", "i": local index, "tag", "attrs"?, "text"?, "new"?, "scroll"?}`
//! - free text: `{"d", "text"}`
//! - a child frame: `{"d", "frame": frameId, "at": [x, y]}` (the frame's content box in this
//!   frame's viewport).
//!
//! Keys are short because a snapshot crosses a message channel every step.

use super::{limits, ScrollInfo, SnapshotError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

/// The snapshot format version this core understands.
pub const SNAPSHOT_VERSION: u32 = 2;

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
        frame_id: i64,
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
    frame: Option<i64>,
    #[serde(default)]
    at: Option<(f64, f64)>,
}

impl FrameSnapshot {
    /// Parses and checks a snapshot sent by a content script as JSON text.
    pub fn from_json_text(text: &str) -> Result<Self, SnapshotError> {
        let value = serde_json::from_str(text).map_err(|e| SnapshotError::Shape(e.to_string()))?;
        Self::from_json(value)
    }

    /// Parses and checks a snapshot sent by a content script.
    pub fn from_json(value: serde_json::Value) -> Result<Self, SnapshotError> {
        // The version first, so a newer format says so instead of failing on an unknown field.
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(found) if found != u64::from(SNAPSHOT_VERSION) => {
                return Err(SnapshotError::Version {
                    found: u32::try_from(found).unwrap_or(u32::MAX),
                    expected: SNAPSHOT_VERSION,
                })
            }
            _ => {}
        }
        let wire: Wire = serde_path_to_error::deserialize(value)
            .map_err(|e| SnapshotError::Shape(format!("at {}: {}", e.path(), e.inner())))?;
        let _ = wire.version;
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
            let parsed = match (node.i, node.tag, node.frame) {
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
                (None, None, Some(frame_id)) => {
                    frames += 1;
                    if frames > limits::MAX_FRAMES {
                        return invalid(format!("more than {} frames", limits::MAX_FRAMES));
                    }
                    let at = node.at.unwrap_or((0.0, 0.0));
                    if !(at.0.is_finite() && at.1.is_finite()) {
                        return invalid(format!("frame {frame_id} has a non-finite position"));
                    }
                    FrameNode::Frame { depth, frame_id, at }
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
            "version": 2, "doc": "d1", "url": "http://127.0.0.1/login", "title": "Log in",
            "scroll": {"above_px": 0, "below_px": 40},
            "nodes": [
                {"d": 0, "text": "Sign in"},
                {"d": 0, "i": 1, "tag": "input", "attrs": {"name": "username"}},
                {"d": 0, "i": 2, "tag": "div", "attrs": {"role": "list"}, "scroll": {"above_px": 0, "below_px": 300}},
                {"d": 1, "i": 3, "tag": "button", "text": "Submit", "new": true},
                {"d": 1, "frame": 7, "at": [10, 200]}
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
        assert_eq!(f.nodes[4], FrameNode::Frame { depth: 1, frame_id: 7, at: (10.0, 200.0) });
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
        assert_eq!(FrameSnapshot::from_json(v).unwrap_err(), SnapshotError::Version { found: 1, expected: 2 });
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
        v["nodes"][1]["frame"] = json!(3);
        assert!(FrameSnapshot::from_json(v).is_err(), "an element that is also a frame");
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
