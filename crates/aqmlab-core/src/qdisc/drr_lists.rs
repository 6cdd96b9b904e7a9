//! The DRR++ flow lists of FQ-CoDel (RFC 8290 §4.2, Linux `sch_fq_codel.c`) as a
//! reusable piece: new flows are served before old ones, each flow spends a `quantum`
//! of bytes per round, and a new flow that empties passes once through the old list
//! before it may become new again. FQ-PIE uses it; `fq_codel.rs` keeps its own copy of
//! the same rules, which predates this module (moving it over is a pure refactor left to
//! a later change).

use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug)]
pub struct DrrLists {
    list: Vec<List>,
    deficit: Vec<i64>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    quantum: i64,
}

/// The flow `pick_next()` chose and the list it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    pub flow: u32,
    pub from_new: bool,
}

impl DrrLists {
    pub fn new(flows: usize, quantum: u32) -> Self {
        DrrLists {
            list: vec![List::None; flows],
            deficit: vec![0; flows],
            new_flows: VecDeque::with_capacity(flows.min(65536)),
            old_flows: VecDeque::with_capacity(flows.min(65536)),
            quantum: quantum as i64,
        }
    }

    /// A packet was queued in `flow`: an inactive flow joins the new list with a quantum.
    /// Returns true if it became new.
    #[inline]
    pub fn activate(&mut self, flow: u32) -> bool {
        self.activate_with(flow, self.quantum)
    }

    /// `activate` with a first deficit of `quantum` (CAKE's host-scaled quantum).
    #[inline]
    pub fn activate_with(&mut self, flow: u32, quantum: i64) -> bool {
        let i = flow as usize;
        if self.list[i] != List::None {
            return false;
        }
        self.list[i] = List::New;
        self.deficit[i] = quantum;
        self.new_flows.push_back(flow);
        true
    }

    /// The configured quantum.
    pub fn quantum(&self) -> i64 {
        self.quantum
    }

    /// The flow to serve next: the head of new flows, else of old flows, after moving
    /// heads whose deficit is spent to the tail of the old list with a new quantum.
    #[inline]
    pub fn pick_next(&mut self) -> Option<Pick> {
        let q = self.quantum;
        self.pick_next_with(|_| q)
    }

    /// `pick_next` where a flow whose deficit is spent gets `quantum_of(flow)` bytes
    /// (CAKE scales it by the flow's host load).
    #[inline]
    pub fn pick_next_with(&mut self, mut quantum_of: impl FnMut(u32) -> i64) -> Option<Pick> {
        loop {
            let (from_new, flow) = match self.new_flows.front() {
                Some(&f) => (true, f),
                None => (false, *self.old_flows.front()?),
            };
            let i = flow as usize;
            if self.deficit[i] > 0 {
                return Some(Pick { flow, from_new });
            }
            self.deficit[i] += quantum_of(flow);
            self.list[i] = List::Old;
            if from_new {
                self.new_flows.pop_front();
            } else {
                self.old_flows.pop_front();
            }
            self.old_flows.push_back(flow);
        }
    }

    /// `pick` was found empty: a new flow moves to the old list (if that is not empty),
    /// an old flow leaves the lists.
    #[inline]
    pub fn emptied(&mut self, pick: Pick) {
        let i = pick.flow as usize;
        if pick.from_new {
            self.new_flows.pop_front();
            if self.old_flows.is_empty() {
                self.list[i] = List::None;
            } else {
                self.list[i] = List::Old;
                self.old_flows.push_back(pick.flow);
            }
        } else {
            self.old_flows.pop_front();
            self.list[i] = List::None;
        }
    }

    /// Whether `flow` is on a list (Linux CAKE: its `set` is not `CAKE_SET_NONE`).
    #[inline]
    pub fn listed(&self, flow: u32) -> bool {
        self.list[flow as usize] != List::None
    }

    /// Whether any flow is on a list.
    #[inline]
    pub fn active(&self) -> bool {
        !self.new_flows.is_empty() || !self.old_flows.is_empty()
    }

    /// `flow` sent `bytes`.
    #[inline]
    pub fn charge(&mut self, flow: u32, bytes: u32) {
        self.deficit[flow as usize] -= bytes as i64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_flow_first_then_quantum_rounds() {
        // quantum 1000. Flow 0 active (old after its first round), flow 1 arrives new.
        let mut d = DrrLists::new(4, 1000);
        assert!(d.activate(0));
        assert!(!d.activate(0));
        let p = d.pick_next().unwrap();
        assert_eq!(
            p,
            Pick {
                flow: 0,
                from_new: true
            }
        );
        d.charge(0, 1500); // deficit −500
                           // Next: flow 0's deficit ≤ 0 → +1000 = 500, moved to old; served from old.
        assert_eq!(
            d.pick_next().unwrap(),
            Pick {
                flow: 0,
                from_new: false
            }
        );
        assert!(d.activate(1));
        // Flow 1 is new: it goes before old flow 0.
        assert_eq!(
            d.pick_next().unwrap(),
            Pick {
                flow: 1,
                from_new: true
            }
        );
        // Flow 1 empties while new and old is non-empty: it moves to old (behind 0).
        d.emptied(Pick {
            flow: 1,
            from_new: true,
        });
        assert_eq!(
            d.pick_next().unwrap(),
            Pick {
                flow: 0,
                from_new: false
            }
        );
        d.charge(0, 600); // 500 − 600 = −100 → rotated: +1000 = 900, behind flow 1
        assert_eq!(
            d.pick_next().unwrap(),
            Pick {
                flow: 1,
                from_new: false
            }
        );
        d.emptied(Pick {
            flow: 1,
            from_new: false,
        }); // leaves the lists
        assert_eq!(
            d.pick_next().unwrap(),
            Pick {
                flow: 0,
                from_new: false
            }
        );
        assert!(d.activate(1)); // inactive again: becomes new
    }
}
