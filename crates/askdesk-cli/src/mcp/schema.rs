//! Portable JSON Schemas for tool arguments and results: self-contained (no `$ref`, no `$defs`), one
//! type per schema (an optional field is simply absent, never `null`), so that the tool converters
//! of model providers that accept only a subset of JSON Schema take them as they are.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::generate::{Contract, SchemaSettings};
use schemars::JsonSchema;
use serde_json::Value;

/// The schema of what a tool accepts (`inputSchema`).
pub fn input<T: JsonSchema>() -> Arc<JsonObject> {
    generate::<T>(Contract::Deserialize)
}

/// The schema of what a tool returns in `structuredContent` (`outputSchema`).
pub fn output<T: JsonSchema>() -> Arc<JsonObject> {
    generate::<T>(Contract::Serialize)
}

fn generate<T: JsonSchema>(contract: Contract) -> Arc<JsonObject> {
    let schema = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
            settings.contract = contract;
        })
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    make_portable(&mut value);
    match value {
        Value::Object(object) => Arc::new(object),
        other => panic!("a tool schema is an object schema, not {other}"),
    }
}

/// Rewrites what schemars emits for `Option<T>` into the portable form: `"type": ["string",
/// "null"]` becomes `"type": "string"` and a `"default": null` goes, at every depth; so does the
/// `"format": "uint"` (or `int32`, ...) it puts on an integer, a format JSON Schema does not
/// define, which validators warn about.
fn make_portable(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Array(types)) = object.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.pop().expect("one type left");
                    object.insert("type".into(), only);
                }
            }
            if object.get("default") == Some(&Value::Null) {
                object.remove("default");
            }
            let integer_format = object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| format.starts_with("int") || format.starts_with("uint"));
            if integer_format {
                object.remove("format");
            }
            object.values_mut().for_each(make_portable);
        }
        Value::Array(items) => items.iter_mut().for_each(make_portable),
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Every construct in `schema` that a strict tool converter rejects, as `pointer: problem`.
    pub fn unportable(schema: &Value) -> Vec<String> {
        let mut found = Vec::new();
        walk(schema, "", &mut found);
        found
    }

    fn walk(value: &Value, at: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                for key in ["$ref", "$defs", "definitions", "$schema", "$id", "$anchor"] {
                    if object.contains_key(key) {
                        found.push(format!("{at}: uses {key}"));
                    }
                }
                match object.get("type") {
                    Some(Value::String(t)) if t == "null" => {
                        found.push(format!("{at}: has the type null"))
                    }
                    Some(Value::String(_)) | None => {}
                    Some(other) => found.push(format!("{at}: has the type {other}, not one name")),
                }
                if object.get("default") == Some(&Value::Null) {
                    found.push(format!("{at}: defaults to null"));
                }
                for (key, child) in object {
                    // `properties` maps names (one may be "type") to schemas: only those are
                    // schemas.
                    match (key.as_str(), child) {
                        ("properties", Value::Object(properties)) => {
                            for (name, schema) in properties {
                                walk(schema, &format!("{at}/properties/{name}"), found);
                            }
                        }
                        _ => walk(child, &format!("{at}/{key}"), found),
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, &format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Vec<Inner>,
        #[serde(default)]
        note: Option<String>,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        #[serde(default)]
        label: Option<String>,
    }

    #[test]
    fn nested_types_and_options_become_portable() {
        let schema = Value::Object(input::<Outer>().as_ref().clone());
        assert_eq!(unportable(&schema), Vec::<String>::new(), "{schema:#}");
        assert_eq!(schema["properties"]["note"]["type"], "string");
        assert_eq!(
            schema["properties"]["inner"]["items"]["properties"]["label"]["type"],
            "string"
        );
        assert_eq!(schema["required"], json!(["inner"]));
    }

    #[test]
    fn a_property_named_type_is_not_taken_for_the_keyword() {
        let schema = json!({ "type": "object", "properties": {
            "type": { "type": "string", "enum": ["image"] },
            "bad": { "type": ["string", "null"] }
        }});
        assert_eq!(
            unportable(&schema),
            vec![r#"/properties/bad: has the type ["string","null"], not one name"#]
        );
    }

    #[test]
    fn the_walker_finds_each_forbidden_construct() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "a": { "$ref": "#/$defs/A" },
                "b": { "type": ["string", "null"], "default": null },
                "c": { "type": "null" }
            },
            "$defs": { "A": { "type": "string" } }
        });
        assert_eq!(
            unportable(&schema),
            [
                ": uses $defs",
                ": uses $schema",
                "/properties/a: uses $ref",
                "/properties/b: has the type [\"string\",\"null\"], not one name",
                "/properties/b: defaults to null",
                "/properties/c: has the type null",
            ]
        );
    }
}
