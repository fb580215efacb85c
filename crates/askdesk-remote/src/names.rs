//! The names the remote serves (an IP address the person picked, and any DNS names of it) with the
//! port, and the `Host` and `Origin` checks every request and socket passes (DNS rebinding: a
//! foreign `Host`; cross-site pages: a foreign `Origin`).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use crate::error::Error;

/// One name a phone reaches the remote by: a DNS name (kept lowercase) or an IP address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Name {
    Dns(String),
    Ip(IpAddr),
}

impl FromStr for Name {
    type Err = Error;

    /// An IP address (IPv6 with or without brackets), else a DNS name of letters, digits and
    /// hyphens in dot-separated labels (no trailing dot, no wildcard).
    fn from_str(text: &str) -> Result<Name, Error> {
        if let Some(inner) = text
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            // Brackets hold an IPv6 address, nothing else.
            return inner
                .parse::<std::net::Ipv6Addr>()
                .map(|ip| Name::Ip(IpAddr::V6(ip)))
                .map_err(|_| Error::BadName(text.to_string()));
        }
        if let Ok(ip) = text.parse::<IpAddr>() {
            return Ok(Name::Ip(ip));
        }
        let is_label = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        let all_digits = text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        if text.len() <= 253 && !all_digits && text.split('.').all(is_label) {
            Ok(Name::Dns(text.to_ascii_lowercase()))
        } else {
            Err(Error::BadName(text.to_string()))
        }
    }
}

impl fmt::Display for Name {
    /// As it appears in a URL's host: an IPv6 address in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Name::Dns(name) => f.write_str(name),
            Name::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Name::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// The served names and the port: what `Host` and `Origin` must say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    names: Vec<Name>,
    port: u16,
}

impl Served {
    /// `names` must not be empty (the first is the one pairing URLs use).
    pub fn new(names: Vec<Name>, port: u16) -> Result<Served, Error> {
        if names.is_empty() {
            return Err(Error::NoServedName);
        }
        Ok(Served { names, port })
    }

    pub fn names(&self) -> &[Name] {
        &self.names
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://<first name>:<port>`, where pairing URLs and the CA page point.
    pub fn origin(&self) -> String {
        format!("https://{}:{}", self.names[0], self.port)
    }

    /// Whether a `Host` header (or an HTTP/2 `:authority`) names a served name with our port.
    /// The port may be left out only when it is 443, as browsers do.
    pub fn allows_host(&self, host: &str) -> bool {
        self.allows_authority(host)
    }

    /// Whether an `Origin` header is `https://<served name>:<port>` exactly.
    pub fn allows_origin(&self, origin: &str) -> bool {
        origin
            .strip_prefix("https://")
            .is_some_and(|authority| self.allows_authority(authority))
    }

    fn allows_authority(&self, authority: &str) -> bool {
        let Some((host, port)) = split_authority(authority) else {
            return false;
        };
        let port_ok = match port {
            Some(port) => {
                !port.starts_with('0')
                    && port.bytes().all(|b| b.is_ascii_digit())
                    && port.parse::<u16>().ok() == Some(self.port)
            }
            None => self.port == 443,
        };
        port_ok
            && host
                .parse::<Name>()
                .is_ok_and(|name| self.names.contains(&name))
    }
}

/// `host[:port]`, `[v6][:port]`: the host and the port text; `None` if malformed.
fn split_authority(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.is_empty() || authority.bytes().any(|b| b"/?#@\\ ".contains(&b)) {
        return None;
    }
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        return match rest {
            "" => Some((host, None)),
            _ => Some((host, Some(rest.strip_prefix(':')?))),
        };
    }
    match authority.split_once(':') {
        Some((host, port)) => Some((host, Some(port))),
        None => Some((authority, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(port: u16) -> Served {
        let names = ["desk.tail1234.ts.net", "100.64.0.7", "fd7a::7"];
        Served::new(names.iter().map(|n| n.parse().unwrap()).collect(), port).unwrap()
    }

    #[test]
    fn names_parse_as_addresses_or_dns_names() {
        assert_eq!(
            "DESK.local".parse::<Name>().unwrap(),
            Name::Dns("desk.local".into())
        );
        assert!(matches!("[::1]".parse::<Name>().unwrap(), Name::Ip(_)));
        for bad in [
            "",
            "[1.2.3.4]",
            "[desk]",
            "fe80::1%eth0",
            "a..b",
            "-a.b",
            "*.example",
            "desk.",
            "a b",
            "1.2.3.999",
            "x_y",
        ] {
            assert!(bad.parse::<Name>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn host_must_name_a_served_name_with_the_port() {
        let s = served(8443);
        for good in [
            "desk.tail1234.ts.net:8443",
            "Desk.Tail1234.TS.net:8443",
            "100.64.0.7:8443",
            "[fd7a::7]:8443",
            "[fd7a:0::7]:8443",
        ] {
            assert!(s.allows_host(good), "{good} refused");
        }
        for bad in [
            "evil.example:8443",
            "desk.tail1234.ts.net",
            "desk.tail1234.ts.net:443",
            "desk.tail1234.ts.net:08443",
            "desk.tail1234.ts.net:+8443",
            "[100.64.0.7]:8443",
            "100.64.0.7:8444",
            "100.64.0.8:8443",
            "fd7a::7:8443",
            "desk.tail1234.ts.net:8443@evil.example",
            "desk.tail1234.ts.net.:8443",
            "",
        ] {
            assert!(!s.allows_host(bad), "{bad} allowed");
        }
    }

    #[test]
    fn the_default_port_may_be_left_out_only_when_it_is_served() {
        assert!(served(443).allows_host("100.64.0.7"));
        assert!(served(443).allows_origin("https://desk.tail1234.ts.net"));
        assert!(!served(8443).allows_origin("https://desk.tail1234.ts.net"));
    }

    #[test]
    fn origin_must_be_https_on_a_served_name_and_port() {
        let s = served(8443);
        assert!(s.allows_origin("https://100.64.0.7:8443"));
        for bad in [
            "http://100.64.0.7:8443",
            "https://100.64.0.7:8443/",
            "https://evil.example:8443",
            "null",
            "https://100.64.0.7:8443.evil.example",
        ] {
            assert!(!s.allows_origin(bad), "{bad} allowed");
        }
    }

    #[test]
    fn the_origin_uses_the_first_name() {
        assert_eq!(served(8443).origin(), "https://desk.tail1234.ts.net:8443");
        let v6 = Served::new(vec!["::1".parse().unwrap()], 9).unwrap();
        assert_eq!(v6.origin(), "https://[::1]:9");
    }
}
