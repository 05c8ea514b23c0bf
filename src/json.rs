//! Reading JSON text into typed values, naming where a value does not fit.
//!
//! serde_json says what went wrong and at which line and column; the path (`llm.model`,
//! `nodes[3].tag`) is found by reading the text again up to that point. Every typed read of
//! the core goes through JSON text and serde_json's one reader: a second reader (from a
//! `serde_json::Value`) or a wrapper that tracks paths while reading would compile every
//! type's deserializer again into the wasm, which the extension's cold start decodes.

use serde::de::DeserializeOwned;

/// A value that does not fit its type: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// `.` for the whole value, else the keys and indices down to the value at fault.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {}: {}", self.path, self.message)
    }
}

/// `text` read as a `T`.
pub fn read<T: DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        // serde_json adds the position; the path says it better.
        let message = match message.rfind(" at line ") {
            Some(cut) if e.line() > 0 => message[..cut].to_string(),
            _ => message,
        };
        // A missing field is told at the end of its object: the path is the object's.
        let column = if message.starts_with("missing field") { e.column() + 1 } else { e.column() };
        JsonError { path: path_at(text, e.line(), column), message }
    })
}

/// `value` read as a `T` (through its text: see the module's doc).
pub fn read_value<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, JsonError> {
    read(&value.to_string())
}

/// One level of the text being read: an object (its key being read, if any) or an array (the
/// index of the element being read).
enum Level {
    Object(Option<String>),
    Array(usize),
}

/// The path of the value being read at `line` and `column` (1-based, as serde_json counts: a
/// column is a byte) of `text`.
pub fn path_at(text: &str, line: usize, column: usize) -> String {
    let offset = match line {
        0 => text.len(),
        _ => {
            let start: usize = text.split_inclusive('\n').take(line - 1).map(str::len).sum();
            // The byte at the column is where serde_json stopped: not read yet.
            (start + column.saturating_sub(1)).min(text.len())
        }
    };
    let bytes = &text.as_bytes()[..offset];
    let mut levels: Vec<Level> = Vec::new();
    let mut i = 0;
    // After a key's string and before its colon, the string is the key.
    let mut awaiting_colon: Option<String> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(bytes.len());
                if let Some(Level::Object(None)) = levels.last() {
                    let raw = &text[start..end];
                    awaiting_colon =
                        Some(serde_json::from_str::<String>(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string()));
                }
            }
            b':' => {
                if let (Some(Level::Object(key)), Some(name)) = (levels.last_mut(), awaiting_colon.take()) {
                    *key = Some(name);
                }
            }
            b',' => match levels.last_mut() {
                Some(Level::Object(key)) => *key = None,
                Some(Level::Array(index)) => *index += 1,
                None => {}
            },
            b'{' => levels.push(Level::Object(None)),
            b'[' => levels.push(Level::Array(0)),
            b'}' | b']' => {
                levels.pop();
            }
            _ => {}
        }
        i += 1;
    }
    // Stopped at a key (an unknown field is told there): the key is the place.
    if let (Some(Level::Object(key @ None)), Some(name)) = (levels.last_mut(), awaiting_colon) {
        *key = Some(name);
    }
    let mut path = String::new();
    for level in &levels {
        match level {
            Level::Object(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Level::Object(None) => {}
            Level::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    if path.is_empty() {
        ".".into()
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Llm {
        model: String,
        #[serde(default)]
        timeout_s: Option<u32>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Stored {
        llm: Llm,
        #[serde(default)]
        nodes: Vec<Node>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Node {
        d: u16,
        #[serde(default)]
        tag: Option<String>,
    }

    fn fails(text: &str) -> JsonError {
        read::<Stored>(text).unwrap_err()
    }

    #[test]
    fn the_path_of_a_value_that_does_not_fit_is_named_in_compact_and_pretty_text() {
        let e = fails(r#"{"llm": {"model": 5}}"#);
        assert_eq!(e.path, "llm.model");
        assert!(e.message.starts_with("invalid type: integer `5`, expected a string"), "{}", e.message);
        assert!(!e.message.contains("line"), "the position is said by the path");
        let pretty = "{\n  \"llm\": {\n    \"model\": \"m\",\n    \"timeout_s\": \"ten\"\n  }\n}";
        assert_eq!(fails(pretty).path, "llm.timeout_s");
        let e = fails(r#"{"llm": {"model": "m"}, "nodes": [{"d": 0}, {"d": 1, "tag": 7}]}"#);
        assert_eq!(e.to_string(), "at nodes[1].tag: invalid type: integer `7`, expected a string");
        assert_eq!(fails(r#"{"llm": {"model": "m", "extra": 1}}"#).path, "llm.extra");
        assert_eq!(fails(r#"{"nodes": []}"#).path, ".", "a missing field is the object's");
        assert!(fails(r#"{"nodes": []}"#).message.contains("missing field `llm`"));
        // A struct may be written as an array of its fields: the first one does not fit.
        assert_eq!(fails(r#"[1, 2]"#).to_string(), "at [0]: invalid type: integer `1`, expected struct Llm");
        assert_eq!(fails(r#""text""#).path, ".");
    }

    #[test]
    fn keys_with_escapes_and_brackets_in_strings_do_not_lose_the_way() {
        let text = r#"{"llm": {"model": "a]}\"[{,"}, "nodes": [{"d": 0, "tag": "x,]"}, {"d": "deep"}]}"#;
        assert_eq!(fails(text).path, "nodes[1].d");
        let e = read::<serde_json::Map<String, serde_json::Value>>(r#"{"a\"b": {"c": }}"#).unwrap_err();
        assert_eq!(e.path, "a\"b.c");
    }

    #[test]
    fn a_value_is_read_through_its_text() {
        let value = serde_json::json!({"llm": {"model": "m"}, "nodes": [{"d": 2, "tag": "a"}]});
        let stored: Stored = read_value(&value).unwrap();
        assert_eq!(stored.nodes[0].d, 2);
        assert_eq!(read_value::<Stored>(&serde_json::json!({"llm": {}})).unwrap_err().path, "llm");
    }
}
