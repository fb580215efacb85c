//! What a waiting ask costs the service in memory: the future that carries it while it waits is
//! allocated whole, at the size of its largest state, for every pending ask.
//!
//! The broker's target is memory per pending ask (docs/benchmarks.md, `scripts/bench.sh`); this
//! test catches the growth that the benchmark only shows when it is run. A state the ask passes
//! through only sometimes (a race, a request's images being made safe) is boxed, and the walk is
//! a combinator over one async fn, so that none of them sizes every waiting ask.

mod common;

use askdesk_core::{Config, Service};
use common::*;
use tokio_util::sync::CancellationToken;

/// The largest a waiting ask's future may be. It was 488 bytes when written (784 before the rare
/// states were boxed); the rest is room for another compiler's layout, not for another state.
const BUDGET: usize = 560;

#[tokio::test]
async fn a_waiting_asks_future_stays_within_its_budget() {
    let service = Service::new(Config::default());
    let cancel = CancellationToken::new();
    let gone = CancellationToken::new();
    let ask =
        service.ask_settled_from(ask_request(vec![question("q")], None), &cancel, Some(&gone));
    let size = std::mem::size_of_val(&ask);
    assert!(
        size <= BUDGET,
        "a waiting ask's future is {size} bytes, over its budget of {BUDGET}"
    );
}
