//! Canonical JSON (RFC 8785, JCS) for the values the remote and a phone both sign or hash: object
//! keys sorted by UTF-16 code units, no whitespace, strings escaped as `JSON.stringify` does.
//! Only integers of at most 2^53 may appear as numbers, so no floating-point form is needed.

use serde_json::Value;

/// The largest integer JavaScript represents exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A value that has no canonical form here: a fraction or an integer beyond 2^53.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("only integers up to 2^53 have a canonical form here")]
pub struct NotCanonical;

/// The canonical text of `value`.
pub fn to_string(value: &Value) -> Result<String, NotCanonical> {
    let mut out = String::new();
    write(value, &mut out)?;
    Ok(out)
}

fn write(value: &Value, out: &mut String) -> Result<(), NotCanonical> {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => {
            // serde_json escapes `"`, `\` and C0 controls (\b \t \n \f \r short, the rest as
            // \u00xx in lower case) and nothing else: exactly JSON.stringify for a Rust string.
            out.push_str(&serde_json::to_string(value).expect("a plain value"));
        }
        Value::Number(number) => {
            let exact = number
                .as_u64()
                .filter(|n| *n <= MAX_SAFE_INTEGER)
                .map(|n| n.to_string())
                .or_else(|| {
                    number
                        .as_i64()
                        .filter(|n| n.unsigned_abs() <= MAX_SAFE_INTEGER)
                        .map(|n| n.to_string())
                });
            out.push_str(&exact.ok_or(NotCanonical)?);
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write(item, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).expect("a string"));
                out.push(':');
                write(item, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_by_utf16_code_units_at_every_depth() {
        // U+1F600 is a surrogate pair (0xD83D…), which sorts before U+FB01 in UTF-16 but after
        // it in UTF-8 and in code points.
        let value =
            json!({ "b": [{ "z": 1, "a": null }], "\u{fb01}": true, "\u{1f600}": false, "a": "x" });
        assert_eq!(
            to_string(&value).unwrap(),
            "{\"a\":\"x\",\"b\":[{\"a\":null,\"z\":1}],\"\u{1f600}\":false,\"\u{fb01}\":true}"
        );
    }

    #[test]
    fn strings_are_escaped_as_json_stringify_does() {
        let value = json!("q\"\\\u{8}\t\n\u{c}\r\u{1}\u{1f}\u{7f}\u{2028}/é");
        assert_eq!(
            to_string(&value).unwrap(),
            "\"q\\\"\\\\\\b\\t\\n\\f\\r\\u0001\\u001f\u{7f}\u{2028}/é\""
        );
    }

    #[test]
    fn numbers_outside_the_exact_integers_have_no_canonical_form() {
        assert_eq!(
            to_string(&json!([1, -3, 9007199254740991u64])).unwrap(),
            "[1,-3,9007199254740991]"
        );
        assert_eq!(to_string(&json!(9007199254740992u64)), Err(NotCanonical));
        assert_eq!(to_string(&json!(0.5)), Err(NotCanonical));
    }
}
