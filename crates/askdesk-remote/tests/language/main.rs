//! The phone speaks the desk's language: what the remote serves and composes (the page's
//! catalogue, the installed page's description, the certificate authority's page, the lock
//! screen, a refusal) follows the language the desk runs in, and changes when the desk's does.
//! One test, in a binary of its own: the language is the process's.

#[path = "../remote/phone.rs"]
#[allow(dead_code)]
mod phone;

use askdesk_remote::push::Notice;
use askdesk_remote::{Class, Refusal};
use hyper::StatusCode;
use serde_json::Value;

use crate::phone::desk;

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[tokio::test]
async fn what_the_phone_reads_follows_the_language_the_desk_runs_in() {
    askdesk_i18n::set_language("zh-CN");
    let desk = desk().await;

    let (status, headers, body) = desk.get("/catalogue").await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let catalogue = json(&body);
    assert_eq!(catalogue["language"], "zh-CN");
    let source = catalogue["source"].as_str().unwrap();
    assert!(source.contains("phone-send = 发送"), "{source}");
    let fallback = catalogue["fallback"].as_str().unwrap();
    assert!(fallback.contains("phone-send = Send"), "{fallback}");

    let (_, _, manifest) = desk.get("/manifest.webmanifest").await;
    let manifest = json(&manifest);
    assert_eq!(manifest["lang"], "zh-CN");
    assert_eq!(manifest["description"], "回答你的代理在电脑上提出的问题。");

    let (_, _, page) = desk.get("/ca").await;
    let page = String::from_utf8_lossy(&page);
    assert!(page.contains(r#"<html lang="zh-CN">"#), "{page}");
    assert!(page.contains("<h1>信任这台电脑</h1>"), "{page}");

    let waiting = Notice::waiting("r1", Class::PermissionPrompt, 2, Some("rm -rf ~"));
    assert_eq!(waiting.body, "有代理在等待（2）");
    assert_eq!(waiting.summary, waiting.body);
    assert_eq!(
        Notice::answered("r1", Class::TextAndChoices).summary,
        "已在电脑上回答"
    );
    assert_eq!(
        Refusal::BadAnswer("x".into()).to_string(),
        "回答不符合其问题的规则：x"
    );

    // The person changes the desk's language in Settings: the next load of the page speaks it.
    askdesk_i18n::set_language("en");
    let (_, _, body) = desk.get("/catalogue").await;
    let catalogue = json(&body);
    assert_eq!(catalogue["language"], "en");
    assert_eq!(catalogue["source"], catalogue["fallback"]);
    let (_, _, page) = desk.get("/ca").await;
    assert!(String::from_utf8_lossy(&page).contains("<h1>Trust this desk</h1>"));
}
