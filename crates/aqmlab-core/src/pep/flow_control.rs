//! PEP buffer flow control (D. J. Byun, "Congestion Control in Satellite Networks", PhD
//! dissertation, University of Maryland, 2007, §2.3 eq. 2.1, §3.3, §6.1).
//!
//! Instead of dropping, the AQM in front of the PEP marks; the PEP turns a mark into a
//! smaller buffer for the marked user, which it announces to the internet server as a
//! smaller TCP receive window:
//! - a marked packet: `B ← B · decr` (every mark; `decr` ∈ {0.97 … 0.50} in the study);
//! - an unmarked packet: `B ← min(B + incr, size)`, at most once per freeze time
//!   (200 ms, "about an RTT"); `incr` = 1 % of the configured buffer `size`.
//!
//! `B` is the user's PEP buffer *limit* (Byun, Fig. 6.1: "the PEP buffer limit is
//! decremented by 10 % of the previous limit upon a packet mark"); the advertised window
//! is the available buffer capped at MaxRcvWnd, `min(max_window, B − held)` (eq. 2.1,
//! `Pep::window`), `held` being what the user's connections have delivered to the PEP
//! and the terminal has not yet acknowledged. Choices the study leaves open, made here and documented in
//! docs/access/satellite-pep.md: the freeze time runs from the last change of `B` (a
//! mark or a growth), so the packet after a mark cannot undo it at once; marks are not
//! frozen (the definition freezes increments only); the window counts `B` as at least
//! one MSS (below that the server sends nothing, so no unmarked packet could ever grow
//! `B` again).

use crate::sim::time::Nanos;

/// The flow-control parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowControlConfig {
    /// Shrink factor per mark, in (0, 1].
    pub decr: f64,
    /// Growth per step, bytes (the study: 1 % of the per-user buffer).
    pub incr: f64,
    /// Least time between a change of the buffer and the next growth.
    pub freeze: Nanos,
}

/// One user's controlled buffer size `B`.
#[derive(Clone, Debug)]
pub struct BufferControl {
    /// The configured buffer (the ceiling of `B`), bytes.
    pub size: f64,
    /// The current `B`, bytes.
    pub cap: f64,
    last_change: Option<Nanos>,
}

impl BufferControl {
    pub fn new(size: u64) -> Self {
        BufferControl {
            size: size as f64,
            cap: size as f64,
            last_change: None,
        }
    }

    /// A data packet of this user reached the PEP at `now`, CE-marked or not.
    pub fn on_packet(&mut self, cfg: &FlowControlConfig, now: Nanos, marked: bool) {
        if marked {
            self.cap *= cfg.decr;
            self.last_change = Some(now);
        } else if self.cap < self.size && self.last_change.is_none_or(|t| now - t >= cfg.freeze) {
            self.cap = (self.cap + cfg.incr).min(self.size);
            self.last_change = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// size 625 000 B, decr 0.5, incr 1 % = 6250 B, freeze 200 ms. Sequence:
    ///   t=0    mark      B = 312 500
    ///   t=10   mark      B = 156 250     (marks are never frozen)
    ///   t=100  unmarked  B = 156 250     (100 ms < 200 ms since the last change)
    ///   t=210  unmarked  B = 162 500     (200 ms since the mark at 10)
    ///   t=300  unmarked  B = 162 500     (90 ms since the growth at 210)
    ///   t=410  unmarked  B = 168 750
    ///   t=420  mark      B =  84 375
    ///   t=619  unmarked  B =  84 375     (199 ms)
    ///   t=620  unmarked  B =  90 625
    #[test]
    fn marks_shrink_by_decr_and_growth_waits_the_freeze_time() {
        let cfg = FlowControlConfig {
            decr: 0.5,
            incr: 6250.0,
            freeze: 200 * MS,
        };
        let mut b = BufferControl::new(625_000);
        let steps = [
            (0, true, 312_500.0),
            (10, true, 156_250.0),
            (100, false, 156_250.0),
            (210, false, 162_500.0),
            (300, false, 162_500.0),
            (410, false, 168_750.0),
            (420, true, 84_375.0),
            (619, false, 84_375.0),
            (620, false, 90_625.0),
        ];
        for (t, marked, want) in steps {
            b.on_packet(&cfg, t * MS, marked);
            assert_eq!(b.cap, want, "t = {t} ms");
        }
    }

    /// Growth stops at the configured size; a full buffer does not start a freeze, so
    /// the first mark after a long quiet period is followed by growth 200 ms later.
    #[test]
    fn growth_is_capped_at_the_configured_size() {
        let cfg = FlowControlConfig {
            decr: 0.97,
            incr: 6250.0,
            freeze: 200 * MS,
        };
        let mut b = BufferControl::new(625_000);
        b.on_packet(&cfg, 0, false);
        assert_eq!(b.cap, 625_000.0);
        b.on_packet(&cfg, 50 * MS, true);
        let shrunk = 625_000.0 * 0.97; // 606 250
        assert_eq!(b.cap, shrunk);
        b.on_packet(&cfg, 250 * MS, false);
        assert_eq!(b.cap, shrunk + 6250.0);
        b.on_packet(&cfg, 450 * MS, false);
        assert_eq!(b.cap, shrunk + 12_500.0);
        b.on_packet(&cfg, 650 * MS, false);
        assert_eq!(b.cap, 625_000.0);
        b.on_packet(&cfg, 850 * MS, false);
        assert_eq!(b.cap, 625_000.0);
    }
}
