//! What the agent sees of a page.
//!
//! The content script indexes the page and sends a [`Snapshot`]: a small, versioned list of the
//! interactive elements a person could use, each with a stable index. The core never trusts it —
//! a page can be hostile and a content script can be out of date — so [`Snapshot::from_json`]
//! checks the version, the shape and every bound, and returns a [`SnapshotError`] rather than
//! panicking. [`serialize`] turns a valid snapshot into the text the LLM reads.

mod serialize;

pub use serialize::{element_line, page_text, untrusted};

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// The snapshot format version this core understands. The content script stamps every snapshot
/// with the version it writes; a mismatch means the extension was half-updated.
pub const SNAPSHOT_VERSION: u32 = 1;

/// Upper bounds that keep a hostile or broken page from exhausting memory or the prompt.
pub mod limits {
    pub const MAX_ELEMENTS: usize = 100_000;
    pub const MAX_ATTRIBUTES: usize = 64;
    pub const MAX_TAG_LEN: usize = 64;
    pub const MAX_URL_LEN: usize = 16_384;
}

/// One page as the content script saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub version: u32,
    pub url: String,
    pub title: String,
    /// How far the page can scroll above and below the current viewport.
    #[serde(default)]
    pub scroll: ScrollInfo,
    pub elements: Vec<Element>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrollInfo {
    pub above_px: u32,
    pub below_px: u32,
}

/// One interactive element. `index` stays the same for as long as the element lives in the
/// document, so the LLM can refer to it across steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Element {
    pub index: u32,
    pub tag: String,
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    #[serde(default)]
    pub text: String,
    /// True when the element was not in the previous snapshot of this page.
    #[serde(default)]
    pub is_new: bool,
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
    /// Parses and checks a snapshot sent by the content script.
    pub fn from_json(value: serde_json::Value) -> Result<Self, SnapshotError> {
        // Check the version before the shape, so a newer format says so instead of failing on
        // an unknown field.
        if let Some(found) = value.get("version").and_then(|v| v.as_u64()) {
            if found != u64::from(SNAPSHOT_VERSION) {
                return Err(SnapshotError::Version {
                    found: u32::try_from(found).unwrap_or(u32::MAX),
                    expected: SNAPSHOT_VERSION,
                });
            }
        }
        let snapshot: Snapshot = serde_path_to_error::deserialize(value)
            .map_err(|e| SnapshotError::Shape(format!("at {}: {}", e.path(), e.inner())))?;
        snapshot.validate()?;
        Ok(snapshot)
    }

    fn validate(&self) -> Result<(), SnapshotError> {
        let invalid = |m: String| Err(SnapshotError::Invalid(m));
        if self.url.len() > limits::MAX_URL_LEN {
            return invalid(format!("the URL is {} bytes long", self.url.len()));
        }
        if self.elements.len() > limits::MAX_ELEMENTS {
            return invalid(format!(
                "{} elements, more than the {} this core accepts",
                self.elements.len(),
                limits::MAX_ELEMENTS
            ));
        }
        let mut seen = HashSet::with_capacity(self.elements.len());
        for el in &self.elements {
            if el.index == 0 {
                return invalid("element index 0 (indices start at 1)".into());
            }
            if !seen.insert(el.index) {
                return invalid(format!("element index {} appears twice", el.index));
            }
            let tag_ok = !el.tag.is_empty()
                && el.tag.len() <= limits::MAX_TAG_LEN
                && el.tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !tag_ok {
                return invalid(format!("element [{}] has an unusable tag name", el.index));
            }
            if el.attributes.len() > limits::MAX_ATTRIBUTES {
                return invalid(format!("element [{}] has {} attributes", el.index, el.attributes.len()));
            }
            for name in el.attributes.keys() {
                let ok = !name.is_empty()
                    && name.len() <= limits::MAX_TAG_LEN
                    && name.bytes().all(|b| b.is_ascii_graphic() && b != b'=' && b != b'<' && b != b'>');
                if !ok {
                    return invalid(format!("element [{}] has an unusable attribute name", el.index));
                }
            }
        }
        Ok(())
    }

    /// The element with this index, if the page still has it.
    pub fn element(&self, index: u32) -> Option<&Element> {
        self.elements.iter().find(|e| e.index == index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn login_page() -> serde_json::Value {
        json!({
            "version": 1, "url": "http://127.0.0.1/login", "title": "Log in",
            "scroll": {"above_px": 0, "below_px": 0},
            "elements": [
                {"index": 1, "tag": "input", "attributes": {"name": "username"}, "text": ""},
                {"index": 2, "tag": "button", "attributes": {"type": "submit"}, "text": "Submit", "is_new": true}
            ]
        })
    }

    #[test]
    fn a_well_formed_snapshot_parses_and_finds_elements_by_index() {
        let snap = Snapshot::from_json(login_page()).unwrap();
        assert_eq!(snap.element(2).unwrap().text, "Submit");
        assert!(snap.element(3).is_none());
    }

    #[test]
    fn a_snapshot_of_another_version_is_refused_with_the_versions_named() {
        let mut v = login_page();
        v["version"] = json!(2);
        let err = Snapshot::from_json(v).unwrap_err();
        assert_eq!(err, SnapshotError::Version { found: 2, expected: 1 });
    }

    #[test]
    fn duplicate_and_zero_indices_are_malformed() {
        let mut v = login_page();
        v["elements"][1]["index"] = json!(1);
        assert!(matches!(Snapshot::from_json(v).unwrap_err(), SnapshotError::Invalid(m) if m.contains("twice")));
        let mut v = login_page();
        v["elements"][0]["index"] = json!(0);
        assert!(matches!(Snapshot::from_json(v), Err(SnapshotError::Invalid(_))));
    }

    #[test]
    fn hostile_tag_and_attribute_names_are_refused() {
        let mut v = login_page();
        v["elements"][0]["tag"] = json!("input onfocus=alert(1)");
        assert!(Snapshot::from_json(v).is_err());
        let mut v = login_page();
        v["elements"][0]["attributes"] = json!({"a>b": "x"});
        assert!(Snapshot::from_json(v).is_err());
    }

    #[test]
    fn wrong_types_name_the_path() {
        let mut v = login_page();
        v["elements"][1]["index"] = json!("two");
        let err = Snapshot::from_json(v).unwrap_err().to_string();
        assert!(err.contains("elements[1].index"), "{err}");
    }
}
