//! REM, Random Exponential Marking: Athuraliya, Li, Low, Yin, "REM: Active Queue
//! Management", IEEE Network 15(3), 2001 (eqs. 1–2), as in the ns-2 `REM` queue
//! (Athuraliya; ns-2.35 `queue/rem.cc`) and its ns-3 port (`rem-queue-disc.cc`).
//!
//! Every `update` interval the link "price" integrates the backlog mismatch and the
//! rate mismatch:
//!
//! ```text
//! x̄     = (1 − inw)·x̄ + inw·x
//! price = max(0, price + gamma·(alpha·(b − b_ref) + x̄ − c))
//! p     = 1 − phi^(−price)
//! ```
//!
//! with `b` the backlog at the update, `x` what arrived during the interval (smoothed by
//! the EWMA weight `inw`; 1 = the raw count) and `c` what the link can send in it
//! (`rate·update/(8·mean_pktsize)`, the link's current rate), all three in units of
//! `mean_pktsize` bytes.
//!
//! Units. By default (`qib = true`, ns-2's `qib_` "queue in bytes" mode, rem.cc lines
//! 163–166) `b` and `x` are bytes divided by `mean_pktsize`, so the rate mismatch
//! `x − c` is right whatever the packets' sizes and `b_ref` is `b_ref × mean_pktsize`
//! bytes; a packet's marking probability is `p·size/mean_pktsize` (lines 208–210,
//! 259–261), as in RED's byte mode. With `qib = false` (ns-2's default `qib_ false`, ns-default.tcl line 249)
//! `b` and `x` count packets while `c` still counts `mean_pktsize` packets: the same
//! unit problem GK had — with 1500-B segments and the 1000-B default, a full link shows
//! `x = c/1.5`, a rate mismatch of −c/3 that the backlog term must offset
//! (`b = b_ref + (c − x)/α`, 28 packets instead of 20 at 10 Mbit/s), and with small
//! packets the price grows without bound. Each arrival is tail-dropped at `limit`, otherwise dropped — or, with
//! `ecn`, marked if ECN-capable, REM's intended use — with probability `p`.
//!
//! Parameter names are the paper's (γ, φ, α, b*); ns-2 calls them `gamma_`, `phi_`,
//! `pbo_`, with `pupdtime_` for `update` and `inw_` for the arrival EWMA weight.
//! Defaults are ns-2's (ns-default.tcl lines 239–244: γ = 0.001, φ = 1.001, `inw_` = 1,
//! b* = 20 packets, 2 ms, 1000 B); α is not a parameter in ns-2: rem.cc line 178
//! hard-codes it as `0.1*(nqueued - p_bo)`, and 0.1 is our default. (Before, `alpha`
//! was documented as `inw_` and defaulted to 1: the backlog term ten times too strong.)
//! ns-2 marks at dequeue with `markpkts_` (rem.cc lines 204–219); we decide at enqueue
//! for both drop and mark.

use super::periodic;
use super::pi::nonzero_limit;
use super::queue::{mark_or_drop, PacketQueue};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

#[derive(Debug)]
pub struct Rem {
    pub limit: Limit,
    pub gamma: f64,
    pub phi: f64,
    pub alpha: f64,
    /// EWMA weight of the per-interval arrival count (ns-2 `inw_`).
    pub inw: f64,
    /// Target backlog b*, packets.
    pub b_ref: f64,
    pub update: Nanos,
    pub mean_pktsize: u64,
    /// ns-2 `qib_`: backlog and arrivals in bytes (over `mean_pktsize`), else packets.
    pub qib: bool,
    pub ecn: bool,
    price: f64,
    prob: f64,
    /// Arrivals this interval: bytes (`qib`) or packets.
    arrivals: u64,
    /// The smoothed arrival count x̄, packets per interval.
    arrivals_avg: f64,
    next_update: Nanos,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "rem",
    summary: "REM: a link price integrates backlog and rate mismatch; p = 1 − phi^(−price)",
    source: "Athuraliya, Li, Low, Yin, IEEE Network 2001; ns-2 REM queue / ns-3 rem-queue-disc.cc",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "1000pkt",
            doc: "hard limit; beyond it tail drop",
        },
        ParamDoc {
            name: "gamma",
            ty: "float",
            default: "0.001",
            doc: "γ, step size of the price update",
        },
        ParamDoc {
            name: "phi",
            ty: "float",
            default: "1.001",
            doc: "φ > 1, base of the exponential marking",
        },
        ParamDoc {
            name: "alpha",
            ty: "float",
            default: "0.1",
            doc: "α, weight of the backlog mismatch (hard-coded 0.1 in ns-2 rem.cc)",
        },
        ParamDoc {
            name: "inw",
            ty: "float",
            default: "1",
            doc: "EWMA weight of the arrival count per interval, in (0, 1]; 1 = the raw count (ns-2 inw_)",
        },
        ParamDoc {
            name: "b_ref",
            ty: "int",
            default: "20",
            doc: "b*, target backlog in packets of mean_pktsize (with qib, b_ref × mean_pktsize bytes) (ns-2 pbo_)",
        },
        ParamDoc {
            name: "update",
            ty: "duration",
            default: "2ms",
            doc: "price update interval (ns-2 pupdtime_)",
        },
        ParamDoc {
            name: "mean_pktsize",
            ty: "size",
            default: "1000B",
            doc: "the unit of b, x and c: the link rate is converted to packets of this size (and, with qib, bytes too)",
        },
        ParamDoc {
            name: "qib",
            ty: "bool",
            default: "true",
            doc: "queue in bytes (ns-2 qib_): backlog and arrivals in bytes over mean_pktsize, right for any packet size; false = ns-2's default packet counting, right only if every packet is mean_pktsize",
        },
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "mark ECN-capable packets instead of dropping",
        },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Rem::from_params(p)?.into()),
};

impl Rem {
    pub fn new() -> Self {
        Rem {
            limit: Limit::Packets(1000),
            gamma: 0.001,
            phi: 1.001,
            alpha: 0.1,
            inw: 1.0,
            b_ref: 20.0,
            update: 2 * NS_PER_MS,
            mean_pktsize: 1000,
            qib: true,
            ecn: false,
            price: 0.0,
            prob: 0.0,
            arrivals: 0,
            arrivals_avg: 0.0,
            next_update: 2 * NS_PER_MS,
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let mut q = Rem::new();
        q.limit = p.limit_or("limit", q.limit)?;
        q.limit = nonzero_limit(p, q.limit)?;
        q.gamma = p.f64_or("gamma", q.gamma, 0.0, 1e6)?;
        q.phi = p.f64_or("phi", q.phi, 1.0 + 1e-12, 1e6)?;
        q.alpha = p.f64_or("alpha", q.alpha, 0.0, 1e6)?;
        q.inw = super::avq::fraction(p, "inw", q.inw, false)?;
        q.b_ref = p.u64_or("b_ref", 20, 0, 1 << 32)? as f64;
        q.update = p.timer_period_or("update", q.update)?;
        q.mean_pktsize = p.size_or("mean_pktsize", q.mean_pktsize)?;
        if q.mean_pktsize == 0 {
            return Err(p.error("mean_pktsize", "\"0B\": expected a size greater than zero"));
        }
        q.qib = p.bool_or("qib", q.qib)?;
        q.ecn = p.bool_or("ecn", false)?;
        q.next_update = q.update;
        Ok(q)
    }

    /// Eq. (1)–(2) with link capacity `rate_bps`.
    fn update_price(&mut self, rate_bps: u64) {
        let unit = self.mean_pktsize as f64;
        let c = rate_bps as f64 * self.update as f64 * 1e-9 / (8.0 * unit);
        let (b, x) = if self.qib {
            (
                self.queue.bytes() as f64 / unit,
                self.arrivals as f64 / unit,
            )
        } else {
            (self.queue.len() as f64, self.arrivals as f64)
        };
        self.arrivals_avg = (1.0 - self.inw) * self.arrivals_avg + self.inw * x;
        let x = self.arrivals_avg;
        self.price = (self.price + self.gamma * (self.alpha * (b - self.b_ref) + x - c)).max(0.0);
        self.prob = 1.0 - libm::pow(self.phi, -self.price);
        self.arrivals = 0;
    }
}

impl Default for Rem {
    fn default() -> Self {
        Self::new()
    }
}

impl Discipline for Rem {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        self.arrivals += if self.qib {
            ctx.packets[p].size as u64
        } else {
            1
        };
        if !self.queue.fits(self.limit, ctx.packets[p].size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        // qib: a packet's probability scales with its size (rem.cc lines 208–210, 259–261).
        let prob = if self.qib {
            self.prob * ctx.packets[p].size as f64 / self.mean_pktsize as f64
        } else {
            self.prob
        };
        if self.prob > 0.0
            && ctx.rng.uniform() < prob
            && !mark_or_drop(self.ecn, p, ctx, Stage::Enqueue)
        {
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.queue.pop_front(ctx.packets)
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.prob)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if periodic::fire(&mut self.next_update, ctx.now, self.update) {
            self.update_price(ctx.link_rate_bps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    const MS: Nanos = NS_PER_MS;

    #[test]
    fn price_and_probability_over_three_intervals() {
        let mut h = Harness::new();
        h.rate_bps = 4_000_000; // c = 4e6·0.002/(8·1000) = 1 packet per interval
        let mut q = Rem::new();
        q.gamma = 0.5;
        q.phi = 2.0;
        q.alpha = 1.0;
        q.b_ref = 2.0;
        // Interval 1: 5 arrivals, none sent: b = 5, x = 5:
        //   price = 0 + 0.5·(1·(5 − 2) + 5 − 1) = 0.5·7 = 3.5; p = 1 − 2^−3.5 = 0.911611652…
        // (with p = 0 during the interval every arrival is admitted)
        for _ in 0..5 {
            let p = h.packet(1, 1000);
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
        q.on_timer(&mut h.ctx(2 * MS));
        assert!((q.price - 3.5).abs() < 1e-12);
        assert!((q.prob - (1.0 - 2f64.powf(-3.5))).abs() < 1e-12);
        // Interval 2: 4 dequeued, no arrivals: b = 1, x = 0:
        //   price = 3.5 + 0.5·((1 − 2) + 0 − 1) = 3.5 − 1 = 2.5; p = 1 − 2^−2.5
        for _ in 0..4 {
            q.dequeue(&mut h.ctx(3 * MS));
        }
        q.on_timer(&mut h.ctx(4 * MS));
        assert!((q.price - 2.5).abs() < 1e-12);
        assert!((q.prob - (1.0 - 2f64.powf(-2.5))).abs() < 1e-12);
        // Interval 3: b = 1, x = 0 three times over: 2.5 − 1 − 1 − 1 < 0 → 0, p = 0.
        for t in [6, 8, 10] {
            q.on_timer(&mut h.ctx(t * MS));
        }
        assert_eq!(q.price, 0.0);
        assert_eq!(q.prob, 0.0);
    }

    /// ns-2 hard-codes α = 0.1 (rem.cc line 178); `inw_` (default 1) is the arrival
    /// EWMA weight, not α.
    #[test]
    fn alpha_defaults_to_ns2s_hard_coded_0_1() {
        let empty = serde_json::Map::new();
        let mut p = Params::new("q", &empty, &[]);
        let q = Rem::from_params(&mut p).unwrap();
        assert_eq!((q.alpha, q.inw), (0.1, 1.0));
    }

    /// A link exactly full of 1500-B packets: 6 Mbit/s, 2 ms, `mean_pktsize` 1000 B →
    /// c = 6e6·0.002/8000 = 1.5 units per interval; one 1500-B arrival, still queued at
    /// the update. γ = 1, φ = 2, α = 0.1, b* = 0.
    /// - qib (bytes): x = 1500/1000 = 1.5 = c, b = 1.5 → price = 0.1·1.5 + 0 = 0.15.
    /// - packets (ns-2's default): x = 1, b = 1 → 0.1·1 + 1 − 1.5 = −0.4 → 0: the full
    ///   link looks a third idle.
    #[test]
    fn qib_counts_bytes_so_a_full_link_of_big_packets_is_full() {
        for (qib, price) in [(true, 0.15), (false, 0.0)] {
            let mut h = Harness::new();
            h.rate_bps = 6_000_000;
            let mut q = Rem::new();
            (q.gamma, q.phi, q.b_ref, q.qib) = (1.0, 2.0, 0.0, qib);
            let p = h.packet(1, 1500);
            assert!(q.enqueue(p, &mut h.ctx(0)));
            q.on_timer(&mut h.ctx(2 * MS));
            assert!((q.price - price).abs() < 1e-12, "qib {qib}: {}", q.price);
        }
    }

    /// inw = 0.5, γ = 1, φ = 2, α = 0.1, b* = 0, c = 1 packet per interval:
    /// - interval 1: 4 arrivals (all queued) → x̄ = 0.5·0 + 0.5·4 = 2;
    ///   price = 1·(0.1·4 + 2 − 1) = 1.4;
    /// - interval 2: no arrivals, 4 dequeued → x̄ = 1; price = 1.4 + (0 + 1 − 1) = 1.4.
    #[test]
    fn arrival_count_is_smoothed_by_inw() {
        let mut h = Harness::new();
        h.rate_bps = 4_000_000;
        let mut q = Rem::new();
        (q.gamma, q.phi, q.b_ref, q.inw) = (1.0, 2.0, 0.0, 0.5);
        for _ in 0..4 {
            let p = h.packet(1, 1000);
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
        q.on_timer(&mut h.ctx(2 * MS));
        assert!((q.price - 1.4).abs() < 1e-12, "{}", q.price);
        for _ in 0..4 {
            q.dequeue(&mut h.ctx(3 * MS));
        }
        q.on_timer(&mut h.ctx(4 * MS));
        assert!((q.price - 1.4).abs() < 1e-12, "{}", q.price);
        assert_eq!(q.arrivals_avg, 1.0);
    }
}
