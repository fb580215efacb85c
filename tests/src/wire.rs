//! Builders for the JSON the tests send and expect: questions, ask params, first-option answers.

use serde_json::{json, Value};

/// A question with the given options (none for a free-text question).
pub fn q(id: &str, question: &str, options: &[&str]) -> Value {
    let mut item = json!({ "id": id, "question": question });
    if !options.is_empty() {
        item["options"] = options
            .iter()
            .map(|label| json!({ "label": label }))
            .collect();
    }
    item
}

/// `user-questions/ask` params for a batch, optionally for an agent handle.
pub fn ask(questions: Vec<Value>, agent: Option<&Value>) -> Value {
    let mut params = json!({ "questions": questions });
    if let Some(agent) = agent {
        params["agent"] = agent.clone();
    }
    params
}

/// The answer that picks the first option of every question of a `user-questions/request`'s
/// params (a question without options is skipped).
pub fn answer_first(params: &Value) -> Value {
    let answers: Vec<Value> = params["questions"]
        .as_array()
        .expect("request params carry questions")
        .iter()
        .map(|question| {
            let selected: Vec<Value> = question["options"]
                .as_array()
                .and_then(|options| options.first())
                .map(|option| vec![option["label"].clone()])
                .unwrap_or_default();
            json!({ "id": question["id"], "selected": selected })
        })
        .collect();
    json!({ "answers": answers })
}
