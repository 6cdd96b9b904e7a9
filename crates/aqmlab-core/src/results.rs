//! Turning a finished simulation into the result tables of `docs/output.md`.
//! Column names are a contract: add freely, never rename.

use crate::engine::{ConnTotals, Simulation};
use crate::measure::flow_stats::FlowSummary;
use crate::net::access::{self, Access, AnyAccess};
use crate::output::table::{col, Table, Val};
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

/// One queue at the end of the measurement window: a link's (its qdisc), or a
/// stage of its access model (a DOCSIS TxQ, row `LINK.txq`).
struct LinkRow<'a> {
    link: &'a crate::net::link::Link,
    name: String,
    qdisc: &'static str,
    stats: &'a crate::measure::link_stats::LinkStats,
    busy: Nanos,
}

/// One `flows` row: a flow, a released connection (`flow_rows = true`), or the
/// connections of an entry folded together (its row carries the smallest id).
struct FlowRow {
    id: u64,
    entry: u32,
    kind: &'static str,
    /// Node ids; `u32::MAX`: the entry's connections run between different nodes.
    src: u32,
    dst: u32,
    cc: &'static str,
    s: FlowSummary,
}

/// The connections of each entry that share one `flows` row (`flow_rows = false`):
/// those released during the run and those still open. None for entries without.
fn conn_groups(sim: &Simulation) -> Vec<Option<ConnTotals>> {
    let mut groups: Vec<ConnTotals> = sim.conn_totals.clone();
    for f in sim.flows.iter().filter(|f| f.conn) {
        groups[f.entry as usize].add(f);
    }
    groups
        .into_iter()
        .zip(&sim.entries)
        .map(|(g, e)| (g.count > 0 && !e.flow_rows).then_some(g))
        .collect()
}

/// Whether live flow `f` has a row of its own (not folded into its entry's).
fn own_row(sim: &Simulation, f: &crate::engine::Flow) -> bool {
    f.id != u32::MAX && (!f.conn || sim.entries[f.entry as usize].flow_rows)
}

/// The `flows` rows in id order.
fn flow_rows(sim: &Simulation, groups: &[Option<ConnTotals>]) -> Vec<FlowRow> {
    let mut rows: Vec<FlowRow> = sim
        .flows
        .iter()
        .filter(|f| own_row(sim, f))
        .map(|f| FlowRow {
            id: f.id as u64,
            entry: f.entry,
            kind: f.kind.name(),
            src: f.src,
            dst: f.dst,
            cc: f.cc,
            s: FlowSummary::of(&f.stats),
        })
        .collect();
    rows.extend(sim.flow_records.iter().map(|r| FlowRow {
        id: r.id as u64,
        entry: r.entry,
        kind: crate::app::FlowKind::Tcp.name(),
        src: r.src,
        dst: r.dst,
        cc: r.cc,
        s: r.row.clone(),
    }));
    rows.extend(groups.iter().enumerate().filter_map(|(e, g)| {
        let g = g.as_ref()?;
        Some(FlowRow {
            id: g.first as u64,
            entry: e as u32,
            kind: crate::app::FlowKind::Tcp.name(),
            src: g.src,
            dst: g.dst,
            cc: g.cc,
            s: FlowSummary {
                completion: None,
                ..FlowSummary::of(&g.stats)
            },
        })
    }));
    rows.sort_by_key(|r| r.id);
    rows
}

/// One traffic entry and its flows' totals.
struct EntryRow<'a> {
    entry: &'a crate::app::AppEntry,
    flows: u64,
    bytes: u64,
    sent: u64,
    lost: u64,
    owd_sum: f64,
    owd_n: u64,
    /// The entry's active span: the earliest `active_from` and the latest `active_to`
    /// of its flows and connections.
    active_from: Option<Nanos>,
    active_to: Option<Nanos>,
    /// Per-kind columns from the entry's apps (`Application::report`).
    extra: Vec<(&'static str, Val)>,
}

impl EntryRow<'_> {
    /// Widen the entry's active span by a flow's (or connections') span.
    fn span(&mut self, s: &crate::measure::flow_stats::FlowStats) {
        if let (Some(a), Some(b)) = (s.active_from, s.active_to) {
            self.active_from = Some(self.active_from.map_or(a, |x| x.min(a)));
            self.active_to = self.active_to.max(Some(b));
        }
    }
}

/// Goodput over the active span: delivered bits / (last delivery − first packet); 0
/// without a delivered byte, NaN for a zero-length span.
fn active_rate(bytes: u64, active_ns: Option<Nanos>) -> f64 {
    match active_ns {
        None => 0.0,
        Some(0) => f64::NAN,
        Some(ns) => bytes as f64 * 8.0 / secs(ns),
    }
}

/// One child queue of a scheduler.
struct ChildRow<'a> {
    link: &'a crate::net::link::Link,
    queue: u64,
    c: &'a crate::qdisc::child_stats::ChildStats,
}

pub(crate) fn ratio(num: u64, den: u64) -> f64 {
    if den > 0 {
        num as f64 / den as f64
    } else {
        0.0
    }
}

fn mean_ms(sum_ns: f64, n: u64) -> f64 {
    if n > 0 {
        ms(sum_ns / n as f64)
    } else {
        f64::NAN
    }
}

/// Build the tables. Each table's columns are declared once, with their values.
pub fn collect(sim: &Simulation) -> Results {
    // A finished run is measured to its end time, not to its last event.
    let now: Nanos = if sim.is_done() { sim.end } else { sim.now() };
    let window_start = sim.warmup.min(now);
    let window = (now - window_start).max(1);
    let per_s = move |bits: f64| bits / secs(window);
    let node = |i: u32| sim.nodes[i as usize].name.clone();
    let mut tables = Vec::new();

    let wall = sim.wall_time().as_secs_f64();
    tables.push(Table::from_rows(
        "summary",
        &[
            col("scenario", |_: &()| sim.name.clone()),
            col("seed", |_: &()| sim.seed),
            col("sim_time_s", |_: &()| secs(now)),
            col("wall_time_s", |_: &()| wall),
            col("events", |_: &()| sim.events.popped()),
            col("packets", |_: &()| sim.packets.created()),
            col("packet_hops", |_: &()| sim.hops),
            col("delivered", |_: &()| sim.delivered),
            col("dropped", |_: &()| sim.dropped),
            col("in_network", |_: &()| sim.in_network()),
            col("events_per_s", |_: &()| {
                if wall > 0.0 {
                    sim.events.popped() as f64 / wall
                } else {
                    f64::NAN
                }
            }),
            col("arena_slots", |_: &()| sim.packets.capacity() as u64),
        ],
        [()],
    ));

    let links = sim.links.iter().flat_map(|link| {
        let s = &link.stats;
        let mut busy = s.busy_ns;
        if let Some((_, started)) = link.tx {
            busy += now - started.max(s.window_start);
        }
        if let Some(m) = &link.access {
            // An access model's departures were counted whole when handed over; the
            // part after the end of the run is not in the window (utilisation ≤ 1).
            busy = busy.saturating_sub(m.busy_beyond(now));
        }
        let row = LinkRow {
            link,
            name: link.name.clone(),
            qdisc: link.qdisc.kind_name(),
            stats: s,
            busy,
        };
        let extra = link.access.iter().flat_map(|m| m.extra_queues());
        std::iter::once(row).chain(extra.map(|q| LinkRow {
            link,
            name: format!("{}.{}", link.name, q.suffix),
            qdisc: q.kind,
            stats: q.stats,
            busy: q.stats.busy_ns,
        }))
    });
    tables.push(Table::from_rows(
        "queues",
        &[
            col("link", |r: &LinkRow| r.name.clone()),
            col("qdisc", |r: &LinkRow| r.qdisc),
            col("from", |r: &LinkRow| node(r.link.from)),
            col("to", |r: &LinkRow| node(r.link.to)),
            col("rate_bps", |r: &LinkRow| r.link.rate_bps),
            col("sojourn_ms_mean", |r: &LinkRow| ms(r.stats.sojourn.mean())),
            col("sojourn_ms_p50", |r: &LinkRow| {
                ms(r.stats.sojourn.quantile(0.5))
            }),
            col("sojourn_ms_p95", |r: &LinkRow| {
                ms(r.stats.sojourn.quantile(0.95))
            }),
            col("sojourn_ms_p99", |r: &LinkRow| {
                ms(r.stats.sojourn.quantile(0.99))
            }),
            col("sojourn_ms_max", |r: &LinkRow| {
                millis(r.stats.sojourn.max())
            }),
            col("qlen_pkts_mean", |r: &LinkRow| r.stats.qlen_pkts.mean(now)),
            col("qlen_bytes_mean", |r: &LinkRow| {
                r.stats.qlen_bytes.mean(now)
            }),
            col("arrivals", |r: &LinkRow| r.stats.arrivals),
            col("enqueued", |r: &LinkRow| r.stats.enqueued),
            col("dequeued", |r: &LinkRow| r.stats.dequeued),
            col("drops", |r: &LinkRow| r.stats.qdisc_drops()),
            col("drops_overflow", |r: &LinkRow| r.stats.drops_overflow),
            col("drops_early", |r: &LinkRow| r.stats.drops_early),
            col("drops_forced", |r: &LinkRow| r.stats.drops_forced),
            col("drops_random", |r: &LinkRow| r.stats.drops_random),
            col("drops_outage", |r: &LinkRow| r.stats.drops_outage),
            col("marks", |r: &LinkRow| r.stats.marks),
            col("drop_rate", |r: &LinkRow| {
                let s = &r.stats;
                ratio(
                    s.qdisc_drops(),
                    s.arrivals - s.drops_random - s.drops_outage,
                )
            }),
            col("utilization", |r: &LinkRow| r.busy as f64 / window as f64),
            col("throughput_bps", |r: &LinkRow| {
                per_s(r.stats.tx_bytes as f64 * 8.0)
            }),
            col("throughput_bps_std", |r: &LinkRow| {
                r.stats.samples_at(now).sent_bps.std()
            }),
            col("qlen_pkts_std", |r: &LinkRow| {
                r.stats.samples_at(now).qlen_pkts.std()
            }),
            col("arrival_bps", |r: &LinkRow| {
                per_s(r.stats.arrival_bytes as f64 * 8.0)
            }),
            col("arrival_bps_std", |r: &LinkRow| {
                r.stats.samples_at(now).offered_bps.std()
            }),
        ],
        links,
    ));

    let groups = conn_groups(sim);
    let node_or_any = |i: u32| {
        if i == u32::MAX {
            "*".to_string()
        } else {
            node(i)
        }
    };
    tables.push(Table::from_rows(
        "flows",
        &[
            col("flow", |r: &FlowRow| r.id),
            col("app", |r: &FlowRow| {
                sim.entries[r.entry as usize].name.clone()
            }),
            col("kind", |r: &FlowRow| r.kind),
            col("src", |r: &FlowRow| node_or_any(r.src)),
            col("dst", |r: &FlowRow| node_or_any(r.dst)),
            col("cc", |r: &FlowRow| r.cc),
            col("packets_sent", |r: &FlowRow| r.s.packets_sent),
            col("packets_delivered", |r: &FlowRow| r.s.packets_delivered),
            col("packets_dropped", |r: &FlowRow| r.s.packets_dropped),
            col("bytes_sent", |r: &FlowRow| r.s.bytes_sent),
            col("bytes_delivered", |r: &FlowRow| r.s.bytes_delivered),
            col("goodput_bps", |r: &FlowRow| {
                active_rate(r.s.bytes_delivered, r.s.active_ns)
            }),
            col("goodput_window_bps", |r: &FlowRow| {
                per_s(r.s.bytes_delivered as f64 * 8.0)
            }),
            col("retransmits", |r: &FlowRow| r.s.retransmits),
            col("timeouts", |r: &FlowRow| r.s.timeouts),
            col("rtt_ms_mean", |r: &FlowRow| ms(r.s.rtt_mean)),
            col("owd_ms_mean", |r: &FlowRow| ms(r.s.owd_mean)),
            col("owd_ms_p50", |r: &FlowRow| ms(r.s.owd_p50)),
            col("owd_ms_p95", |r: &FlowRow| ms(r.s.owd_p95)),
            col("owd_ms_p99", |r: &FlowRow| ms(r.s.owd_p99)),
            // Packets dropped in the network over packets sent (in flight is not lost).
            col("loss_rate", |r: &FlowRow| {
                ratio(r.s.packets_dropped, r.s.packets_sent)
            }),
            col("completion_s", |r: &FlowRow| {
                r.s.completion.map(secs).unwrap_or(f64::NAN)
            }),
            col("transfers", |r: &FlowRow| r.s.transfers),
            col("ipdv_ms_mean", |r: &FlowRow| ms(r.s.ipdv_mean)),
        ],
        flow_rows(sim, &groups),
    ));

    tables.push(apps_table(sim, &per_s));
    if let Some(t) = app_flows_table(sim) {
        tables.push(t);
    }
    tables.extend(kind_tables(sim));
    // Opt-in (`page_rows = true` on a web entry): one row per page.
    let names: Vec<String> = sim.entries.iter().map(|e| e.name.clone()).collect();
    if let Some(t) = crate::app::web::pages_table(&sim.apps, &sim.app_entry, &names) {
        tables.push(t);
    }

    // Opt-in (`child_stats = true` on a scheduler): one row per child queue that saw
    // a packet, so a 1024-bucket FQ-CoDel lists only the buckets in use.
    if sim.links.iter().any(|l| l.qdisc.child_stats().is_some()) {
        let rows = sim.links.iter().flat_map(|link| {
            link.qdisc
                .child_stats()
                .unwrap_or(&[])
                .iter()
                .enumerate()
                .filter(|(_, c)| c.enqueued > 0 || c.drops > 0)
                .map(move |(i, c)| ChildRow {
                    link,
                    queue: i as u64,
                    c,
                })
        });
        tables.push(Table::from_rows(
            "child_queues",
            &[
                col("link", |r: &ChildRow| r.link.name.clone()),
                col("qdisc", |r: &ChildRow| r.link.qdisc.kind_name()),
                col("queue", |r: &ChildRow| r.queue),
                col("enqueued", |r: &ChildRow| r.c.enqueued),
                col("dequeued", |r: &ChildRow| r.c.dequeued),
                col("drops", |r: &ChildRow| r.c.drops),
                col("marks", |r: &ChildRow| r.c.marks),
                col("bytes", |r: &ChildRow| r.c.bytes),
                col("throughput_bps", |r: &ChildRow| {
                    per_s(r.c.bytes as f64 * 8.0)
                }),
                col("sojourn_ms_mean", |r: &ChildRow| {
                    mean_ms(r.c.sojourn_sum as f64, r.c.dequeued)
                }),
                col("sojourn_ms_max", |r: &ChildRow| millis(r.c.sojourn_max)),
            ],
            rows,
        ));
    }

    // Each access model's own tables, from the links that use it.
    let models: Vec<(&str, &AnyAccess)> = sim
        .links
        .iter()
        .filter_map(|l| Some((l.name.as_str(), l.access.as_deref()?)))
        .collect();
    for kind in access::KINDS {
        tables.extend((kind.tables)(&models, &per_s));
    }

    if let Some(series) = &sim.series {
        tables.push(Table::from_rows(
            "timeseries",
            &[
                col("time_ns", |r: &&crate::engine::SampleRow| r.time),
                col("link", |r: &&crate::engine::SampleRow| {
                    let link = &sim.links[r.link as usize];
                    match (r.queue, &link.access) {
                        (0, _) | (_, None) => link.name.clone(),
                        (q, Some(m)) => {
                            let suffix = m.extra_queue(q as usize - 1).map_or("", |x| x.suffix);
                            format!("{}.{suffix}", link.name)
                        }
                    }
                }),
                col("qlen_pkts", |r: &&crate::engine::SampleRow| r.qlen_pkts),
                col("qlen_bytes", |r: &&crate::engine::SampleRow| r.qlen_bytes),
                col("sojourn_ms", |r: &&crate::engine::SampleRow| {
                    millis(r.sojourn)
                }),
                col("rate_bps", |r: &&crate::engine::SampleRow| r.rate_bps),
                col("drop_prob", |r: &&crate::engine::SampleRow| r.drop_prob),
                col("vcap_bps", |r: &&crate::engine::SampleRow| r.vcap_bps),
                col("sent_bytes", |r: &&crate::engine::SampleRow| r.sent_bytes),
            ],
            &series.rows,
        ));
    }

    if let Some(log) = &sim.transfer_log {
        type R<'a> = &'a crate::engine::TransferRow;
        let name = |r: &R| sim.entries[r.entry as usize].name.clone();
        tables.push(Table::from_rows(
            "transfers",
            &[
                col("flow", |r: &R| r.flow as u64),
                col("app", name),
                col("start_s", |r: &R| r.start as f64 / 1e9),
                col("end_s", |r: &R| r.end as f64 / 1e9),
                col("bytes", |r: &R| r.bytes),
                col("completion_s", |r: &R| (r.end - r.start) as f64 / 1e9),
            ],
            &log.rows,
        ));
    }

    if let Some(series) = &sim.flow_series {
        type R<'a> = &'a crate::engine::FlowSampleRow;
        tables.push(Table::from_rows(
            "flow_series",
            &[
                col("time_ns", |r: &R| r.time),
                col("flow", |r: &R| r.flow as u64),
                col("bytes_delivered", |r: &R| r.bytes_delivered),
                col("packets_delivered", |r: &R| r.packets_delivered),
            ],
            &series.rows,
        ));
    }

    if let Some(series) = &sim.tcp_series {
        tables.push(Table::from_rows(
            "tcp",
            &[
                col("time_ns", |r: &&crate::engine::TcpSampleRow| r.time),
                col("flow", |r: &&crate::engine::TcpSampleRow| r.flow as u64),
                col("cwnd_bytes", |r: &&crate::engine::TcpSampleRow| r.cwnd),
                col("ssthresh_bytes", |r: &&crate::engine::TcpSampleRow| {
                    r.ssthresh
                }),
                col("srtt_ms", |r: &&crate::engine::TcpSampleRow| {
                    r.srtt.map(millis).unwrap_or(f64::NAN)
                }),
                col("bytes_in_flight", |r: &&crate::engine::TcpSampleRow| {
                    r.in_flight
                }),
            ],
            &series.rows,
        ));
    }

    if sim.sojourn_hist {
        // One histogram per queue: each link's, its discipline's named children's
        // (`LINK.NAME`, DualPI2's `LINK.L` and `LINK.C` with `child_stats`), and its
        // access model's own (`LINK.SUFFIX`, a DOCSIS upstream's `LINK.txq`).
        let hists = sim.links.iter().flat_map(|link| {
            let children = link.qdisc.child_sojourn().into_iter();
            let extra = link.access.iter().flat_map(|m| m.extra_queues());
            std::iter::once((link.name.clone(), &link.stats.sojourn))
                .chain(children.map(|(n, h)| (format!("{}.{n}", link.name), h)))
                .chain(extra.map(|q| (format!("{}.{}", link.name, q.suffix), &q.stats.sojourn)))
        });
        let rows = hists.flat_map(|(name, h)| h.buckets().map(move |b| (name.clone(), b)));
        tables.push(Table::from_rows(
            "sojourn_hist",
            &[
                col("link", |r: &(String, (Nanos, Nanos, u64))| r.0.clone()),
                col("sojourn_ms_low", |r: &(String, (Nanos, Nanos, u64))| {
                    millis(r.1 .0)
                }),
                col("sojourn_ms_high", |r: &(String, (Nanos, Nanos, u64))| {
                    millis(r.1 .1)
                }),
                col("packets", |r: &(String, (Nanos, Nanos, u64))| r.1 .2),
            ],
            rows,
        ));
    }

    if sim.owd_hist {
        // Per row of `flows`: a flow's, a released connection's, an entry's connections'.
        use std::borrow::Cow;
        let mut hists: Vec<(u64, u32, Cow<crate::measure::histogram::Histogram>)> = sim
            .flows
            .iter()
            .filter(|f| own_row(sim, f))
            .map(|f| (f.id as u64, f.entry, Cow::Borrowed(&f.stats.owd)))
            .collect();
        hists.extend(
            sim.flow_records
                .iter()
                .filter_map(|r| Some((r.id as u64, r.entry, Cow::Borrowed(r.owd.as_ref()?)))),
        );
        hists.extend(groups.iter().enumerate().filter_map(|(e, g)| {
            let g = g.as_ref()?;
            Some((g.first as u64, e as u32, Cow::Owned(g.stats.owd.clone())))
        }));
        hists.sort_by_key(|h| h.0);
        let rows = hists
            .iter()
            .flat_map(|(id, e, h)| h.buckets().map(move |b| (*id, *e, b)));
        type OwdRow = (u64, u32, (Nanos, Nanos, u64));
        tables.push(Table::from_rows(
            "owd_hist",
            &[
                col("flow", |r: &OwdRow| r.0),
                col("app", |r: &OwdRow| sim.entries[r.1 as usize].name.clone()),
                col("owd_ms_low", |r: &OwdRow| millis(r.2 .0)),
                col("owd_ms_high", |r: &OwdRow| millis(r.2 .1)),
                col("packets", |r: &OwdRow| r.2 .2),
            ],
            rows,
        ));
    }

    if let Some(log) = &sim.drop_log {
        tables.push(Table::from_rows(
            "drops",
            &[
                col("time_ns", |r: &&crate::engine::DropRecord| r.time),
                col("link", |r: &&crate::engine::DropRecord| {
                    sim.links[r.link as usize].name.clone()
                }),
                col("flow", |r: &&crate::engine::DropRecord| r.flow as u64),
                col("packet", |r: &&crate::engine::DropRecord| r.packet),
                col("size_bytes", |r: &&crate::engine::DropRecord| r.size as u64),
                col("reason", |r: &&crate::engine::DropRecord| r.reason.name()),
                col("at", |r: &&crate::engine::DropRecord| r.at.name()),
            ],
            log,
        ));
    }
    if !sim.warnings.is_empty() {
        tables.push(Table::from_rows(
            "warnings",
            &[col("message", |w: &&String| (*w).clone())],
            &sim.warnings,
        ));
    }
    Results { tables }
}

/// `apps`: one row per traffic entry, with its flows' totals and its kind's columns.
fn apps_table(sim: &Simulation, per_s: &dyn Fn(f64) -> f64) -> Table {
    let mut rows: Vec<EntryRow> = sim
        .entries
        .iter()
        .map(|entry| EntryRow {
            entry,
            flows: 0,
            bytes: 0,
            sent: 0,
            lost: 0,
            owd_sum: 0.0,
            owd_n: 0,
            active_from: None,
            active_to: None,
            extra: Vec::new(),
        })
        .collect();
    // Released connections count in their entry's totals (never PEP legs).
    for (r, t) in rows.iter_mut().zip(&sim.conn_totals) {
        r.flows += t.count;
        r.bytes += t.stats.bytes_delivered;
        r.sent += t.stats.packets_sent;
        r.lost += t.stats.packets_dropped;
        r.span(&t.stats);
        if t.stats.owd.count() > 0 {
            r.owd_sum += t.stats.owd.mean() * t.stats.owd.count() as f64;
            r.owd_n += t.stats.owd.count();
        }
    }
    for f in sim.flows.iter().filter(|f| f.id != u32::MAX) {
        let r = &mut rows[f.entry as usize];
        // A PEP-split connection counts once: as the app's flow, with the bytes the
        // terminal received (the server leg's bytes only reached the PEP).
        match f.pep {
            Some(crate::engine::PepLeg::Up { .. }) => r.flows += 1,
            Some(crate::engine::PepLeg::Down { .. }) => r.bytes += f.stats.bytes_delivered,
            None => {
                r.flows += 1;
                r.bytes += f.stats.bytes_delivered;
            }
        }
        r.sent += f.stats.packets_sent;
        r.lost += f.stats.packets_dropped;
        if f.stats.bytes_delivered > 0 {
            r.span(&f.stats);
        }
        if f.stats.owd.count() > 0 {
            r.owd_sum += f.stats.owd.mean() * f.stats.owd.count() as f64;
            r.owd_n += f.stats.owd.count();
        }
    }
    for (e, r) in rows.iter_mut().enumerate() {
        let mine: Vec<&crate::app::AnyApp> = sim
            .apps
            .iter()
            .zip(&sim.app_entry)
            .filter(|(_, &x)| x as usize == e)
            .map(|(a, _)| a)
            .collect();
        crate::app::AnyApp::report(&mine, &mut r.extra);
    }
    let mut t = Table::from_rows(
        "apps",
        &[
            col("app", |r: &&EntryRow| r.entry.name.clone()),
            col("kind", |r: &&EntryRow| r.entry.kind),
            col("flows", |r: &&EntryRow| r.flows),
            col("bytes_delivered", |r: &&EntryRow| r.bytes),
            col("goodput_bps", |r: &&EntryRow| {
                let span = r
                    .active_from
                    .zip(r.active_to)
                    .map(|(a, b)| b.saturating_sub(a));
                active_rate(r.bytes, span)
            }),
            col("goodput_window_bps", |r: &&EntryRow| {
                per_s(r.bytes as f64 * 8.0)
            }),
            col("owd_ms_mean", |r: &&EntryRow| mean_ms(r.owd_sum, r.owd_n)),
            col("loss_rate", |r: &&EntryRow| ratio(r.lost, r.sent)),
        ],
        &rows,
    );
    add_kind_columns(&mut t, rows.iter().map(|r| r.extra.as_slice()));
    t
}

/// `app_flows`: one row per flow of the kinds that report per-flow quality (e.g. each
/// direction of each `voip` call), with those kinds' columns; absent when none do.
fn app_flows_table(sim: &Simulation) -> Option<Table> {
    let mut rows: Vec<(u32, crate::app::FlowReport)> = Vec::new();
    let mut buf = Vec::new();
    for (a, &e) in sim.apps.iter().zip(&sim.app_entry) {
        a.report_flows(&mut buf);
        rows.extend(buf.drain(..).map(|r| (e, r)));
    }
    if rows.is_empty() {
        return None;
    }
    rows.sort_by_key(|r| r.1.flow);
    let mut t = Table::from_rows(
        "app_flows",
        &[
            col("flow", |r: &&(u32, crate::app::FlowReport)| r.1.flow as u64),
            col("app", |r: &&(u32, crate::app::FlowReport)| {
                sim.entries[r.0 as usize].name.clone()
            }),
            col("kind", |r: &&(u32, crate::app::FlowReport)| {
                sim.entries[r.0 as usize].kind
            }),
        ],
        &rows,
    );
    add_kind_columns(&mut t, rows.iter().map(|r| r.1.cols.as_slice()));
    Some(t)
}

/// Opt-in tables of the traffic kinds (`Application::tables`), one per name, rows of
/// all entries in entry order.
fn kind_tables(sim: &Simulation) -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    for (e, entry) in sim.entries.iter().enumerate() {
        let mine: Vec<&crate::app::AnyApp> = sim
            .apps
            .iter()
            .zip(&sim.app_entry)
            .filter(|(_, &x)| x as usize == e)
            .map(|(a, _)| a)
            .collect();
        let mut got = Vec::new();
        crate::app::AnyApp::tables(&mine, &entry.name, &mut got);
        for t in got {
            match out.iter_mut().find(|o| o.name == t.name) {
                Some(o) => o.append(t),
                None => out.push(t),
            }
        }
    }
    out
}

/// Append per-kind columns (the union of names, in first-seen order); a row whose kind
/// has no such column gets NaN (a count column becomes a float column then), or an
/// empty string in a text column.
fn add_kind_columns<'a>(t: &mut Table, rows: impl Iterator<Item = &'a [(&'static str, Val)]>) {
    use crate::output::table::Column;
    let rows: Vec<_> = rows.collect();
    let mut names: Vec<&'static str> = Vec::new();
    for r in &rows {
        for (n, _) in r.iter() {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    for name in names {
        let vals: Vec<Option<&Val>> = rows
            .iter()
            .map(|r| r.iter().find(|(n, _)| *n == name).map(|(_, v)| v))
            .collect();
        let col = if vals.iter().all(|v| matches!(v, Some(Val::S(_)) | None)) {
            // A text column (e.g. a voice flow's `direction`): empty in other kinds' rows.
            Column::Str(
                vals.iter()
                    .map(|v| match v {
                        Some(Val::S(x)) => x.clone(),
                        _ => String::new(),
                    })
                    .collect(),
            )
        } else if vals.iter().all(|v| matches!(v, Some(Val::U(_)))) {
            Column::U64(
                vals.iter()
                    .map(|v| match v {
                        Some(Val::U(x)) => *x,
                        _ => 0,
                    })
                    .collect(),
            )
        } else {
            Column::F64(
                vals.iter()
                    .map(|v| match v {
                        Some(Val::F(x)) => *x,
                        Some(Val::U(x)) => *x as f64,
                        Some(Val::I(x)) => *x as f64,
                        _ => f64::NAN,
                    })
                    .collect(),
            )
        };
        t.columns.push((name.to_string(), col));
    }
}
