//! CAKE's flow hashing: what identifies a flow (the isolation mode) and the 8-way
//! set-associative table that keeps distinct flows in distinct queues, Linux
//! `net/sched/sch_cake.c` `cake_hash` (commit 0280f429dc21).
//!
//! **Isolation mode** (tc-cake(8) keywords): `flowblind` puts everything in one queue;
//! `srchost` / `dsthost` / `hosts` hash the source, destination or both host
//! addresses (Linux XORs the host hashes into the flow hash when the `flows` bit is
//! clear); `flows` hashes the 5-tuple (`Packet::hash`, salted). The host hashes are
//! salted hashes of `Packet::src` / `Packet::dst` (Linux hashes the address keys with
//! the other address and the ports zeroed).
//!
//! **Set associativity**: `reduced = flow_hash mod n` names a set of 8 queues
//! (`reduced − reduced mod 8` … `+7`). In Linux's order: (1) if queue `reduced` is
//! tagged with this flow hash and in use, take it ("direct"); (2) else scan the set from
//! `reduced`'s way, wrapping, for a queue tagged with this hash ("hit"), in use or not;
//! (3) else scan again for a queue not in use ("miss"); (4) else accept the collision
//! in queue `reduced`. The chosen queue is tagged with the hash. So up to 8 flows
//! whose hashes share a set get their own queues, where a plain hash would make any
//! two flows share a queue with probability 1/n.

use super::classify::salted_hash;
use crate::net::packet::Packet;

/// Queues per set (Linux `CAKE_SET_WAYS`).
pub const WAYS: u32 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowMode {
    Blind,
    SrcHost,
    DstHost,
    Hosts,
    Flows,
    DualSrc,
    DualDst,
    Triple,
}

impl FlowMode {
    pub const NAMES: [&'static str; 8] = [
        "flowblind",
        "srchost",
        "dsthost",
        "hosts",
        "flows",
        "dual-srchost",
        "dual-dsthost",
        "triple-isolate",
    ];

    pub fn from_name(s: &str) -> FlowMode {
        match s {
            "flowblind" => FlowMode::Blind,
            "srchost" => FlowMode::SrcHost,
            "dsthost" => FlowMode::DstHost,
            "hosts" => FlowMode::Hosts,
            "flows" => FlowMode::Flows,
            "dual-srchost" => FlowMode::DualSrc,
            "dual-dsthost" => FlowMode::DualDst,
            _ => FlowMode::Triple,
        }
    }

    /// Fairness between source hosts (Linux `cake_dsrc`).
    pub fn dual_src(self) -> bool {
        matches!(self, FlowMode::DualSrc | FlowMode::Triple)
    }

    /// Fairness between destination hosts (Linux `cake_ddst`).
    pub fn dual_dst(self) -> bool {
        matches!(self, FlowMode::DualDst | FlowMode::Triple)
    }
}

#[derive(Debug)]
pub struct SetHash {
    pub mode: FlowMode,
    tags: Vec<u32>,
}

impl SetHash {
    /// A table over `n` queues (a multiple of `WAYS`).
    pub fn new(mode: FlowMode, n: u32) -> Self {
        debug_assert!(n.is_multiple_of(WAYS));
        SetHash {
            mode,
            tags: vec![0; n as usize],
        }
    }

    /// The 32-bit hash identifying `pkt`'s flow under the isolation mode.
    #[inline]
    pub fn flow_hash(&self, pkt: &Packet, salt: u32) -> u32 {
        let src = || salted_hash(pkt.src, salt);
        let dst = || salted_hash(pkt.dst, !salt);
        match self.mode {
            FlowMode::Blind => 0,
            FlowMode::SrcHost => src(),
            FlowMode::DstHost => dst(),
            FlowMode::Hosts => src() ^ dst(),
            FlowMode::Flows | FlowMode::DualSrc | FlowMode::DualDst | FlowMode::Triple => {
                salted_hash(pkt.hash, salt)
            }
        }
    }

    /// The source and destination host hashes of `pkt` (for host fairness).
    #[inline]
    pub fn host_hashes(pkt: &Packet, salt: u32) -> (u32, u32) {
        (salted_hash(pkt.src, salt), salted_hash(pkt.dst, !salt))
    }

    /// The queue for flow hash `h`; `in_use(q)` tells whether queue `q` is in use.
    #[inline]
    pub fn queue(&mut self, h: u32, in_use: impl Fn(u32) -> bool) -> u32 {
        self.lookup(h, in_use).0
    }

    /// `queue`, and whether the queue is newly given to this flow (not found in use
    /// under its tag: Linux then allocates the flow's host slots).
    #[inline]
    pub fn lookup(&mut self, h: u32, in_use: impl Fn(u32) -> bool) -> (u32, bool) {
        if self.mode == FlowMode::Blind {
            return (0, !in_use(0));
        }
        let n = self.tags.len() as u32;
        let reduced = h % n;
        if self.tags[reduced as usize] == h && in_use(reduced) {
            return (reduced, false);
        }
        let inner = reduced % WAYS;
        let outer = reduced - inner;
        let way = |i: u32| outer + (inner + i) % WAYS;
        let q = (0..WAYS)
            .map(way)
            .find(|&q| self.tags[q as usize] == h)
            .or_else(|| (0..WAYS).map(way).find(|&q| !in_use(q)))
            .unwrap_or(reduced);
        let fresh = self.tags[q as usize] != h || !in_use(q);
        self.tags[q as usize] = h;
        (q, fresh)
    }
}

/// One direction's host table for host fairness (Linux `cake_host`: a tag and a
/// bulk-flow count per slot, looked up 8-way set-associatively in `cake_hash`).
#[derive(Debug)]
pub struct Hosts {
    tags: Vec<u32>,
    /// Bulk flows of the host in each slot.
    pub bulk: Vec<u32>,
}

impl Hosts {
    pub fn new(n: u32) -> Self {
        Hosts {
            tags: vec![0; n as usize],
            bulk: vec![0; n as usize],
        }
    }

    /// The slot of host hash `h`: the slot tagged `h` in its set, else the first slot
    /// from its way with no bulk flows, else its own way; the slot is tagged `h`.
    #[inline]
    pub fn slot(&mut self, h: u32) -> u32 {
        let n = self.tags.len() as u32;
        let idx = h % n;
        let inner = idx % WAYS;
        let outer = idx - inner;
        let way = |i: u32| outer + (inner + i) % WAYS;
        let s = (0..WAYS)
            .map(way)
            .find(|&s| self.tags[s as usize] == h)
            .or_else(|| (0..WAYS).map(way).find(|&s| self.bulk[s as usize] == 0))
            .unwrap_or(idx);
        self.tags[s as usize] = h;
        s
    }
}

#[cfg(test)]
impl SetHash {
    pub fn tag(&self, q: u32) -> u32 {
        self.tags[q as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_flows_in_one_set_get_eight_queues_the_ninth_collides() {
        // 16 queues = 2 sets. Hashes 3, 19, 35, ... (≡ 3 mod 16) all reduce to queue 3,
        // in set 0 (queues 0..7), way 3.
        let mut t = SetHash::new(FlowMode::Flows, 16);
        let mut used = [false; 16];
        let mut got = Vec::new();
        for k in 0..8u32 {
            let q = t.queue(3 + 16 * k, |q| used[q as usize]);
            used[q as usize] = true;
            got.push(q);
        }
        // Flow 0 takes 3 (its tag was 0 ≠ 3: no direct hit, no tag in the set: the
        // first free way from way 3 is 3); the next ones the following free ways,
        // wrapping around the set: 4, 5, 6, 7, 0, 1, 2.
        assert_eq!(got, vec![3, 4, 5, 6, 7, 0, 1, 2]);
        // The set is full: a ninth flow collides in its own way, queue 3, and retags it.
        assert_eq!(t.queue(3 + 16 * 8, |q| used[q as usize]), 3);
        // Flow 2 (hash 35) still finds its queue 5 by its tag ("hit").
        assert_eq!(t.queue(35, |q| used[q as usize]), 5);
        // Flow 0 lost its tag to the ninth flow; queue 3 is still in use, every way is
        // in use: it collides back into queue 3.
        assert_eq!(t.queue(3, |q| used[q as usize]), 3);
        // The other set is untouched: hash 11 → queue 11 directly free.
        assert_eq!(t.queue(11, |q| used[q as usize]), 11);
    }

    #[test]
    fn a_queue_keeps_its_flow_after_it_empties_until_retagged() {
        let mut t = SetHash::new(FlowMode::Flows, 8);
        let used = [false; 8];
        assert_eq!(t.queue(5, |q| used[q as usize]), 5);
        // 13 ≡ 5 (mod 8): queue 5 is free (not in use) but tagged 5; the scan finds no
        // tag 13, then the first free way from 5: queue 5 itself.
        assert_eq!(t.queue(13, |q| used[q as usize]), 5);
        // Now queue 5 is tagged 13; flow 5 returns while 5 is in use → next free way 6.
        let used5 = |q: u32| q == 5;
        assert_eq!(t.queue(5, used5), 6);
    }

    #[test]
    fn host_modes_hash_addresses() {
        let t = SetHash::new(FlowMode::SrcHost, 8);
        let a = Packet {
            src: 1,
            dst: 2,
            hash: 77,
            ..Default::default()
        };
        let mut b = a.clone();
        b.hash = 78; // another flow of the same hosts
        assert_eq!(t.flow_hash(&a, 9), t.flow_hash(&b, 9));
        b.src = 3;
        assert_ne!(t.flow_hash(&a, 9), t.flow_hash(&b, 9));
        let f = SetHash::new(FlowMode::Flows, 8);
        let mut c = a.clone();
        c.hash = 78;
        assert_ne!(f.flow_hash(&a, 9), f.flow_hash(&c, 9));
        assert_eq!(SetHash::new(FlowMode::Blind, 8).flow_hash(&a, 9), 0);
    }
}
