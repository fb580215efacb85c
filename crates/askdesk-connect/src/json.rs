//! JSON that keeps its object keys in file order and its numbers as written, so a settings file
//! askdesk edits is written back with the user's own layout and values (the workspace's
//! `serde_json::Map` sorts keys, and `serde_json::Number` rounds what does not fit a 64-bit
//! integer or float).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Error as _, Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::value::RawValue;

/// A JSON value whose objects are key/value lists in their original order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The number's JSON text: as written in a file read with [`Json::parse`], else as
    /// `serde_json` prints the value it parsed.
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn object<const N: usize>(fields: [(&str, Json); N]) -> Json {
        Json::Object(
            fields
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect(),
        )
    }

    pub fn str(text: impl Into<String>) -> Json {
        Json::String(text.into())
    }

    /// Parses JSON text as `serde_json` does (the same errors and nesting limit), keeping each
    /// number's text exactly as written.
    pub fn parse(text: &str) -> serde_json::Result<Json> {
        // The checked parse first: it bounds the nesting the recursion below walks.
        serde_json::from_str::<Json>(text)?;
        Json::from_raw(serde_json::from_str(text)?)
    }

    /// The value of valid JSON text (one value, no surrounding whitespace).
    fn from_raw(raw: &RawValue) -> serde_json::Result<Json> {
        let text = raw.get();
        Ok(match text.as_bytes().first() {
            Some(b'{') => Json::Object(
                serde_json::from_str::<RawFields>(text)?
                    .0
                    .into_iter()
                    .map(|(key, value)| Ok((key, Json::from_raw(value)?)))
                    .collect::<serde_json::Result<_>>()?,
            ),
            Some(b'[') => Json::Array(
                serde_json::from_str::<Vec<&RawValue>>(text)?
                    .into_iter()
                    .map(Json::from_raw)
                    .collect::<serde_json::Result<_>>()?,
            ),
            Some(b'"') => Json::String(serde_json::from_str(text)?),
            Some(b't' | b'f') => Json::Bool(serde_json::from_str(text)?),
            Some(b'n') => Json::Null,
            _ => Json::Number(text.to_owned()),
        })
    }

    /// The value of `key` in an object (the last one when a key repeats, as parsers do).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(fields) => fields
                .iter_mut()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key` in an object, added at the end as `default` when missing.
    pub fn field_or(&mut self, key: &str, default: Json) -> Option<&mut Json> {
        let Json::Object(fields) = self else {
            return None;
        };
        if !fields.iter().any(|(k, _)| k == key) {
            fields.push((key.to_owned(), default));
        }
        self.get_mut(key)
    }

    /// Removes every `key` of an object.
    pub fn remove(&mut self, key: &str) {
        if let Json::Object(fields) = self {
            fields.retain(|(k, _)| k != key);
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Json>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }
}

impl From<u64> for Json {
    fn from(n: u64) -> Json {
        Json::Number(n.to_string())
    }
}

/// An object's fields in order, duplicates kept, each value still as text.
struct RawFields<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for RawFields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = RawFields<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = map.next_entry::<String, &'de RawValue>()? {
                    fields.push(field);
                }
                Ok(RawFields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            // Written as its text (the workspace's `serde_json` has `raw_value`).
            Json::Number(n) => RawValue::from_string(n.clone())
                .map_err(S::Error::custom)?
                .serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(fields) => {
                let mut map = serializer.serialize_map(Some(fields.len()))?;
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.to_string()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.to_string()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n)
            .map(|n| Json::Number(n.to_string()))
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut fields = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            fields.push((key, value));
        }
        Ok(Json::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_keep_key_order() {
        let text = r#"{"z":1,"a":{"y":[true,null,"s",-2,1.5],"b":{}},"m":[]}"#;
        let json: Json = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&json).unwrap(), text);
    }

    #[test]
    fn parsed_numbers_keep_their_text() {
        let text = r#"{"big":12345678901234567890123,"exp":1e2,"e":-1.5E-3,"r":0.1000000000000000055511151231257827,"z":-0.0,"a":[1.0,{"k":"s","k":2}],"t":true,"n":null}"#;
        let json = Json::parse(text).unwrap();
        assert_eq!(serde_json::to_string(&json).unwrap(), text);
        assert_eq!(json.get("exp"), Some(&Json::Number("1e2".into())));
        let pretty = serde_json::to_string_pretty(&Json::parse(" [ 1e2 , {} ] ").unwrap()).unwrap();
        assert_eq!(pretty, "[\n  1e2,\n  {}\n]");
        assert_eq!(Json::parse(r#""\u00e9\n""#).unwrap(), Json::str("é\n"));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for bad in ["{\"a\": ", "[1,]", "01", "\u{feff}{}", &deep] {
            assert!(Json::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fields_are_found_added_and_removed() {
        let mut json: Json = serde_json::from_str(r#"{"a":1}"#).unwrap();
        assert_eq!(json.get("a"), Some(&Json::from(1)));
        json.field_or("b", Json::Array(vec![]))
            .unwrap()
            .as_array_mut()
            .unwrap()
            .push(Json::str("x"));
        assert_eq!(
            serde_json::to_string(&json).unwrap(),
            r#"{"a":1,"b":["x"]}"#
        );
        json.remove("a");
        assert_eq!(serde_json::to_string(&json).unwrap(), r#"{"b":["x"]}"#);
        assert!(Json::Null.field_or("a", Json::Null).is_none());
    }
}
