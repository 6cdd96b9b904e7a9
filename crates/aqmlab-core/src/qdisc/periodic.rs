//! The fixed-period timer that PIE (RFC 8033 §4.2: every `T_UPDATE`), DOCSIS-PIE
//! (RFC 8034), FQ-PIE, PI (Hollot et al. 2001: sampling at `w`), REM (`update`) and
//! AVQRED (the measurement period) run their control law on.
//!
//! A discipline keeps its next deadline as a plain `Nanos` field (`Discipline::next_timer`
//! returns it) and calls [`fire`] from `on_timer`: the engine may call `on_timer` early
//! (it is shared with other deadlines) or late (after an idle stretch without events),
//! so `fire` runs the law only when the deadline has come, once however many periods
//! were missed (a missed update is not replayed: the laws read the queue *now*), and
//! moves the deadline to the first period boundary after `now`, keeping the phase.
//! A plain field rather than a struct keeps each discipline's state as it was (tests set
//! the deadline directly).

use crate::sim::time::Nanos;

/// If `now` has reached `*next`, advance `*next` by whole `period`s past `now` and
/// return true (run the periodic update); otherwise leave it and return false.
#[inline]
pub fn fire(next: &mut Nanos, now: Nanos, period: Nanos) -> bool {
    if now < *next {
        return false;
    }
    while *next <= now {
        *next += period;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_on_the_deadline_skips_missed_periods_and_keeps_the_phase() {
        let mut next = 15;
        assert!(!fire(&mut next, 10, 15));
        assert_eq!(next, 15);
        assert!(fire(&mut next, 15, 15));
        assert_eq!(next, 30);
        // late by two and a bit periods: one update, next boundary of the 15-grid
        assert!(fire(&mut next, 50, 15));
        assert_eq!(next, 60);
        assert!(!fire(&mut next, 59, 15));
        assert_eq!(next, 60);
    }
}
