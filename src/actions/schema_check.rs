//! A small JSON Schema checker for the structured `done` and a skill's parameters: the parts of JSON Schema that task
//! output schemas use (type, properties, required, additionalProperties, items, enum, const,
//! anyOf/oneOf, string and number bounds). Providers with strict structured output enforce the
//! schema already; this catches the rest, with a message that names the path at fault.

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
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            if !branches.iter().any(|b| check_value(value, b, path).is_ok()) {
                return Err(format!("`{path}` matches none of the allowed shapes"));
            }
        }
    }
    match value {
        Value::Object(obj) => {
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
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
                if (items.len() as u64) < min {
                    return Err(format!("`{path}` needs at least {min} items"));
                }
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64) {
                if items.len() as u64 > max {
                    return Err(format!("`{path}` allows at most {max} items"));
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
}
