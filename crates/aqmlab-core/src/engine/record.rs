//! Measurement: the opt-in time series and drop log, warm-up, end-of-run state.
use super::*;
pub use crate::measure::drop_log::{Cause, DropRecord};

/// One row of the opt-in per-flow TCP time series.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSampleRow {
    pub time: Nanos,
    pub flow: u32,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// None until the first RTT sample.
    pub srtt: Option<Nanos>,
    pub in_flight: u64,
}

pub struct TcpSeries {
    pub interval: Nanos,
    pub rows: Vec<TcpSampleRow>,
}

/// One row of the opt-in per-flow delivery time series (`output.flow_timeseries`).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSampleRow {
    pub time: Nanos,
    pub flow: u32,
    /// The flow's `bytes_delivered` and `packets_delivered` so far (restarted at the
    /// warm-up, like the `flows` counters).
    pub bytes_delivered: u64,
    pub packets_delivered: u64,
}

pub struct FlowSeries {
    pub interval: Nanos,
    pub rows: Vec<FlowSampleRow>,
}

/// One finite TCP transfer (`output.transfers`): from the application's write of its
/// bytes to the acknowledgement of the last one (RFC 7928 §2.1 completion time).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRow {
    pub flow: u32,
    pub entry: u32,
    pub start: Nanos,
    pub end: Nanos,
    pub bytes: u64,
}

/// The transfers of a run: those written and not yet acknowledged (by flow id: the
/// earliest write and the bytes so far; writes before a completion end together,
/// since the sender completes when everything written is acknowledged) and the rows.
#[derive(Default)]
pub struct TransferLog {
    pub pending: std::collections::HashMap<u32, (Nanos, u64)>,
    pub rows: Vec<TransferRow>,
}

impl TransferLog {
    pub fn written(&mut self, flow: u32, now: Nanos, bytes: u64) {
        let e = self.pending.entry(flow).or_insert((now, 0));
        e.1 += bytes;
    }

    pub fn done(&mut self, flow: u32, entry: u32, now: Nanos) {
        if let Some((start, bytes)) = self.pending.remove(&flow) {
            self.rows.push(TransferRow {
                flow,
                entry,
                start,
                end: now,
                bytes,
            });
        }
    }
}

/// One row of the opt-in time series.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleRow {
    pub time: Nanos,
    pub link: u32,
    pub qlen_pkts: u64,
    pub qlen_bytes: u64,
    pub sojourn: Nanos,
    pub rate_bps: u64,
    pub drop_prob: f64,
    /// The discipline's virtual capacity, bit/s (NaN for disciplines without one).
    pub vcap_bps: f64,
    /// Bytes the link has started sending since the start of the run (cumulative, the
    /// warm-up included): differences between samples give the link's throughput and
    /// utilisation per interval.
    pub sent_bytes: u64,
    /// Which queue of the link: 0 its qdisc, n its access model's own queue n − 1 (a
    /// DOCSIS upstream's transmit queue, row `LINK.txq`).
    pub queue: u8,
}

pub struct Series {
    pub interval: Nanos,
    pub links: Vec<u32>,
    pub rows: Vec<SampleRow>,
}

impl Simulation {
    pub(super) fn log_drop(&mut self, l: u32, p: PacketId, reason: Cause, at: Stage) {
        if let Some(log) = &mut self.drop_log {
            let pk = &self.packets[p];
            log.push(DropRecord {
                time: self.events.now(),
                link: l,
                flow: pk.flow,
                packet: pk.uid,
                size: pk.size,
                reason,
                at,
            });
        }
    }

    pub(super) fn on_sample(&mut self) {
        let now = self.now();
        let Some(series) = &mut self.series else {
            return;
        };
        for &l in &series.links {
            let link = &self.links[l as usize];
            series.rows.push(SampleRow {
                time: now,
                link: l,
                qlen_pkts: link.qdisc.len_packets() as u64,
                qlen_bytes: link.qdisc.len_bytes(),
                sojourn: link.stats.last_sojourn,
                rate_bps: link.rate_bps,
                drop_prob: link.qdisc.drop_prob().unwrap_or(f64::NAN),
                vcap_bps: link.qdisc.virtual_capacity_bps().unwrap_or(f64::NAN),
                sent_bytes: link.sent_bytes,
                queue: 0,
            });
            for (i, q) in link
                .access
                .iter()
                .flat_map(|m| m.extra_queues())
                .enumerate()
            {
                series.rows.push(SampleRow {
                    time: now,
                    link: l,
                    qlen_pkts: q.backlog.0,
                    qlen_bytes: q.backlog.1,
                    sojourn: q.stats.last_sojourn,
                    rate_bps: link.rate_bps,
                    drop_prob: f64::NAN,
                    vcap_bps: f64::NAN,
                    sent_bytes: link.sent_bytes,
                    queue: i as u8 + 1,
                });
            }
        }
        let next = now + series.interval;
        if next <= self.end {
            self.events.schedule(next, Event::Sample);
        }
    }

    /// Sample every flow made at build time (connections that apps open while running
    /// come and go, and are not sampled).
    pub(super) fn on_flow_sample(&mut self) {
        let now = self.now();
        let Some(series) = &mut self.flow_series else {
            return;
        };
        for f in &self.flows[..self.static_flows as usize] {
            series.rows.push(FlowSampleRow {
                time: now,
                flow: f.id,
                bytes_delivered: f.stats.bytes_delivered,
                packets_delivered: f.stats.packets_delivered,
            });
        }
        let next = now + series.interval;
        if next <= self.end {
            self.events.schedule(next, Event::FlowSample);
        }
    }

    pub(super) fn on_warmup_end(&mut self) {
        let now = self.now();
        self.settle_links(self.events.key());
        for link in &mut self.links {
            link.stats.restart(now);
            link.qdisc.restart_stats();
            if let Some(m) = &mut link.access {
                m.restart_stats(now);
                // The wire time of packets handed over before the warm-up that falls
                // inside the window (the link counts a packet when it is handed over).
                link.stats.busy_ns += m.busy_beyond(now);
            }
        }
        for f in &mut self.flows {
            f.stats = FlowStats::default();
            // Goodput in the window counts the data first sent in it.
            if let Some((s, _)) = f.tcp {
                f.stats.count_from = match &self.tcp[s as usize] {
                    TcpEndpoint::Sender(x) => x.snd_nxt,
                    TcpEndpoint::Ns2Sender(x) => (x.maxseq + 1).max(0) as u64,
                    _ => 0,
                };
            }
        }
        self.restart_conn_stats();
    }

    /// Packets still inside the network (queued, being sent, propagating).
    pub fn in_network(&self) -> u64 {
        self.links
            .iter()
            .map(|l| {
                l.qdisc.len_packets() as u64
                    + (l.tx.is_some() && !l.tx_in_flight) as u64
                    + l.in_flight.len() as u64
                    + l.access.as_ref().map_or(0, |m| m.held())
            })
            .sum()
    }

    /// Flush pcap files; returns the first I/O error.
    pub fn flush_outputs(&mut self) -> std::io::Result<()> {
        for l in &mut self.links {
            if let Some(w) = &mut l.pcap {
                w.flush()?;
            }
        }
        Ok(())
    }
}
