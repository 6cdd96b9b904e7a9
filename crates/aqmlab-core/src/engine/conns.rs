//! Finished connections: release their state, keep their measurements.
//!
//! Kinds that open a TCP connection per transfer (`web-page` without keep-alive,
//! `web-packmime`, `tcp-http`, `tcp-arrivals`) make connections for as long as they
//! run. Keeping each one's flow, two endpoints and two delay histograms (tens of KB)
//! would make memory grow with the run length, so a connection is released once it is
//! finished — its FIN acknowledged, or aborted by its app — and none of its packets is
//! left in the network:
//! - its counters and delay histograms are folded into its traffic entry's
//!   `ConnTotals` (what the `apps` table and the entry's `flows` row report);
//! - with `flow_rows = true` on the entry, its `flows` row values are kept as a
//!   `FlowRecord` (about 200 bytes) instead;
//! - its two endpoints and its flow slot go on free lists for the next connection.
//!
//! Flow ids stay unique and in creation order: `flows` is indexed by slot, packets and
//! endpoints carry the slot, and apps' actions name flows by id (`slot` maps it). The
//! slot is freed only when no packet of the flow is in the network (`Flow::in_net`),
//! so a packet always finds its own flow; an action on a released flow (a page that
//! aborts a connection that has already finished) is ignored.
//!
//! Flows made when the run is built, PEP legs, and connections still open at the end
//! are not released; a keep-alive connection is never finished, so it stays.
use super::*;
use crate::measure::flow_stats::FlowSummary;
use crate::measure::histogram::Histogram;

/// Hashes a flow id: ids are distinct integers, a multiply spreads them.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = (x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub type IdHash = std::hash::BuildHasherDefault<IdHasher>;

/// Connections of one traffic entry folded together: those released during the run
/// (`Simulation::conn_totals`), and with the open ones for the entry's `flows` row.
#[derive(Clone, Debug)]
pub struct ConnTotals {
    /// Connections folded in.
    pub count: u64,
    /// The smallest id among them (`u32::MAX`: none yet): the id of the entry's row.
    pub first: u32,
    /// Their common source and destination node (`u32::MAX`: they differ).
    pub src: u32,
    pub dst: u32,
    pub cc: &'static str,
    /// Their counters and delays, folded.
    pub stats: FlowStats,
}

impl Default for ConnTotals {
    fn default() -> Self {
        ConnTotals {
            count: 0,
            first: u32::MAX,
            src: u32::MAX,
            dst: u32::MAX,
            cc: "",
            stats: FlowStats::default(),
        }
    }
}

impl ConnTotals {
    /// Fold in connection `f`.
    pub fn add(&mut self, f: &Flow) {
        if self.count == 0 {
            (self.src, self.dst, self.cc) = (f.src, f.dst, f.cc);
        } else {
            if self.src != f.src {
                self.src = u32::MAX;
            }
            if self.dst != f.dst {
                self.dst = u32::MAX;
            }
        }
        self.count += 1;
        self.first = self.first.min(f.id);
        self.stats.fold(&f.stats);
    }
}

/// The `flows` row of a released connection (`flow_rows = true`).
pub struct FlowRecord {
    pub id: u32,
    pub entry: u32,
    pub src: u32,
    pub dst: u32,
    pub cc: &'static str,
    pub row: FlowSummary,
    /// Its one-way delays, kept only when the run reports `owd_hist`.
    pub owd: Option<Histogram>,
}

impl Flow {
    /// An empty slot.
    fn vacant() -> Flow {
        Flow {
            id: u32::MAX,
            entry: 0,
            kind: FlowKind::Tcp,
            src: 0,
            dst: 0,
            cc: "",
            hash: 0,
            stats: FlowStats::default(),
            tcp: None,
            app: 0,
            class: crate::app::ClassSpec::Fixed(0),
            class_rng: None,
            dscp: 0,
            ecn: Ecn::NotEct,
            pep: None,
            conn: false,
            in_net: 0,
            closing: false,
        }
    }
}

impl Simulation {
    /// The slot of flow `id`, if the flow exists and has not been released.
    #[inline]
    pub fn slot(&self, id: u32) -> Option<usize> {
        if id < self.static_flows {
            Some(id as usize)
        } else {
            self.flow_slot.get(&id).map(|&s| s as usize)
        }
    }

    /// Flow `id`, unless it was released (or never existed).
    pub fn flow(&self, id: u32) -> Option<&Flow> {
        self.slot(id).map(|s| &self.flows[s])
    }

    /// Flow slots in use now (finished connections' slots are reused).
    pub fn live_flows(&self) -> usize {
        self.flows.len() - self.free_flows.len()
    }

    /// TCP endpoints in use now.
    pub fn live_endpoints(&self) -> usize {
        self.tcp.len() - 2 * self.free_endpoints.len()
    }

    /// A slot for a new flow with the next id.
    pub(super) fn new_slot(&mut self, flow: Flow) -> usize {
        let id = flow.id;
        let s = match self.free_flows.pop() {
            Some(s) => {
                self.flows[s as usize] = flow;
                s
            }
            None => {
                self.flows.push(flow);
                self.flows.len() as u32 - 1
            }
        };
        if id >= self.static_flows {
            self.flow_slot.insert(id, s);
        }
        s as usize
    }

    /// Two endpoints (sender, receiver) for flow slot `slot`: a freed pair if any.
    pub(super) fn new_endpoints(&mut self, slot: u32, snd: TcpEndpoint, rcv: TcpEndpoint) -> u32 {
        match self.free_endpoints.pop() {
            Some(b) => {
                let b_ = b as usize;
                self.tcp[b_] = snd;
                self.tcp[b_ + 1] = rcv;
                self.tcp_timer[b_] = None;
                self.tcp_timer[b_ + 1] = None;
                self.tcp_flow[b_] = slot;
                self.tcp_flow[b_ + 1] = slot;
                b
            }
            None => {
                let b = self.tcp.len() as u32;
                self.tcp.push(snd);
                self.tcp.push(rcv);
                self.tcp_timer.extend([None, None]);
                self.tcp_flow.extend([slot, slot]);
                b
            }
        }
    }

    /// Connection in slot `s` is finished: release it once its packets are gone.
    pub(super) fn finish_conn(&mut self, s: usize) {
        let f = &mut self.flows[s];
        if f.conn && !f.closing {
            f.closing = true;
            if f.in_net == 0 {
                self.to_release.push(s as u32);
            }
        }
    }

    /// Release the finished connections queued during the last event (those whose
    /// packets came back into the network since are released when they are gone).
    pub(super) fn release_finished(&mut self) {
        let mut queue = std::mem::take(&mut self.to_release);
        for s in queue.drain(..) {
            let f = &self.flows[s as usize];
            if f.closing && f.in_net == 0 && f.id != u32::MAX {
                self.release(s as usize);
            }
        }
        self.to_release = queue;
    }

    fn release(&mut self, s: usize) {
        let f = std::mem::replace(&mut self.flows[s], Flow::vacant());
        let e = f.entry as usize;
        self.conn_totals[e].add(&f);
        if self.entries[e].flow_rows {
            self.flow_records.push(FlowRecord {
                id: f.id,
                entry: f.entry,
                src: f.src,
                dst: f.dst,
                cc: f.cc,
                row: FlowSummary::of(&f.stats),
                owd: self.owd_hist.then_some(f.stats.owd),
            });
        }
        if let Some((b, _)) = f.tcp {
            for ep in [b as usize, b as usize + 1] {
                self.tcp[ep] = TcpEndpoint::Free;
                self.tcp_timer[ep] = None;
            }
            self.free_endpoints.push(b);
        }
        self.flow_slot.remove(&f.id);
        self.free_flows.push(s as u32);
    }

    /// At the end of the warm-up: released connections' counts restart like live
    /// flows' (their rows stay, emptied).
    pub(super) fn restart_conn_stats(&mut self) {
        for t in &mut self.conn_totals {
            t.stats = FlowStats::default();
        }
        let empty = FlowSummary::of(&FlowStats::default());
        for r in &mut self.flow_records {
            r.row = empty.clone();
            if let Some(h) = &mut r.owd {
                *h = Histogram::new();
            }
        }
    }
}
