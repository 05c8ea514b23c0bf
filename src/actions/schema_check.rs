//! A small JSON Schema checker for the structured `done` and a skill's parameters: the parts of
//! JSON Schema that task output schemas use (type, properties, required, additionalProperties,
//! min/maxProperties, items, min/maxItems, uniqueItems, enum, const, anyOf, oneOf (exactly one),
//! allOf, not, string lengths, number bounds and multipleOf), each checked exactly. A schema
//! with a keyword it does not check (`pattern`, `if`, `prefixItems`, a `$ref` left after
//! inlining, …) is refused before the task starts ([`unsupported_keyword`]) rather than
//! passed unchecked. Providers with strict structured output enforce the schema already; this
//! catches the rest, with a message that names the path at fault.

use serde_json::Value;

/// Checks `value` against `schema`; the error names the first mismatch by its path (`data.items[2].price`).
pub fn check_value(value: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        // `true` / `{}`-like schemas accept anything; `false` nothing.
        return if schema == &Value::Bool(false) { Err(format!("`{path}` is not allowed")) } else { Ok(()) };
    };
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !names.is_empty() && !names.iter().any(|t| has_type(value, t)) {
            return Err(format!("`{path}` must be {}, not {}", names.join(" or "), type_name(value)));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            let listed: Vec<String> = options.iter().map(Value::to_string).collect();
            return Err(format!("`{path}` must be one of {}", listed.join(", ")));
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            return Err(format!("`{path}` must be {constant}"));
        }
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        if !branches.iter().any(|b| check_value(value, b, path).is_ok()) {
            return Err(format!("`{path}` matches none of the allowed shapes"));
        }
    }
    if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
        match branches.iter().filter(|b| check_value(value, b, path).is_ok()).count() {
            0 => return Err(format!("`{path}` matches none of the allowed shapes")),
            1 => {}
            _ => return Err(format!("`{path}` matches more than one of the shapes, where exactly one is allowed")),
        }
    }
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        for part in parts {
            check_value(value, part, path)?;
        }
    }
    if let Some(excluded) = schema.get("not") {
        if check_value(value, excluded, path).is_ok() {
            return Err(format!("`{path}` has a shape that is not allowed"));
        }
    }
    match value {
        Value::Object(obj) => {
            check_count(obj.len(), schema, "Properties", "fields", path)?;
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for name in required.iter().filter_map(Value::as_str) {
                    if !obj.contains_key(name) {
                        return Err(format!("`{path}.{name}` is missing"));
                    }
                }
            }
            for (name, v) in obj {
                match props.and_then(|p| p.get(name)) {
                    Some(sub) => check_value(v, sub, &format!("{path}.{name}"))?,
                    None => match schema.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            return Err(format!("`{path}.{name}` is not a field of the requested shape"))
                        }
                        // A map's values, each of one shape.
                        Some(extra @ Value::Object(_)) => check_value(v, extra, &format!("{path}.{name}"))?,
                        _ => {}
                    },
                }
            }
        }
        Value::Array(items) => {
            check_count(items.len(), schema, "Items", "items", path)?;
            if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
                if let Some(i) = (1..items.len()).find(|&i| items[..i].contains(&items[i])) {
                    return Err(format!("`{path}[{i}]` repeats an earlier item; the items must differ"));
                }
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_value(item, item_schema, &format!("{path}[{i}]"))?;
                }
            }
        }
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or_default();
            if schema.get("minimum").and_then(Value::as_f64).is_some_and(|min| n < min) {
                return Err(format!("`{path}` is below the minimum {}", schema["minimum"]));
            }
            if schema.get("maximum").and_then(Value::as_f64).is_some_and(|max| n > max) {
                return Err(format!("`{path}` is above the maximum {}", schema["maximum"]));
            }
            if schema.get("exclusiveMinimum").and_then(Value::as_f64).is_some_and(|min| n <= min) {
                return Err(format!("`{path}` must be above {}", schema["exclusiveMinimum"]));
            }
            if schema.get("exclusiveMaximum").and_then(Value::as_f64).is_some_and(|max| n >= max) {
                return Err(format!("`{path}` must be below {}", schema["exclusiveMaximum"]));
            }
            if let Some(step) = schema.get("multipleOf").and_then(Value::as_f64).filter(|s| *s > 0.0) {
                let ratio = n / step;
                if (ratio - ratio.round()).abs() > 1e-9 {
                    return Err(format!("`{path}` must be a multiple of {}", schema["multipleOf"]));
                }
            }
        }
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if schema.get("minLength").and_then(Value::as_u64).is_some_and(|min| len < min) {
                return Err(format!("`{path}` is shorter than {} characters", schema["minLength"]));
            }
            if schema.get("maxLength").and_then(Value::as_u64).is_some_and(|max| len > max) {
                return Err(format!("`{path}` is longer than {} characters", schema["maxLength"]));
            }
        }
        _ => {}
    }
    Ok(())
}

/// `min{counted}` and `max{counted}` (`minItems`, `maxProperties`, …) on a count of `what`.
fn check_count(
    count: usize,
    schema: &serde_json::Map<String, Value>,
    counted: &str,
    what: &str,
    path: &str,
) -> Result<(), String> {
    let bound = |edge: &str| schema.get(&format!("{edge}{counted}")).and_then(Value::as_u64);
    let count = count as u64;
    if let Some(min) = bound("min").filter(|min| count < *min) {
        return Err(format!("`{path}` needs at least {min} {what}"));
    }
    if let Some(max) = bound("max").filter(|max| count > *max) {
        return Err(format!("`{path}` allows at most {max} {what}"));
    }
    Ok(())
}

/// Keywords that constrain a value and that [`check_value`] does not check.
const UNSUPPORTED: &[&str] = &[
    "$ref",
    "$dynamicRef",
    "pattern",
    "patternProperties",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Keywords whose value is data (or words), not a schema to look into.
const DATA: &[&str] = &["enum", "const", "default", "examples", "example", "description", "title", "required"];

/// The first keyword of `schema` that [`check_value`] would not check, with where it is
/// (`pattern` at `properties.email`): such a schema is refused rather than half checked.
pub fn unsupported_keyword(schema: &Value) -> Option<String> {
    fn walk(node: &Value, path: &str) -> Option<String> {
        match node {
            Value::Object(map) => {
                if let Some(keyword) = UNSUPPORTED.iter().find(|k| map.contains_key(**k)) {
                    let at = if path.is_empty() { "the top".to_string() } else { format!("`{path}`") };
                    return Some(format!("`{keyword}` at {at}"));
                }
                map.iter().filter(|(key, _)| !DATA.contains(&key.as_str())).find_map(|(key, value)| {
                    let inner = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                    match (key.as_str(), value) {
                        // A property named like a keyword is a name, not a keyword.
                        ("properties" | "$defs" | "definitions", Value::Object(names)) => {
                            names.iter().find_map(|(name, sub)| walk(sub, &format!("{inner}.{name}")))
                        }
                        _ => walk(value, &inner),
                    }
                })
            }
            Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| walk(item, &format!("{path}[{i}]"))),
            _ => None,
        }
    }
    walk(schema, "")
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        _ => true,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn products() -> Value {
        json!({
            "type": "object",
            "properties": {
                "products": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "price": {"type": "number", "minimum": 0}},
                    "required": ["name", "price"],
                    "additionalProperties": false,
                }},
                "currency": {"enum": ["EUR", "USD"]},
            },
            "required": ["products"],
        })
    }

    #[test]
    fn data_of_the_requested_shape_passes() {
        let data = json!({"products": [{"name": "Tea", "price": 3.5}], "currency": "EUR"});
        assert_eq!(check_value(&data, &products(), "data"), Ok(()));
    }

    #[test]
    fn a_maps_values_are_each_checked() {
        let prices = json!({"type": "object", "additionalProperties": {"type": "number"}});
        assert_eq!(check_value(&json!({"tea": 3.5, "milk": 1}), &prices, "data"), Ok(()));
        assert!(check_value(&json!({"tea": "cheap"}), &prices, "data").unwrap_err().contains("data.tea"));
    }

    #[test]
    fn mismatches_name_their_path() {
        let cases = [
            (json!({}), "`data.products` is missing"),
            (
                json!({"products": [{"name": "Tea", "price": "3.5"}]}),
                "`data.products[0].price` must be number, not a string",
            ),
            (json!({"products": [{"name": "Tea", "price": -1}]}), "`data.products[0].price` is below the minimum 0"),
            (json!({"products": [{"name": "Tea", "price": 1, "x": 1}]}), "`data.products[0].x` is not a field"),
            (json!({"products": [], "currency": "GBP"}), "`data.currency` must be one of \"EUR\", \"USD\""),
            (json!([1]), "`data` must be object, not an array"),
        ];
        for (data, expected) in cases {
            let err = check_value(&data, &products(), "data").unwrap_err();
            assert!(err.starts_with(expected), "{err} vs {expected}");
        }
    }

    #[test]
    fn one_of_means_exactly_one_and_all_of_means_every_one() {
        let one = json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 10}]});
        assert_eq!(check_value(&json!(3), &one, "data"), Ok(()));
        assert_eq!(check_value(&json!(10.5), &one, "data"), Ok(()));
        assert!(check_value(&json!(12), &one, "data").unwrap_err().contains("more than one"));
        assert!(check_value(&json!("x"), &one, "data").unwrap_err().contains("none of"));
        let all = json!({"allOf": [{"required": ["a"]}, {"required": ["b"]}]});
        assert!(check_value(&json!({"a": 1}), &all, "data").unwrap_err().contains("`data.b` is missing"));
        let not = json!({"not": {"const": "admin"}});
        assert!(check_value(&json!("admin"), &not, "data").is_err());
        assert_eq!(check_value(&json!("alice"), &not, "data"), Ok(()));
    }

    #[test]
    fn bounds_on_numbers_items_and_fields_are_exact() {
        let n = json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100, "multipleOf": 0.5});
        assert_eq!(check_value(&json!(99.5), &n, "x"), Ok(()));
        assert!(check_value(&json!(0), &n, "x").unwrap_err().contains("above 0"));
        assert!(check_value(&json!(100), &n, "x").unwrap_err().contains("below 100"));
        assert!(check_value(&json!(1.25), &n, "x").unwrap_err().contains("multiple of 0.5"));
        let list = json!({"type": "array", "uniqueItems": true});
        assert!(check_value(&json!([1, 2, 1]), &list, "x").unwrap_err().starts_with("`x[2]` repeats"));
        let obj = json!({"type": "object", "minProperties": 1, "maxProperties": 2});
        assert_eq!(check_value(&json!({}), &obj, "x").unwrap_err(), "`x` needs at least 1 fields");
        assert_eq!(
            check_value(&json!({"a": 1, "b": 2, "c": 3}), &obj, "x").unwrap_err(),
            "`x` allows at most 2 fields"
        );
        let short = json!({"type": "array", "minItems": 2, "maxItems": 3});
        assert_eq!(check_value(&json!([1]), &short, "x").unwrap_err(), "`x` needs at least 2 items");
        assert_eq!(check_value(&json!([1, 2, 3, 4]), &short, "x").unwrap_err(), "`x` allows at most 3 items");
    }

    #[test]
    fn a_keyword_the_checker_does_not_check_is_named_not_ignored() {
        assert_eq!(unsupported_keyword(&products()), None);
        let email = json!({"type": "object", "properties": {"email": {"type": "string", "pattern": "^.+@.+$"}}});
        assert_eq!(unsupported_keyword(&email).as_deref(), Some("`pattern` at `properties.email`"));
        let conditional = json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}});
        assert_eq!(unsupported_keyword(&conditional).as_deref(), Some("`if` at the top"));
        // A field named like a keyword is only a name; words in an enum are data.
        let named = json!({"properties": {"pattern": {"type": "string", "enum": ["if", "then"]}}});
        assert_eq!(unsupported_keyword(&named), None);
        assert!(unsupported_keyword(&json!({"items": {"$ref": "#/x"}})).unwrap().contains("$ref"));
    }

    #[test]
    fn a_task_schemas_definitions_are_looked_into_and_its_refs_are_fine() {
        use crate::actions::unsupported_output_keyword;
        let pydantic = json!({
            "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
            "type": "object",
            "properties": {"people": {"type": "array", "items": {"$ref": "#/$defs/Person"}}},
        });
        assert_eq!(unsupported_output_keyword(&pydantic), None, "references are inlined, so nothing is left unchecked");
        let mut with_pattern = pydantic.clone();
        with_pattern["$defs"]["Person"]["properties"]["name"]["pattern"] = json!("^[A-Z]");
        let found = unsupported_output_keyword(&with_pattern).unwrap();
        assert!(found.starts_with("`pattern` at `properties.people.items.properties.name`"), "{found}");
    }
}
