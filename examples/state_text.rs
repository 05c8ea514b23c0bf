//! The state text of frame snapshots, for `scripts/bench dom`: what the LLM would read of each
//! page, made by the core's own code (`prompt::page_listing`, the element list of the prompt).
//!
//! Reads one frame snapshot (the JSON a content script sends) per line on stdin and writes one
//! JSON line per snapshot: `{"chars": N, "text": "…", "listed": [local indices]}` (`listed`: the
//! elements the text shows, by the numbers the content script gave them), or `{"error": "…"}`
//! for a snapshot the core refuses.

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
                let mut stitcher = Stitcher::new();
                let page = stitcher.stitch(&FrameSet { top: Some(frame), ..Default::default() });
                let listed: Vec<u32> =
                    page.elements().filter_map(|e| stitcher.target(e.index)).map(|t| t.local).collect();
                let text = page_listing(&PageState::new(0, page));
                serde_json::json!({ "chars": text.chars().count(), "text": text, "listed": listed })
            }
            Err(e) => serde_json::json!({ "error": e.to_string() }),
        };
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
