//! Turning a finished simulation into the result tables of `docs/output.md`.
//! Column names are a contract: add freely, never rename.

use crate::engine::Simulation;
use crate::output::table::{Table, Ty, Val};
use crate::qdisc::Discipline;
use crate::sim::time::{millis, secs, Nanos};

/// All tables of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    pub tables: Vec<Table>,
}

impl Results {
    pub fn table(&self, name: &str) -> &Table {
        self.tables
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no table {name}"))
    }
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// Build the tables. `now` is the end of the measurement window.
pub fn collect(sim: &Simulation) -> Results {
    // A finished run is measured to its end time, not to its last event.
    let now: Nanos = if sim.is_done() { sim.end } else { sim.now() };
    let window_start = sim.warmup.min(now);
    let window = (now - window_start).max(1);
    let mut tables = Vec::new();

    let mut summary = Table::new(
        "summary",
        &[
            ("scenario", Ty::S),
            ("seed", Ty::U),
            ("sim_time_s", Ty::F),
            ("wall_time_s", Ty::F),
            ("events", Ty::U),
            ("packets", Ty::U),
            ("packet_hops", Ty::U),
            ("delivered", Ty::U),
            ("dropped", Ty::U),
            ("in_network", Ty::U),
            ("events_per_s", Ty::F),
            ("arena_slots", Ty::U),
        ],
    );
    let wall = sim.wall_time().as_secs_f64();
    summary.push(vec![
        sim.name.clone().into(),
        sim.seed.into(),
        secs(now).into(),
        wall.into(),
        sim.events.popped().into(),
        sim.packets.created().into(),
        sim.hops.into(),
        sim.delivered.into(),
        sim.dropped.into(),
        sim.in_network().into(),
        (if wall > 0.0 {
            sim.events.popped() as f64 / wall
        } else {
            f64::NAN
        })
        .into(),
        (sim.packets.capacity() as u64).into(),
    ]);
    tables.push(summary);

    let mut queues = Table::new(
        "queues",
        &[
            ("link", Ty::S),
            ("qdisc", Ty::S),
            ("from", Ty::S),
            ("to", Ty::S),
            ("rate_bps", Ty::U),
            ("sojourn_ms_mean", Ty::F),
            ("sojourn_ms_p50", Ty::F),
            ("sojourn_ms_p95", Ty::F),
            ("sojourn_ms_p99", Ty::F),
            ("sojourn_ms_max", Ty::F),
            ("qlen_pkts_mean", Ty::F),
            ("qlen_bytes_mean", Ty::F),
            ("arrivals", Ty::U),
            ("enqueued", Ty::U),
            ("dequeued", Ty::U),
            ("drops", Ty::U),
            ("drops_overflow", Ty::U),
            ("drops_early", Ty::U),
            ("drops_forced", Ty::U),
            ("drops_random", Ty::U),
            ("drops_outage", Ty::U),
            ("marks", Ty::U),
            ("drop_rate", Ty::F),
            ("utilization", Ty::F),
            ("throughput_bps", Ty::F),
        ],
    );
    for link in &sim.links {
        let s = &link.stats;
        let mut busy = s.busy_ns;
        if let Some((_, started)) = link.tx {
            busy += now - started.max(s.window_start);
        }
        let drops = s.qdisc_drops();
        let offered = s.arrivals - s.drops_random - s.drops_outage;
        queues.push(vec![
            link.name.clone().into(),
            link.qdisc.kind_name().into(),
            sim.nodes[link.from as usize].name.clone().into(),
            sim.nodes[link.to as usize].name.clone().into(),
            link.rate_bps.into(),
            ms(s.sojourn.mean()).into(),
            ms(s.sojourn.quantile(0.5)).into(),
            ms(s.sojourn.quantile(0.95)).into(),
            ms(s.sojourn.quantile(0.99)).into(),
            millis(s.sojourn.max()).into(),
            s.qlen_pkts.mean(now).into(),
            s.qlen_bytes.mean(now).into(),
            s.arrivals.into(),
            s.enqueued.into(),
            s.dequeued.into(),
            drops.into(),
            s.drops_overflow.into(),
            s.drops_early.into(),
            s.drops_forced.into(),
            s.drops_random.into(),
            s.drops_outage.into(),
            s.marks.into(),
            (if offered > 0 {
                drops as f64 / offered as f64
            } else {
                0.0
            })
            .into(),
            (busy as f64 / window as f64).into(),
            (s.tx_bytes as f64 * 8.0 / secs(window)).into(),
        ]);
    }
    tables.push(queues);

    let mut flows = Table::new(
        "flows",
        &[
            ("flow", Ty::U),
            ("app", Ty::S),
            ("kind", Ty::S),
            ("src", Ty::S),
            ("dst", Ty::S),
            ("cc", Ty::S),
            ("packets_sent", Ty::U),
            ("packets_delivered", Ty::U),
            ("packets_dropped", Ty::U),
            ("bytes_sent", Ty::U),
            ("bytes_delivered", Ty::U),
            ("goodput_bps", Ty::F),
            ("retransmits", Ty::U),
            ("timeouts", Ty::U),
            ("rtt_ms_mean", Ty::F),
            ("owd_ms_mean", Ty::F),
            ("owd_ms_p50", Ty::F),
            ("owd_ms_p95", Ty::F),
            ("owd_ms_p99", Ty::F),
            ("loss_rate", Ty::F),
            ("completion_s", Ty::F),
            ("transfers", Ty::U),
        ],
    );
    for (i, f) in sim.flows.iter().enumerate() {
        let s = &f.stats;
        // Packets dropped in the network over packets sent (still in flight is not lost).
        let loss = if s.packets_sent > 0 {
            s.packets_dropped as f64 / s.packets_sent as f64
        } else {
            0.0
        };
        flows.push(vec![
            (i as u64).into(),
            sim.entries[f.entry as usize].name.clone().into(),
            f.kind.into(),
            sim.nodes[f.src as usize].name.clone().into(),
            sim.nodes[f.dst as usize].name.clone().into(),
            f.cc.clone().into(),
            s.packets_sent.into(),
            s.packets_delivered.into(),
            s.packets_dropped.into(),
            s.bytes_sent.into(),
            s.bytes_delivered.into(),
            (s.bytes_delivered as f64 * 8.0 / secs(window)).into(),
            s.retransmits.into(),
            s.timeouts.into(),
            ms(s.rtt.mean()).into(),
            ms(s.owd.mean()).into(),
            ms(s.owd.quantile(0.5)).into(),
            ms(s.owd.quantile(0.95)).into(),
            ms(s.owd.quantile(0.99)).into(),
            loss.into(),
            s.completion.map(secs).unwrap_or(f64::NAN).into(),
            s.transfers.into(),
        ]);
    }
    tables.push(flows);

    let mut apps = Table::new(
        "apps",
        &[
            ("app", Ty::S),
            ("kind", Ty::S),
            ("flows", Ty::U),
            ("bytes_delivered", Ty::U),
            ("goodput_bps", Ty::F),
            ("owd_ms_mean", Ty::F),
            ("loss_rate", Ty::F),
        ],
    );
    for (e, entry) in sim.entries.iter().enumerate() {
        let mine = sim.flows.iter().filter(|f| f.entry as usize == e);
        let (mut n, mut bytes, mut sent, mut lost, mut owd_sum, mut owd_n) =
            (0u64, 0u64, 0u64, 0u64, 0f64, 0u64);
        for f in mine {
            n += 1;
            bytes += f.stats.bytes_delivered;
            sent += f.stats.packets_sent;
            lost += f.stats.packets_dropped;
            if f.stats.owd.count() > 0 {
                owd_sum += f.stats.owd.mean() * f.stats.owd.count() as f64;
                owd_n += f.stats.owd.count();
            }
        }
        apps.push(vec![
            entry.name.clone().into(),
            entry.kind.into(),
            n.into(),
            bytes.into(),
            (bytes as f64 * 8.0 / secs(window)).into(),
            (if owd_n > 0 {
                ms(owd_sum / owd_n as f64)
            } else {
                f64::NAN
            })
            .into(),
            (if sent > 0 {
                lost as f64 / sent as f64
            } else {
                0.0
            })
            .into(),
        ]);
    }
    tables.push(apps);

    // Opt-in (`child_stats = true` on a scheduler): one row per child queue that saw
    // a packet, so a 1024-bucket FQ-CoDel lists only the buckets in use.
    if sim.links.iter().any(|l| l.qdisc.child_stats().is_some()) {
        let mut cq = Table::new(
            "child_queues",
            &[
                ("link", Ty::S),
                ("qdisc", Ty::S),
                ("queue", Ty::U),
                ("enqueued", Ty::U),
                ("dequeued", Ty::U),
                ("drops", Ty::U),
                ("marks", Ty::U),
                ("bytes", Ty::U),
                ("throughput_bps", Ty::F),
                ("sojourn_ms_mean", Ty::F),
                ("sojourn_ms_max", Ty::F),
            ],
        );
        for link in &sim.links {
            let Some(rows) = link.qdisc.child_stats() else {
                continue;
            };
            for (i, c) in rows.iter().enumerate() {
                if c.enqueued == 0 && c.drops == 0 {
                    continue;
                }
                cq.push(vec![
                    link.name.clone().into(),
                    link.qdisc.kind_name().into(),
                    (i as u64).into(),
                    c.enqueued.into(),
                    c.dequeued.into(),
                    c.drops.into(),
                    c.marks.into(),
                    c.bytes.into(),
                    (c.bytes as f64 * 8.0 / secs(window)).into(),
                    (if c.dequeued > 0 {
                        ms(c.sojourn_sum as f64 / c.dequeued as f64)
                    } else {
                        f64::NAN
                    })
                    .into(),
                    millis(c.sojourn_max).into(),
                ]);
            }
        }
        tables.push(cq);
    }

    if let Some(series) = &sim.series {
        let mut ts = Table::new(
            "timeseries",
            &[
                ("time_ns", Ty::U),
                ("link", Ty::S),
                ("qlen_pkts", Ty::U),
                ("qlen_bytes", Ty::U),
                ("sojourn_ms", Ty::F),
                ("rate_bps", Ty::U),
                ("drop_prob", Ty::F),
            ],
        );
        for r in &series.rows {
            ts.push(vec![
                Val::U(r.time),
                sim.links[r.link as usize].name.clone().into(),
                r.qlen_pkts.into(),
                r.qlen_bytes.into(),
                millis(r.sojourn).into(),
                r.rate_bps.into(),
                r.drop_prob.into(),
            ]);
        }
        tables.push(ts);
    }

    if let Some(series) = &sim.tcp_series {
        let mut ts = Table::new(
            "tcp",
            &[
                ("time_ns", Ty::U),
                ("flow", Ty::U),
                ("cwnd_bytes", Ty::U),
                ("ssthresh_bytes", Ty::U),
                ("srtt_ms", Ty::F),
                ("bytes_in_flight", Ty::U),
            ],
        );
        for r in &series.rows {
            ts.push(vec![
                Val::U(r.time),
                (r.flow as u64).into(),
                r.cwnd.into(),
                r.ssthresh.into(),
                r.srtt.map(millis).unwrap_or(f64::NAN).into(),
                r.in_flight.into(),
            ]);
        }
        tables.push(ts);
    }

    if sim.sojourn_hist {
        let mut hist = Table::new(
            "sojourn_hist",
            &[
                ("link", Ty::S),
                ("sojourn_ms_low", Ty::F),
                ("sojourn_ms_high", Ty::F),
                ("packets", Ty::U),
            ],
        );
        for link in &sim.links {
            for (lo, hi, n) in link.stats.sojourn.buckets() {
                hist.push(vec![
                    link.name.clone().into(),
                    millis(lo).into(),
                    millis(hi).into(),
                    n.into(),
                ]);
            }
        }
        tables.push(hist);
    }

    if let Some(log) = &sim.drop_log {
        let mut drops = Table::new(
            "drops",
            &[
                ("time_ns", Ty::U),
                ("link", Ty::S),
                ("flow", Ty::U),
                ("packet", Ty::U),
                ("size_bytes", Ty::U),
                ("reason", Ty::S),
                ("at", Ty::S),
            ],
        );
        for d in log {
            drops.push(vec![
                Val::U(d.time),
                sim.links[d.link as usize].name.clone().into(),
                (d.flow as u64).into(),
                d.packet.into(),
                (d.size as u64).into(),
                d.reason.into(),
                d.at.into(),
            ]);
        }
        tables.push(drops);
    }
    Results { tables }
}
