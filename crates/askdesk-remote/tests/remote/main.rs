//! The remote's tests over real HTTPS and WebSockets on loopback: a test client trusting the
//! generated authority plays the phone (`phone`), a `Remote` in the same process is the desk.

mod answers;
mod guard;
mod hosted;
mod listen;
mod pairing;
mod phone;
