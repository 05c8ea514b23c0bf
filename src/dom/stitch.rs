//! Joining the snapshots of a page's frames into one page, with one numbering.
//!
//! Each frame's content script numbers its own elements (local indices, stable while its
//! document lives). The [`Stitcher`] gives every (frame, document, local index) one page-wide
//! index the first time it sees it and keeps it for as long as the task runs, so an element keeps
//! its number across steps whichever frame it is in. Frame placeholders are replaced by the
//! child frame's nodes, one level deeper, so the page reads in page order. The stitcher also
//! remembers, for each index, which frame and local index it stands for and where the frame sits
//! in the top viewport, so actions are routed to the right frame.

use super::{Element, FrameNode, FrameSnapshot, Node, Snapshot};
use std::collections::{HashMap, HashSet};

/// The snapshots of one page: the top frame's and its descendants', by Chrome frame id.
#[derive(Debug, Clone, Default)]
pub struct FrameSet {
    pub top: Option<FrameSnapshot>,
    pub children: HashMap<i64, FrameSnapshot>,
}

/// Where a page-wide index points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// Chrome's frame id (0 for the top frame).
    pub frame_id: i64,
    /// The index the frame's content script knows the element by.
    pub local: u32,
    /// Where the frame's viewport starts in the top viewport, in CSS pixels.
    pub offset: (f64, f64),
}

/// Bounds the memory of numbers given out, for very long tasks on churning pages.
const MAX_REMEMBERED: usize = 500_000;
/// Bounds the stitched page, whatever the frames send.
const MAX_PAGE_NODES: usize = super::limits::MAX_NODES;

#[derive(Debug, Default)]
pub struct Stitcher {
    ids: HashMap<(i64, String, u32), u32>,
    next: u32,
    targets: HashMap<u32, Target>,
    /// Child-frame documents already shown, so a frame that appears later is marked new.
    seen_documents: HashSet<(i64, String)>,
    /// The top document of the last stitch: on a page just loaded, nothing is new, its frames
    /// included.
    last_top: Option<String>,
    /// Whether this stitch shows the same top document as the last.
    same_top: bool,
}

impl Stitcher {
    pub fn new() -> Self {
        Self::default()
    }

    /// The page made of `frames`. Frames that were listed but not read appear as a frame line
    /// with no content.
    pub fn stitch(&mut self, frames: &FrameSet) -> Snapshot {
        self.targets.clear();
        if self.ids.len() > MAX_REMEMBERED {
            self.ids.clear();
        }
        let Some(top) = &frames.top else {
            return Snapshot::with_elements("", "", Vec::new());
        };
        self.same_top = self.last_top.as_deref() == Some(top.doc.as_str());
        self.last_top = Some(top.doc.clone());
        let mut nodes = Vec::new();
        let mut entered = HashSet::new();
        self.add_frame(0, top, 0, (0.0, 0.0), frames, &mut nodes, &mut entered);
        Snapshot { url: top.url.clone(), title: top.title.clone(), scroll: top.scroll, nodes: fold_wrappers(nodes) }
    }

    /// Where the page-wide `index` points in the last stitched page.
    pub fn target(&self, index: u32) -> Option<Target> {
        self.targets.get(&index).copied()
    }

    #[allow(clippy::too_many_arguments)]
    fn add_frame(
        &mut self,
        frame_id: i64,
        snapshot: &FrameSnapshot,
        base: u16,
        offset: (f64, f64),
        frames: &FrameSet,
        out: &mut Vec<Node>,
        entered: &mut HashSet<i64>,
    ) {
        entered.insert(frame_id);
        // A child frame's document shown for the first time on a page seen before is new as a
        // whole (a payment frame that appeared after a click).
        let document = (frame_id, snapshot.doc.clone());
        let all_new = frame_id != 0 && self.same_top && !self.seen_documents.contains(&document);
        if frame_id != 0 {
            self.seen_documents.insert(document);
        }
        for node in &snapshot.nodes {
            if out.len() >= MAX_PAGE_NODES {
                break;
            }
            let depth = base.saturating_add(node.depth());
            match node {
                FrameNode::Element { local, tag, attributes, text, is_new, scroll, .. } => {
                    let key = (frame_id, snapshot.doc.clone(), *local);
                    let index = match self.ids.get(&key) {
                        Some(index) => *index,
                        None => {
                            self.next += 1;
                            self.ids.insert(key, self.next);
                            self.next
                        }
                    };
                    self.targets.insert(index, Target { frame_id, local: *local, offset });
                    out.push(Node::Element(Element {
                        index,
                        tag: tag.clone(),
                        attributes: attributes.clone(),
                        text: text.clone(),
                        is_new: *is_new || all_new,
                        depth,
                        scroll: *scroll,
                    }));
                }
                FrameNode::Text { text, .. } => out.push(Node::Text { depth, text: text.clone() }),
                FrameNode::Frame { frame_id: child, at, .. } => {
                    // Each frame is spliced in once: a second placeholder naming it (a cycle, or a
                    // frame lying about its id) shows as unreadable.
                    match frames.children.get(child).filter(|_| !entered.contains(child)) {
                        Some(child_snapshot) => {
                            out.push(Node::Frame { depth, url: child_snapshot.url.clone() });
                            let child_offset = (offset.0 + at.0, offset.1 + at.1);
                            self.add_frame(
                                *child,
                                child_snapshot,
                                depth.saturating_add(1),
                                child_offset,
                                frames,
                                out,
                                entered,
                            );
                        }
                        None => out.push(Node::Frame { depth, url: String::new() }),
                    }
                }
            }
        }
    }
}

/// What an element may carry and still say nothing of its own: a wrapper's role or type.
const WRAPPER_ATTRIBUTES: &[&str] = &["role", "type", "tabindex", "class", "id"];

/// Whether an element says nothing a person would tell it apart by: no text, no name, no state
/// (it may have a role), does not scroll, and is not a field.
fn says_nothing(el: &Element) -> bool {
    el.text.trim().is_empty()
        && el.scroll.is_none()
        && !matches!(el.tag.as_str(), "input" | "select" | "textarea" | "iframe" | "frame")
        && el.attributes.keys().all(|name| WRAPPER_ATTRIBUTES.contains(&name.as_str()))
}

/// Leaves out controls that only wrap one other control: an `<li role=menuitem>` around its
/// `<a>`, a clickable `<div>` around a `<button>`. Saying nothing of its own, the wrapper is
/// the control inside it to a person (a click on it lands on that control), and listing both
/// gives the model two numbers for one thing. The control inside moves up a level.
fn fold_wrappers(nodes: Vec<Node>) -> Vec<Node> {
    let depth_of = |n: &Node| match n {
        Node::Element(e) => e.depth,
        Node::Text { depth, .. } | Node::Frame { depth, .. } => *depth,
    };
    let mut out: Vec<Node> = Vec::with_capacity(nodes.len());
    // Depths above which the nodes being copied sit one level higher (their wrapper left out).
    let mut lifted: Vec<u16> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let depth = depth_of(node);
        while lifted.last().is_some_and(|&d| depth <= d) {
            lifted.pop();
        }
        if let Node::Element(el) = node {
            // The wrapper's whole content is one element and what lies inside that element.
            let only_child = matches!(nodes.get(i + 1), Some(Node::Element(child)) if child.depth == depth + 1)
                && nodes[i + 2..].iter().take_while(|n| depth_of(n) > depth).all(|n| depth_of(n) > depth + 1);
            if only_child && says_nothing(el) {
                lifted.push(depth);
                continue;
            }
        }
        let mut node = node.clone();
        let lift = lifted.len() as u16;
        match &mut node {
            Node::Element(e) => e.depth -= lift,
            Node::Text { depth, .. } | Node::Frame { depth, .. } => *depth -= lift,
        }
        out.push(node);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(doc: &str, url: &str, nodes: serde_json::Value) -> FrameSnapshot {
        let mut snapshot =
            FrameSnapshot::from_json(json!({"version": 3, "doc": doc, "url": url, "title": "", "nodes": nodes}))
                .unwrap();
        // Token "f5" stands for frame 5.
        snapshot.resolve_frames(|token| token.strip_prefix('f')?.parse().ok());
        snapshot
    }

    fn top_with_frame() -> FrameSnapshot {
        frame(
            "top",
            "https://shop.example/",
            json!([
                {"d": 0, "i": 1, "tag": "a", "text": "Home"},
                {"d": 0, "token": "f5", "at": [100, 300]},
                {"d": 0, "i": 2, "tag": "button", "text": "Buy"}
            ]),
        )
    }

    fn card_frame(doc: &str) -> FrameSnapshot {
        frame(
            doc,
            "https://pay.example/card",
            json!([
                {"d": 0, "i": 1, "tag": "input", "attrs": {"name": "card"}},
                {"d": 0, "token": "f9", "at": [5, 5]}
            ]),
        )
    }

    fn indices(s: &Snapshot) -> Vec<(u32, &str, u16)> {
        s.elements().map(|e| (e.index, e.tag.as_str(), e.depth)).collect()
    }

    #[test]
    fn frames_are_stitched_in_page_order_one_level_deeper() {
        let mut frames = FrameSet { top: Some(top_with_frame()), ..Default::default() };
        frames.children.insert(5, card_frame("c1"));
        frames.children.insert(
            9,
            frame("n1", "https://pay.example/inner", json!([{"d": 0, "i": 1, "tag": "button", "text": "OK"}])),
        );
        let mut stitcher = Stitcher::new();
        let page = stitcher.stitch(&frames);
        assert_eq!(indices(&page), [(1, "a", 0), (2, "input", 1), (3, "button", 2), (4, "button", 0)]);
        assert!(matches!(&page.nodes[1], Node::Frame { depth: 0, url } if url == "https://pay.example/card"));
        assert_eq!(stitcher.target(2), Some(Target { frame_id: 5, local: 1, offset: (100.0, 300.0) }));
        assert_eq!(stitcher.target(3), Some(Target { frame_id: 9, local: 1, offset: (105.0, 305.0) }));
        assert_eq!(stitcher.target(4), Some(Target { frame_id: 0, local: 2, offset: (0.0, 0.0) }));
    }

    #[test]
    fn numbers_stay_with_their_elements_across_steps_and_a_reloaded_frame_gets_new_ones() {
        let mut frames = FrameSet { top: Some(top_with_frame()), ..Default::default() };
        frames.children.insert(5, card_frame("c1"));
        let mut stitcher = Stitcher::new();
        let first = stitcher.stitch(&frames);
        let again = stitcher.stitch(&frames);
        assert_eq!(indices(&first), indices(&again));
        // The card frame reloads: a new document, new elements.
        frames.children.insert(5, card_frame("c2"));
        let reloaded = stitcher.stitch(&frames);
        assert_eq!(indices(&first), [(1, "a", 0), (2, "input", 1), (3, "button", 0)]);
        assert_eq!(indices(&reloaded), [(1, "a", 0), (4, "input", 1), (3, "button", 0)]);
        assert_eq!(stitcher.target(2), None, "the old frame's element is gone");
    }

    #[test]
    fn a_frame_named_twice_is_spliced_once_and_a_late_frame_is_new() {
        let twice = frame(
            "top",
            "https://a/",
            json!([{"d": 0, "token": "f5", "at": [0, 0]}, {"d": 0, "token": "f5", "at": [0, 300]}]),
        );
        let mut frames = FrameSet { top: Some(twice), ..Default::default() };
        frames.children.insert(5, card_frame("c1"));
        let mut stitcher = Stitcher::new();
        let page = stitcher.stitch(&frames);
        assert_eq!(page.elements().count(), 1, "{:?}", page.nodes);
        assert!(matches!(page.nodes.last(), Some(Node::Frame { url, .. }) if url.is_empty()));
        assert!(!page.elements().next().unwrap().is_new, "nothing is new on the first step");

        // A frame that shows up on a later step is new; on the step after, no longer.
        let mut later = FrameSet { top: Some(top_with_frame()), ..Default::default() };
        later.children.insert(5, card_frame("c9"));
        let page = stitcher.stitch(&later);
        assert!(page.elements().filter(|e| e.tag == "input").all(|e| e.is_new));
        assert!(page.elements().filter(|e| e.tag != "input").all(|e| !e.is_new));
        let page = stitcher.stitch(&later);
        assert!(page.elements().all(|e| !e.is_new));
    }

    #[test]
    fn on_a_page_just_loaded_its_frames_are_not_new() {
        let mut frames = FrameSet {
            top: Some(frame("start", "https://a/", json!([{"d": 0, "i": 1, "tag": "a", "text": "Go"}]))),
            ..Default::default()
        };
        let mut stitcher = Stitcher::new();
        stitcher.stitch(&frames);
        // The tab moved on to a page with a frame: a new top document.
        frames.top = Some(top_with_frame());
        frames.children.insert(5, card_frame("c1"));
        let page = stitcher.stitch(&frames);
        assert!(page.elements().all(|e| !e.is_new), "{:?}", page.nodes);
    }

    #[test]
    fn a_control_that_only_wraps_another_is_left_out() {
        let top = frame(
            "top",
            "https://a/",
            json!([
                {"d": 0, "i": 1, "tag": "li", "attrs": {"role": "menuitem"}, "text": "Programme"},
                {"d": 1, "i": 2, "tag": "li", "attrs": {"role": "menuitem"}},
                {"d": 2, "i": 3, "tag": "a", "text": "What we stand for"},
                {"d": 1, "i": 4, "tag": "li", "attrs": {"role": "menuitem"}},
                {"d": 2, "i": 5, "tag": "a", "text": "Topics"},
                {"d": 3, "text": "A to Z"},
                {"d": 0, "i": 6, "tag": "div", "attrs": {"aria-label": "Account"}},
                {"d": 1, "i": 7, "tag": "button", "text": "Log in"},
                {"d": 0, "i": 8, "tag": "div"},
                {"d": 1, "i": 9, "tag": "a", "text": "One"},
                {"d": 1, "i": 10, "tag": "a", "text": "Two"},
                {"d": 0, "i": 11, "tag": "span"},
                {"d": 1, "text": "Caption"},
                {"d": 1, "i": 12, "tag": "a", "text": "Three"}
            ]),
        );
        let page = Stitcher::new().stitch(&FrameSet { top: Some(top), ..Default::default() });
        assert_eq!(
            indices(&page),
            [
                (1, "li", 0), // it has words of its own
                (3, "a", 1),  // its wrapper said nothing
                (5, "a", 1),
                (6, "div", 0), // a name is something to tell it by
                (7, "button", 1),
                (8, "div", 0), // it wraps two
                (9, "a", 1),
                (10, "a", 1),
                (11, "span", 0), // and this one some text too
                (12, "a", 1),
            ]
        );
        assert!(matches!(&page.nodes[3], Node::Text { depth: 2, text } if text == "A to Z"), "{:?}", page.nodes[3]);
    }

    #[test]
    fn an_unread_frame_is_shown_empty_and_a_cycle_is_cut() {
        let frames = FrameSet { top: Some(top_with_frame()), ..Default::default() };
        let page = Stitcher::new().stitch(&frames);
        assert!(matches!(&page.nodes[1], Node::Frame { url, .. } if url.is_empty()));
        let mut looping = FrameSet { top: Some(top_with_frame()), ..Default::default() };
        looping.children.insert(5, frame("x", "https://a/", json!([{"d": 0, "token": "f5", "at": [0, 0]}])));
        let page = Stitcher::new().stitch(&looping);
        assert_eq!(page.nodes.len(), 4, "the frame is entered once: {:?}", page.nodes);
    }
}
