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
//! object as a `serde_json::Value` (the tag taken out), then the variant it names, through a
//! twin of the enum that serde reads externally tagged (a `remote` derive that builds the enum
//! itself). Inner types are read from the `Value`, as the rest of the core reads them.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, VariantAccess, Visitor};
use serde_json::{Map, Value};

/// Declares an internally tagged enum: written by serde's derive (give it `Serialize`) and read
/// through [`Tagged`]. The tag is named once, in `tag = "..."`; `serde(...)` holds the other
/// serde attributes of the enum (e.g. `rename_all`, `deny_unknown_fields`), which the writing
/// and the reading both follow; `remote = "..."` repeats the enum's name (serde wants a string).
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
                    $crate::tagged::Tagged::from_value(value, $tag)
                        .and_then(Twin::deserialize)
                        .map_err(serde::de::Error::custom)
                }
            }
        };
    };
}
pub(crate) use tagged_enum;

/// A JSON object with its tag taken out, offered to serde as the variant the tag names, with
/// the rest of the object as that variant's fields.
#[derive(Debug)]
pub struct Tagged {
    variant: String,
    fields: Map<String, Value>,
}

impl Tagged {
    /// `value` must be an object whose `tag` field is a string.
    pub fn from_value(value: Value, tag: &'static str) -> Result<Self, serde_json::Error> {
        let Value::Object(mut fields) = value else {
            return Err(de::Error::invalid_type(unexpected(&value), &"an object"));
        };
        match fields.remove(tag) {
            Some(Value::String(variant)) => Ok(Tagged { variant, fields }),
            Some(other) => Err(de::Error::invalid_type(unexpected(&other), &"a string naming the variant")),
            None => Err(de::Error::missing_field(tag)),
        }
    }
}

fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

impl<'de> Deserializer<'de> for Tagged {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> EnumAccess<'de> for Tagged {
    type Error = serde_json::Error;
    type Variant = Fields;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Fields), Self::Error> {
        let variant = seed.deserialize(self.variant.into_deserializer())?;
        Ok((variant, Fields(self.fields)))
    }
}

/// The fields of the variant a [`Tagged`] names.
pub struct Fields(Map<String, Value>);

impl<'de> VariantAccess<'de> for Fields {
    type Error = serde_json::Error;

    /// Fields beside the tag of a variant without any are ignored, as serde's own reading does.
    fn unit_variant(self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// A variant that holds one struct: the struct is the rest of the object.
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Self::Error> {
        seed.deserialize(Value::Object(self.0))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::invalid_type(de::Unexpected::Map, &"a tuple variant, which a tagged object cannot hold"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        Value::Object(self.0).deserialize_struct("", fields, visitor)
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
        Sample::deserialize(value).map_err(|e| e.to_string())
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
