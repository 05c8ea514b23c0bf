//! Reading internally tagged enums — `{"type": "step_started", "v": 1, ...}` — without serde's
//! buffering.
//!
//! serde reads `#[serde(tag = "...")]` enums by first copying the whole object into its private
//! `Content` tree, since the tag may come after the fields, and then reading each variant's
//! fields out of that tree. Every type inside such an enum is thereby compiled a second time,
//! for the tree; for the core's tagged enums that was about 90 KB of a 1.18 MB WebAssembly
//! module, which Chrome decodes on every cold start of the service worker.
//!
//! [`tagged_enum!`] keeps the enum and its wire format, and reads it in two steps instead: the
//! object as a `serde_json::Value`, the tag taken out and written as the key of an externally
//! tagged object (`{"step_started": {"v": 1, ...}}`), then that text through a twin of the enum
//! that serde reads externally tagged (a `remote` derive that builds the enum itself). The
//! variants' fields are read from JSON text by serde_json's one reader, as the rest of the core
//! reads (`crate::json`), so no type is compiled a second time for another reader.

use serde_json::{Map, Value};

/// Declares an internally tagged enum: written by serde's derive (give it `Serialize`) and read
/// through [`externally_tagged`]. The tag is named once, in `tag = "..."`; `serde(...)` holds the
/// other serde attributes of the enum (e.g. `rename_all`, `deny_unknown_fields`), which the
/// writing and the reading both follow; `remote = "..."` repeats the enum's name (serde wants a
/// string).
macro_rules! tagged_enum {
    (
        tag = $tag:literal, remote = $remote:literal, serde($($serde:tt)*);
        $(#[$meta:meta])*
        $vis:vis enum $name:ident { $($body:tt)* }
    ) => {
        $(#[$meta])*
        #[serde(tag = $tag, $($serde)*)]
        $vis enum $name { $($body)* }

        const _: () = {
            #[derive(serde::Deserialize)]
            #[serde(remote = $remote, $($serde)*)]
            #[allow(dead_code)]
            enum Twin { $($body)* }

            impl<'de> serde::Deserialize<'de> for $name {
                fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                    $crate::tagged::externally_tagged(value, $tag, |text| $crate::json::read_with(text, |reader| Twin::deserialize(reader)))
                    .map_err(serde::de::Error::custom)
                }
            }
        };
    };
}
pub(crate) use tagged_enum;

/// Reads `value`, an object whose `tag` field names its variant, with `read`, which reads the
/// externally tagged form of the enum from JSON text: `{"variant": {fields}}`, or `"variant"`
/// for a variant without fields (fields beside the tag of such a variant are ignored, as
/// serde's own reading does).
pub fn externally_tagged<T>(
    value: Value,
    tag: &'static str,
    read: impl Fn(&str) -> Result<T, serde_json::Error>,
) -> Result<T, String> {
    let Value::Object(mut fields) = value else {
        return Err(format!("invalid type: {}, expected an object", kind(&value)));
    };
    let variant = match fields.remove(tag) {
        Some(Value::String(variant)) => variant,
        Some(other) => return Err(format!("invalid type: {}, expected a string naming the variant", kind(&other))),
        None => return Err(format!("missing field `{tag}`")),
    };
    let name = Value::String(variant);
    let mut wrapped = Map::new();
    wrapped.insert(name.as_str().unwrap_or_default().to_string(), Value::Object(fields));
    // A variant without fields reads only as its name alone; when that fails too, the error of
    // the object form is the one that says what is wrong.
    read(&Value::Object(wrapped).to_string())
        .or_else(|object_error| read(&name.to_string()).map_err(|_| object_error))
        .map_err(|e| e.to_string())
}

fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => format!("number `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Inner {
        n: u32,
    }

    tagged_enum! {
        tag = "type", remote = "Sample", serde(rename_all = "snake_case", deny_unknown_fields);
        #[derive(Debug, Clone, PartialEq, Serialize)]
        enum Sample {
            /// Doc comments and field attributes are kept.
            Fields {
                a: String,
                #[serde(default)]
                b: Option<u32>,
            },
            Holds(Inner),
            Nothing,
        }
    }
    use serde::Deserialize;

    fn read(value: Value) -> Result<Sample, String> {
        crate::json::from_text::<Sample>(&value.to_string()).map_err(|e| e.to_string())
    }

    #[test]
    fn each_kind_of_variant_reads_back_what_was_written() {
        for sample in [
            Sample::Fields { a: "x".into(), b: Some(2) },
            Sample::Fields { a: "y".into(), b: None },
            Sample::Holds(Inner { n: 7 }),
            Sample::Nothing,
        ] {
            let written = serde_json::to_value(&sample).unwrap();
            assert_eq!(read(written.clone()), Ok(sample), "{written}");
        }
        // Fields beside the tag of a variant without any are ignored, as serde's own reading does.
        assert_eq!(read(json!({"type": "nothing", "extra": 1})), Ok(Sample::Nothing));
        // The tag may come anywhere in the object.
        assert_eq!(read(json!({"a": "z", "type": "fields"})), Ok(Sample::Fields { a: "z".into(), b: None }));
    }

    #[test]
    fn a_bad_object_is_refused_saying_why() {
        let error = |value: Value| read(value).unwrap_err();
        assert!(error(json!({"a": "x"})).contains("missing field `type`"), "{}", error(json!({"a": "x"})));
        assert!(error(json!({"type": 3})).contains("a string naming the variant"));
        assert!(error(json!([1])).contains("expected an object"));
        let unknown = error(json!({"type": "other"}));
        assert!(unknown.contains("unknown variant `other`") && unknown.contains("`fields`"), "{unknown}");
        assert!(error(json!({"type": "fields"})).contains("missing field `a`"));
        assert!(error(json!({"type": "fields", "a": "x", "c": 1})).contains("unknown field `c`"));
        assert!(error(json!({"type": "holds", "n": "seven"})).contains("invalid type: string \"seven\""));
    }
}
