//! The server's certificate, in order of preference: a certificate and key the person points to
//! (PEM files, for example from `tailscale cert`), else askdesk's own certificate authority, made
//! here, name-constrained to exactly the served names, whose key never leaves the data directory.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use askdesk_i18n::t;
use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, CidrSubnet, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, GeneralSubtree, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    NameConstraints, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use time::{Duration, OffsetDateTime};

use crate::error::Error;
use crate::files;
use crate::names::Name;

/// Where the server's certificate comes from.
#[derive(Debug, Clone)]
pub enum CertificateSource {
    /// The person's own certificate chain and private key (PEM files).
    Provided { certificate: PathBuf, key: PathBuf },
    /// askdesk's own authority, kept in `dir` (see [`files::default_dir`]).
    OwnAuthority { dir: PathBuf },
}

/// The certificate the remote serves, ready for rustls.
pub struct Certificates {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    authority: Option<CertificateDer<'static>>,
}

/// askdesk's own authority: 10 years; the server certificate: 397 days, within what phones accept
/// from an installed authority (Apple refuses more than 825 days).
const AUTHORITY_DAYS: i64 = 3650;
const SERVER_DAYS: i64 = 397;
/// A server certificate is issued again when it has less than this left.
const RENEW_DAYS: i64 = 30;

const CA_KEY: &str = "ca-key.pem";
const CA_CERT: &str = "ca.der";
const SERVER_KEY: &str = "server-key.pem";
const SERVER_CERT: &str = "server.der";
const STATE: &str = "certificates.json";

/// What the files of the own authority were made for.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct State {
    names: Vec<String>,
    server_not_after: i64,
}

impl Certificates {
    /// The certificate for `names` from `source`. A provided certificate must be valid for every
    /// served name (a phone would refuse it otherwise); the own authority is made again when the
    /// served names change, since it is constrained to them.
    pub fn load(source: &CertificateSource, names: &[Name]) -> Result<Certificates, Error> {
        match source {
            CertificateSource::Provided { certificate, key } => provided(certificate, key, names),
            CertificateSource::OwnAuthority { dir } => own_authority(dir, names),
        }
    }

    /// SHA-256 of the server certificate (DER), base64url without padding: the last part of a
    /// pairing URL.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.chain[0].as_ref());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
    }

    /// The own authority's certificate (DER), to install on a phone; `None` for a provided
    /// certificate.
    pub fn authority_der(&self) -> Option<&[u8]> {
        self.authority.as_ref().map(|der| der.as_ref())
    }

    /// The served chain, leaf first.
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.chain
    }

    /// The TLS configuration: ring's provider, TLS 1.2 and 1.3, HTTP/1.1 only (WebSockets upgrade
    /// an HTTP/1.1 connection).
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, Error> {
        let mut config = rustls::ServerConfig::builder_with_provider(crypto_provider())
            .with_safe_default_protocol_versions()
            .and_then(|builder| {
                builder
                    .with_no_client_auth()
                    .with_single_cert(self.chain.clone(), self.key.clone_key())
            })
            .map_err(|error| Error::Generate(error.to_string()))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// rustls's ring provider, the one place it is named. rustls 0.23.48 deprecates it for lacking
/// post-quantum key exchange; its default, aws-lc-rs, needs cmake and nasm to build. TLS 1.3 with
/// X25519 and P-256 is what phones offer today; moving to aws-lc-rs is a one-line change here.
#[allow(deprecated)]
pub fn crypto_provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn provided(certificate: &Path, key: &Path, names: &[Name]) -> Result<Certificates, Error> {
    let bad = |path: &Path, reason: String| Error::Certificate {
        path: path.to_path_buf(),
        reason,
    };
    let chain = CertificateDer::pem_file_iter(certificate)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|error| bad(certificate, error.to_string()))?;
    if chain.is_empty() {
        return Err(bad(certificate, t!("remote-error-no-certificate")));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|error| bad(key, error.to_string()))?;
    let leaf = rustls::server::ParsedCertificate::try_from(&chain[0])
        .map_err(|error| bad(certificate, error.to_string()))?;
    for name in names {
        let server_name = server_name(name);
        rustls::client::verify_server_name(&leaf, &server_name).map_err(|error| {
            Error::CertificateName {
                path: certificate.to_path_buf(),
                name: name.to_string(),
                reason: error.to_string(),
            }
        })?;
    }
    let certificates = Certificates {
        chain,
        key: key_der,
        authority: None,
    };
    // A key that does not match the certificate is refused here, not at the first phone.
    certificates.server_config()?;
    Ok(certificates)
}

/// The name as rustls's verifier takes it.
pub(crate) fn server_name(name: &Name) -> ServerName<'static> {
    match name {
        Name::Dns(dns) => ServerName::try_from(dns.clone()).expect("a checked DNS name"),
        Name::Ip(ip) => ServerName::IpAddress((*ip).into()),
    }
}

fn own_authority(dir: &Path, names: &[Name]) -> Result<Certificates, Error> {
    files::private_dir(dir)?;
    let wanted: Vec<String> = names.iter().map(ToString::to_string).collect();
    let state: Option<State> = files::read_if_present(&dir.join(STATE))?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .filter(|state: &State| state.names == wanted);
    let now = OffsetDateTime::now_utc();
    let authority_params = authority_params(names, now);
    let existing_authority = match state {
        Some(_) => load_authority(dir)?,
        None => None,
    };
    let (ca_key, ca_der) = match existing_authority {
        Some(found) => found,
        None => {
            let key = KeyPair::generate().map_err(generate)?;
            let cert = authority_params.self_signed(&key).map_err(generate)?;
            files::write_private(&dir.join(CA_KEY), key.serialize_pem().as_bytes())?;
            files::write_private(&dir.join(CA_CERT), cert.der())?;
            // A new authority invalidates the old server certificate.
            let _ = std::fs::remove_file(dir.join(STATE));
            (key, cert.der().clone())
        }
    };
    let renew_after = now.unix_timestamp() + RENEW_DAYS * 86_400;
    let current_server = match files::read_if_present(&dir.join(STATE))?
        .and_then(|bytes| serde_json::from_slice::<State>(&bytes).ok())
    {
        Some(state) if state.names == wanted && state.server_not_after > renew_after => {
            load_server(dir)?
        }
        _ => None,
    };
    let (server_key, server_der) = match current_server {
        Some(found) => found,
        None => {
            let key = KeyPair::generate().map_err(generate)?;
            let issuer = Issuer::new(authority_params, &ca_key);
            let params = server_params(names, now)?;
            let cert = params.signed_by(&key, &issuer).map_err(generate)?;
            files::write_private(&dir.join(SERVER_KEY), key.serialize_pem().as_bytes())?;
            files::write_private(&dir.join(SERVER_CERT), cert.der())?;
            let state = State {
                names: wanted,
                server_not_after: params.not_after.unix_timestamp(),
            };
            let json = serde_json::to_vec_pretty(&state).expect("plain data");
            files::write_private(&dir.join(STATE), &json)?;
            (key, cert.der().clone())
        }
    };
    Ok(Certificates {
        chain: vec![server_der],
        key: PrivateKeyDer::try_from(server_key.serialize_der())
            .map_err(|error| Error::Generate(error.to_string()))?,
        authority: Some(ca_der),
    })
}

fn generate(error: rcgen::Error) -> Error {
    Error::Generate(error.to_string())
}

fn load_authority(dir: &Path) -> Result<Option<(KeyPair, CertificateDer<'static>)>, Error> {
    load_pair(dir, CA_KEY, CA_CERT)
}

fn load_server(dir: &Path) -> Result<Option<(KeyPair, CertificateDer<'static>)>, Error> {
    load_pair(dir, SERVER_KEY, SERVER_CERT)
}

/// A key and certificate written earlier; `None` when either is missing or unreadable as such
/// (they are then made again).
fn load_pair(
    dir: &Path,
    key: &str,
    cert: &str,
) -> Result<Option<(KeyPair, CertificateDer<'static>)>, Error> {
    let (Some(key), Some(cert)) = (
        files::read_if_present(&dir.join(key))?,
        files::read_if_present(&dir.join(cert))?,
    ) else {
        return Ok(None);
    };
    let key = String::from_utf8(key)
        .ok()
        .and_then(|pem| KeyPair::from_pem(&pem).ok());
    Ok(key.map(|key| (key, CertificateDer::from(cert))))
}

/// The authority's parameters: the same for the same names, so a kept authority issues server
/// certificates whose issuer is its subject. It may issue only end-entity certificates, only for
/// the served names: a DNS constraint and an IP constraint are always both present (one that
/// matches nothing stands in for a kind of name not served), since a kind with no constraint
/// would be unconstrained.
pub(crate) fn authority_params(names: &[Name], now: OffsetDateTime) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "askdesk");
    dn.push(DnType::CommonName, format!("askdesk on {}", names[0]));
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.not_before = now - Duration::days(1);
    params.not_after = now + Duration::days(AUTHORITY_DAYS);
    let mut permitted: Vec<GeneralSubtree> = names
        .iter()
        .map(|name| match name {
            Name::Dns(dns) => GeneralSubtree::DnsName(dns.clone()),
            Name::Ip(ip) => GeneralSubtree::IpAddress(host_subnet(*ip)),
        })
        .collect();
    if !names.iter().any(|name| matches!(name, Name::Dns(_))) {
        // RFC 6761: `.invalid` never resolves.
        permitted.push(GeneralSubtree::DnsName("askdesk.invalid".into()));
    }
    if !names.iter().any(|name| matches!(name, Name::Ip(_))) {
        // The unspecified addresses: never a server's address.
        permitted.push(GeneralSubtree::IpAddress(host_subnet([0u8; 4].into())));
        permitted.push(GeneralSubtree::IpAddress(host_subnet([0u8; 16].into())));
    }
    params.name_constraints = Some(NameConstraints {
        permitted_subtrees: permitted,
        excluded_subtrees: Vec::new(),
    });
    params
}

fn host_subnet(ip: IpAddr) -> CidrSubnet {
    let prefix = if ip.is_ipv4() { 32 } else { 128 };
    CidrSubnet::from_addr_prefix(ip, prefix)
}

/// The server certificate's common name.
const SERVER_COMMON_NAME: &str = "askdesk remote";

pub(crate) fn server_params(
    names: &[Name],
    now: OffsetDateTime,
) -> Result<CertificateParams, Error> {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    // Not a host name: OpenSSL checks a common name with a dot in it (an address, a domain)
    // against the authority's DNS name constraints, and refused `127.0.0.1` as a DNS name
    // outside them. Clients match the names in the subject alternative names.
    dn.push(DnType::CommonName, SERVER_COMMON_NAME);
    params.distinguished_name = dn;
    params.subject_alt_names = names
        .iter()
        .map(|name| match name {
            Name::Dns(dns) => dns
                .clone()
                .try_into()
                .map(SanType::DnsName)
                .map_err(generate),
            Name::Ip(ip) => Ok(SanType::IpAddress(*ip)),
        })
        .collect::<Result<_, _>>()?;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    params.not_before = now - Duration::days(1);
    params.not_after = now + Duration::days(SERVER_DAYS);
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::UnixTime;
    use std::os::unix::fs::PermissionsExt;

    fn names(list: &[&str]) -> Vec<Name> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    /// A fresh directory and the own authority kept in it.
    fn own_source() -> (tempfile::TempDir, CertificateSource) {
        let dir = tempfile::tempdir().unwrap();
        let source = CertificateSource::OwnAuthority {
            dir: dir.path().into(),
        };
        (dir, source)
    }

    fn verifier(authority: &[u8]) -> Arc<rustls::client::WebPkiServerVerifier> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(authority.to_vec())).unwrap();
        rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            crypto_provider(),
        )
        .build()
        .unwrap()
    }

    fn verifies(authority: &[u8], leaf: &CertificateDer<'_>, name: &str) -> bool {
        let name = server_name(&name.parse().unwrap());
        verifier(authority)
            .verify_server_cert(leaf, &[], &name, &[], UnixTime::now())
            .is_ok()
    }

    /// A certificate for `leaf_names` signed with the authority's own key: what anyone holding
    /// the key could make.
    fn forged(dir: &Path, served: &[Name], leaf_names: &[Name]) -> CertificateDer<'static> {
        let pem = std::fs::read_to_string(dir.join(CA_KEY)).unwrap();
        let ca_key = KeyPair::from_pem(&pem).unwrap();
        let now = OffsetDateTime::now_utc();
        let issuer = Issuer::new(authority_params(served, now), &ca_key);
        let key = KeyPair::generate().unwrap();
        server_params(leaf_names, now)
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap()
            .der()
            .clone()
    }

    #[test]
    fn the_served_chain_verifies_for_each_served_name_and_no_other() {
        let (_dir, source) = own_source();
        let served = names(&["desk.example.ts.net", "100.64.0.7"]);
        let certificates = Certificates::load(&source, &served).unwrap();
        let authority = certificates.authority_der().unwrap();
        let leaf = &certificates.chain()[0];
        assert!(verifies(authority, leaf, "desk.example.ts.net"));
        assert!(verifies(authority, leaf, "100.64.0.7"));
        assert!(!verifies(authority, leaf, "other.example.ts.net"));
        assert!(!verifies(authority, leaf, "100.64.0.8"));
    }

    #[test]
    fn the_authority_cannot_vouch_for_a_name_it_does_not_serve() {
        let (dir, source) = own_source();
        let served = names(&["192.168.1.20"]);
        let certificates = Certificates::load(&source, &served).unwrap();
        let authority = certificates.authority_der().unwrap().to_vec();
        // Served only by address: DNS names are constrained too, not left open.
        let dns = forged(dir.path(), &served, &names(&["bank.example"]));
        assert!(!verifies(&authority, &dns, "bank.example"));
        let ip = forged(dir.path(), &served, &names(&["192.168.1.21"]));
        assert!(!verifies(&authority, &ip, "192.168.1.21"));
        let v6 = forged(dir.path(), &served, &names(&["::1"]));
        assert!(!verifies(&authority, &v6, "::1"));
        // The same forging path does make a certificate that verifies for a served name.
        let own = forged(dir.path(), &served, &served);
        assert!(verifies(&authority, &own, "192.168.1.20"));
    }

    #[test]
    fn a_dns_only_authority_cannot_vouch_for_an_address() {
        let (dir, source) = own_source();
        let served = names(&["desk.lan"]);
        let authority = Certificates::load(&source, &served)
            .unwrap()
            .authority_der()
            .unwrap()
            .to_vec();
        let ip = forged(dir.path(), &served, &names(&["10.0.0.1"]));
        assert!(!verifies(&authority, &ip, "10.0.0.1"));
        let sub = forged(dir.path(), &served, &names(&["evil.lan"]));
        assert!(!verifies(&authority, &sub, "evil.lan"));
    }

    #[test]
    fn keys_are_private_and_kept_while_the_names_stay() {
        let (dir, source) = own_source();
        let served = names(&["127.0.0.1"]);
        let first = Certificates::load(&source, &served).unwrap();
        for file in [CA_KEY, SERVER_KEY] {
            let mode = std::fs::metadata(dir.path().join(file))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{file}");
        }
        let dir_mode = std::fs::metadata(dir.path()).unwrap().permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let again = Certificates::load(&source, &served).unwrap();
        assert_eq!(first.fingerprint(), again.fingerprint());
        assert_eq!(first.authority_der(), again.authority_der());
        let other = Certificates::load(&source, &names(&["127.0.0.2"])).unwrap();
        assert_ne!(
            first.authority_der(),
            other.authority_der(),
            "new names, new authority"
        );
    }

    #[test]
    fn a_provided_certificate_must_cover_every_served_name() {
        let dir = tempfile::tempdir().unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["desk.example.ts.net".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let cert_path = dir.path().join("desk.crt");
        let key_path = dir.path().join("desk.key");
        std::fs::write(&cert_path, cert.pem()).unwrap();
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        let source = CertificateSource::Provided {
            certificate: cert_path.clone(),
            key: key_path.clone(),
        };
        let loaded = Certificates::load(&source, &names(&["desk.example.ts.net"])).unwrap();
        assert!(loaded.authority_der().is_none());
        let digest = Sha256::digest(cert.der().as_ref());
        assert_eq!(loaded.fingerprint(), crate::keys::encode(&digest));
        let uncovered = Certificates::load(&source, &names(&["desk.example.ts.net", "100.64.0.7"]));
        assert!(
            matches!(uncovered, Err(Error::CertificateName { .. })),
            "{:?}",
            uncovered.err()
        );
        let other_key = KeyPair::generate().unwrap();
        std::fs::write(&key_path, other_key.serialize_pem()).unwrap();
        assert!(
            Certificates::load(&source, &names(&["desk.example.ts.net"])).is_err(),
            "mismatched key"
        );
        std::fs::write(&cert_path, "not pem").unwrap();
        assert!(matches!(
            Certificates::load(&source, &names(&["desk.example.ts.net"])),
            Err(Error::Certificate { .. })
        ));
    }
}
