//! In-process cost of one `ask()` through a three-answerer waterfall (two delegate, the third
//! claims), next to reference costs measured in the same run. Run: `cargo bench -p askdesk-core --bench ask`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use askdesk_core::testing::{ask, choose, question};
use askdesk_core::{
    Answer, Answerer, AnswererRegistration, AskRequest, Config, Decision, Offer, Question, Request,
    RequestId, Scope, Service,
};
use tokio_util::sync::CancellationToken;

const WARMUP: usize = 20_000;
const ASKS: usize = 200_000;

struct Delegates;

impl Answerer for Delegates {
    fn offer(&self, _: &Arc<Request>) -> Offer {
        Offer::Now(Decision::Delegate)
    }
}

/// Claims with a prepared answer, as a rule engine with a canned reply would.
struct Claims(Answer);

impl Answerer for Claims {
    fn offer(&self, _: &Arc<Request>) -> Offer {
        Offer::Now(Decision::Claim(self.0.clone()))
    }
}

fn request() -> AskRequest {
    ask(vec![Question {
        header: Some("Cleanup".into()),
        ..question(
            "cleanup",
            "Delete the temporary branch?",
            &["Yes (Recommended)", "No"],
        )
    }])
}

/// Times `n` runs of `step` one by one; returns (p50, mean) in nanoseconds.
async fn measure<F, Fut>(n: usize, mut step: F) -> (u64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Duration>,
{
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(step().await.as_nanos() as u64);
    }
    let mean = samples.iter().sum::<u64>() as f64 / n as f64;
    samples.sort_unstable();
    (samples[n / 2], mean)
}

#[inline(never)]
async fn empty_round_trip(x: u64) -> u64 {
    black_box(x)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let service = Service::new(Config::default());
        let template = request();
        let answer = choose("cleanup", "No");
        for answerer in [Arc::new(Delegates) as Arc<dyn Answerer>, Arc::new(Delegates), Arc::new(Claims(answer.clone()))] {
            let registration = AnswererRegistration { scope: Scope::All, prepend: false, label: None, group: None };
            service.register_answerer(registration, answerer).expect("registers");
        }
        let cancel = CancellationToken::new();

        let ask = || {
            let request = template.clone();
            let service = &service;
            let cancel = &cancel;
            let answer = &answer;
            async move {
                let start = Instant::now();
                let got = service.ask(request, cancel).await;
                let elapsed = start.elapsed();
                assert_eq!(got.as_ref(), Ok(answer));
                drop(black_box(got));
                elapsed
            }
        };
        // The cost of the request's data: cloning the questions into a new Arc'd request.
        let clone_and_arc = || {
            let template = &template;
            async move {
                let start = Instant::now();
                let request = Arc::new(Request {
                    id: RequestId(1),
                    questions: black_box(template).questions.clone(),
                    agent: None,
                    asked_at: std::time::SystemTime::UNIX_EPOCH,
                });
                drop(black_box(request));
                start.elapsed()
            }
        };
        let round_trip = || async {
            let start = Instant::now();
            black_box(empty_round_trip(black_box(7)).await);
            start.elapsed()
        };
        let timer_only = || async { Instant::now().elapsed() };

        measure(WARMUP, ask).await;
        measure(WARMUP, clone_and_arc).await;
        let (ask_p50, ask_mean) = measure(ASKS, ask).await;
        let (clone_p50, clone_mean) = measure(ASKS, clone_and_arc).await;
        let (trip_p50, trip_mean) = measure(ASKS, round_trip).await;
        let (timer_p50, timer_mean) = measure(ASKS, timer_only).await;
        assert!(service.pending().is_empty());

        println!(
            "ask through 3 answerers: p50 {ask_p50} ns, mean {ask_mean:.0} ns \
             (reference: clone questions + Arc<Request> p50 {clone_p50} ns, mean {clone_mean:.0} ns; \
             empty async fn round trip p50 {trip_p50} ns, mean {trip_mean:.0} ns; \
             Instant::now + elapsed alone p50 {timer_p50} ns, mean {timer_mean:.0} ns; {ASKS} asks)"
        );
    });
}
