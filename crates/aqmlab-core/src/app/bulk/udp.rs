//! UDP sources: constant bit rate and Poisson.
//!
//! CBR sends packet k at `start + k·size·8/rate` exactly (computed from k, so rounding
//! never accumulates). Poisson draws exponential gaps with mean `mean_size·8/rate`.
//! Sizes are fixed, or exponential with the given mean (rounded to whole bytes, at
//! least 1 B). Datagrams are not limited by the link MTU (no fragmentation model).

use crate::app::{AppIo, Application, EntryBuild, FlowKind, TrafficKind};
use crate::net::packet::PacketKind;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};

pub const CBR: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "udp-cbr",
        summary: "UDP constant bit rate",
        source: "-",
        params: &[
            ParamDoc {
                name: "rate",
                ty: "rate",
                default: "required",
                doc: "sending rate (IP bytes)",
            },
            ParamDoc {
                name: "size",
                ty: "size",
                default: "1000B",
                doc: "IP datagram size",
            },
            crate::app::DATAGRAM_ECN,
        ],
    },
    build: |p, e| build(false, p, e),
};

pub const POISSON: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "udp-poisson",
        summary: "UDP with Poisson arrivals",
        source: "-",
        params: &[
            ParamDoc {
                name: "rate",
                ty: "rate",
                default: "required",
                doc: "mean sending rate",
            },
            ParamDoc {
                name: "size",
                ty: "size",
                default: "1000B",
                doc: "(mean) IP datagram size",
            },
            ParamDoc {
                name: "size_dist",
                ty: "string",
                default: "fixed",
                doc: "fixed or exp (exponential sizes)",
            },
            crate::app::DATAGRAM_ECN,
        ],
    },
    build: |p, e| build(true, p, e),
};

/// Read a `udp-cbr` (`poisson = false`) or `udp-poisson` entry: one source per flow.
fn build(poisson: bool, p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    e.ecn = crate::app::read_datagram_ecn(p)?;
    let rate = p.required_rate("rate")?;
    let size = p.size_or("size", 1000)?;
    if size == 0 || size > 65_535 {
        return Err(p.error("size", format!("{size}B: expected 1B to 65535B")));
    }
    let (pattern, dist) = if poisson {
        let d = match p.choice_or("size_dist", "fixed", &["fixed", "exp"])? {
            "exp" => SizeDist::Exponential,
            _ => SizeDist::Fixed,
        };
        (Pattern::Poisson, d)
    } else {
        (Pattern::Cbr, SizeDist::Fixed)
    };
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        let flow = e.next_flow();
        let rng = e.rng(&format!("flow[{k}]"));
        let start = e.start_for(&format!("flow[{k}]"));
        let s = UdpSource::new(flow, pattern, rate, size as u32, dist, start, e.stop, rng);
        let app = e.add_app(s);
        e.add_flow(src, dst, FlowKind::Udp, None, app);
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Cbr,
    Poisson,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeDist {
    Fixed,
    Exponential,
}

/// A datagram the source emits.
#[derive(Clone, Copy, Debug)]
pub struct Datagram {
    pub size: u32,
    pub seq: u64,
}

pub struct UdpSource {
    pub flow: u32,
    pub pattern: Pattern,
    pub rate_bps: u64,
    pub size: u32,
    pub size_dist: SizeDist,
    pub start: Nanos,
    pub stop: Nanos,
    pub rng: Rng,
    sent: u64,
    next: Nanos,
}

impl UdpSource {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        pattern: Pattern,
        rate_bps: u64,
        size: u32,
        size_dist: SizeDist,
        start: Nanos,
        stop: Nanos,
        rng: Rng,
    ) -> Self {
        UdpSource {
            flow,
            pattern,
            rate_bps,
            size,
            size_dist,
            start,
            stop,
            rng,
            sent: 0,
            next: start,
        }
    }

    /// When the first datagram goes out.
    pub fn first_time(&mut self) -> Option<Nanos> {
        if self.pattern == Pattern::Poisson {
            self.next = self.start + self.gap();
        }
        (self.next < self.stop).then_some(self.next)
    }

    fn gap(&mut self) -> Nanos {
        let mean_ns = self.size as f64 * 8.0 * NS_PER_S as f64 / self.rate_bps as f64;
        self.rng.exponential(mean_ns).round() as Nanos
    }

    /// Emit the datagram due now; returns it and the time of the next one.
    pub fn on_timer(&mut self, _now: Nanos) -> (Datagram, Option<Nanos>) {
        let size = match self.size_dist {
            SizeDist::Fixed => self.size,
            SizeDist::Exponential => (self.rng.exponential(self.size as f64).round() as u32).max(1),
        };
        let d = Datagram {
            size,
            seq: self.sent,
        };
        self.sent += 1;
        self.next = match self.pattern {
            Pattern::Cbr => {
                let bits = self.sent as u128 * self.size as u128 * 8 * NS_PER_S as u128;
                self.start + (bits / self.rate_bps as u128) as Nanos
            }
            Pattern::Poisson => self.next + self.gap(),
        };
        (d, (self.next < self.stop).then_some(self.next))
    }
}

impl Application for UdpSource {
    fn start(&mut self, io: &mut AppIo) {
        if let Some(t) = self.first_time() {
            io.wake_at(t);
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        let (d, next) = self.on_timer(now);
        if let Some(t) = next {
            io.wake_at(t);
        }
        io.send(self.flow, d.size, d.seq, PacketKind::Udp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Action;

    #[test]
    fn asks_for_its_next_wake_then_sends() {
        // 1000 B at 8 Mbit/s from 1 s: wake at 1 s, then every 1 ms.
        let mut s = UdpSource::new(
            7,
            Pattern::Cbr,
            8_000_000,
            1000,
            SizeDist::Fixed,
            NS_PER_S,
            2 * NS_PER_S,
            Rng::stream(1, "x"),
        );
        let mut io = AppIo::new(0);
        s.start(&mut io);
        assert_eq!(io.actions(), &[Action::WakeAt(NS_PER_S)]);
        io.reset(0);
        s.on_wake(NS_PER_S, &mut io);
        assert_eq!(
            io.actions(),
            &[
                Action::WakeAt(NS_PER_S + 1_000_000),
                Action::Send {
                    flow: 7,
                    size: 1000,
                    seq: 0,
                    kind: PacketKind::Udp,
                    reverse: false,
                    tag: crate::net::packet::AppTag::default(),
                }
            ]
        );
    }

    #[test]
    fn cbr_sends_at_exact_multiples() {
        // 1000 B at 3 Mbit/s: every 2.666... ms, never drifting.
        let mut s = UdpSource::new(
            0,
            Pattern::Cbr,
            3_000_000,
            1000,
            SizeDist::Fixed,
            0,
            u64::MAX,
            Rng::stream(1, "x"),
        );
        let mut t = s.first_time().unwrap();
        for _ in 0..3000 {
            t = s.on_timer(t).1.unwrap();
        }
        assert_eq!(t, 8_000_000_000); // 3000 packets · 8000 bit / 3 Mbit/s = 8 s
    }

    #[test]
    fn stops_before_stop_time() {
        let mut s = UdpSource::new(
            0,
            Pattern::Cbr,
            8_000,
            1000,
            SizeDist::Fixed,
            0,
            2_500_000_000,
            Rng::stream(1, "x"),
        );
        let mut n = 0;
        let mut next = s.first_time();
        while let Some(t) = next {
            n += 1;
            next = s.on_timer(t).1;
        }
        assert_eq!(n, 3); // at 0, 1, 2 s
    }
}
