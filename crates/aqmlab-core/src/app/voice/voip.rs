//! `voip`: voice calls over RTP with a playout buffer and E-model quality.
//!
//! **Codecs** (ITU-T G.711, G.729 Annex A; payload = bit rate × packetisation time):
//! - `g711`: 64 kbit/s, packetisation `ptime` a multiple of 10 ms from 10 to 120 ms
//!   (default 20 ms → 160 B payload). G.711 is sample-based; 10 ms is the unit RTP
//!   stacks offer for it (RFC 3551 §4.5.14 lists 20 ms as default ptime).
//! - `g729a`: 8 kbit/s, 10 ms frames of 10 B, `ptime` a multiple of 10 ms
//!   (default 2 frames = 20 ms → 20 B payload).
//!
//! Each packet carries `header_bytes` more (default 40: IP 20 + UDP 8 + RTP 12). The
//! DOCSIS study's "218 B frames" are 160 B of G.711 payload + 40 B IP/UDP/RTP + 18 B of
//! Ethernet header and FCS (14 + 4): set `header_bytes = 58` to send those.
//!
//! **Talk spurts** (`vad = true`): exponential on/off periods with means
//! `talk_mean` = 1.004 s and `silence_mean` = 1.587 s (ITU-T P.59's artificial
//! conversational speech, the Brady (1969) on/off model's successor). A spurt sends
//! `max(1, ⌈on/ptime⌉)` packets; silence is rounded up to whole packet times so RTP
//! timestamps stay on the ptime grid. Sequence numbers run on across silences; the
//! first packet of a spurt carries the spurt number (the RTP marker bit's role).
//! The two directions of a bidirectional call talk independently.
//!
//! **Bidirectional** (`bidirectional = true`): each direction is its own UDP flow (two
//! `flows` rows per call), so each has its own queueing, counters and per-flow row;
//! reverse datagrams on one flow would hide the second direction from the flow
//! counters.
//!
//! **Receiver**: interarrival jitter per RFC 3550 A.8 (`rtp/stats.rs`, 8 kHz clock);
//! playout buffer (`playout.rs`: fixed deadline, first-packet anchored, Ramjee et
//! al. adaptive, or ns2voip++'s per-spurt optimum in hindsight); network loss,
//! late loss, and the E-model (`emodel.rs`). Loss counts from the first to the
//! highest sequence number received (packets in flight at the end are not lost).
//!
//! **Delay for the E-model** (`emodel_delay`): `"mouth-to-ear"` = ptime (packetisation)
//! plus the mean (playout time − generation time) of the played packets (network delay
//! plus buffer wait) plus `extra_delay`; `"network"` = mean network one-way delay of the
//! received packets + `extra_delay` — the DOCSIS study's d (its `extra_delay` was
//! 20 ms for the far side), where the 60 ms buffer only turns late packets into loss;
//! `"playout"` = the mean (playout time − generation time) + `extra_delay`, without
//! packetisation, as ns2voip++ rates its calls.
//! The loss the E-model sees is (network lost + late) / expected. With `playout =
//! "optimal"` each spurt's delay is chosen with this same E-model and delay definition
//! (the spurt's delay in place of the mean), and a played packet's (playout time −
//! generation time) is its spurt's delay; the spurt still open at the end is decided
//! on the packets it has.
//!
//! **RTCP** (`rtcp = true`, the default; RFC 3550 §6): a call is one RTP session of
//! two members, the caller and the callee. Each member runs the §6.3/A.7 report timer
//! (`rtp/rtcp_session.rs`, `rtp/rtcp.rs`) on the session bandwidth (default: the nominal IP
//! rate of the call's senders, §6.2) and sends one compound packet per report: an SR
//! if it sends voice (forward on its own flow), else an RR (backwards on the flow it
//! receives), with one report block about the stream it receives (A.1/A.3/A.8,
//! `rtp/stats.rs`; 16-bit sequence numbers starting at 0). A one-way call therefore
//! has the `rtp` kind's SR (80 B) and RR (84 B); in a conversation each side sends an
//! SR with one block (104 B). Both members count as senders all the time (VAD
//! silences do not make a member a non-sender, §6.3.8's `we_sent` is not tracked).
//! RTCP packets are real datagrams that queue and can be lost; the report's contents
//! travel beside them and reach the stream's sender only when they arrive.
//!
//! **Warm-up**: the quality columns count the voice packets sent at or after the
//! run's `warmup` (and RTCP reports made from then on); jitter, playout and RTCP state
//! run from the call's start.

use super::emodel::{self, CodecImpairment, EModel};
use super::playout::{Playout, PlayoutKind, SpurtEvent, SpurtOracle, SpurtVerdict};
use crate::app::rtp::rtcp::RtcpConfig;
use crate::app::rtp::rtcp_session::{self, ReportLedger, RtcpMember, TAG_RR, TAG_SR};
use crate::app::rtp::stats::SourceStats;
use crate::app::{AppIo, Application, Arrival, EntryBuild, FlowKind, FlowReport, TrafficKind};
use crate::net::packet::AppTag;
use crate::output::table::Val;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

pub const VOIP: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "voip",
        summary: "Voice calls (G.711, G.729A) with VAD, playout buffer and E-model MOS",
        source: "ITU-T G.107, G.113 App. I; Cole & Rosenbluth 2001; RFC 3550 A.8; Ramjee et al. 1994",
        params: &[
            ParamDoc { name: "codec", ty: "string", default: "g711", doc: "g711 (64 kbit/s) or g729a (8 kbit/s, 10 ms frames)" },
            ParamDoc { name: "ptime", ty: "duration", default: "20ms", doc: "packetisation interval: a multiple of 10 ms, 10-120 ms" },
            ParamDoc { name: "plc", ty: "bool", default: "false", doc: "G.711 with packet-loss concealment (G.113 Bpl 25.1 instead of 4.3)" },
            ParamDoc { name: "header_bytes", ty: "int", default: "40", doc: "bytes added to each payload: IP/UDP/RTP 40; 58 with Ethernet framing (the DOCSIS study's 218 B G.711 frames)" },
            ParamDoc { name: "vad", ty: "bool", default: "false", doc: "voice activity detection: exponential talk spurts and silences" },
            ParamDoc { name: "talk_mean", ty: "duration", default: "1.004s", doc: "mean talk spurt (ITU-T P.59)" },
            ParamDoc { name: "silence_mean", ty: "duration", default: "1.587s", doc: "mean silence (ITU-T P.59)" },
            ParamDoc { name: "bidirectional", ty: "bool", default: "false", doc: "a conversation: a second flow from dst back to src" },
            ParamDoc { name: "playout", ty: "string", default: "first-packet", doc: "fixed-deadline (late = one-way delay above playout_delay), first-packet (offset = first packet's delay + playout_delay; `fixed` is its old name), adaptive (Ramjee et al. 1994 algorithm 1, per talk spurt) or optimal (ns2voip++ VoipDecoderOptimal: per talk spurt, in hindsight, the packet delay with the best MOS)" },
            ParamDoc { name: "playout_delay", ty: "duration", default: "60ms", doc: "the buffer delay D: the deadline (fixed-deadline) or the margin over the first packet's delay (first-packet, adaptive's first spurt)" },
            ParamDoc { name: "emodel", ty: "string", default: "g107", doc: "g107 (full ITU-T G.107), cole-rosenbluth (the simplified fit) or ns2voip (ns2voip++'s: Cole-Rosenbluth delay term, G.107 loss term, Ro 93.2, A 5)" },
            ParamDoc { name: "emodel_delay", ty: "string", default: "mouth-to-ear", doc: "mouth-to-ear (packetisation + playout delay + extra), network (mean one-way + extra, the DOCSIS study's) or playout (playout delay + extra, ns2voip++'s)" },
            ParamDoc { name: "extra_delay", ty: "duration", default: "0s", doc: "delay added to the E-model's delay (the DOCSIS study adds 20 ms for the far side)" },
            ParamDoc { name: "rtcp", ty: "bool", default: "true", doc: "send RTCP reports (SR from a member that talks, RR from one that only listens)" },
            ParamDoc { name: "session_bw", ty: "rate", default: "packet rate × directions", doc: "session bandwidth for the RTCP interval (RFC 3550 §6.2): the nominal IP rate of all senders" },
            ParamDoc { name: "rtcp_fraction", ty: "float", default: "0.05", doc: "RTCP share of the session bandwidth" },
            ParamDoc { name: "rtcp_reduced_min", ty: "bool", default: "false", doc: "minimum interval 360/(session kbit/s) s instead of 5 s" },
            ParamDoc { name: "reconsideration", ty: "bool", default: "true", doc: "timer reconsideration on expiry (§6.3.6)" },
            crate::app::DATAGRAM_ECN,
        ],
    },
    build,
};

/// Codec constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Codec {
    pub name: &'static str,
    pub bit_rate: u64,
    /// Frame (packetisation unit) in ns.
    pub frame: Nanos,
    pub impairment: CodecImpairment,
}

pub const G711: Codec = Codec {
    name: "g711",
    bit_rate: 64_000,
    frame: 10 * NS_PER_MS,
    impairment: emodel::G711,
};
pub const G711_PLC: Codec = Codec {
    name: "g711",
    bit_rate: 64_000,
    frame: 10 * NS_PER_MS,
    impairment: emodel::G711_PLC,
};
pub const G729A: Codec = Codec {
    name: "g729a",
    bit_rate: 8_000,
    frame: 10 * NS_PER_MS,
    impairment: emodel::G729A,
};

/// RTP clock of both codecs (RFC 3551).
const CLOCK: u32 = 8000;

/// Which delay the E-model sees (`emodel_delay`), `extra_delay` added to each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EModelDelay {
    /// Packetisation + mean (playout − generation) of the played packets.
    MouthToEar,
    /// Mean network one-way delay of the received packets (the DOCSIS study's d).
    Network,
    /// Mean (playout − generation) of the played packets: ns2voip++'s delay, which has
    /// no packetisation.
    Playout,
}

/// Settings shared by all calls of an entry.
#[derive(Clone, Copy, Debug)]
pub struct CallConfig {
    pub codec: Codec,
    pub ptime: Nanos,
    pub header_bytes: u32,
    /// (talk mean, silence mean) with VAD.
    pub vad: Option<(f64, f64)>,
    pub playout: PlayoutKind,
    pub playout_delay: Nanos,
    pub emodel: EModel,
    pub emodel_delay: EModelDelay,
    pub extra_delay: Nanos,
    pub start: Nanos,
    pub stop: Nanos,
    /// Quality columns count voice packets sent from here on.
    pub warmup: Nanos,
}

impl CallConfig {
    pub fn packet_bytes(&self) -> u32 {
        (self.codec.bit_rate * self.ptime / NS_PER_S / 8) as u32 + self.header_bytes
    }

    /// `playout = "optimal"`: a spurt's MOS if its packets play `delay` after they were
    /// sent and a fraction `loss` of its frames is lost, with the call's E-model and
    /// delay definition (`emodel_delay`).
    fn spurt_mos(&self, delay: Nanos, loss: f64) -> f64 {
        let ms = |ns: Nanos| ns as f64 / 1e6;
        let d = match self.emodel_delay {
            EModelDelay::MouthToEar => ms(self.ptime + delay + self.extra_delay),
            EModelDelay::Network | EModelDelay::Playout => ms(delay + self.extra_delay),
        };
        emodel::mos(self.emodel.r(&self.codec.impairment, d, loss))
    }

    /// RFC 3550 §6.2's session bandwidth: the nominal IP rate of the `senders`
    /// concurrently active senders, in bit/s.
    pub fn session_bw(&self, senders: u32) -> f64 {
        self.packet_bytes() as f64 * 8.0 * NS_PER_S as f64 / self.ptime as f64 * senders as f64
    }
}

fn build(p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    e.ecn = crate::app::read_datagram_ecn(p)?;
    let codec_name = p.choice_or("codec", "g711", &["g711", "g729a"])?;
    let plc = p.bool_or("plc", false)?;
    let codec = match (codec_name, plc) {
        ("g711", false) => G711,
        ("g711", true) => G711_PLC,
        (_, true) => {
            return Err(p.error(
                "plc",
                "G.729A has its own concealment: `plc` applies to G.711 only",
            ))
        }
        _ => G729A,
    };
    let ptime = p.positive_duration_or("ptime", 20 * NS_PER_MS)?;
    if ptime % codec.frame != 0 || ptime > 120 * NS_PER_MS {
        return Err(p.error(
            "ptime",
            format!(
                "{} ms: {} packetisation must be a whole number of {} ms frames from 10 ms to 120 ms",
                ptime as f64 / 1e6,
                codec.name,
                codec.frame / NS_PER_MS
            ),
        ));
    }
    let header_bytes = p.u64_or("header_bytes", 40, 0, 1400)? as u32;
    let vad = p.bool_or("vad", false)?;
    let talk = p.positive_duration_or("talk_mean", 1_004 * NS_PER_MS)?;
    let silence = p.positive_duration_or("silence_mean", 1_587 * NS_PER_MS)?;
    let bidirectional = p.bool_or("bidirectional", false)?;
    let playout = match p.choice_or(
        "playout",
        "first-packet",
        &[
            "first-packet",
            "fixed",
            "fixed-deadline",
            "adaptive",
            "optimal",
        ],
    )? {
        "adaptive" => PlayoutKind::Adaptive,
        "optimal" => PlayoutKind::Optimal,
        "fixed-deadline" => PlayoutKind::FixedDeadline,
        _ => PlayoutKind::FirstPacket,
    };
    let playout_delay = p.duration_or("playout_delay", 60 * NS_PER_MS)?;
    let emodel = match p.choice_or("emodel", "g107", &["g107", "cole-rosenbluth", "ns2voip"])? {
        "cole-rosenbluth" => EModel::ColeRosenbluth,
        "ns2voip" => EModel::Ns2Voip,
        _ => EModel::G107,
    };
    let emodel_delay = match p.choice_or(
        "emodel_delay",
        "mouth-to-ear",
        &["mouth-to-ear", "network", "playout"],
    )? {
        "network" => EModelDelay::Network,
        "playout" => EModelDelay::Playout,
        _ => EModelDelay::MouthToEar,
    };
    let extra_delay = p.duration_or("extra_delay", 0)?;
    let base = CallConfig {
        codec,
        ptime,
        header_bytes,
        vad: vad.then_some((talk as f64, silence as f64)),
        playout,
        playout_delay,
        emodel,
        emodel_delay,
        extra_delay,
        start: e.start,
        stop: e.stop,
        warmup: e.warmup,
    };
    let directions = 1 + bidirectional as u32;
    let rtcp = rtcp_session::read_config(p, base.session_bw(directions))?;
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        let cfg = CallConfig {
            start: e.start_for(&format!("call[{k}]")),
            ..base
        };
        let app_id = e.next_app();
        let fwd = e.next_flow();
        let mut dirs = vec![Direction::new(fwd, &cfg, e.rng(&format!("call[{k}].fwd")))];
        if bidirectional {
            dirs.push(Direction::new(
                fwd + 1,
                &cfg,
                e.rng(&format!("call[{k}].rev")),
            ));
        }
        let has_rtcp = rtcp.is_some();
        let rtcp = rtcp.map(|c| {
            let rngs = [
                e.rng(&format!("call[{k}].rtcp.caller")),
                e.rng(&format!("call[{k}].rtcp.callee")),
            ];
            Box::new(CallRtcp::new(c, &cfg, directions as usize, rngs))
        });
        e.add_app(VoipCall {
            call: k as u32,
            cfg,
            dirs,
            rtcp,
        });
        e.add_flow(src, dst, FlowKind::Udp, None, app_id);
        if bidirectional {
            e.add_flow(dst, src, FlowKind::Udp, None, app_id);
        } else if has_rtcp {
            // The callee's RRs come back.
            e.need_route(dst, src, false);
        }
    }
    Ok(())
}

/// One direction of a call: its sender and its receiver.
pub struct Direction {
    flow: u32,
    rng: Rng,
    // Sender.
    next_send: Option<Nanos>,
    seq: u64,
    spurt: u32,
    /// The next packet is the first of a talk spurt (the RTP marker bit).
    spurt_first: bool,
    /// Packets left in the current talk spurt (VAD).
    spurt_left: u64,
    /// Packets sent since the warm-up.
    sent: u64,
    // Receiver.
    playout: Playout,
    /// `playout = "optimal"`: the spurt being collected (packets sent since the warm-up).
    oracle: Option<SpurtOracle>,
    stats: SourceStats,
    received: u64,
    late: u64,
    first_seq: Option<u64>,
    highest_seq: u64,
    owd_sum: f64,
    /// Sum over played packets of (playout time − generation time), ns.
    play_delay_sum: f64,
    played: u64,
    jitter_ts_sum: f64,
}

impl Direction {
    fn new(flow: u32, cfg: &CallConfig, rng: Rng) -> Self {
        Direction {
            flow,
            rng,
            next_send: None,
            seq: 0,
            spurt: 0,
            spurt_first: true,
            spurt_left: 0,
            sent: 0,
            playout: Playout::new(cfg.playout, cfg.playout_delay),
            oracle: (cfg.playout == PlayoutKind::Optimal).then(SpurtOracle::default),
            stats: SourceStats::default(),
            received: 0,
            late: 0,
            first_seq: None,
            highest_seq: 0,
            owd_sum: 0.0,
            play_delay_sum: 0.0,
            played: 0,
            jitter_ts_sum: 0.0,
        }
    }

    /// Packets in a talk spurt of exponential length.
    fn draw_spurt(&mut self, cfg: &CallConfig, talk: f64) -> u64 {
        let on = self.rng.exponential(talk);
        ((on / cfg.ptime as f64).ceil() as u64).max(1)
    }

    fn start(&mut self, cfg: &CallConfig) -> Option<Nanos> {
        if let Some((talk, _)) = cfg.vad {
            self.spurt_left = self.draw_spurt(cfg, talk);
        }
        self.next_send = (cfg.start < cfg.stop).then_some(cfg.start);
        self.next_send
    }

    /// Send the packet due at `now`; returns the next send time.
    fn send(&mut self, now: Nanos, cfg: &CallConfig, io: &mut AppIo) -> Option<Nanos> {
        let first_of_spurt = std::mem::replace(&mut self.spurt_first, false);
        let tag = AppTag {
            unit: self.spurt,
            unit_type: first_of_spurt as u8,
            fragment: 0,
            fragments: 1,
        };
        io.send_tagged(self.flow, false, cfg.packet_bytes(), self.seq, tag);
        self.seq += 1;
        self.sent += (now >= cfg.warmup) as u64;
        let mut next = now + cfg.ptime;
        if let Some((talk, silence)) = cfg.vad {
            self.spurt_left = self.spurt_left.saturating_sub(1);
            if self.spurt_left == 0 {
                let off = self.rng.exponential(silence);
                let gaps = (off / cfg.ptime as f64).ceil() as u64;
                next += gaps * cfg.ptime;
                self.spurt += 1;
                self.spurt_first = true;
                self.spurt_left = self.draw_spurt(cfg, talk);
            }
        }
        self.next_send = (next < cfg.stop).then_some(next);
        self.next_send
    }

    /// A voice packet arrived. The jitter, playout and (with RTCP) A.1 sequence state
    /// see every packet; the quality counters only those sent since the warm-up.
    fn receive(&mut self, now: Nanos, d: &Arrival, cfg: &CallConfig, rtcp: bool) {
        let gen = d.sent_at;
        if rtcp {
            self.stats.update_seq(d.seq as u16);
        }
        let ts = crate::app::rtp::ts_units(gen, CLOCK);
        let arrival = crate::app::rtp::ts_units(now, CLOCK);
        self.stats.update_jitter(ts, arrival);
        let play = self.playout.on_packet(d.tag.unit, gen, now);
        if gen < cfg.warmup {
            return;
        }
        self.received += 1;
        self.owd_sum += (now - gen) as f64;
        self.jitter_ts_sum += self.stats.jitter_exact();
        self.first_seq = Some(self.first_seq.map_or(d.seq, |f| f.min(d.seq)));
        self.highest_seq = self.highest_seq.max(d.seq);
        if let Some(oracle) = self.oracle.as_mut() {
            let (spurt, delay) = (d.tag.unit, now - gen);
            match oracle.push(spurt, d.seq, delay) {
                SpurtEvent::Added => {}
                SpurtEvent::Stale => self.late += 1,
                SpurtEvent::NewSpurt => {
                    let v = oracle.settle(|x, loss| cfg.spurt_mos(x, loss));
                    oracle.push(spurt, d.seq, delay);
                    self.count(v);
                }
            }
            return;
        }
        match play {
            Some(play) => {
                self.played += 1;
                self.play_delay_sum += (play - gen) as f64;
            }
            None => self.late += 1,
        }
    }

    /// Add a settled spurt's verdict to the playout counters.
    fn count(&mut self, v: Option<SpurtVerdict>) {
        if let Some(v) = v {
            self.played += v.played;
            self.late += v.late;
            self.play_delay_sum += v.played as f64 * v.delay as f64;
        }
    }

    fn expected(&self) -> u64 {
        self.first_seq.map_or(0, |f| self.highest_seq - f + 1)
    }

    /// Quality columns of this direction; `ledger` holds its RTCP reports.
    fn columns(
        &self,
        cfg: &CallConfig,
        ledger: Option<&ReportLedger>,
        out: &mut Vec<(&'static str, Val)>,
    ) {
        // `optimal`: the spurt still open counts as decided on the packets it has.
        let (mut played, mut late, mut play_delay_sum) =
            (self.played, self.late, self.play_delay_sum);
        if let Some(v) = self
            .oracle
            .as_ref()
            .and_then(|o| o.peek(|x, loss| cfg.spurt_mos(x, loss)))
        {
            played += v.played;
            late += v.late;
            play_delay_sum += v.played as f64 * v.delay as f64;
        }
        let expected = self.expected();
        let frac = |n: u64| {
            if expected > 0 {
                n as f64 / expected as f64
            } else {
                f64::NAN
            }
        };
        let lost = expected.saturating_sub(self.received.min(expected));
        let late_rate = frac(late);
        let total = frac(lost + late).min(1.0);
        let ms = |ns: f64| ns / 1e6;
        let extra = cfg.extra_delay as f64;
        let m2e = ms(cfg.ptime as f64 + play_delay_sum / played as f64 + extra);
        let owd = ms(self.owd_sum / self.received as f64);
        let delay = match cfg.emodel_delay {
            EModelDelay::MouthToEar => m2e,
            EModelDelay::Network => owd + ms(extra),
            EModelDelay::Playout => ms(play_delay_sum / played as f64 + extra),
        };
        let r = if played > 0 {
            cfg.emodel.r(&cfg.codec.impairment, delay, total)
        } else {
            f64::NAN
        };
        let mos = if played > 0 { emodel::mos(r) } else { 1.0 };
        out.push(("packets_sent", Val::U(self.sent)));
        out.push(("packets_received", Val::U(self.received)));
        out.push(("packets_late", Val::U(late)));
        out.push(("voice_loss_rate", Val::F(frac(lost))));
        out.push(("late_rate", Val::F(late_rate)));
        out.push(("total_loss_rate", Val::F(total)));
        out.push((
            "jitter_ms",
            Val::F(self.jitter_ts_sum / self.received as f64 * 1e3 / CLOCK as f64),
        ));
        out.push(("mouth_to_ear_ms", Val::F(m2e)));
        out.push(("emodel_delay_ms", Val::F(delay)));
        out.push(("r_factor", Val::F(r)));
        out.push(("mos", Val::F(mos)));
        let f = |g: fn(&ReportLedger) -> f64| Val::F(ledger.map_or(f64::NAN, g));
        out.push(("loss_fraction_rr", f(ReportLedger::loss_fraction)));
        out.push(("fraction_lost_rr_mean", f(ReportLedger::fraction_lost_mean)));
        out.push((
            "cumulative_lost_rr",
            Val::I(ledger.map_or(0, |l| l.cumulative_lost())),
        ));
        out.push(("jitter_ms_rr_mean", f(ReportLedger::jitter_ms_mean)));
        out.push(("rtt_ms_rtcp", f(ReportLedger::rtt_ms)));
        let (packets, bytes) = ledger.map_or((0, 0), |l| l.packets());
        out.push(("rtcp_packets", Val::U(packets)));
        out.push(("rtcp_bytes", Val::U(bytes)));
        out.push(("rr_received", Val::U(ledger.map_or(0, |l| l.reports()))));
    }
}

/// One call: one or two directions.
pub struct VoipCall {
    call: u32,
    cfg: CallConfig,
    dirs: Vec<Direction>,
    rtcp: Option<Box<CallRtcp>>,
}

/// A call's RTCP: member 0 is the caller (sends direction 0, receives direction 1 in
/// a conversation), member 1 the callee (receives direction 0, sends direction 1);
/// one report ledger per direction.
pub struct CallRtcp {
    members: [RtcpMember; 2],
    ledgers: Vec<ReportLedger>,
}

impl CallRtcp {
    fn new(c: RtcpConfig, cfg: &CallConfig, directions: usize, rngs: [Rng; 2]) -> Self {
        let senders = directions as u32;
        let [r0, r1] = rngs;
        let member = |m: usize, rng| {
            let sends = m < directions;
            let receives = 1 - m < directions;
            RtcpMember::new(c, senders, sends, receives as u32, cfg.start, rng)
        };
        CallRtcp {
            members: [member(0, r0), member(1, r1)],
            ledgers: (0..directions)
                .map(|_| ReportLedger::new(0, CLOCK, cfg.warmup))
                .collect(),
        }
    }

    /// Member `m`'s timer fired at `now`: send its compound packet.
    fn fire(&mut self, m: usize, now: Nanos, dirs: &mut [Direction], io: &mut AppIo) {
        let (sends, rx) = (m < dirs.len(), 1 - m);
        let valid = dirs.get(rx).is_some_and(|d| d.stats.valid());
        let Some(size) = self.members[m].fire(now, valid as u32) else {
            return;
        };
        let id = match dirs.get_mut(rx) {
            Some(d) => {
                let block = valid.then(|| d.stats.report_block());
                self.ledgers[rx].issue(now, block)
            }
            None => 0,
        };
        // An SR goes forward on the member's own flow, an RR back on the one it hears.
        let (dir, reverse, unit_type) = if sends {
            (m, false, TAG_SR)
        } else {
            (rx, true, TAG_RR)
        };
        let tag = AppTag {
            unit: id,
            unit_type,
            fragment: 0,
            fragments: 1,
        };
        io.send_tagged(dirs[dir].flow, reverse, size, id as u64, tag);
        self.ledgers[dir].count_packet(now, size);
    }

    /// An RTCP packet arrived on direction `i`'s flow.
    fn on_packet(&mut self, now: Nanos, i: usize, d: &Arrival) {
        match (d.reverse, d.tag.unit_type) {
            // The callee's RR about direction 0 reached the caller.
            (true, TAG_RR) => self.ledgers[i].on_report(now, d.tag.unit),
            (false, TAG_SR) => {
                self.ledgers[i].on_sr(d.sent_at, now);
                // In a conversation the SR carries a block about the other direction.
                if self.ledgers.len() == 2 {
                    self.ledgers[1 - i].on_report(now, d.tag.unit);
                }
            }
            _ => {}
        }
    }
}

impl VoipCall {
    /// Direction `i`'s RTCP reports.
    fn ledger(&self, i: usize) -> Option<&ReportLedger> {
        self.rtcp.as_ref().map(|r| &r.ledgers[i])
    }
}

impl Application for VoipCall {
    fn start(&mut self, io: &mut AppIo) {
        if let Some(t) = self
            .dirs
            .iter_mut()
            .filter_map(|d| d.start(&self.cfg))
            .min()
        {
            io.wake_at(t);
        }
        if let Some(r) = &self.rtcp {
            for m in &r.members {
                if m.next() < self.cfg.stop {
                    io.wake_at(m.next());
                }
            }
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        let mut next: Option<Nanos> = None;
        let mut sent = false;
        for d in &mut self.dirs {
            if d.next_send == Some(now) {
                d.send(now, &self.cfg, io);
                sent = true;
            }
            next = match (next, d.next_send) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        // Only a voice wake schedules the next one (an RTCP wake would duplicate it).
        if let Some(t) = next.filter(|_| sent) {
            io.wake_at(t);
        }
        if let Some(r) = &mut self.rtcp {
            for m in 0..2 {
                if r.members[m].next() == now {
                    r.fire(m, now, &mut self.dirs, io);
                    if r.members[m].next() < self.cfg.stop {
                        io.wake_at(r.members[m].next());
                    }
                }
            }
        }
    }

    fn wants_datagrams(&self) -> bool {
        true
    }

    fn on_datagram(&mut self, now: Nanos, d: &Arrival, _io: &mut AppIo) {
        let Some(i) = self.dirs.iter().position(|x| x.flow == d.flow) else {
            return;
        };
        if d.tag.unit_type < TAG_SR {
            let rtcp = self.rtcp.is_some();
            self.dirs[i].receive(now, d, &self.cfg, rtcp);
        } else if let Some(r) = &mut self.rtcp {
            r.on_packet(now, i, d);
        }
    }

    /// Entry row (docs/output.md): counts summed over every direction of every call;
    /// every other column is the mean over calls of each call's **worst direction**
    /// (lower MOS, then lower R, then the forward one); `calls`, `mos_call_min` (the
    /// worst call's MOS) and each direction's quality (`NAME_fwd`, `NAME_rev`: mean
    /// over calls; `_rev` NaN for one-way calls).
    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        let mut every = Vec::new();
        let mut worst = Vec::new();
        let mut dirs: [Vec<Vec<(&'static str, Val)>>; 2] = [Vec::new(), Vec::new()];
        let mut mos_call_min = f64::NAN;
        for a in apps {
            let rows = a.direction_rows();
            let w = worst_direction(&rows);
            mos_call_min = mos_call_min.min(value(&rows[w], "mos"));
            worst.push(rows[w].clone());
            for (i, r) in rows.iter().enumerate() {
                dirs[i].push(r.clone());
            }
            every.extend(rows);
        }
        let (mut summed, mut worst_mean) = (Vec::new(), Vec::new());
        crate::app::merge_rows(&every, &mut summed);
        crate::app::merge_rows(&worst, &mut worst_mean);
        for (sum, w) in summed.into_iter().zip(worst_mean) {
            out.push(match sum.1 {
                Val::U(_) | Val::I(_) => sum,
                _ => w,
            });
        }
        out.push(("calls", Val::U(apps.len() as u64)));
        out.push(("mos_call_min", Val::F(mos_call_min)));
        let mut per_dir: [Vec<(&'static str, Val)>; 2] = [Vec::new(), Vec::new()];
        for (i, rows) in dirs.iter().enumerate() {
            crate::app::merge_rows(rows, &mut per_dir[i]);
        }
        for (name, fwd, rev) in DIRECTION_COLUMNS {
            out.push((fwd, Val::F(value(&per_dir[0], name))));
            out.push((rev, Val::F(value(&per_dir[1], name))));
        }
    }

    fn report_flows(&self, out: &mut Vec<FlowReport>) {
        let rows = self.direction_rows();
        let mos_call = value(&rows[worst_direction(&rows)], "mos");
        for (i, (d, row)) in self.dirs.iter().zip(rows).enumerate() {
            let mut cols = vec![
                ("call", Val::U(self.call as u64)),
                ("direction", Val::S(["fwd", "rev"][i].to_string())),
            ];
            cols.extend(row);
            cols.push(("mos_call", Val::F(mos_call)));
            out.push(FlowReport { flow: d.flow, cols });
        }
    }
}

/// The quality columns the `apps` row also gives per direction: (name, forward
/// column, reverse column). Forward is caller → callee (`src` → `dst`).
const DIRECTION_COLUMNS: [(&str, &str, &str); 8] = [
    (
        "voice_loss_rate",
        "voice_loss_rate_fwd",
        "voice_loss_rate_rev",
    ),
    ("late_rate", "late_rate_fwd", "late_rate_rev"),
    (
        "total_loss_rate",
        "total_loss_rate_fwd",
        "total_loss_rate_rev",
    ),
    ("jitter_ms", "jitter_ms_fwd", "jitter_ms_rev"),
    (
        "mouth_to_ear_ms",
        "mouth_to_ear_ms_fwd",
        "mouth_to_ear_ms_rev",
    ),
    (
        "emodel_delay_ms",
        "emodel_delay_ms_fwd",
        "emodel_delay_ms_rev",
    ),
    ("r_factor", "r_factor_fwd", "r_factor_rev"),
    ("mos", "mos_fwd", "mos_rev"),
];

/// Column `name` of a row as f64 (NaN if absent).
fn value(row: &[(&'static str, Val)], name: &str) -> f64 {
    match row.iter().find(|(n, _)| *n == name).map(|c| &c.1) {
        Some(Val::F(x)) => *x,
        Some(Val::U(x)) => *x as f64,
        Some(Val::I(x)) => *x as f64,
        _ => f64::NAN,
    }
}

/// The index of a call's worst direction: the lower MOS, then the lower R (a
/// direction that played nothing has MOS 1 and no R: it is worst), then forward.
fn worst_direction(rows: &[Vec<(&'static str, Val)>]) -> usize {
    let key = |r: &[(&'static str, Val)]| {
        let r_factor = value(r, "r_factor");
        (
            value(r, "mos"),
            if r_factor.is_nan() {
                f64::NEG_INFINITY
            } else {
                r_factor
            },
        )
    };
    let mut w = 0;
    for i in 1..rows.len() {
        if key(&rows[i]) < key(&rows[w]) {
            w = i;
        }
    }
    w
}

impl VoipCall {
    /// Each direction's quality columns (no `call`), forward first.
    fn direction_rows(&self) -> Vec<Vec<(&'static str, Val)>> {
        self.dirs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut r = Vec::new();
                d.columns(&self.cfg, self.ledger(i), &mut r);
                r
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::rtp::rtcp::rtcp_interval;
    use crate::app::Action;

    fn cfg(vad: bool) -> CallConfig {
        CallConfig {
            codec: G711,
            ptime: 20 * NS_PER_MS,
            header_bytes: 40,
            vad: vad.then_some((1_004e6, 1_587e6)),
            playout: PlayoutKind::FirstPacket,
            playout_delay: 60 * NS_PER_MS,
            emodel: EModel::ColeRosenbluth,
            emodel_delay: EModelDelay::MouthToEar,
            extra_delay: 0,
            start: 0,
            stop: 60 * NS_PER_S,
            warmup: 0,
        }
    }

    /// 160 B of G.711 per 20 ms + 40 B headers; G.729A 2 frames = 20 B + 40 B; the
    /// DOCSIS study's 218 B with Ethernet framing.
    #[test]
    fn packet_sizes() {
        assert_eq!(cfg(false).packet_bytes(), 200);
        assert_eq!(
            CallConfig {
                codec: G729A,
                ..cfg(false)
            }
            .packet_bytes(),
            60
        );
        assert_eq!(
            CallConfig {
                header_bytes: 58,
                ..cfg(false)
            }
            .packet_bytes(),
            218
        );
    }

    fn run_sender(c: CallConfig, until: Nanos) -> Vec<(Nanos, u64, AppTag)> {
        let mut call = VoipCall {
            call: 0,
            cfg: c,
            dirs: vec![Direction::new(0, &c, Rng::stream(5, "v"))],
            rtcp: None,
        };
        let mut io = AppIo::new(0);
        call.start(&mut io);
        let mut wake = match io.actions() {
            [Action::WakeAt(t)] => Some(*t),
            _ => None,
        };
        let mut sent = Vec::new();
        while let Some(t) = wake.filter(|t| *t < until) {
            io.reset(0);
            call.on_wake(t, &mut io);
            wake = None;
            for a in io.actions() {
                match a {
                    Action::WakeAt(x) => wake = Some(*x),
                    Action::Send { seq, tag, .. } => sent.push((t, *seq, *tag)),
                    _ => {}
                }
            }
        }
        sent
    }

    /// Without VAD: one packet every 20 ms, consecutive sequence numbers.
    #[test]
    fn cbr_without_vad() {
        let s = run_sender(cfg(false), NS_PER_S);
        assert_eq!(s.len(), 50);
        assert!(s
            .windows(2)
            .all(|w| w[1].0 - w[0].0 == 20 * NS_PER_MS && w[1].1 == w[0].1 + 1));
    }

    /// With VAD: on the 20 ms grid, consecutive sequence numbers across silences, and
    /// an on-fraction near P.59's 1.004/(1.004 + 1.587) = 0.3875 over 20 000 s (the
    /// per-spurt rounding up to whole packets adds ≈ 10 ms to each spurt and silence,
    /// so a cycle is 2.611 s). About 7660 cycles: the on-fraction's standard error is
    /// ≈ 0.0045 and the spurt count's ≈ 63 (renewal CLT: √(T·σ²/μ³), σ² = 1.004² +
    /// 1.587²); the bounds are ≈ 3.3 standard errors.
    #[test]
    fn vad_talk_spurts() {
        let c = CallConfig {
            stop: 20_000 * NS_PER_S,
            ..cfg(true)
        };
        let s = run_sender(c, 20_000 * NS_PER_S);
        assert!(s.iter().all(|p| p.0 % (20 * NS_PER_MS) == 0));
        assert!(s.windows(2).all(|w| w[1].1 == w[0].1 + 1));
        let on = s.len() as f64 / 1_000_000.0;
        let expect = (1.004 + 0.01) / (1.004 + 1.587 + 0.02);
        assert!((on - expect).abs() < 0.015, "{on} vs {expect}");
        let spurts = s.last().unwrap().2.unit as f64;
        assert!((spurts - 20_000.0 / 2.611).abs() < 210.0, "{spurts}");
        // Exactly the first packet of each spurt carries the marker.
        let markers = s.iter().filter(|p| p.2.unit_type == 1).count() as f64;
        assert_eq!(markers, spurts + 1.0);
    }

    /// Receiver by hand (fixed 60 ms buffer, Cole–Rosenbluth, G.711): 10 packets, one
    /// lost (seq 4), one late (seq 7: 100 ms vs the 30 + 60 = 90 ms offset), the rest
    /// at 30 ms. Expected 10, lost 1, late 1 → e = 0.2. Played delay = 90 ms for all 8
    /// played, so mouth-to-ear = 20 + 90 = 110 ms. R = 94.2 − 0.024·110 −
    /// 30·ln(1 + 15·0.2) = 94.2 − 2.64 − 30·ln 4 = 91.56 − 41.588831 = 49.971169.
    #[test]
    fn receiver_counts_and_r_by_hand() {
        let c = cfg(false);
        let mut call = VoipCall {
            call: 0,
            cfg: c,
            dirs: vec![Direction::new(0, &c, Rng::stream(5, "v"))],
            rtcp: None,
        };
        let mut io = AppIo::new(0);
        for seq in 0..10u64 {
            if seq == 4 {
                continue;
            }
            let gen = seq * 20 * NS_PER_MS;
            let owd = if seq == 7 { 100 } else { 30 } * NS_PER_MS;
            let d = Arrival {
                flow: 0,
                reverse: false,
                seq,
                size: 200,
                sent_at: gen,
                tag: AppTag {
                    unit: 0,
                    unit_type: (seq == 0) as u8,
                    fragment: 0,
                    fragments: 1,
                },
                ecn: Default::default(),
            };
            call.on_datagram(gen + owd, &d, &mut io);
        }
        let mut out = Vec::new();
        VoipCall::report(&[&call], &mut out);
        let get = |n: &str| match out.iter().find(|(k, _)| *k == n).unwrap().1 {
            Val::F(x) => x,
            Val::U(x) => x as f64,
            _ => f64::NAN,
        };
        assert_eq!(get("packets_received"), 9.0);
        assert_eq!(get("packets_late"), 1.0);
        assert!((get("voice_loss_rate") - 0.1).abs() < 1e-12);
        assert!((get("late_rate") - 0.1).abs() < 1e-12);
        assert!((get("mouth_to_ear_ms") - 110.0).abs() < 1e-9);
        assert!(
            (get("r_factor") - 49.971169).abs() < 1e-6,
            "{}",
            get("r_factor")
        );
    }

    fn rtcp_cfg(session_bw_bps: f64, reduced_min: bool) -> RtcpConfig {
        RtcpConfig {
            session_bw_bps,
            fraction: 0.05,
            reduced_min,
            reconsideration: false,
        }
    }

    /// RFC 3550 §6.2/§6.3/A.7 for a G.711 call (20 ms, 200 B IP packets): session
    /// bandwidth 200·8·50 = 80 kbit/s per talking direction. One-way call: RTCP gets
    /// 5 % = 4 kbit/s = 500 B/s; 1 sender of 2 members is more than 25 %, so no
    /// sender/receiver split and n = 2 for both: T = 84·2/500 = 0.336 s (caller:
    /// 80·2/500 = 0.32 s), below the 5 s minimum → 5 s (2.5 s before the first report);
    /// × U[0.5, 1.5] / (e − 3/2): mean 5/1.2182818 = 4.104141 s, first report in
    /// [1.026035, 3.078106] s. Reduced minimum 360/80 = 4.5 s → 3.693727 s at u = 0.5.
    /// Conversation: 160 kbit/s, both members send (SR + one block, 104 B), RTCP
    /// 1000 B/s, T = 104·2/1000 = 0.208 s; reduced minimum 360/160 = 2.25 s →
    /// 1.846863 s at u = 0.5.
    #[test]
    fn g711_call_rtcp_interval_by_hand() {
        let c = cfg(false);
        assert_eq!(c.session_bw(1), 80_000.0);
        assert_eq!(c.session_bw(2), 160_000.0);
        let one_way = CallRtcp::new(
            rtcp_cfg(c.session_bw(1), false),
            &c,
            1,
            [Rng::stream(1, "a"), Rng::stream(1, "b")],
        );
        let [caller, callee] = one_way.members.each_ref().map(|m| m.timer().clone());
        assert_eq!(
            (caller.members, caller.senders, caller.we_sent),
            (2, 1, true)
        );
        assert_eq!(
            (callee.members, callee.senders, callee.we_sent),
            (2, 1, false)
        );
        assert_eq!((caller.avg_rtcp_size, callee.avg_rtcp_size), (80.0, 84.0));
        let cf = caller.cfg;
        assert_eq!(cf.rtcp_bw_bytes(), 500.0);
        let t = |n, s, we, avg, init, min, u| {
            rtcp_interval(n, s, cf.rtcp_bw_bytes(), we, avg, init, min, u)
        };
        // Deterministic part below the minimum: the minimum decides.
        assert!((t(2, 1, false, 84.0, false, 5.0, 0.5) - 4.104_140_670).abs() < 1e-9);
        assert!((t(2, 1, true, 80.0, true, 5.0, 0.0) - 1.026_035_168).abs() < 1e-9);
        assert!((t(2, 1, true, 80.0, true, 5.0, 1.0) - 3.078_105_503).abs() < 1e-9);
        for m in [&caller, &callee] {
            assert!((1_026_035_167..=3_078_105_503).contains(&m.tn), "{}", m.tn);
        }
        let reduced = rtcp_cfg(c.session_bw(1), true);
        assert_eq!(reduced.min_interval_s(), 4.5);
        let r = rtcp_interval(2, 1, 500.0, false, 84.0, false, 4.5, 0.5);
        assert!((r - 3.693_726_603).abs() < 1e-9);

        let talk = CallRtcp::new(
            rtcp_cfg(c.session_bw(2), true),
            &c,
            2,
            [Rng::stream(1, "a"), Rng::stream(1, "b")],
        );
        for m in &talk.members {
            let tm = m.timer();
            assert_eq!((tm.senders, tm.we_sent, tm.avg_rtcp_size), (2, true, 104.0));
            assert_eq!(tm.cfg.rtcp_bw_bytes(), 1000.0);
            assert_eq!(tm.cfg.min_interval_s(), 2.25);
        }
        let b = rtcp_interval(2, 2, 1000.0, true, 104.0, false, 2.25, 0.5);
        assert!((b - 1.846_863_302).abs() < 1e-9);
    }

    /// Voice packet `seq` of a call's flow (generated at seq·20 ms).
    fn voice(flow: u32, seq: u64) -> Arrival {
        Arrival {
            flow,
            reverse: false,
            seq,
            size: 200,
            sent_at: seq * 20 * NS_PER_MS,
            tag: AppTag {
                unit: 0,
                unit_type: (seq == 0) as u8,
                fragment: 0,
                fragments: 1,
            },
            ecn: Default::default(),
        }
    }

    fn sends(io: &AppIo) -> Vec<(u32, bool, u32, AppTag)> {
        io.actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send {
                    flow,
                    reverse,
                    size,
                    tag,
                    ..
                } => Some((*flow, *reverse, *size, *tag)),
                _ => None,
            })
            .collect()
    }

    /// A one-way call loses seqs 5, 6 and 13 of 0..=20. The callee's RR (A.1: seq 0
    /// is probation, the base is seq 1): expected 20, received 17, cumulative lost 3,
    /// fraction (3 << 8)/20 = 38. It goes back on the call's flow (84 B) and the
    /// caller, counting from its first sequence number 0, gets 3/21: exactly the
    /// packets lost, as the receiver's own count says.
    #[test]
    fn rr_loss_is_the_packets_lost() {
        let c = cfg(false);
        let mut call = VoipCall {
            call: 0,
            cfg: c,
            dirs: vec![Direction::new(7, &c, Rng::stream(5, "v"))],
            rtcp: Some(Box::new(CallRtcp::new(
                rtcp_cfg(80_000.0, false),
                &c,
                1,
                [Rng::stream(1, "a"), Rng::stream(1, "b")],
            ))),
        };
        let mut io = AppIo::new(0);
        for seq in (0..=20u64).filter(|s| ![5, 6, 13].contains(s)) {
            let at = seq * 20 * NS_PER_MS + 30 * NS_PER_MS;
            call.on_datagram(at, &voice(7, seq), &mut io);
        }
        let t = call.rtcp.as_ref().unwrap().members[1].next();
        assert!(t > 430 * NS_PER_MS, "the test's packets all arrive first");
        io.reset(0);
        call.on_wake(t, &mut io);
        let rr = sends(&io);
        assert_eq!(rr.len(), 1);
        let (flow, reverse, size, tag) = rr[0];
        assert_eq!((flow, reverse, size, tag.unit_type), (7, true, 84, TAG_RR));
        let back = Arrival {
            flow: 7,
            reverse: true,
            seq: tag.unit as u64,
            size,
            sent_at: t,
            tag,
            ecn: Default::default(),
        };
        call.on_datagram(t + 30 * NS_PER_MS, &back, &mut io);
        let l = call.ledger(0).unwrap();
        let b = l.last_block().unwrap();
        assert_eq!(
            (b.cumulative_lost, b.fraction_lost, b.extended_max),
            (3, 38, 20)
        );
        assert_eq!(l.loss_fraction(), 3.0 / 21.0);
        let mut out = Vec::new();
        VoipCall::report(&[&call], &mut out);
        let get = |n: &str| match out.iter().find(|(k, _)| *k == n).unwrap().1 {
            Val::F(x) => x,
            Val::U(x) => x as f64,
            Val::I(x) => x as f64,
            _ => f64::NAN,
        };
        assert_eq!(get("voice_loss_rate"), get("loss_fraction_rr"));
        assert_eq!(get("cumulative_lost_rr"), 3.0);
        assert_eq!(get("fraction_lost_rr_mean"), 38.0 / 256.0);
        assert_eq!((get("rtcp_packets"), get("rtcp_bytes")), (1.0, 84.0));
        assert_eq!(get("rr_received"), 1.0);
    }

    /// In a conversation the caller's report is an SR with a block about the callee's
    /// stream (104 B), sent forward on the caller's own flow; its arrival gives the
    /// callee both the SR (LSR) and the block.
    #[test]
    fn conversation_reports_are_srs_with_a_block() {
        let c = cfg(false);
        let mut call = VoipCall {
            call: 0,
            cfg: c,
            dirs: vec![
                Direction::new(4, &c, Rng::stream(5, "v")),
                Direction::new(5, &c, Rng::stream(5, "w")),
            ],
            rtcp: Some(Box::new(CallRtcp::new(
                rtcp_cfg(160_000.0, false),
                &c,
                2,
                [Rng::stream(1, "a"), Rng::stream(1, "b")],
            ))),
        };
        let mut io = AppIo::new(0);
        for seq in 0..10u64 {
            let at = seq * 20 * NS_PER_MS + 30 * NS_PER_MS;
            call.on_datagram(at, &voice(5, seq), &mut io);
        }
        let t = call.rtcp.as_ref().unwrap().members[0].next();
        io.reset(0);
        call.on_wake(t, &mut io);
        let sr: Vec<_> = sends(&io)
            .into_iter()
            .filter(|s| s.3.unit_type == TAG_SR)
            .collect();
        assert_eq!(sr.len(), 1);
        let (flow, reverse, size, tag) = sr[0];
        assert_eq!((flow, reverse, size), (4, false, 104));
        let d = Arrival {
            flow: 4,
            reverse: false,
            seq: tag.unit as u64,
            size,
            sent_at: t,
            tag,
            ecn: Default::default(),
        };
        call.on_datagram(t + 30 * NS_PER_MS, &d, &mut io);
        let l = call.ledger(1).unwrap();
        assert_eq!(l.reports(), 1);
        assert_eq!(l.last_block().unwrap().cumulative_lost, 0);
        assert_eq!(call.ledger(0).unwrap().packets(), (1, 104));
    }
}
