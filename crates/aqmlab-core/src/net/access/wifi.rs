//! A Wi-Fi-like aggregating link (access model `wifi`): one IEEE 802.11 EDCA station (an
//! access point's downlink, or a client's uplink) alone on its channel, serving its queue
//! in A-MPDU bursts.
//!
//! The link's queue discipline is the station's transmit queue (the feed). The medium
//! alternates between contention and frame exchanges (EDCA, IEEE 802.11-2020 §10.23.2;
//! §10.22.2 in 802.11-2016):
//! 1. contention: after each TXOP the station draws a backoff of `b` slots, uniform in
//!    [0, CWmin], and may start its next TXOP `AIFS + b·slot` after the medium went
//!    idle, AIFS = SIFS + AIFSN·slot. The countdown runs even with an empty queue
//!    (post-backoff), so a packet reaching an empty station whose backoff has run out is
//!    sent at the next slot boundary (EDCA acts at slot boundaries, 802.11-2016
//!    §10.22.2.4, as ns-3 `ChannelAccessManager::RequestAccess`,
//!    channel-access-manager.cc:585-598);
//! 2. a frame exchange: at the TXOP's start the station takes packets from the feed into
//!    one A-MPDU while it stays within every limit: `max_mpdus` (the Block Ack window),
//!    `max_ampdu_size` bytes, `max_ppdu_duration` (aPPDUMaxTime) and, when `txop_limit`
//!    is not 0, the TXOP: the PPDU, a SIFS and the Block Ack must end inside it. The PPDU
//!    lasts `preamble` + the data field, whole OFDM symbols of `symbol` carrying
//!    SERVICE (16 bits) + PSDU + tail (6 bits) at the PHY rate, which is the link's `rate`
//!    (the TXTIME of a VHT PPDU, clause 21). Each MPDU adds `mpdu_overhead`
//!    bytes (A-MPDU delimiter, QoS MAC header, LLC/SNAP, FCS) and is padded to 4 bytes
//!    except the last (the A-MPDU format, 802.11-2016 §9.7). The receiver answers after SIFS with a
//!    Block Ack (`block_ack`);
//! 3. with a TXOP limit, the station sends a further A-MPDU SIFS after the Block Ack if
//!    it has packets and one MPDU's exchange still fits (a multi-frame TXOP); with
//!    `txop_limit = 0` (AC_BE's default) a TXOP holds one A-MPDU.
//!
//! Every MPDU of an A-MPDU departs when the PPDU ends: the receiver's PHY hands the
//! PSDU up once it is received and its reorder buffer releases the in-order MPDUs
//! together. A packet taken from the feed that does not fit the A-MPDU being built waits
//! in the station (`held`) and opens the next one, as Linux `sch_tbf` holds a packet it
//! peeked (`qdisc_peek_dequeued`).
//!
//! Simplifications (docs/access/wifi.md): no other stations, so no collisions, no
//! retransmissions and no CW doubling (CWmax is never used, so it is not a parameter);
//! no frame errors; no A-MSDU (ns-3's default `BE_MaxAmsduSize` is 0); no RTS/CTS; a
//! single MPDU is also Block-Acked (a real single MPDU gets a shorter Normal Ack).
//!
//! Defaults: EDCA per access category from 802.11-2020 Table 9-155 (aCWmin 15, aCWmax
//! 1023, as ns-3 `src/wifi/model/wifi-mac.cc:832-868`); slot 9 µs and SIFS 16 µs of the
//! 5 GHz OFDM PHY (802.11-2016 Table 17-21, as ns-3 `wifi-phy.cc:876` cites it; `wifi-standard-constants.h:34,38`); a VHT SU
//! preamble with one spatial stream, 40 µs; the 64-MPDU Block Ack window of HT/VHT
//! (ns-3 `WifiMac::GetMaxBaBufferSize`); ns-3's `BE_MaxAmpduSize` of 65 535 bytes
//! (`wifi-mac.cc:204-210`); aPPDUMaxTime 5.484 ms (ns-3
//! `wifi-phy-common.cc:152-170`).
//!
//! The link's busy time counts, as on every link, each packet's bytes at the PHY rate;
//! the medium's whole airtime (preambles, headers, SIFS, Block Acks) is the `wifi`
//! table's `airtime_frac`.

use super::{Access, AnyAccess, Kind, LinkInfo};
use crate::measure::link_stats::LinkStats;
use crate::net::packet::PacketId;
use crate::output::table::{col, Table};
use crate::qdisc::{Discipline, Qdisc, QdiscCtx};
use crate::results::ratio;
use crate::scenario::error::Result;
use crate::scenario::params::{param, KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{tx_time, Nanos, NS_PER_S, NS_PER_US};

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "wifi",
        summary: "IEEE 802.11 EDCA station alone on its channel: backoff, then the queue in A-MPDU bursts bounded by the TXOP, A-MPDU and Block Ack limits",
        source: "IEEE 802.11-2020 §10.23.2 (EDCA), Table 9-155, clause 21 (VHT PPDU TXTIME); ns-3 src/wifi (wifi-mac.cc); docs/access/wifi.md",
        params: PARAMS,
    },
    build,
    tables,
};

/// The parameter table's keys (docs/access/wifi.md, "Parameters").
pub const PARAMS: &[ParamDoc] = &[
    param("access_category", "string", "be", "EDCA access category (bk, be, vi, vo): the defaults of aifsn, cw_min and txop_limit (802.11-2020 Table 9-155)"),
    param("aifsn", "int", "by category: 7, 3, 2, 2", "AIFSN: AIFS = sifs + aifsn * slot, 1-15"),
    param("cw_min", "int", "by category: 15, 15, 7, 3", "CWmin: the backoff is uniform in [0, cw_min] slots; 2^k - 1, up to 32767"),
    param("txop_limit", "duration", "by category: 0, 0, 4.096ms, 2.08ms", "TXOP limit; 0: one A-MPDU per channel access"),
    param("slot", "duration", "9us", "slot time (5 GHz OFDM, Table 17-21)"),
    param("sifs", "duration", "16us", "SIFS (5 GHz OFDM, Table 17-21)"),
    param("preamble", "duration", "40us", "PHY preamble and headers before the data field (VHT SU, one stream)"),
    param("symbol", "duration", "4us", "OFDM symbol of the data field (0.8 us guard interval)"),
    param("block_ack", "duration", "32us", "Block Ack frame: 32 bytes at 24 Mbit/s legacy OFDM"),
    param("max_mpdus", "int", "64", "MPDUs per A-MPDU (the Block Ack window: 64 HT/VHT, 256 HE), 1-1024"),
    param("max_ampdu_size", "size", "65535B", "A-MPDU length limit (ns-3 BE_MaxAmpduSize; VHT allows 1048575B)"),
    param("max_ppdu_duration", "duration", "5.484ms", "aPPDUMaxTime of HT/VHT/HE PPDUs"),
    param("mpdu_overhead", "size", "42B", "bytes added to each packet: delimiter 4, QoS MAC header 26, LLC/SNAP 8, FCS 4"),
];

/// An EDCA access category's defaults: (name, AIFSN, CWmin, TXOP limit) for aCWmin 15
/// (802.11-2020 Table 9-155, PHYs other than DSSS/HR-DSSS).
const CATEGORIES: &[(&str, u64, u64, Nanos)] = &[
    ("bk", 7, 15, 0),
    ("be", 3, 15, 0),
    ("vi", 2, 7, 4_096 * NS_PER_US),
    ("vo", 2, 3, 2_080 * NS_PER_US),
];

#[derive(Clone, Debug, PartialEq)]
pub struct WifiConfig {
    pub aifsn: u64,
    pub cw_min: u64,
    /// 0: one A-MPDU per TXOP.
    pub txop_limit: Nanos,
    pub slot: Nanos,
    pub sifs: Nanos,
    pub preamble: Nanos,
    pub symbol: Nanos,
    pub block_ack: Nanos,
    pub max_mpdus: u64,
    pub max_ampdu_size: u64,
    pub max_ppdu: Nanos,
    pub mpdu_overhead: u64,
}

impl WifiConfig {
    /// Read the parameter table `p` for a link of PHY rate `rate_bps` and MTU `mtu`.
    pub fn read(p: &mut Params, rate_bps: u64, mtu: u32) -> Result<Self> {
        let ac = p.choice_or("access_category", "be", &["bk", "be", "vi", "vo"])?;
        let &(_, aifsn, cw_min, txop) = CATEGORIES.iter().find(|c| c.0 == ac).unwrap();
        let cfg = WifiConfig {
            aifsn: p.u64_or("aifsn", aifsn, 1, 15)?,
            cw_min: p.u64_or("cw_min", cw_min, 0, 32_767)?,
            txop_limit: p.duration_or("txop_limit", txop)?,
            slot: p.positive_duration_or("slot", 9 * NS_PER_US)?,
            sifs: p.positive_duration_or("sifs", 16 * NS_PER_US)?,
            preamble: p.duration_or("preamble", 40 * NS_PER_US)?,
            symbol: p.positive_duration_or("symbol", 4 * NS_PER_US)?,
            block_ack: p.duration_or("block_ack", 32 * NS_PER_US)?,
            max_mpdus: p.u64_or("max_mpdus", 64, 1, 1024)?,
            max_ampdu_size: p.size_or("max_ampdu_size", 65_535)?,
            max_ppdu: p.positive_duration_or("max_ppdu_duration", 5_484 * NS_PER_US)?,
            mpdu_overhead: p.size_or("mpdu_overhead", 42)?,
        };
        if !(cfg.cw_min + 1).is_power_of_two() {
            return Err(p.error(
                "cw_min",
                format!("{}: expected 2^k - 1 (0, 1, 3, 7, 15, ...)", cfg.cw_min),
            ));
        }
        let mpdu = mtu as u64 + cfg.mpdu_overhead;
        if cfg.max_ampdu_size < mpdu {
            return Err(p.error(
                "max_ampdu_size",
                format!(
                    "{}B: expected at least one MTU-sized MPDU ({mtu}B + mpdu_overhead = {mpdu}B)",
                    cfg.max_ampdu_size
                ),
            ));
        }
        let one = cfg.ppdu_time(mpdu, rate_bps);
        if cfg.max_ppdu < one {
            return Err(p.error(
                "max_ppdu_duration",
                format!(
                    "{}ns: expected at least one MTU-sized MPDU's PPDU ({one}ns at the link rate)",
                    cfg.max_ppdu
                ),
            ));
        }
        Ok(cfg)
    }

    /// AIFS = SIFS + AIFSN slots.
    pub fn aifs(&self) -> Nanos {
        self.sifs + self.aifsn * self.slot
    }

    /// The PPDU carrying a PSDU of `psdu` bytes: the preamble, then whole symbols for
    /// SERVICE (16 bits), the PSDU and the tail (6 bits) at `rate_bps`.
    pub fn ppdu_time(&self, psdu: u64, rate_bps: u64) -> Nanos {
        let bits = 16 + 8 * psdu as u128 + 6;
        let symbols = (bits * NS_PER_S as u128).div_ceil(rate_bps as u128 * self.symbol as u128);
        self.preamble + symbols as Nanos * self.symbol
    }

    /// The PSDU length after adding a packet of `size` bytes to an A-MPDU whose earlier
    /// subframes take `padded` bytes.
    fn psdu_with(&self, padded: u64, size: u64) -> u64 {
        padded + size + self.mpdu_overhead
    }

    /// How many MTU-sized MPDUs one A-MPDU carries within `budget` (at least one).
    fn mtus_fitting(&self, mtu: u64, budget: Nanos, rate_bps: u64) -> u64 {
        let sub = mtu + self.mpdu_overhead;
        let mut n = 1;
        while n < self.max_mpdus {
            let len = n * sub.next_multiple_of(4) + sub;
            if len > self.max_ampdu_size || self.ppdu_time(len, rate_bps) > budget {
                break;
            }
            n += 1;
        }
        n
    }

    /// The saturation throughput with MTU-sized packets: (MPDUs per TXOP, bit/s). A
    /// cycle is AIFS, the mean backoff (cw_min / 2 slots) and the TXOP's exchanges.
    pub fn saturation(&self, mtu: u64, rate_bps: u64) -> (u64, f64) {
        let sub = mtu + self.mpdu_overhead;
        let ba = self.sifs + self.block_ack;
        let (mut t, mut mpdus) = (0, 0);
        loop {
            let budget = if self.txop_limit > 0 {
                self.txop_limit.saturating_sub(t + ba).min(self.max_ppdu)
            } else {
                self.max_ppdu
            };
            let n = self.mtus_fitting(mtu, budget, rate_bps);
            let ppdu = self.ppdu_time((n - 1) * sub.next_multiple_of(4) + sub, rate_bps);
            if t > 0 && ppdu > budget {
                break;
            }
            mpdus += n;
            t += ppdu + ba;
            if self.txop_limit == 0 {
                break;
            }
            t += self.sifs;
        }
        if self.txop_limit > 0 {
            t -= self.sifs;
        }
        let cycle = (self.aifs() + t) as f64 + self.cw_min as f64 / 2.0 * self.slot as f64;
        (mpdus, (mpdus * mtu * 8) as f64 * NS_PER_S as f64 / cycle)
    }
}

/// Why an A-MPDU closed: the feed had no packet, or the next packet would break a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Close {
    Queue,
    Mpdus,
    Bytes,
    Time,
}

/// The station's counters (the `wifi` table).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WifiStats {
    pub txops: u64,
    pub ppdus: u64,
    pub mpdus: u64,
    /// A-MPDUs closed by each cause, indexed by `Close as usize`.
    pub closed: [u64; 4],
    /// The largest A-MPDU, in MPDUs.
    pub max_ampdu: u64,
    /// Medium time of the exchanges: PPDUs, SIFS and Block Acks.
    pub airtime: Nanos,
    pub backoff_slots: u64,
}

/// What the pending timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// The backoff ends: start a TXOP.
    Access,
    /// SIFS after a Block Ack inside a TXOP ending at `txop_end`: send another A-MPDU if
    /// one fits.
    Gap { txop_end: Nanos },
}

pub struct Wifi {
    pub config: WifiConfig,
    rng: Rng,
    /// A packet taken from the feed that did not fit the last A-MPDU: it opens the next.
    slot: Option<PacketId>,
    /// The slot grid's origin: the end of the last frame exchange plus AIFS.
    grid: Nanos,
    /// The earliest start of the next TXOP: `grid` plus the drawn backoff slots.
    ready_at: Nanos,
    timer: Option<(Nanos, Wait)>,
    departures: Vec<(Nanos, PacketId)>,
    /// The last PPDU's data field start and the busy time the link counted for its
    /// packets (placed from that start), for `busy_beyond`.
    last_data: (Nanos, Nanos),
    pub stats: WifiStats,
    /// Saturation MPDUs per TXOP and throughput (bit/s) with MTU-sized packets.
    pub saturation: (u64, f64),
}

fn build(p: &mut Params, link: LinkInfo) -> Result<AnyAccess> {
    let cfg = WifiConfig::read(p, link.channel_rate("wifi")?, link.mtu)?;
    Ok(Wifi::new(cfg, link.rate_bps, link.mtu, link.rng).into())
}

impl Wifi {
    pub fn new(config: WifiConfig, rate_bps: u64, mtu: u32, rng: Rng) -> Self {
        let saturation = config.saturation(mtu as u64, rate_bps);
        Wifi {
            departures: Vec::with_capacity(config.max_mpdus.min(1024) as usize),
            config,
            rng,
            slot: None,
            grid: 0,
            ready_at: 0,
            timer: None,
            last_data: (0, 0),
            stats: WifiStats::default(),
            saturation,
        }
    }

    fn has_work(&self, feed: &Qdisc) -> bool {
        self.slot.is_some() || feed.len_packets() > 0
    }

    /// When a station that has a packet at `now` may start a TXOP: when its backoff
    /// ends, or, if it already has, at the next slot boundary.
    fn access_at(&self, now: Nanos) -> Nanos {
        if now <= self.ready_at {
            return self.ready_at;
        }
        let slot = self.config.slot;
        self.grid + (now - self.grid).div_ceil(slot) * slot
    }

    /// The next packet for the A-MPDU: the one held back, else the feed's next.
    fn next_packet(
        &mut self,
        feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        stats: &mut LinkStats,
    ) -> Option<PacketId> {
        if let Some(p) = self.slot.take() {
            return Some(p);
        }
        let p = feed.dequeue(ctx)?;
        if ctx.packets[p].enqueued >= stats.window_start {
            stats.dequeued += 1;
        }
        Some(p)
    }

    /// Build and send one A-MPDU from `ctx.now`, inside the TXOP ending at `txop_end`
    /// (None: no limit). The `first` A-MPDU of a TXOP takes its first packet whatever its
    /// size (a lone MPDU may exceed the TXOP limit); a later one sends nothing (false) if
    /// no packet fits.
    fn send_ampdu(
        &mut self,
        first: bool,
        txop_end: Option<Nanos>,
        feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        stats: &mut LinkStats,
        rate_bps: u64,
    ) -> bool {
        let cfg = &self.config;
        let start = ctx.now;
        let after = cfg.sifs + cfg.block_ack;
        let budget = match txop_end {
            Some(end) => end.saturating_sub(start + after).min(cfg.max_ppdu),
            None => cfg.max_ppdu,
        };
        let from = self.departures.len();
        let (mut n, mut padded, mut psdu) = (0u64, 0u64, 0u64);
        let close = loop {
            if n == self.config.max_mpdus {
                break Close::Mpdus;
            }
            let Some(p) = self.next_packet(feed, ctx, stats) else {
                break Close::Queue;
            };
            let cfg = &self.config;
            let (size, enqueued) = (ctx.packets[p].size as u64, ctx.packets[p].enqueued);
            let len = cfg.psdu_with(padded, size);
            let bytes_ok = len <= cfg.max_ampdu_size;
            let fits = bytes_ok && cfg.ppdu_time(len, rate_bps) <= budget;
            let lone = first && n == 0;
            if !(fits || lone) {
                self.slot = Some(p);
                break if bytes_ok { Close::Time } else { Close::Bytes };
            }
            // It leaves the feed's first stage for the air.
            let sojourn = start - enqueued;
            if enqueued >= stats.window_start {
                stats.sojourn.record(sojourn);
            }
            stats.last_sojourn = sojourn;
            self.departures.push((0, p));
            n += 1;
            psdu = len;
            padded += (size + cfg.mpdu_overhead).next_multiple_of(4);
        };
        if n == 0 {
            return false;
        }
        let cfg = &self.config;
        let end = start + cfg.ppdu_time(psdu, rate_bps);
        let mut counted = 0;
        for d in &mut self.departures[from..] {
            d.0 = end;
            counted += tx_time(ctx.packets[d.1].size, rate_bps);
        }
        self.last_data = (start + cfg.preamble, counted);
        let s = &mut self.stats;
        s.ppdus += 1;
        s.mpdus += n;
        s.closed[close as usize] += 1;
        s.max_ampdu = s.max_ampdu.max(n);
        s.airtime += end + after - start;
        let exchange_end = end + after;
        match txop_end {
            Some(txop_end) => self.timer = Some((exchange_end + cfg.sifs, Wait::Gap { txop_end })),
            None => self.end_txop(exchange_end, feed),
        }
        true
    }

    /// The TXOP ended at `at` (the last Block Ack's end): draw the next backoff.
    fn end_txop(&mut self, at: Nanos, feed: &Qdisc) {
        let b = self.rng.below(self.config.cw_min + 1);
        self.stats.backoff_slots += b;
        self.grid = at + self.config.aifs();
        self.ready_at = self.grid + b * self.config.slot;
        self.timer = self.has_work(feed).then_some((self.ready_at, Wait::Access));
    }
}

impl Access for Wifi {
    /// The saturation throughput with MTU-sized packets.
    fn feed_rate_bps(&self) -> u64 {
        self.saturation.1 as u64
    }

    fn pull(
        &mut self,
        feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        stats: &mut LinkStats,
        channel_bps: u64,
    ) {
        if self.timer.is_some() || !self.has_work(feed) {
            return;
        }
        let at = self.access_at(ctx.now);
        if at > ctx.now {
            self.timer = Some((at, Wait::Access));
            return;
        }
        let txop_end = (self.config.txop_limit > 0).then(|| ctx.now + self.config.txop_limit);
        if self.send_ampdu(true, txop_end, feed, ctx, stats, channel_bps) {
            self.stats.txops += 1;
        }
    }

    fn on_timer(
        &mut self,
        feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        stats: &mut LinkStats,
        channel_bps: u64,
    ) {
        match self.timer.take() {
            Some((_, Wait::Access)) => self.pull(feed, ctx, stats, channel_bps),
            Some((at, Wait::Gap { txop_end })) => {
                let sent = self.send_ampdu(false, Some(txop_end), feed, ctx, stats, channel_bps);
                if !sent {
                    self.end_txop(at - self.config.sifs, feed);
                }
            }
            None => {}
        }
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.timer.map(|(t, _)| t)
    }

    fn departures(&mut self) -> std::vec::Drain<'_, (Nanos, PacketId)> {
        self.departures.drain(..)
    }

    /// The last A-MPDU's counted bytes, placed from its data field's start.
    fn busy_beyond(&self, t: Nanos) -> Nanos {
        let (start, counted) = self.last_data;
        (start + counted).saturating_sub(t.max(start))
    }

    /// The packet held back for the next A-MPDU.
    fn held(&self) -> u64 {
        self.slot.is_some() as u64
    }

    fn restart_stats(&mut self, _now: Nanos) {
        self.stats = WifiStats::default();
    }
}

type Row<'a> = (&'a str, &'a Wifi);

/// The `wifi` table: one row per wifi link (docs/output.md, "wifi").
fn tables(links: &[(&str, &AnyAccess)], per_s: &dyn Fn(f64) -> f64) -> Vec<Table> {
    let rows: Vec<Row> = links
        .iter()
        .filter_map(|&(name, m)| Some((name, m.try_into().ok()?)))
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    let closed = |c: Close| move |r: &&Row| r.1.stats.closed[c as usize];
    let table = Table::from_rows(
        "wifi",
        &[
            col("link", |r: &&Row| r.0.to_string()),
            col("txops", |r: &&Row| r.1.stats.txops),
            col("ampdus", |r: &&Row| r.1.stats.ppdus),
            col("mpdus", |r: &&Row| r.1.stats.mpdus),
            col("mpdus_per_ampdu", |r: &&Row| {
                ratio(r.1.stats.mpdus, r.1.stats.ppdus)
            }),
            col("max_ampdu", |r: &&Row| r.1.stats.max_ampdu),
            col("closed_queue", closed(Close::Queue)),
            col("closed_mpdus", closed(Close::Mpdus)),
            col("closed_bytes", closed(Close::Bytes)),
            col("closed_time", closed(Close::Time)),
            col("backoff_slots_mean", |r: &&Row| {
                ratio(r.1.stats.backoff_slots, r.1.stats.txops)
            }),
            col("airtime_frac", |r: &&Row| {
                per_s(r.1.stats.airtime as f64) / NS_PER_S as f64
            }),
            col("saturation_bps", |r: &&Row| r.1.saturation.1),
            col("saturation_mpdus", |r: &&Row| r.1.saturation.0),
        ],
        &rows,
    );
    vec![table]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;
    use crate::scenario::bdp::BaseRtt;
    use serde_json::{json, Map, Value};

    const RATE: u64 = 65_000_000; // VHT MCS 7, 20 MHz, 1 stream, 0.8 us GI: 260 bits/symbol
    const US: Nanos = NS_PER_US;

    fn config(extra: Value) -> WifiConfig {
        let map: Map<String, Value> = extra.as_object().cloned().unwrap_or_default();
        let mut p = Params::new("m".to_string(), &map, &[]);
        let c = WifiConfig::read(&mut p, RATE, 1500).unwrap();
        p.finish("wifi").unwrap();
        c
    }

    struct T {
        h: Harness,
        feed: Qdisc,
        stats: LinkStats,
        wifi: Wifi,
        /// (departure time, packet) in the order handed over.
        out: Vec<(Nanos, PacketId)>,
    }

    impl T {
        fn new(extra: Value, rate: u64) -> T {
            let mut h = Harness::new();
            h.rate_bps = rate;
            let info = crate::qdisc::LinkInfo {
                rate_bps: rate,
                mtu: 1500,
                delay: 0,
                base_rtt: BaseRtt::Unknown,
            };
            let feed =
                crate::qdisc::build(&json!({"kind": "pfifo", "limit": "1000pkt"}), "q", &info)
                    .unwrap();
            let map: Map<String, Value> = extra.as_object().cloned().unwrap_or_default();
            let mut p = Params::new("m".to_string(), &map, &[]);
            let cfg = WifiConfig::read(&mut p, rate, 1500).unwrap();
            let wifi = Wifi::new(cfg, rate, 1500, Rng::stream(7, "w"));
            T {
                h,
                feed,
                stats: LinkStats::default(),
                wifi,
                out: Vec::new(),
            }
        }

        fn arrive(&mut self, now: Nanos, size: u32) -> PacketId {
            let p = self.h.packet(0, size);
            self.h.packets[p].enqueued = now;
            let rate = self.h.rate_bps;
            let mut ctx = self.h.ctx(now);
            assert!(self.feed.enqueue(p, &mut ctx));
            self.wifi
                .pull(&mut self.feed, &mut ctx, &mut self.stats, rate);
            self.out.extend(self.wifi.departures());
            p
        }

        /// Run the model's timers up to `until`.
        fn run_to(&mut self, until: Nanos) {
            while let Some(t) = self.wifi.next_timer().filter(|&t| t <= until) {
                let rate = self.h.rate_bps;
                let mut ctx = self.h.ctx(t);
                self.wifi
                    .on_timer(&mut self.feed, &mut ctx, &mut self.stats, rate);
                self.out.extend(self.wifi.departures());
            }
        }
    }

    /// The backoff draws of the test's stream `w` (seed 7) with CWmin 15.
    fn draws(n: usize) -> Vec<u64> {
        let mut r = Rng::stream(7, "w");
        (0..n).map(|_| r.below(16)).collect()
    }

    #[test]
    fn defaults_follow_the_edca_table() {
        let be = config(json!({}));
        assert_eq!((be.aifsn, be.cw_min, be.txop_limit), (3, 15, 0));
        assert_eq!(be.aifs(), 43 * US); // 16 + 3 * 9
        let vi = config(json!({"access_category": "vi"}));
        assert_eq!((vi.aifsn, vi.cw_min, vi.txop_limit), (2, 7, 4_096 * US));
        let vo = config(json!({"access_category": "vo"}));
        assert_eq!((vo.aifsn, vo.cw_min, vo.txop_limit), (2, 3, 2_080 * US));
    }

    /// One 1000 B packet: PSDU 1042 B, 16 + 8336 + 6 = 8358 bits, 33 symbols of 260
    /// bits = 132 us, plus the 40 us preamble.
    #[test]
    fn ppdu_time_counts_whole_symbols() {
        let c = config(json!({}));
        assert_eq!(c.ppdu_time(1042, RATE), 172 * US);
        // Three: 1044 + 1044 + 1042 = 3130 B, 25 062 bits, 97 symbols = 388 us.
        assert_eq!(c.ppdu_time(3130, RATE), 428 * US);
    }

    /// Hand-worked trace (65 Mbit/s, AC_BE: AIFS 16 + 3 * 9 = 43 us, slot 9 us, SIFS 16
    /// us, Block Ack 32 us; the stream's backoff draws are 6, 1, 7, ...):
    /// - t = 0: three 1000 B packets. The backoff has run out at the start, so the first
    ///   arrival starts a TXOP at once, alone: its PPDU ends at 40 + 132 = 172 us, its
    ///   Block Ack at 172 + 16 + 32 = 220 us; b1 = 6: next access 220 + 43 + 54 = 317 us.
    /// - 317 us: the other two (1044 + 1042 = 2086 B: 16 710 bits, 65 symbols, PPDU 300
    ///   us) end at 617 us; Block Ack ends 665 us; b2 = 1: next access 665 + 43 + 9 = 717.
    /// - 700 us: a fourth packet waits for 717 us, ends at 889 us; Block Ack ends 937
    ///   us; b3 = 7: grid 980 us, next access 1043 us.
    /// - 20 ms: a fifth packet finds the backoff run out and goes at the next slot
    ///   boundary, 980 + 9k >= 20 000, k = ceil(19 020 / 9) = 2114: 20 006 us.
    #[test]
    fn burst_timing_trace() {
        let b = draws(4);
        assert_eq!(
            b[..3],
            [6, 1, 7],
            "the stream's draws (documented in the trace)"
        );
        let mut t = T::new(json!({}), RATE);
        let p: Vec<PacketId> = (0..3).map(|_| t.arrive(0, 1000)).collect();
        assert_eq!(t.out, vec![(172 * US, p[0])]);
        assert_eq!(t.wifi.next_timer(), Some(317 * US));
        t.run_to(317 * US);
        assert_eq!(t.out[1..], [(617 * US, p[1]), (617 * US, p[2])]);
        let p3 = t.arrive(700 * US, 1000);
        assert_eq!(t.wifi.next_timer(), Some(717 * US));
        t.run_to(717 * US);
        assert_eq!(t.out[3], (889 * US, p3));
        assert_eq!(t.wifi.next_timer(), None, "idle: nothing queued");
        let p4 = t.arrive(20_000 * US, 1000);
        assert_eq!(t.wifi.next_timer(), Some(20_006 * US));
        t.run_to(20_006 * US);
        assert_eq!(t.out[4], (20_178 * US, p4));
        let s = &t.wifi.stats;
        assert_eq!((s.txops, s.ppdus, s.mpdus), (4, 4, 5));
        assert_eq!(s.backoff_slots, 14 + b[3]);
        assert_eq!(s.airtime, (172 + 300 + 172 + 172 + 4 * 48) * US);
    }

    /// 100 packets of 1500 B (subframe 1542 B, 1544 B padded) queued before the first
    /// access: the A-MPDU stops at the first limit reached.
    fn first_ampdu(extra: Value, rate: u64) -> (u64, [u64; 4]) {
        let mut t = T::new(extra, rate);
        t.wifi.ready_at = 1; // hold the first access until all are queued
        for _ in 0..100 {
            t.arrive(0, 1500);
        }
        t.run_to(1);
        (t.wifi.stats.mpdus, t.wifi.stats.closed)
    }

    #[test]
    fn ampdu_is_bounded_by_each_limit() {
        // 65 Mbit/s: 40 us + data <= 5484 us: 1361 symbols, 353 860 bits, PSDU <= 44 229 B:
        // 27 * 1544 + 1542 = 43 230 B: 28 MPDUs, closed by time.
        assert_eq!(first_ampdu(json!({}), RATE), (28, [0, 0, 0, 1]));
        // 1 Gbit/s: 65 535 B binds: 41 * 1544 + 1542 = 64 846 B: 42 MPDUs.
        assert_eq!(first_ampdu(json!({}), 1_000_000_000), (42, [0, 0, 1, 0]));
        // With VHT's 1 048 575 B, the 64-MPDU Block Ack window binds.
        let big = json!({"max_ampdu_size": "1048575B"});
        assert_eq!(first_ampdu(big, 1_000_000_000), (64, [0, 1, 0, 0]));
    }

    /// AC_VI at 65 Mbit/s with 4 MPDUs per A-MPDU: 3 * 1544 + 1542 = 6174 B, 49 414
    /// bits, 191 symbols: PPDU 804 us; with SIFS, BA and SIFS, one every 868 us: at 0,
    /// 868, 1736, 2604, 3472 us. The fifth has 4096 - 3472 - 48 = 576 us: 134 symbols,
    /// PSDU <= 4352 B: two MPDUs (3086 B, 96 symbols, PPDU 424 us, BA ends 3944 us).
    /// At 3960 us 88 us are left: no MPDU fits, the TXOP ends at 3944 us.
    #[test]
    fn txop_limit_bounds_the_burst() {
        let mut t = T::new(json!({"access_category": "vi", "max_mpdus": 4}), RATE);
        t.wifi.ready_at = 1;
        for _ in 0..40 {
            t.arrive(0, 1500);
        }
        t.run_to(3961 * US);
        let s = &t.wifi.stats;
        assert_eq!((s.txops, s.ppdus, s.mpdus), (1, 5, 18));
        assert_eq!(s.closed, [0, 4, 0, 1]);
        let ends: Vec<Nanos> = t.out.iter().map(|d| d.0 / US).collect();
        let mut expected = Vec::new();
        for k in 0..4 {
            expected.extend([1 + k * 868 * US + 804 * US; 4].map(|x| x / US));
        }
        expected.extend([3472 + 424; 2]);
        assert_eq!(ends, expected);
        // The next access: AIFS (16 + 2 * 9) after 3944 us plus the drawn slots.
        let b = Rng::stream(7, "w").below(8);
        assert_eq!(
            t.wifi.next_timer(),
            Some(3944 * US + 1 + 34 * US + b * 9 * US)
        );
    }

    #[test]
    fn departures_keep_fifo_order() {
        let mut t = T::new(json!({}), RATE);
        let mut sent = Vec::new();
        let mut now = 0;
        for i in 0..500u64 {
            now += 37 * US + (i % 7) * 50 * US;
            t.run_to(now);
            sent.push(t.arrive(now, 200 + (i as u32 * 97) % 1300));
        }
        t.run_to(u64::MAX);
        let order: Vec<PacketId> = t.out.iter().map(|d| d.1).collect();
        assert_eq!(order, sent);
        assert!(t.out.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(t.wifi.stats.max_ampdu > 1, "some bursts aggregate");
    }

    /// Three 1000 B packets (first access held to queue them): data from 1 + 40 us;
    /// the link counts 3 * ceil(8000 / 65) us = 3 * 123 077 ns.
    #[test]
    fn busy_beyond_covers_the_counted_bytes_of_the_last_ampdu() {
        let mut t = T::new(json!({}), RATE);
        t.wifi.ready_at = 1;
        for _ in 0..3 {
            t.arrive(0, 1000);
        }
        t.run_to(1);
        let start = 1 + 40 * US;
        let counted = 3 * 123_077;
        assert_eq!(t.wifi.busy_beyond(0), counted);
        assert_eq!(t.wifi.busy_beyond(200 * US), start + counted - 200 * US);
        assert_eq!(t.wifi.busy_beyond(500 * US), 0);
    }

    #[test]
    fn saturation_throughput() {
        // BE at 65 Mbit/s: 28 MPDUs in 40 + 5440 us (43 230 B: 345 862 bits, 1331
        // symbols = 5324 us, so 5364 us), + 48 us; + AIFS 43 + 7.5 slots of 9 us.
        let c = config(json!({}));
        let (n, bps) = c.saturation(1500, RATE);
        assert_eq!(n, 28);
        let cycle = 5364.0 + 48.0 + 43.0 + 67.5;
        assert!((bps - 28.0 * 12_000.0 / cycle * 1e6).abs() < 1e-6, "{bps}");
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad = [
            (json!({"cw_min": 10}), "m.cw_min"),
            (json!({"aifsn": 0}), "m.aifsn"),
            (json!({"access_category": "video"}), "m.access_category"),
            (json!({"max_ampdu_size": "1000B"}), "m.max_ampdu_size"),
            (json!({"max_ppdu_duration": "100us"}), "m.max_ppdu_duration"),
            (json!({"slot": "0us"}), "m.slot"),
            (json!({"max_mpdus": 0}), "m.max_mpdus"),
        ];
        for (v, path) in bad {
            let map = v.as_object().cloned().unwrap();
            let mut p = Params::new("m".to_string(), &map, &[]);
            let e = WifiConfig::read(&mut p, RATE, 1500).unwrap_err();
            assert_eq!(e.path, path, "{v}: {e}");
        }
    }
}
