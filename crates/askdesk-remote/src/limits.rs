//! The limits on one device, checked on the desk: how many approvals it may give in a window of
//! time, how many bad signatures suspend it (until the person confirms it again at the desk), and
//! how large an answer may be where the host passes it on over a line-limited connection.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The remote's limits per device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// At most this many approvals (of a plan or a permission prompt) per device in `window`.
    pub approvals: usize,
    pub window: Duration,
    /// This many bad signatures on a device's answers suspend it.
    pub bad_signatures: u32,
    /// The most bytes of JSON an answer may take, its pictures re-encoded, where the host passes
    /// it on as one line of the broker's socket (`askdesk remote`); `None` where it is handed
    /// over in the process (the desktop app).
    pub answer_bytes: Option<usize>,
}

impl Default for Limits {
    /// 3 approvals per 10 minutes; 5 bad signatures; answers of any size.
    fn default() -> Limits {
        Limits {
            approvals: 3,
            window: Duration::from_secs(600),
            bad_signatures: 5,
            answer_bytes: None,
        }
    }
}

/// When each device's recent approvals were given (in memory: a restarted remote starts afresh).
#[derive(Debug, Default)]
pub(crate) struct Approvals {
    given: HashMap<String, VecDeque<Instant>>,
}

impl Approvals {
    /// Whether the device (by its key) may give one more approval at `now`.
    pub fn allows(&mut self, device: &str, limits: &Limits, now: Instant) -> bool {
        let Some(given) = self.given.get_mut(device) else {
            return limits.approvals > 0;
        };
        while given
            .front()
            .is_some_and(|at| now.saturating_duration_since(*at) >= limits.window)
        {
            given.pop_front();
        }
        given.len() < limits.approvals
    }

    /// Records an approval the device gave at `now`.
    pub fn record(&mut self, device: &str, now: Instant) {
        self.given
            .entry(device.to_owned())
            .or_default()
            .push_back(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_gives_at_most_its_approvals_in_a_window() {
        let limits = Limits::default();
        let mut approvals = Approvals::default();
        let start = Instant::now();
        for n in 0..3 {
            let at = start + Duration::from_secs(n);
            assert!(approvals.allows("k", &limits, at));
            approvals.record("k", at);
        }
        assert!(!approvals.allows("k", &limits, start + Duration::from_secs(599)));
        assert!(approvals.allows("other", &limits, start));
        assert!(approvals.allows("k", &limits, start + Duration::from_secs(600)));
        let none = Limits {
            approvals: 0,
            ..limits
        };
        assert!(!Approvals::default().allows("k", &none, start));
    }
}
