//! Abuse of a paired phone over real HTTPS and WebSockets on loopback: answers the desk decides
//! no phone may give (desk-only commands, standing permissions, a permission prompt's allow
//! without the device's passkey), and each is refused whatever the phone signs. The phone is the remote's own test phone (`phone.rs`).

#[path = "../remote/phone.rs"]
#[allow(dead_code)]
mod phone;

mod authenticator;
mod hiding;
mod limits;
mod passkey;
mod push;
mod risk;
