//! The CMTS's split of one MAP's grant between the Classic and the Low Latency service
//! flow of an Aggregate Service Flow, by the ASF's Scheduling Weight (DOCSIS 3.1 MULPI
//! §C.2.2.7.17.6, docsis-ns3 `model/docsis-configuration.h:252-254`; default 230/256 to
//! the LL SF, `CmtsUpstreamScheduler`'s `SchedulingWeight` attribute,
//! `model/cmts-upstream-scheduler.cc:86-91`). The arithmetic is
//! `CmtsUpstreamScheduler::Allocate` (`cmts-upstream-scheduler.cc:941-1027`) with bytes
//! in place of minislots (this model has none):
//!
//! - available = min(tokens, channel); the L demand is max(L request, PGS bytes);
//!   to allocate = max(min(available, C demand + L demand), PGS bytes);
//! - PGS covering the L demand: L gets the PGS bytes, C min(available − PGS, C demand);
//! - else the weighted shares: L = max(⌊to allocate × weight / 256⌋, PGS), C the rest;
//!   a flow that needs less than its share leaves the rest to the other.

/// (Classic bytes, LL bytes) of this MAP. `pgs`: the LL SF's PGS bytes in the MAP.
pub fn allocate(available: u64, pgs: u64, c_req: u64, l_req: u64, weight: u8) -> (u64, u64) {
    let max_c = c_req;
    let max_l = l_req.max(pgs);
    let to_alloc = available.min(max_c + max_l).max(pgs);
    if pgs >= max_l {
        let c = if available > pgs {
            (available - pgs).min(max_c)
        } else {
            0
        };
        return (c, pgs);
    }
    let l_w = (to_alloc * weight as u64 / 256).max(pgs);
    let c_w = to_alloc - l_w;
    match (max_l <= l_w, max_c <= c_w) {
        (true, true) => (max_c, max_l),
        (false, false) => (c_w, l_w),
        (true, false) => ((to_alloc - max_l).min(max_c), max_l),
        (false, true) => (max_c, (to_alloc - max_c).min(max_l)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both backlogged beyond 10 000 available bytes: L gets ⌊10 000 × 230/256⌋ = 8984,
    /// C the other 1016.
    #[test]
    fn both_backlogged_split_by_weight() {
        assert_eq!(allocate(10_000, 0, 50_000, 50_000, 230), (1016, 8984));
    }

    /// A flow needing less than its share leaves the rest to the other: L asks 3000 of
    /// its 8984 share, C gets 10 000 − 3000 = 7000; C asks 500 of its 1016, L gets 9500.
    #[test]
    fn spare_share_goes_to_the_other_flow() {
        assert_eq!(allocate(10_000, 0, 50_000, 3000, 230), (7000, 3000));
        assert_eq!(allocate(10_000, 0, 500, 50_000, 230), (500, 9500));
        assert_eq!(allocate(10_000, 0, 500, 3000, 230), (500, 3000));
    }

    /// PGS bytes covering the L request: L gets exactly the PGS bytes, C what is left
    /// of the available bytes; PGS bytes are granted even beyond the tokens.
    #[test]
    fn pgs_covers_the_l_demand() {
        assert_eq!(allocate(10_000, 2000, 50_000, 1500, 230), (8000, 2000));
        assert_eq!(allocate(1000, 2000, 50_000, 0, 230), (0, 2000));
    }

    /// An L request above the PGS bytes: the weighted share, never below the PGS bytes.
    /// to allocate = 10 000; L share max(8984, 2000) = 8984; both capped → (1016, 8984).
    /// With weight 1: L share max(39, 2000) = 2000, C 8000.
    #[test]
    fn l_request_above_pgs_uses_the_weight() {
        assert_eq!(allocate(10_000, 2000, 50_000, 20_000, 230), (1016, 8984));
        assert_eq!(allocate(10_000, 2000, 50_000, 20_000, 1), (8000, 2000));
    }
}
