//! Reading JSON text into typed values, naming where a value does not fit.
//!
//! serde_json says what went wrong and at which line and column; the path (`llm.model`,
//! `nodes[3].tag`) is found by reading the text again up to that point. Every typed read of
//! the core goes through JSON text and serde_json's one reader: a second reader (from a
//! `serde_json::Value`) or a wrapper that tracks paths while reading would compile every
//! type's deserializer again into the wasm, which the extension's cold start decodes.
//!
//! That one reader is wrapped in [`Objects`], which reads a struct only from a JSON object.
//! serde_json also accepts a struct written as an array of its fields, and serde's derive
//! writes that second way of reading into every struct's deserializer; nothing the core reads
//! is ever written so, and the second way was about 78 KB of the wasm (a third of all the
//! deserializers). Lint: `serde_json::from_str` and its kin are refused by clippy.toml outside
//! this module, so no read goes around the wrapper.

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

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

/// `text` read as a `T`, with serde_json's error (its line and column) when it does not fit.
pub fn from_text<'t, T: de::Deserialize<'t>>(text: &'t str) -> Result<T, serde_json::Error> {
    read_with(text, |reader| T::deserialize(reader))
}

/// `text` read by `read` (a type's `deserialize`, or a remote derive's), as one whole value:
/// anything but whitespace after it is an error.
pub fn read_with<'t, T>(
    text: &'t str,
    read: impl FnOnce(Objects<&mut serde_json::Deserializer<serde_json::de::StrRead<'t>>>) -> Result<T, serde_json::Error>,
) -> Result<T, serde_json::Error> {
    #[allow(clippy::disallowed_methods)]
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = read(Objects(&mut reader))?;
    reader.end()?;
    Ok(value)
}

/// `text` read as a `T`.
pub fn read<T: DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    from_text(text).map_err(|e: serde_json::Error| {
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

/// A reader, or a part of reading (a visitor, a seed, the access to a map, a list or an enum),
/// that reads every struct from an object only (see the module's doc). Everything else is
/// passed on as it is, so a value reads the same as with serde_json alone, and errors are
/// serde_json's own.
pub struct Objects<T>(T);

macro_rules! pass_on {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.0.$method(Objects(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Objects<D> {
    type Error = D::Error;

    pass_on!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Objects(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Objects(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Objects(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Objects(visitor))
    }

    /// The one change: a struct is read as a map, which is an object.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Objects(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Objects(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! visit_as_is {
    ($($method:ident: $t:ty),*) => {$(
        fn $method<E: de::Error>(self, v: $t) -> Result<Self::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Objects<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.expecting(f)
    }

    visit_as_is!(
        visit_bool: bool, visit_i8: i8, visit_i16: i16, visit_i32: i32, visit_i64: i64, visit_i128: i128,
        visit_u8: u8, visit_u16: u16, visit_u32: u32, visit_u64: u64, visit_u128: u128, visit_f32: f32,
        visit_f64: f64, visit_char: char, visit_str: &str, visit_borrowed_str: &'de str, visit_string: String,
        visit_bytes: &[u8], visit_borrowed_bytes: &'de [u8], visit_byte_buf: Vec<u8>
    );

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_some(Objects(deserializer))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_newtype_struct(Objects(deserializer))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(Objects(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(Objects(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(Objects(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Objects<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Objects(deserializer))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Objects(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Objects(seed))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(Objects(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Objects<A> {
    type Error = A::Error;
    type Variant = Objects<A::Variant>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(Objects(seed))?;
        Ok((value, Objects(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Objects(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Objects(visitor))
    }

    /// A struct variant's fields, as a struct's, from an object only: read as the content of
    /// a newtype variant, which serde_json hands over as the reader it is.
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.newtype_variant_seed(StructVariant(visitor))
    }
}

/// The fields of a struct variant, read as a map.
struct StructVariant<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for StructVariant<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        deserializer.deserialize_map(Objects(self.0))
    }
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
                        Some(from_text::<String>(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string()));
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
        // A struct is read from an object only, not from an array of its fields.
        assert_eq!(fails(r#"[{"model": "m"}]"#).to_string(), "at .: invalid type: sequence, expected struct Stored");
        assert_eq!(fails(r#""text""#).path, ".");
    }

    #[test]
    fn a_struct_variant_is_read_from_an_object_only() {
        #[derive(Debug, PartialEq, Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum Shape {
            Line { from: u8, to: u8 },
        }
        assert_eq!(from_text::<Shape>(r#"{"line": {"from": 1, "to": 2}}"#).unwrap(), Shape::Line { from: 1, to: 2 });
        let e = read::<Shape>(r#"{"line": [1, 2]}"#).unwrap_err();
        assert_eq!(e.to_string(), "at line: invalid type: sequence, expected struct variant Shape::Line");
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
