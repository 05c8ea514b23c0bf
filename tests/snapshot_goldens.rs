//! Golden tests of what the LLM reads: frame snapshots recorded from the real content scripts on
//! the e2e fixture pages (tests/fixtures/snapshots/*.json, made by tests/e2e/record-goldens.mjs)
//! are validated, stitched and serialized, and the text must equal the reviewed `.txt` beside
//! each. After a deliberate change, run with `UPDATE_GOLDENS=1` and review the diff.

use std::fs;
use std::path::Path;
use tabwright::dom::{page_text, FrameSet, FrameSnapshot, Stitcher};

fn render(json: &str) -> String {
    let value: serde_json::Value = tabwright::json::from_text(json).expect("recorded JSON");
    let frame = FrameSnapshot::from_json(value).expect("a recorded snapshot is valid");
    let page = Stitcher::new().stitch(&FrameSet { top: Some(frame), ..Default::default() });
    page_text(&page, 40_000)
}

#[test]
fn recorded_snapshots_serialize_to_their_reviewed_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshots");
    let update = std::env::var_os("UPDATE_GOLDENS").is_some();
    let mut checked = 0;
    let mut entries: Vec<_> = fs::read_dir(&dir).expect("the snapshots folder").flatten().map(|e| e.path()).collect();
    entries.sort();
    for json_path in entries.into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")) {
        let text = render(&fs::read_to_string(&json_path).unwrap());
        let golden = json_path.with_extension("txt");
        if update {
            fs::write(&golden, &text).unwrap();
        }
        let expected = fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("{} is missing; run with UPDATE_GOLDENS=1", golden.display()));
        assert_eq!(text, expected, "{} no longer renders as reviewed", json_path.display());
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} recorded snapshots were found");
}
