//! The state text of frame snapshots, for `scripts/bench dom`: what the LLM would read of each
//! page, made by the core's own code (`prompt::page_listing`, the element list of the prompt).
//!
//! Reads one frame snapshot (the JSON a content script sends) per line on stdin and writes one
//! JSON line per snapshot: `{"chars": N, "text": "…"}`, or `{"error": "…"}` for a snapshot the
//! core refuses.

use std::io::{BufRead, Write};
use tabwright::browser::PageState;
use tabwright::dom::{FrameSet, FrameSnapshot, Stitcher};
use tabwright::prompt::page_listing;

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let reply = match FrameSnapshot::from_json_text(&line) {
            Ok(frame) => {
                let page = Stitcher::new().stitch(&FrameSet { top: Some(frame), ..Default::default() });
                let text = page_listing(&PageState::new(0, page));
                serde_json::json!({ "chars": text.chars().count(), "text": text })
            }
            Err(e) => serde_json::json!({ "error": e.to_string() }),
        };
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
