//! CAKE's ACK filter (tc-cake(8) `ack-filter`, `ack-filter-aggressive`): when a TCP
//! ACK joins a flow queue, drop an older pure ACK of the same connection that the new
//! one makes redundant. Linux `net/sched/sch_cake.c` (commit 0280f429dc21)
//! `cake_ack_filter`, `cake_tcph_may_drop`, `cake_tcph_sack_compare`, on aqmlab's TCP
//! header model (64-bit sequence numbers, so no wrap-around; options are only SACK and
//! timestamps, so Linux's "unknown option" refusal never applies).
//!
//! The trigger is the packet just queued at the tail: a TCP segment with ACK set and
//! SYN clear. Scanning from the head, a queued packet is *eligible* when it belongs to
//! the same connection (flow id, direction, hosts), carries only the ACK flag besides
//! ECE/CWR (no SYN, FIN, RST, PSH, URG), no payload, timestamps not newer than the
//! trigger's, a cumulative ACK not beyond the trigger's, and SACK information the
//! trigger covers: every SACK block it has lies inside a trigger block, it has no
//! D-SACK (a block below its own cumulative ACK), and the trigger either SACKs more
//! bytes or has the larger cumulative ACK. A change of ECE/CWR between eligible ACKs
//! forgets the earlier one (dropping it would lose ECN feedback).
//!
//! Normal mode drops the first (oldest) eligible ACK once a second one is found — so
//! at least one older redundant ACK stays queued; `aggressive` also drops a single
//! eligible ACK when it sits right before the trigger with the same ECE/CWR flags.

use super::queue::PacketQueue;
use crate::net::packet::{tcp_flags as F, Packet, PacketArena, PacketKind};

/// The position in `q` of the ACK to drop, if any; the trigger is `q`'s tail.
pub fn redundant(q: &PacketQueue, arena: &PacketArena, aggressive: bool) -> Option<usize> {
    let n = q.len();
    if n < 2 {
        return None;
    }
    let t = &arena[q.get(n - 1)?];
    if t.kind != PacketKind::Tcp || t.tcp.flags & (F::ACK | F::SYN) != F::ACK {
        return None;
    }
    let ecn_flags = |p: &Packet| p.tcp.flags & (F::ECE | F::CWR);
    let mut elig: Option<(usize, u8)> = None;
    let mut found = 0;
    for i in 0..n - 1 {
        let c = &arena[q.get(i)?];
        if c.kind != PacketKind::Tcp
            || c.flow != t.flow
            || c.reverse != t.reverse
            || c.src != t.src
            || c.dst != t.dst
        {
            continue;
        }
        if let Some((_, f)) = elig {
            if ecn_flags(c) != f {
                elig = None;
                found -= 1;
            }
        }
        if !may_drop(c, t) || c.tcp.payload != 0 || c.tcp.ack > t.tcp.ack {
            continue;
        }
        let sack = sack_compare(c, t);
        if sack < 0 || (c.tcp.ack == t.tcp.ack && sack == 0) {
            continue;
        }
        if elig.is_none() {
            elig = Some((i, ecn_flags(c)));
        }
        found += 1;
        if found > 1 {
            return elig.map(|(i, _)| i);
        }
    }
    match elig {
        Some((i, f)) if aggressive && i == n - 2 && f == ecn_flags(t) => Some(i),
        _ => None,
    }
}

/// Linux `cake_tcph_may_drop`: only the ACK flag (ECE/CWR aside) and timestamps not
/// newer than the trigger's.
fn may_drop(c: &Packet, t: &Packet) -> bool {
    let others = F::FIN | F::SYN | F::RST | F::PSH | 0x20 | F::ACK; // 0x20 = URG
    c.tcp.flags & others == F::ACK && c.tcp.ts_val <= t.tcp.ts_val && c.tcp.ts_ecr <= t.tcp.ts_ecr
}

/// Linux `cake_tcph_sack_compare(a, b)`: −1 if `a` has SACK information `b` lacks (or a
/// D-SACK), 1 if `b` SACKs strictly more, 0 if equal (or neither has SACK).
fn sack_compare(a: &Packet, b: &Packet) -> i32 {
    let sa = &a.tcp.sack[..a.tcp.sack_len as usize];
    let sb = &b.tcp.sack[..b.tcp.sack_len as usize];
    match (sa.is_empty(), sb.is_empty()) {
        (false, true) => return -1,
        (true, false) => return 1,
        (true, true) => return 0,
        _ => {}
    }
    let bytes = |s: &[(u64, u64)]| s.iter().map(|(x, y)| y - x).sum::<u64>();
    for &(start, end) in sa {
        if start < a.tcp.ack {
            return -1; // D-SACK: always kept
        }
        if !sb.iter().any(|&(s, e)| s <= start && e >= end) {
            return -1;
        }
    }
    if bytes(sb) > bytes(sa) {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(arena: &mut PacketArena, q: &mut PacketQueue, ack: u64, flags: u8) -> usize {
        let p = arena.alloc();
        let pk = &mut arena[p];
        pk.kind = PacketKind::Tcp;
        pk.flow = 7;
        pk.reverse = true;
        pk.size = 40;
        pk.tcp.ack = ack;
        pk.tcp.flags = flags;
        q.push_back(p, arena);
        q.len() - 1
    }

    #[test]
    fn normal_mode_drops_the_oldest_of_two_redundant_acks() {
        let mut a = PacketArena::new();
        let mut q = PacketQueue::new();
        ack(&mut a, &mut q, 1000, F::ACK);
        ack(&mut a, &mut q, 2000, F::ACK);
        // Trigger ACK 2000 with only one older eligible (1000; 2000 has the same ACK
        // and no more SACK: not eligible) → normal mode keeps it, aggressive does not
        // (1000 is not right before the trigger either: position 0, trigger at 2).
        // Here: ACK 1000 eligible; ACK 2000 not (same cumulative ACK, same SACK).
        ack(&mut a, &mut q, 2000, F::ACK);
        assert_eq!(redundant(&q, &a, false), None);
        assert_eq!(redundant(&q, &a, true), None);
        // A trigger ACK 3000: 1000 and 2000 and 2000 are eligible: the first, at the
        // head, is dropped.
        ack(&mut a, &mut q, 3000, F::ACK);
        assert_eq!(redundant(&q, &a, false), Some(0));
    }

    #[test]
    fn aggressive_drops_a_single_adjacent_ack_and_ecn_or_data_protect() {
        let mut a = PacketArena::new();
        let mut q = PacketQueue::new();
        ack(&mut a, &mut q, 1000, F::ACK);
        ack(&mut a, &mut q, 2000, F::ACK);
        assert_eq!(redundant(&q, &a, false), None); // only one eligible
        assert_eq!(redundant(&q, &a, true), Some(0)); // adjacent, same flags
                                                      // An ECE echo between them: ACK 1000 (no ECE), ACK 1500 with ECE, trigger 2000.
        let mut q = PacketQueue::new();
        ack(&mut a, &mut q, 1000, F::ACK);
        ack(&mut a, &mut q, 1500, F::ACK | F::ECE);
        ack(&mut a, &mut q, 2000, F::ACK);
        // 1000 eligible (flags 0), then 1500's ECE differs: 1000 forgotten, 1500
        // eligible (flags ECE): one eligible, normal mode keeps it; aggressive: adjacent
        // but its ECE differs from the trigger's: kept.
        assert_eq!(redundant(&q, &a, false), None);
        assert_eq!(redundant(&q, &a, true), None);
        // A data segment or a FIN is never dropped.
        let mut q = PacketQueue::new();
        let i = ack(&mut a, &mut q, 1000, F::ACK);
        a[q.get(i).unwrap()].tcp.payload = 1448;
        ack(&mut a, &mut q, 1000, F::ACK | F::FIN);
        ack(&mut a, &mut q, 2000, F::ACK);
        assert_eq!(redundant(&q, &a, true), None);
    }

    #[test]
    fn sack_must_be_covered_by_the_trigger() {
        let mut a = PacketArena::new();
        let mut q = PacketQueue::new();
        let sack = |a: &mut PacketArena, q: &PacketQueue, i: usize, blocks: &[(u64, u64)]| {
            let p = &mut a[q.get(i).unwrap()];
            p.tcp.sack[..blocks.len()].copy_from_slice(blocks);
            p.tcp.sack_len = blocks.len() as u8;
        };
        let i0 = ack(&mut a, &mut q, 1000, F::ACK);
        sack(&mut a, &q, i0, &[(3000, 4000)]);
        let i1 = ack(&mut a, &mut q, 1000, F::ACK);
        sack(&mut a, &q, i1, &[(3000, 5000)]);
        // Trigger: same cumulative ACK, SACK 3000..5000 covers both; it SACKs more than
        // i0 (eligible) and the same as i1 with the same ACK (not eligible).
        let t = ack(&mut a, &mut q, 1000, F::ACK);
        sack(&mut a, &q, t, &[(3000, 5000)]);
        assert_eq!(redundant(&q, &a, false), None);
        assert_eq!(redundant(&q, &a, true), None); // i0 is not adjacent
                                                   // A trigger SACKing 6000..7000 only does not cover i0's block: not eligible.
        sack(&mut a, &q, t, &[(6000, 7000)]);
        assert_eq!(
            sack_compare(&a[q.get(i0).unwrap()], &a[q.get(t).unwrap()]),
            -1
        );
        // D-SACK in the older ACK (block below its cumulative ACK): kept.
        sack(&mut a, &q, i0, &[(500, 900)]);
        sack(&mut a, &q, t, &[(0, 9000)]);
        assert_eq!(
            sack_compare(&a[q.get(i0).unwrap()], &a[q.get(t).unwrap()]),
            -1
        );
    }
}
