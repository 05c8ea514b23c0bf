//! Which child frames a look at the page asks for their snapshot.
//!
//! The frames a page shows are read all at once, so a slow one delays none of the others — but
//! a frame that never answers (its script is stuck, its page is busy) would still cost its
//! whole time limit on every step. So a frame that did not answer in time is not asked again
//! while its placeholder carries the same token: a frame's token changes only when it loads a
//! document (its parent asks it again then: extension/content/frames.js), and a frame that
//! loaded a new document deserves a new chance. Frames whose content script never answered at
//! all have no token and are never asked; the parent remembers those itself.

use super::{FrameNode, FrameSnapshot};
use std::collections::HashMap;

/// A child frame to ask: its id, its token, and where its content starts in the top window.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildFrame {
    pub frame_id: i64,
    pub token: String,
    pub origin: (f64, f64),
}

/// What the looks at one tab learned about its frames.
#[derive(Debug, Default)]
pub struct FrameWaits {
    /// Frames that did not answer in time, with the token they had then.
    unanswered: HashMap<i64, String>,
}

impl FrameWaits {
    pub fn new() -> Self {
        Self::default()
    }

    /// The child frames `snapshot` shows that are worth asking, given where its own content
    /// starts in the top window: named ones (their token was known), not asked before in this
    /// look (`asked`), and not silent since their last document.
    pub fn to_ask(
        &self,
        snapshot: &FrameSnapshot,
        origin: (f64, f64),
        asked: &std::collections::HashSet<i64>,
    ) -> Vec<ChildFrame> {
        snapshot
            .nodes
            .iter()
            .filter_map(|node| match node {
                FrameNode::Frame { frame_id, token, at, .. }
                    if *frame_id > 0
                        && !asked.contains(frame_id)
                        && self.unanswered.get(frame_id).is_none_or(|silent| silent != token) =>
                {
                    Some(ChildFrame {
                        frame_id: *frame_id,
                        token: token.clone(),
                        origin: (origin.0 + at.0, origin.1 + at.1),
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// The frame did not answer in time: not asked again until its token changes.
    pub fn did_not_answer(&mut self, frame: &ChildFrame) {
        if self.unanswered.len() >= super::limits::MAX_FRAMES {
            self.unanswered.clear();
        }
        self.unanswered.insert(frame.frame_id, frame.token.clone());
    }

    /// The frame answered.
    pub fn answered(&mut self, frame_id: i64) {
        self.unanswered.remove(&frame_id);
    }

    /// Another tab: what was learned of this one's frames does not apply.
    pub fn forget(&mut self) {
        self.unanswered.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashSet;

    fn page(tokens: &[&str]) -> FrameSnapshot {
        let nodes: Vec<_> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"d": 0, "token": t, "at": [10.0 * i as f64, 100.0]}))
            .collect();
        let mut snapshot =
            FrameSnapshot::from_json(json!({"version": 3, "doc": "d", "url": "https://a/", "nodes": nodes})).unwrap();
        // "f7x" stands for frame 7 (the letters after it tell its documents apart).
        snapshot.resolve_frames(|t| t.strip_prefix('f')?.trim_end_matches(char::is_alphabetic).parse().ok());
        snapshot
    }

    fn ids(frames: &[ChildFrame]) -> Vec<i64> {
        frames.iter().map(|f| f.frame_id).collect()
    }

    #[test]
    fn named_frames_are_asked_with_where_they_start() {
        let waits = FrameWaits::new();
        let frames = waits.to_ask(&page(&["f3a", "", "zzz", "f4a"]), (5.0, 7.0), &HashSet::new());
        assert_eq!(ids(&frames), [3, 4], "a frame without a token, or with one nobody issued, is not asked");
        assert_eq!(frames[0].origin, (5.0, 107.0));
        assert_eq!(frames[1].origin, (35.0, 107.0));
    }

    #[test]
    fn a_frame_that_did_not_answer_is_not_asked_again_until_it_loads_a_document() {
        let mut waits = FrameWaits::new();
        let first = waits.to_ask(&page(&["f3a", "f4a", "f5a", "f6a"]), (0.0, 0.0), &HashSet::new());
        for silent in first.iter().filter(|f| f.frame_id != 6) {
            waits.did_not_answer(silent);
        }
        waits.answered(6);
        let second = waits.to_ask(&page(&["f3a", "f4a", "f5a", "f6a"]), (0.0, 0.0), &HashSet::new());
        assert_eq!(ids(&second), [6], "three silent frames cost nothing on the next look");
        // Frame 4 loaded a document: its parent asked it again and it has a new token.
        let third = waits.to_ask(&page(&["f3a", "f4b", "f5a", "f6a"]), (0.0, 0.0), &HashSet::new());
        assert_eq!(ids(&third), [4, 6]);
        waits.forget();
        assert_eq!(ids(&waits.to_ask(&page(&["f3a"]), (0.0, 0.0), &HashSet::new())), [3], "another tab");
    }

    #[test]
    fn a_frame_already_asked_in_this_look_is_not_asked_twice() {
        let waits = FrameWaits::new();
        let asked: HashSet<i64> = [3].into();
        assert_eq!(ids(&waits.to_ask(&page(&["f3a", "f4a"]), (0.0, 0.0), &asked)), [4]);
    }
}
