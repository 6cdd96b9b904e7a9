//! PFAVQRED's per-flow state (`pfavqred.rs` documents the weight and its
//! reconstruction): each flow's time-sliding-window arrival rate (Rb-RED's `TswRate`,
//! `rb_red.rs`), its first and last arrival, and the active-flow count. AVQRED
//! (`avqred.rs`) holds one when it runs as `pfavqred`; kept apart from both so that
//! neither imports the other's module for it.

use super::rb_red::TswRate;
use crate::scenario::error::Result;
use crate::scenario::params::Params;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    rate: TswRate,
    first: Nanos,
    last: Nanos,
    seen: bool,
}

/// Per-flow rates and the active-flow count.
#[derive(Debug)]
pub struct PerFlow {
    flows: Vec<FlowState>,
    window: Nanos,
    young: Nanos,
    active_window: Nanos,
    n_active: usize,
}

impl PerFlow {
    pub fn from_params(p: &mut Params) -> Result<Self> {
        Ok(PerFlow {
            flows: Vec::new(),
            window: p.positive_duration_or("window", 100 * NS_PER_MS)?,
            young: p.duration_or("young", 100 * NS_PER_MS)?,
            active_window: p.positive_duration_or("active_window", NS_PER_S)?,
            n_active: 0,
        })
    }

    /// Account a packet of `size` bytes of `flow` at `now` and return its weight at
    /// virtual capacity `v_cap` (bit/s).
    pub fn weight(&mut self, flow: u32, size: u32, now: Nanos, v_cap: f64) -> f64 {
        let i = flow as usize;
        if i >= self.flows.len() {
            self.flows.resize(i + 1, FlowState::default());
        }
        let st = &mut self.flows[i];
        if !st.seen {
            st.seen = true;
            st.first = now;
            self.n_active += 1;
        } else if now.saturating_sub(st.last) > self.active_window {
            self.n_active += 1;
        }
        st.last = now;
        let rate = st.rate.update(size as f64 * 8.0, now, self.window);
        if now.saturating_sub(st.first) < self.young {
            return 0.0;
        }
        let fair = v_cap / self.n_active.max(1) as f64;
        (rate / fair) * (rate / fair)
    }

    /// Recount the active flows exactly.
    pub fn recount(&mut self, now: Nanos) {
        self.n_active = self
            .flows
            .iter()
            .filter(|f| f.seen && now.saturating_sub(f.last) <= self.active_window)
            .count();
    }

    pub fn active(&self) -> usize {
        self.n_active
    }
}
