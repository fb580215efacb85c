//! What the waiting requests' one notification shows, decided without D-Bus: the set of waiting
//! requests and whether the window is on screen go in, the notification wanted comes out.
//!
//! One request waiting: its own notification (its options as buttons when it is simple). Two or
//! more: one "N questions waiting" that opens the window. None, or the window on screen (it has
//! the keyboard focus, so the person sees the queue): no notification. The worker in
//! [`super`] turns a change of what is wanted into `Notify` with the same id (`replaces_id`), or
//! `CloseNotification`.

use askdesk_core::RequestId;

/// What the one notification of the waiting requests shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// The request's own notification.
    One(RequestId),
    /// "N questions waiting", oldest first.
    Several(Vec<RequestId>),
}

/// What to do with the notification now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// It already shows what is wanted.
    Keep,
    /// Show this, replacing what is shown (the same id) if anything is.
    Show(Shown),
    /// Close it: nothing waits, or the window is on screen.
    Withdraw,
}

/// The waiting requests in the order they came, and whether the window is on screen.
#[derive(Debug, Default)]
pub struct Waiting {
    requests: Vec<RequestId>,
    on_screen: bool,
}

impl Waiting {
    /// A request waits (again: it keeps its place).
    pub fn add(&mut self, request: RequestId) {
        if !self.requests.contains(&request) {
            self.requests.push(request);
        }
    }

    /// A request no longer waits.
    pub fn remove(&mut self, request: RequestId) {
        self.requests.retain(|r| *r != request);
    }

    /// The window came on screen (it has the keyboard focus) or left it.
    pub fn set_on_screen(&mut self, on_screen: bool) {
        self.on_screen = on_screen;
    }

    /// What the notification should show, if anything.
    pub fn wanted(&self) -> Option<Shown> {
        match self.requests.as_slice() {
            _ if self.on_screen => None,
            [] => None,
            [one] => Some(Shown::One(*one)),
            several => Some(Shown::Several(several.to_vec())),
        }
    }

    /// What to do, given what the notification shows now (`None`: none is shown).
    pub fn change(&self, showing: Option<&Shown>) -> Change {
        match (showing, self.wanted()) {
            (None, None) => Change::Keep,
            (Some(_), None) => Change::Withdraw,
            (Some(now), Some(wanted)) if *now == wanted => Change::Keep,
            (_, Some(wanted)) => Change::Show(wanted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: RequestId = RequestId(1);
    const B: RequestId = RequestId(2);
    const C: RequestId = RequestId(3);

    /// Applies each change as the worker would, returning what is shown after it.
    fn step(waiting: &Waiting, showing: &mut Option<Shown>) -> Change {
        let change = waiting.change(showing.as_ref());
        match &change {
            Change::Keep => {}
            Change::Show(shown) => *showing = Some(shown.clone()),
            Change::Withdraw => *showing = None,
        }
        change
    }

    #[test]
    fn one_request_has_its_own_notification() {
        let mut waiting = Waiting::default();
        let mut showing = None;
        assert_eq!(step(&waiting, &mut showing), Change::Keep);
        waiting.add(A);
        assert_eq!(step(&waiting, &mut showing), Change::Show(Shown::One(A)));
        assert_eq!(step(&waiting, &mut showing), Change::Keep);
        waiting.remove(A);
        assert_eq!(step(&waiting, &mut showing), Change::Withdraw);
        assert_eq!(showing, None);
    }

    #[test]
    fn several_collapse_into_one_and_come_back_to_the_last() {
        let mut waiting = Waiting::default();
        let mut showing = None;
        waiting.add(A);
        step(&waiting, &mut showing);
        waiting.add(B);
        assert_eq!(
            step(&waiting, &mut showing),
            Change::Show(Shown::Several(vec![A, B]))
        );
        waiting.add(C);
        assert_eq!(
            step(&waiting, &mut showing),
            Change::Show(Shown::Several(vec![A, B, C]))
        );
        waiting.remove(A);
        assert_eq!(
            step(&waiting, &mut showing),
            Change::Show(Shown::Several(vec![B, C]))
        );
        waiting.remove(C);
        // The one left gets its own notification again (its buttons with it).
        assert_eq!(step(&waiting, &mut showing), Change::Show(Shown::One(B)));
    }

    #[test]
    fn a_request_added_twice_keeps_its_place() {
        let mut waiting = Waiting::default();
        waiting.add(A);
        waiting.add(B);
        waiting.add(A);
        assert_eq!(waiting.wanted(), Some(Shown::Several(vec![A, B])));
        waiting.remove(RequestId(9));
        assert_eq!(waiting.wanted(), Some(Shown::Several(vec![A, B])));
    }

    #[test]
    fn the_window_on_screen_withdraws_it_and_leaving_raises_it_again() {
        let mut waiting = Waiting::default();
        let mut showing = None;
        waiting.add(A);
        waiting.add(B);
        step(&waiting, &mut showing);
        waiting.set_on_screen(true);
        assert_eq!(step(&waiting, &mut showing), Change::Withdraw);
        // Requests come and go unseen by the notification while the person looks at the queue.
        waiting.add(C);
        waiting.remove(A);
        assert_eq!(step(&waiting, &mut showing), Change::Keep);
        waiting.set_on_screen(false);
        assert_eq!(
            step(&waiting, &mut showing),
            Change::Show(Shown::Several(vec![B, C]))
        );
        // Nothing waiting when the window leaves the screen: nothing is raised.
        waiting.set_on_screen(true);
        step(&waiting, &mut showing);
        waiting.remove(B);
        waiting.remove(C);
        waiting.set_on_screen(false);
        assert_eq!(step(&waiting, &mut showing), Change::Keep);
        assert_eq!(showing, None);
    }
}
