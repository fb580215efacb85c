//! Busy polling: after a line comes in or goes out, the broker's thread keeps polling the reactor
//! for a short window instead of sleeping, because the next line of a conversation (the
//! answerer's response to a relayed request, the asker's next ask) usually arrives within tens of
//! microseconds. A thread asleep in `epoll_wait` pays a wake-up for each such line, and on a
//! virtual machine waking an idle CPU costs about as much as the broker's own work.
//!
//! The window restarts with every line, so a busy broker polls through the gaps between lines
//! and an idle one sleeps as before: no line, no polling, no CPU. Polling is a task that yields
//! in a loop; on a current-thread runtime (`askdesk serve`) each yield makes the runtime poll
//! the reactor without blocking, so a ready socket is served at once. On a multi-thread runtime a
//! yielding task does not drive the reactor, which is why the desktop app leaves it off.
//!
//! An ask whose answer waits for the journal's commit holds the window open through it (up to
//! `MAX_HOLD` after the last line), so the commit's acknowledgement, sent from the journal's
//! writer thread, finds the broker awake rather than asleep.
//!
//! Measured on a 2-core virtual machine: the `--no-history` round trip read 59-67 µs polling
//! against 98-156 µs not, in the same rounds of the project benchmark; holding through the commit
//! took a further 25-80 µs off the history-on round trip in alternating askload runs. The broker's
//! CPU per lone ask rises by about the window (`scripts/bench.sh` reports it).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The longest a hold keeps polling after the last line: a journal commit on a working disk takes
/// well under this; one that takes longer is not worth a CPU.
const MAX_HOLD: Duration = Duration::from_millis(1);

/// The busy-poll window of one broker and the signal that restarts it.
pub(super) struct BusyPoll {
    /// How long to keep polling after the last line; zero turns busy polling off.
    window: Duration,
    /// How long a hold keeps polling after the last line (`MAX_HOLD`; tests stretch it).
    max_hold: Duration,
    /// A line came in or went out since the poller last looked.
    touched: AtomicBool,
    /// Wakes the poller from its sleep.
    wake: Notify,
    /// Things awaited that will finish soon (a journal commit): polling goes on through them.
    holds: AtomicUsize,
    /// Polling now, and how many times polling started (for tests).
    polling: AtomicBool,
    windows: AtomicUsize,
}

impl BusyPoll {
    pub(super) fn new(window: Duration) -> BusyPoll {
        BusyPoll::with_max_hold(window, MAX_HOLD)
    }

    fn with_max_hold(window: Duration, max_hold: Duration) -> BusyPoll {
        BusyPoll {
            window,
            max_hold: max_hold.max(window),
            touched: AtomicBool::new(false),
            wake: Notify::new(),
            holds: AtomicUsize::new(0),
            polling: AtomicBool::new(false),
            windows: AtomicUsize::new(0),
        }
    }

    /// A line came in or went out: (re)starts the window.
    pub(super) fn touch(&self) {
        if !self.window.is_zero() && !self.touched.swap(true, Ordering::Relaxed) {
            self.wake.notify_one();
        }
    }

    /// Something that will finish soon is awaited: polling goes on until the returned guard drops
    /// (a line in its own right), for at most `max_hold` after the last line.
    pub(super) fn hold(self: &Arc<Self>) -> Hold {
        if self.window.is_zero() {
            return Hold(None);
        }
        self.holds.fetch_add(1, Ordering::Relaxed);
        self.touch();
        Hold(Some(self.clone()))
    }

    /// Polls for `window` after each touch until `shutdown`. Returns at once when off.
    pub(super) async fn run(&self, shutdown: &CancellationToken) {
        if self.window.is_zero() {
            return;
        }
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = self.wake.notified() => {}
            }
            if !self.touched.swap(false, Ordering::Relaxed) {
                // A wake-up left over from a line the last window already saw.
                continue;
            }
            self.polling.store(true, Ordering::Relaxed);
            self.windows.fetch_add(1, Ordering::Relaxed);
            let mut last = Instant::now();
            while !shutdown.is_cancelled() {
                // Each yield lets the runtime poll the reactor without blocking, then run
                // whatever became ready.
                tokio::task::yield_now().await;
                let now = Instant::now();
                if self.touched.swap(false, Ordering::Relaxed) {
                    last = now;
                    continue;
                }
                let limit = if self.holds.load(Ordering::Relaxed) > 0 {
                    self.max_hold
                } else {
                    self.window
                };
                if now - last >= limit {
                    break;
                }
            }
            self.polling.store(false, Ordering::Relaxed);
        }
    }

    #[cfg(test)]
    fn polling(&self) -> bool {
        self.polling.load(Ordering::Relaxed)
    }

    #[cfg(test)]
    fn windows(&self) -> usize {
        self.windows.load(Ordering::Relaxed)
    }
}

/// Keeps a broker polling while it lives (see [`BusyPoll::hold`]).
pub(super) struct Hold(Option<Arc<BusyPoll>>);

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(poll) = self.0.take() {
            poll.holds.fetch_sub(1, Ordering::Relaxed);
            poll.touch();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `test` with a poller of `window` on a current-thread runtime, as `askdesk serve` does.
    fn with_poller(window: Duration, test: impl AsyncFnOnce(Arc<BusyPoll>)) {
        with(BusyPoll::new(window), test)
    }

    fn with(poll: BusyPoll, test: impl AsyncFnOnce(Arc<BusyPoll>)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let poll = Arc::new(poll);
            let shutdown = CancellationToken::new();
            let poller = tokio::spawn({
                let (poll, shutdown) = (poll.clone(), shutdown.clone());
                async move { poll.run(&shutdown).await }
            });
            test(poll).await;
            shutdown.cancel();
            poller.await.unwrap();
        });
    }

    #[test]
    fn polls_after_a_line_and_sleeps_once_the_window_passes() {
        with_poller(Duration::from_millis(20), async |poll| {
            tokio::task::yield_now().await;
            assert!(!poll.polling(), "no line yet, so no polling");
            poll.touch();
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            assert!(poll.polling(), "a line starts the window");
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert!(!poll.polling(), "the window passed with no line");
        });
    }

    #[test]
    fn each_line_restarts_the_window() {
        with_poller(Duration::from_millis(100), async |poll| {
            poll.touch();
            // Touched every 10 ms for 300 ms: three windows' worth, polling all along.
            for _ in 0..30 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                assert!(poll.polling(), "lines keep the window open");
                poll.touch();
            }
            assert_eq!(poll.windows(), 1, "one window, restarted by each line");
        });
    }

    #[test]
    fn a_window_ends_for_good_when_no_line_came_after_it() {
        with_poller(Duration::from_millis(50), async |poll| {
            // Two lines while polling leave the poller one wake-up too many; it must not
            // open a second window on it.
            poll.touch();
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            poll.touch();
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(!poll.polling());
            assert_eq!(poll.windows(), 1);
        });
    }

    #[test]
    fn a_hold_polls_past_the_window_until_it_drops() {
        with(
            BusyPoll::with_max_hold(Duration::from_millis(20), Duration::from_secs(5)),
            async |poll| {
                let hold = poll.hold();
                tokio::time::sleep(Duration::from_millis(200)).await;
                assert!(poll.polling(), "held past the 20 ms window");
                drop(hold);
                tokio::time::sleep(Duration::from_millis(200)).await;
                assert!(!poll.polling(), "the window after the hold's end passed");
                assert_eq!(poll.windows(), 1);
            },
        );
    }

    #[test]
    fn a_hold_polls_no_longer_than_its_limit() {
        with(
            BusyPoll::with_max_hold(Duration::from_millis(20), Duration::from_millis(100)),
            async |poll| {
                let _hold = poll.hold();
                tokio::time::sleep(Duration::from_millis(400)).await;
                assert!(!poll.polling(), "a hold past its limit stops polling");
            },
        );
    }

    #[test]
    fn the_window_zero_never_polls() {
        with_poller(Duration::ZERO, async |poll| {
            poll.touch();
            drop(poll.hold());
            tokio::task::yield_now().await;
            assert!(!poll.polling());
        });
    }

    #[test]
    fn timers_and_other_tasks_still_run_while_polling() {
        with_poller(Duration::from_millis(500), async |poll| {
            poll.touch();
            tokio::task::yield_now().await;
            let other = tokio::spawn(async { tokio::time::sleep(Duration::from_millis(20)).await });
            other.await.unwrap();
            assert!(
                poll.polling(),
                "the timer fired and its task ran within the window"
            );
        });
    }
}
