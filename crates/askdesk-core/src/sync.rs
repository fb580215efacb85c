//! The one rule for std mutexes in askdesk: a poisoned lock is taken anyway ([`lock`]).

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, taking the guard even when another thread panicked while holding it.
///
/// Every critical section in askdesk either completes its edits or makes none (no invariant is
/// broken half-way while a lock is held), so the data behind a poisoned lock is still sound; and a
/// panic in one connection's task must not take every later ask down with it. Never hold the
/// guard across an `.await`.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_still_gives_its_data() {
        let mutex = std::sync::Arc::new(Mutex::new(1));
        let held = mutex.clone();
        let panicked = std::thread::spawn(move || {
            let mut guard = held.lock().unwrap();
            *guard = 2;
            panic!("poison the lock");
        })
        .join();
        assert!(panicked.is_err());
        assert!(mutex.is_poisoned());
        assert_eq!(*lock(&mutex), 2);
    }
}
