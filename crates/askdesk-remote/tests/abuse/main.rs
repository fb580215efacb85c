//! Abuse of a paired phone over real HTTPS and WebSockets on loopback: answers the desk decides
//! no phone may give (permission prompts, desk-only commands, standing permissions), and each is
//! refused whatever the phone signs. The phone is the remote's own test phone (`phone.rs`).

#[path = "../remote/phone.rs"]
#[allow(dead_code)]
mod phone;

mod hiding;
mod limits;
mod push;
mod risk;
