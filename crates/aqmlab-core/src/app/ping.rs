//! `ping`: latency probes, a datagram every `interval` that the destination echoes at
//! once; the source records each probe's round-trip time.
//!
//! This is the latency measurement of flent's RRUL-family tests (flent's
//! `tests/rrul.conf`: the `ping` runner, iputils `ping` every STEP_SIZE, and the
//! `udp_rtt` runner, netperf UDP_RR-like request/response): a probe that waits in the
//! queues on the way out and back. Defaults: `interval` 200 ms (flent's default
//! STEP_SIZE, `flent/settings.py` `-s/--step-size`), `size` 84 B (an iputils echo
//! request: 56 data bytes + 8 ICMP + 20 IPv4). The reply has the request's size and
//! class. Probes are UDP datagrams in the simulator (no ICMP-specific treatment
//! exists anywhere in it). A probe whose reply has not arrived by the end of the run
//! is lost (`rtt_ms` NaN in the `pings` table).
//!
//! Results: the `pings` table (one row per probe: `app`, `flow`, `seq`, `sent_s`,
//! `rtt_ms`), and `apps` columns over probes sent at or after the warm-up:
//! `probes_sent`, `probes_lost`, `ping_rtt_ms_mean`, `ping_rtt_ms_p50`,
//! `ping_rtt_ms_p95`, `ping_ipdv_ms_mean` (mean |RTT(k) − RTT(k−1)| over consecutive
//! answered probes: the RFC 3393 IPDV of the round trip, its magnitude averaged).

use super::{AppIo, Application, Arrival, EntryBuild, FlowKind, TrafficKind};
use crate::net::packet::AppTag;
use crate::output::table::{Table, Ty, Val};
use crate::scenario::error::Result;
use crate::scenario::params::{param, KindDoc, Params};
use crate::sim::time::{Nanos, NS_PER_S};

pub const KIND: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "ping",
        summary: "latency probes echoed by the destination (flent's ping / UDP RTT)",
        source: "flent tests/rrul.conf (ping, udp_rtt runners)",
        params: &[
            param(
                "interval",
                "duration",
                "200ms",
                "time between probes (flent STEP_SIZE)",
            ),
            param(
                "size",
                "size",
                "84B",
                "IP bytes of a probe and of its reply (iputils echo)",
            ),
        ],
    },
    build,
};

fn build(p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    let interval = p.positive_duration_or("interval", 200_000_000)?;
    if interval < 1_000_000 {
        return Err(p.error("interval", format!("{interval}ns: expected at least 1ms")));
    }
    let size = p.size_or("size", 84)?;
    if !(28..=65_535).contains(&size) {
        return Err(p.error("size", format!("{size}B: expected 28B to 65535B")));
    }
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        let flow = e.next_flow();
        let start = e.start_for(&format!("flow[{k}]"));
        let app = e.add_app(Ping::new(
            flow,
            interval,
            size as u32,
            start,
            e.stop,
            e.warmup,
        ));
        e.add_flow(src, dst, FlowKind::Udp, None, app);
        e.need_route(dst, src, false);
    }
    Ok(())
}

/// Not answered (yet).
const NO_REPLY: Nanos = Nanos::MAX;

pub struct Ping {
    pub flow: u32,
    interval: Nanos,
    size: u32,
    start: Nanos,
    stop: Nanos,
    warmup: Nanos,
    /// Send time and RTT (`NO_REPLY` until answered) of probe k.
    sent: Vec<Nanos>,
    rtt: Vec<Nanos>,
}

impl Ping {
    pub fn new(
        flow: u32,
        interval: Nanos,
        size: u32,
        start: Nanos,
        stop: Nanos,
        warmup: Nanos,
    ) -> Self {
        Ping {
            flow,
            interval,
            size,
            start,
            stop,
            warmup,
            sent: Vec::new(),
            rtt: Vec::new(),
        }
    }

    /// (send time, RTT if answered) of every probe, in order.
    pub fn probes(&self) -> impl Iterator<Item = (Nanos, Option<Nanos>)> + '_ {
        self.sent
            .iter()
            .zip(&self.rtt)
            .map(|(&s, &r)| (s, (r != NO_REPLY).then_some(r)))
    }
}

impl Application for Ping {
    fn start(&mut self, io: &mut AppIo) {
        if self.start < self.stop {
            io.wake_at(self.start);
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        let seq = self.sent.len() as u64;
        self.sent.push(now);
        self.rtt.push(NO_REPLY);
        io.send_tagged(self.flow, false, self.size, seq, AppTag::default());
        // Computed from the probe count, so rounding never accumulates.
        let next = self.start + (seq + 1) * self.interval;
        if next < self.stop {
            io.wake_at(next);
        }
    }

    fn wants_datagrams(&self) -> bool {
        true
    }

    fn on_datagram(&mut self, now: Nanos, d: &Arrival, io: &mut AppIo) {
        if !d.reverse {
            // The echo: same size and sequence number, straight back.
            io.send_tagged(self.flow, true, d.size, d.seq, AppTag::default());
        } else if let Some(&sent) = self.sent.get(d.seq as usize) {
            self.rtt[d.seq as usize] = now - sent;
        }
    }

    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        let mut sent = 0u64;
        let mut rtts: Vec<f64> = Vec::new();
        let mut ipdv: Vec<f64> = Vec::new();
        for a in apps {
            let mut prev: Option<Nanos> = None;
            for (_, r) in a.probes().filter(|&(s, _)| s >= a.warmup) {
                sent += 1;
                if let Some(r) = r {
                    rtts.push(r as f64 / 1e6);
                    if let Some(p) = prev {
                        ipdv.push(r.abs_diff(p) as f64 / 1e6);
                    }
                }
                prev = r;
            }
        }
        let lost = sent - rtts.len() as u64;
        let mean = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let mut sorted = rtts.clone();
        sorted.sort_by(f64::total_cmp);
        out.push(("probes_sent", Val::U(sent)));
        out.push(("probes_lost", Val::U(lost)));
        out.push(("ping_rtt_ms_mean", Val::F(mean(&rtts))));
        out.push(("ping_rtt_ms_p50", Val::F(nearest_rank(&sorted, 0.5))));
        out.push(("ping_rtt_ms_p95", Val::F(nearest_rank(&sorted, 0.95))));
        out.push(("ping_ipdv_ms_mean", Val::F(mean(&ipdv))));
    }

    fn tables(apps: &[&Self], entry: &str, out: &mut Vec<Table>) {
        let mut t = pings_table();
        for a in apps {
            for (k, (s, r)) in a.probes().enumerate() {
                t.push(vec![
                    Val::S(entry.to_string()),
                    Val::U(a.flow as u64),
                    Val::U(k as u64),
                    Val::F(s as f64 / NS_PER_S as f64),
                    Val::F(r.map_or(f64::NAN, |r| r as f64 / 1e6)),
                ]);
            }
        }
        out.push(t);
    }
}

/// The nearest-rank quantile of sorted values (NaN for none).
fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// The `pings` table's schema (docs/output.md).
pub fn pings_table() -> Table {
    Table::new(
        "pings",
        &[
            ("app", Ty::S),
            ("flow", Ty::U),
            ("seq", Ty::U),
            ("sent_s", Ty::F),
            ("rtt_ms", Ty::F),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Action;
    use crate::net::packet::Ecn;

    fn arrival(reverse: bool, seq: u64) -> Arrival {
        Arrival {
            flow: 3,
            reverse,
            seq,
            size: 84,
            sent_at: 0,
            tag: AppTag::default(),
            ecn: Ecn::NotEct,
        }
    }

    #[test]
    fn probes_every_interval_echo_and_time_the_round_trip() {
        let ms = 1_000_000;
        let mut p = Ping::new(3, 200 * ms, 84, 100 * ms, 600 * ms, 0);
        let mut io = AppIo::new(0);
        p.start(&mut io);
        assert_eq!(io.actions(), &[Action::WakeAt(100 * ms)]);
        io.reset(0);
        p.on_wake(100 * ms, &mut io);
        assert!(matches!(
            io.actions()[0],
            Action::Send {
                flow: 3,
                size: 84,
                seq: 0,
                reverse: false,
                ..
            }
        ));
        assert_eq!(io.actions()[1], Action::WakeAt(300 * ms));
        // The destination echoes it back on the reverse path.
        io.reset(0);
        p.on_datagram(130 * ms, &arrival(false, 0), &mut io);
        assert!(matches!(
            io.actions()[0],
            Action::Send {
                flow: 3,
                size: 84,
                seq: 0,
                reverse: true,
                ..
            }
        ));
        // The reply reaches the source 60 ms after the probe left.
        p.on_datagram(160 * ms, &arrival(true, 0), &mut io);
        io.reset(0);
        p.on_wake(300 * ms, &mut io);
        // The third probe would be at 500 ms < 600 ms: still asked for.
        assert_eq!(io.actions()[1], Action::WakeAt(500 * ms));
        p.on_datagram(390 * ms, &arrival(true, 1), &mut io);
        io.reset(0);
        p.on_wake(500 * ms, &mut io);
        // No wake at 700 ms (past stop); probe 2 is never answered.
        assert_eq!(io.actions().len(), 1);
        let probes: Vec<_> = p.probes().collect();
        assert_eq!(
            probes,
            vec![
                (100 * ms, Some(60 * ms)),
                (300 * ms, Some(90 * ms)),
                (500 * ms, None)
            ]
        );
        let mut cols = Vec::new();
        Ping::report(&[&p], &mut cols);
        let get = |n: &str| cols.iter().find(|c| c.0 == n).unwrap().1.clone();
        assert_eq!(get("probes_sent"), Val::U(3));
        assert_eq!(get("probes_lost"), Val::U(1));
        assert_eq!(get("ping_rtt_ms_mean"), Val::F(75.0));
        assert_eq!(get("ping_rtt_ms_p50"), Val::F(60.0));
        assert_eq!(get("ping_rtt_ms_p95"), Val::F(90.0));
        assert_eq!(get("ping_ipdv_ms_mean"), Val::F(30.0));
    }
}
