//! Listening: one address the person picks, never every interface unless forced.

use askdesk_remote::{bind, Error, RemoteConfig};

use crate::phone::desk_with;

fn config(listen: &str) -> (tempfile::TempDir, RemoteConfig) {
    let dir = tempfile::tempdir().unwrap();
    let config = RemoteConfig::new(listen.parse().unwrap(), dir.path().to_path_buf());
    (dir, config)
}

#[tokio::test]
async fn every_interface_is_refused_with_a_clear_error() {
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let (_dir, config) = config(listen);
        let error = bind(config).await.err().expect("refused");
        assert!(matches!(error, Error::EveryInterface(_)), "{error:?}");
        let text = error.to_string();
        assert!(
            text.contains("every network interface") && text.contains("pick one address"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn every_interface_needs_a_name_even_when_forced() {
    let (_dir, mut config) = config("0.0.0.0:0");
    config.every_interface = true;
    assert!(matches!(
        bind(config).await.err(),
        Some(Error::NoServedName)
    ));
}

#[tokio::test]
async fn every_interface_is_served_when_forced_with_a_name() {
    let desk = desk_with(|config| {
        config.listen = "0.0.0.0:0".parse().unwrap();
        config.every_interface = true;
        config.names = vec!["127.0.0.1".parse().unwrap()];
    })
    .await;
    let (status, _, _) = desk.get("/").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn an_address_of_no_interface_here_is_a_clear_error() {
    // TEST-NET-1 (RFC 5737): never an address of this machine.
    let (_dir, config) = config("192.0.2.1:0");
    let error = bind(config).await.err().expect("refused");
    assert!(matches!(error, Error::Listen { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("cannot listen on 192.0.2.1:0"),
        "{error}"
    );
}

#[tokio::test]
async fn the_listening_address_is_the_served_name_by_default() {
    let desk = desk_with(|_| {}).await;
    assert_eq!(desk.remote.served().origin(), desk.origin());
}
