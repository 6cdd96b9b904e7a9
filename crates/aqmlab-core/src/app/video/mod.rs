//! Video streams over RTP/UDP, traffic kind `video`: MPEG GOP or trace-driven frame
//! sources, fragmentation into tagged packets, optional TFRC-driven media scaling, and
//! the receiver's frame reassembly, decodability and PSNR (model mode).
//!
//! One app per stream is both ends: the sender sends frame k at `start + k/fps` (all
//! its packets back to back, as Evalvid's sender does), each packet tagged with the
//! frame number (`AppTag::unit`), type (1 = I, 2 = P, 3 = B), fragment and fragment
//! count, so `class = { tag = [0, 3, 2, 1] }` or a scheduler's `classify = "tag"`
//! can treat frame types apart. The receiver counts the fragments that arrive within
//! `max_delay` of their frame (later ones are useless to a player), and at the end
//! judges each frame by `decode.rs` (MPEG-1 dependencies as in Chung & Claypool's Section 2) and, with a
//! `psnr_model`, scores it by `psnr.rs`.
//!
//! Unresponsive streams always send every frame. Responsive ones (`responsive = true`)
//! run TFRC (`rtp/tfrc.rs`, RFC 5348): receiver reports travel back on the flow (reverse
//! datagrams of 40 B, IP + UDP + the 16 B RFC 5348 report, rounded down to a round
//! number; their contents pass in memory, keyed by the report's sequence number, as
//! both ends are one app), and the allowed rate picks the media-scaling level
//! (`scaling.rs`, a reconstruction). The sender's RTT estimate, which RFC 5348
//! carries in each data packet's header, is read directly.
//! With `control = "mmapp"` they run Chung and Claypool's ns-2 `MmApp` five-rate
//! media scaling instead (`mmapp.rs`): the receiver picks the scale once per RTT
//! and sends it back in a 40 B ACK (contents in memory, keyed by sequence number, as for
//! TFRC); the sender applies it from the next I frame as level `top − scale`.
//!
//! Frames count only if their deadline (`sent_at + max_delay`) is within the run; the
//! rest could still be on their way when it ends. The entry's quality columns count
//! only frames due at or after the run's `warmup` (`sent_at ≥ warmup`), but every
//! frame is judged, so a frame after the warm-up whose reference was lost before it
//! is still undecodable; the optional per-frame table lists all frames.

pub mod decode;
pub mod frame;
pub mod mmapp;
pub mod psnr;
pub mod scaling;
pub mod source;
pub mod trace;

use crate::app::rtp::tfrc::{Feedback, TfrcReceiver, TfrcSender};
use crate::app::{AppIo, Application, Arrival, EntryBuild, FlowKind, TrafficKind};
use crate::net::packet::AppTag;
use crate::output::table::{Table, Ty, Val};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use decode::{FrameRec, Order};
use frame::FrameType;
use mmapp::MmReceiver;
use psnr::PsnrModel;
use scaling::Scaling;
use source::{Frames, SizeDist};
use std::collections::VecDeque;
use std::sync::Arc;
use trace::Format;

/// IP bytes of a TFRC receiver report.
pub const FEEDBACK_BYTES: u32 = 40;

pub const VIDEO: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "video",
        summary: "RTP/UDP video: MPEG GOP or Evalvid/CSV trace frames in tagged packets; optional TFRC media scaling; decodable frames and PSNR",
        source: "Evalvid (Klaue, Rathke, Wolisz 2003); MPEG-1 GOP (ISO/IEC 11172-2); TFRC RFC 5348; decodability after Chung & Claypool (Rb-RIO paper, Section 2) and myEvalvid (Ke et al. 2008); MmApp (Chung & Claypool, NS by Example)",
        params: PARAMS,
    },
    build,
};

const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "pattern",
        ty: "string",
        default: "IBBPBBPBB",
        doc: "GOP pattern of I, P, B (synthetic source)",
    },
    ParamDoc {
        name: "i_size",
        ty: "size",
        default: "11000B",
        doc: "I frame size (payload; mean if size_dist = exp)",
    },
    ParamDoc {
        name: "p_size",
        ty: "size",
        default: "8000B",
        doc: "P frame size",
    },
    ParamDoc {
        name: "b_size",
        ty: "size",
        default: "2000B",
        doc: "B frame size",
    },
    ParamDoc {
        name: "size_dist",
        ty: "string",
        default: "fixed",
        doc: "fixed or exp (exponential frame sizes with the type's mean)",
    },
    ParamDoc {
        name: "trace",
        ty: "string",
        default: "-",
        doc:
            "frame trace file (instead of the GOP), looped; path relative to the working directory",
    },
    ParamDoc {
        name: "trace_format",
        ty: "string",
        default: "evalvid",
        doc: "evalvid (frame type size ... per line) or csv (header with type, size)",
    },
    ParamDoc {
        name: "fps",
        ty: "float",
        default: "30",
        doc: "frames per second",
    },
    ParamDoc {
        name: "packet_size",
        ty: "size",
        default: "1000B",
        doc: "largest IP packet; frames are fragmented into packets of at most this",
    },
    ParamDoc {
        name: "header",
        ty: "size",
        default: "40B",
        doc: "IP + UDP + RTP header bytes per packet",
    },
    ParamDoc {
        name: "responsive",
        ty: "bool",
        default: "false",
        doc: "rate control with media scaling (drop B, then P frames): `control`",
    },
    ParamDoc {
        name: "control",
        ty: "string",
        default: "tfrc",
        doc: "responsive streams' rate control: tfrc (RFC 5348) or mmapp (Chung & Claypool's ns-2 MmApp five-rate media scaling: receiver halves the scale on loss per RTT, else +1)",
    },
    ParamDoc {
        name: "threshold",
        ty: "float",
        default: "1",
        doc: "fraction of a frame's packets needed to count it received",
    },
    ParamDoc {
        name: "max_delay",
        ty: "duration",
        default: "1s",
        doc: "packets arriving later than this after their frame count as lost",
    },
    ParamDoc {
        name: "order",
        ty: "string",
        default: "display (GOP), decode (trace)",
        doc: "frame order for B-frame references: display or decode (bitstream)",
    },
    ParamDoc {
        name: "psnr_model",
        ty: "string",
        default: "-",
        doc: "CSV frame,gap,psnr_db from aqmlab.video for psnr_db_mean and video_mos",
    },
    ParamDoc {
        name: "frame_rows",
        ty: "bool",
        default: "false",
        doc: "add one row per frame to the `frames` table",
    },
    crate::app::DATAGRAM_ECN,
];

/// The largest trace or PSNR-model file read (a 1065-frame clip's model is ~2 MB).
pub const MAX_INPUT_FILE_BYTES: u64 = 64 << 20;

/// Read the file at `p.trace` (or another key), naming the key on failure: a regular
/// file of at most [`MAX_INPUT_FILE_BYTES`] (a device or FIFO such as `/dev/zero` would
/// otherwise be read until memory runs out).
fn read_file(p: &Params, key: &str, path: &str) -> Result<String> {
    use std::io::Read;
    let cannot = |e: std::io::Error| p.error(key, format!("\"{path}\": cannot read: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(p.error(key, format!("\"{path}\": not a regular file")));
    }
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(p.error(
            key,
            format!(
                "\"{path}\": {} bytes, above the {} MB limit for input files",
                meta.len(),
                MAX_INPUT_FILE_BYTES >> 20
            ),
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(cannot)?;
    if text.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(p.error(
            key,
            format!(
                "\"{path}\": grew above the {} MB limit while read",
                MAX_INPUT_FILE_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}

fn size_param(p: &mut Params, key: &'static str, default: u64) -> Result<Option<u32>> {
    let given = p.size(key)?;
    let v = given.unwrap_or(default);
    if v == 0 || v > 100_000_000 {
        return Err(p.error(key, format!("{v}B: expected 1B to 100MB")));
    }
    Ok(given.map(|_| v as u32))
}

/// The frame source: a trace if `trace` is given, else the GOP.
fn read_frames(p: &mut Params, e: &EntryBuild) -> Result<(Frames, Order)> {
    let pattern = p.string("pattern")?;
    let sizes = [
        size_param(p, "i_size", 11_000)?,
        size_param(p, "p_size", 8000)?,
        size_param(p, "b_size", 2000)?,
    ];
    let dist = p.choice_or("size_dist", "fixed", &["fixed", "exp"])?;
    let dist_given = p.peek("size_dist").is_some();
    let trace = p.string("trace")?;
    let format = p.choice_or("trace_format", "evalvid", &["evalvid", "csv"])?;
    let order = p.choice_or("order", "", &["display", "decode"])?;
    let Some(file) = trace else {
        if p.peek("trace_format").is_some() {
            return Err(p.error("trace_format", "only with `trace`"));
        }
        let pat = source::parse_pattern(pattern.unwrap_or("IBBPBBPBB"))
            .map_err(|m| p.error("pattern", m))?;
        let frames = Frames::Gop {
            pattern: pat.into(),
            sizes: [
                0,
                sizes[0].unwrap_or(11_000),
                sizes[1].unwrap_or(8000),
                sizes[2].unwrap_or(2000),
            ],
            dist: if dist == "exp" {
                SizeDist::Exponential
            } else {
                SizeDist::Fixed
            },
            rng: e.rng("sizes"),
        };
        let order = if order == "decode" {
            Order::Decode
        } else {
            Order::Display
        };
        return Ok((frames, order));
    };
    for (key, given) in [
        ("pattern", pattern.is_some()),
        ("i_size", sizes[0].is_some()),
        ("p_size", sizes[1].is_some()),
        ("b_size", sizes[2].is_some()),
        ("size_dist", dist_given),
    ] {
        if given {
            return Err(p.error(key, "not with `trace` (the trace gives the frames)"));
        }
    }
    let text = read_file(p, "trace", file)?;
    let fmt = if format == "csv" {
        Format::Csv
    } else {
        Format::Evalvid
    };
    let frames = trace::parse(&text, fmt).map_err(|err| p.error("trace", err.describe(file)))?;
    let order = if order == "display" {
        Order::Display
    } else {
        Order::Decode
    };
    Ok((Frames::Trace(frames.into()), order))
}

fn build(p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    e.ecn = crate::app::read_datagram_ecn(p)?;
    let (frames, order) = read_frames(p, e)?;
    let fps = p.f64_or("fps", 30.0, 0.001, 10_000.0)?;
    let packet_size = p.size_or("packet_size", 1000)?;
    let header = p.size_or("header", 40)?;
    if !(1..=65_535).contains(&packet_size) {
        return Err(p.error(
            "packet_size",
            format!("{packet_size}B: expected 1B to 65535B"),
        ));
    }
    if header >= packet_size {
        return Err(p.error(
            "header",
            format!("{header}B: expected less than packet_size ({packet_size}B)"),
        ));
    }
    let payload = (packet_size - header) as u32;
    let header = header as u32;
    let responsive = p.bool_or("responsive", false)?;
    if !responsive && p.peek("control").is_some() {
        return Err(p.error("control", "only with `responsive = true`"));
    }
    let mmapp = p.choice_or("control", "tfrc", &["tfrc", "mmapp"])? == "mmapp";
    let threshold = p.f64_or("threshold", 1.0, 1e-9, 1.0)?;
    let max_delay = p.positive_duration_or("max_delay", NS_PER_S)?;
    let model = match p.string("psnr_model")? {
        None => None,
        Some(file) => {
            let text = read_file(p, "psnr_model", file)?;
            let m = PsnrModel::parse(&text).map_err(|(line, field, msg)| {
                p.error(
                    "psnr_model",
                    format!("{file}, line {line}, field `{field}`: {msg}"),
                )
            })?;
            Some(Arc::new(m))
        }
    };
    let frame_rows = p.bool_or("frame_rows", false)?;
    let max_size = match &frames {
        Frames::Gop { sizes, dist, .. } if *dist == SizeDist::Fixed => sizes.iter().copied().max(),
        Frames::Gop { .. } => None,
        Frames::Trace(t) => t.iter().map(|f| f.size).max(),
    };
    if let Some(m) = max_size {
        if source::fragments(m, payload) > u16::MAX as u32 {
            return Err(p.error(
                "packet_size",
                format!("a {m} B frame needs more than 65535 packets of {payload} B payload"),
            ));
        }
    }
    let scaling =
        responsive.then(|| Arc::new(Scaling::new(&frames.mean_sizes(), fps, payload, header)));
    let cfg = Arc::new(Config {
        fps,
        payload,
        header,
        threshold,
        max_delay,
        order,
        end: e.duration,
        stop: e.stop,
        warmup: e.warmup,
        model,
        frame_rows,
    });
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        let flow = e.next_flow();
        let start = e.start_for(&format!("flow[{k}]"));
        let mut fr = frames.clone();
        if let Frames::Gop { rng, .. } = &mut fr {
            *rng = e.rng(&format!("flow[{k}].sizes"));
        }
        let app = VideoApp::new(flow, fr, start, cfg.clone(), scaling.clone(), mmapp);
        let a = e.add_app(app);
        e.add_flow(src, dst, FlowKind::Udp, None, a);
        if responsive {
            e.need_route(dst, src, false);
        }
    }
    Ok(())
}

/// Settings shared by an entry's streams.
#[derive(Debug)]
pub struct Config {
    pub fps: f64,
    /// Payload bytes per packet (packet_size − header).
    pub payload: u32,
    pub header: u32,
    pub threshold: f64,
    pub max_delay: Nanos,
    pub order: Order,
    /// The run's end and the source's stop time.
    pub end: Nanos,
    pub stop: Nanos,
    /// The entry row counts frames due from here on.
    pub warmup: Nanos,
    pub model: Option<Arc<PsnrModel>>,
    pub frame_rows: bool,
}

/// TFRC state of a responsive stream.
struct Responsive {
    scaling: Arc<Scaling>,
    tx: TfrcSender,
    rx: TfrcReceiver,
    /// Reports in flight: (sequence number, contents).
    reports: VecDeque<(u64, Feedback)>,
    report_seq: u64,
    /// Next once-per-RTT report time (None until data arrived).
    report_at: Option<Nanos>,
    level: usize,
    /// Sum of the allowed rate sampled at each frame since the warm-up, and the
    /// number of samples, for the mean.
    rate_sum: f64,
    rate_n: u64,
}

/// Five-rate media scaling (`control = "mmapp"`, `mmapp.rs`) of a responsive
/// stream.
struct MmState {
    scaling: Arc<Scaling>,
    rx: MmReceiver,
    /// The sender's scale (from the newest ACK) and the level applied at the GOP's I.
    scale: usize,
    level: usize,
    /// ACKs in flight: (sequence number, scale).
    acks: VecDeque<(u64, usize)>,
    ack_seq: u64,
    /// Next once-per-RTT ACK time (None until data arrived).
    ack_at: Option<Nanos>,
}

/// One video stream: sender and receiver.
pub struct VideoApp {
    flow: u32,
    frames: Frames,
    start: Nanos,
    cfg: Arc<Config>,
    /// Next frame number and packet sequence number.
    next: u64,
    seq: u64,
    /// P frames since the GOP's I (media scaling).
    p_index: u32,
    pub records: Vec<FrameRec>,
    tfrc: Option<Box<Responsive>>,
    mm: Option<Box<MmState>>,
}

impl VideoApp {
    pub fn new(
        flow: u32,
        frames: Frames,
        start: Nanos,
        cfg: Arc<Config>,
        scaling: Option<Arc<Scaling>>,
        mmapp: bool,
    ) -> Self {
        let mm = scaling.clone().filter(|_| mmapp).map(|scaling| {
            let top = scaling.rates.len() - 1;
            // The sender starts at scale 0, the lowest level (I frames only).
            Box::new(MmState {
                rx: MmReceiver::new(top),
                scale: 0,
                level: top,
                scaling,
                acks: VecDeque::new(),
                ack_seq: 0,
                ack_at: None,
            })
        });
        let tfrc = scaling.filter(|_| !mmapp).map(|scaling| {
            // Start at the full media rate (a video cannot begin below its first GOP).
            let x0 = scaling.rates[0];
            let s = (cfg.payload + cfg.header) as f64;
            Box::new(Responsive {
                scaling,
                tx: TfrcSender::new(s, x0, start),
                rx: TfrcReceiver::default(),
                reports: VecDeque::new(),
                report_seq: 0,
                report_at: None,
                level: 0,
                rate_sum: 0.0,
                rate_n: 0,
            })
        });
        VideoApp {
            flow,
            frames,
            start,
            cfg,
            next: 0,
            seq: 0,
            p_index: 0,
            records: Vec::new(),
            tfrc,
            mm,
        }
    }

    /// When frame `k` is due (from k, so rounding never accumulates).
    fn frame_time(&self, k: u64) -> Nanos {
        self.start + (k as f64 * NS_PER_S as f64 / self.cfg.fps).round() as Nanos
    }

    fn send_frame(&mut self, now: Nanos, io: &mut AppIo) {
        let k = self.next;
        self.next += 1;
        let (ty, size) = self.frames.frame(k);
        let size = size.min(self.cfg.payload * u16::MAX as u32);
        match ty {
            FrameType::I => self.p_index = 0,
            FrameType::P => self.p_index += 1,
            FrameType::B => {}
        }
        let keep = match &mut self.tfrc {
            None if self.mm.is_some() => {
                let m = self.mm.as_mut().expect("mmapp");
                if ty == FrameType::I {
                    m.level = m.rx.top - m.scale;
                }
                m.scaling.keeps(m.level, ty, self.p_index)
            }
            None => true,
            Some(r) => {
                if ty == FrameType::I {
                    r.level = r.scaling.level_for(r.tx.x);
                }
                if now >= self.cfg.warmup {
                    r.rate_sum += r.tx.x;
                    r.rate_n += 1;
                }
                r.scaling.keeps(r.level, ty, self.p_index)
            }
        };
        let n = source::fragments(size, self.cfg.payload);
        self.records.push(FrameRec {
            ty,
            sent_at: now,
            sent: keep,
            fragments: n as u16,
            got: 0,
        });
        if !keep {
            return;
        }
        for i in 0..n {
            let bytes = source::fragment_size(size, self.cfg.payload, self.cfg.header, i, n);
            let tag = AppTag {
                unit: k as u32,
                unit_type: ty.tag(),
                fragment: i as u16,
                fragments: n as u16,
            };
            io.send_tagged(self.flow, false, bytes, self.seq, tag);
            self.seq += 1;
        }
    }

    fn send_report(&mut self, now: Nanos, io: &mut AppIo) {
        let flow = self.flow;
        if let Some(r) = &mut self.tfrc {
            let fb = r.rx.report(now);
            r.reports.push_back((r.report_seq, fb));
            io.send_tagged(flow, true, FEEDBACK_BYTES, r.report_seq, AppTag::default());
            r.report_seq += 1;
        }
    }

    /// MmApp's `send_ack_pkt`: adjust the scale and send it back in a 40 B ACK.
    fn send_ack(&mut self, io: &mut AppIo) {
        let flow = self.flow;
        if let Some(m) = &mut self.mm {
            let scale = m.rx.adjust();
            m.acks.push_back((m.ack_seq, scale));
            io.send_tagged(flow, true, FEEDBACK_BYTES, m.ack_seq, AppTag::default());
            m.ack_seq += 1;
        }
    }

    /// MmApp's ACK timer: every RTT estimate until the stream's last frame is due.
    fn ack_timer(&mut self, now: Nanos, io: &mut AppIo) {
        let active = now < self.cfg.stop + self.cfg.max_delay;
        let Some(m) = &mut self.mm else { return };
        if m.ack_at.is_some_and(|t| t <= now) {
            m.ack_at = None;
            self.send_ack(io);
            self.rearm_ack(now, active, io);
        }
    }

    fn rearm_ack(&mut self, now: Nanos, active: bool, io: &mut AppIo) {
        let m = self.mm.as_mut().expect("mmapp");
        if active {
            let rtt = m.rx.rtt.unwrap_or(0.0).round() as Nanos;
            let t = now + rtt.max(NS_PER_MS);
            m.ack_at = Some(t);
            io.wake_at(t);
        }
    }

    /// The receiver's report interval: the sender's RTT, or 100 ms before it has one.
    fn report_interval(&self) -> Nanos {
        self.tfrc
            .as_ref()
            .and_then(|r| r.tx.rtt)
            .unwrap_or(100 * NS_PER_MS)
            .max(NS_PER_MS)
    }

    /// Frames whose deadline is within the run (the ones that count).
    pub fn evaluated(&self) -> &[FrameRec] {
        let n = self
            .records
            .iter()
            .take_while(|f| f.sent_at + self.cfg.max_delay <= self.cfg.end)
            .count();
        &self.records[..n]
    }

    /// Decodability and per-frame PSNR (NaN without a model) of the evaluated frames.
    pub fn judge(&self) -> (Vec<bool>, Vec<f64>) {
        let f = self.evaluated();
        let mut dec = Vec::new();
        decode::decodable(f, self.cfg.threshold, self.cfg.order, &mut dec);
        let mut psnr = Vec::new();
        match &self.cfg.model {
            Some(m) => m.apply(&dec, &mut psnr),
            None => psnr.resize(f.len(), f64::NAN),
        }
        (dec, psnr)
    }
}

impl Application for VideoApp {
    fn start(&mut self, io: &mut AppIo) {
        let t = self.frame_time(0);
        if t < self.cfg.stop {
            io.wake_at(t);
        }
        if let Some(r) = &self.tfrc {
            io.wake_at(r.tx.nofeedback_at);
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        if self.frame_time(self.next) <= now && now < self.cfg.stop {
            self.send_frame(now, io);
            let t = self.frame_time(self.next);
            if t < self.cfg.stop {
                io.wake_at(t);
            }
        }
        self.ack_timer(now, io);
        let interval = self.report_interval();
        let active = now < self.cfg.stop + self.cfg.max_delay;
        let Some(r) = &mut self.tfrc else { return };
        if r.report_at.is_some_and(|t| t <= now) {
            r.report_at = None;
            if r.rx.due() {
                self.send_report(now, io);
            }
            if active {
                let r = self.tfrc.as_mut().expect("responsive");
                r.report_at = Some(now + interval);
                io.wake_at(now + interval);
            }
        }
        let r = self.tfrc.as_mut().expect("responsive");
        if r.tx.nofeedback_at <= now && now < self.cfg.stop {
            r.tx.on_nofeedback(now);
            io.wake_at(r.tx.nofeedback_at);
        }
    }

    fn wants_datagrams(&self) -> bool {
        true
    }

    fn on_datagram(&mut self, now: Nanos, d: &Arrival, io: &mut AppIo) {
        if let (true, Some(m)) = (d.reverse, self.mm.as_mut()) {
            // ACKs before this one were lost; this one is the newest.
            while let Some(&(seq, scale)) = m.acks.front() {
                if seq > d.seq {
                    break;
                }
                m.acks.pop_front();
                if seq == d.seq {
                    m.scale = scale;
                }
            }
            return;
        }
        if d.reverse {
            let Some(r) = &mut self.tfrc else { return };
            // Reports before this one were lost; this one is the newest.
            while let Some(&(seq, fb)) = r.reports.front() {
                if seq > d.seq {
                    break;
                }
                r.reports.pop_front();
                if seq == d.seq {
                    r.tx.on_feedback(now, &fb);
                    io.wake_at(r.tx.nofeedback_at);
                }
            }
            return;
        }
        if let Some(f) = self.records.get_mut(d.tag.unit as usize) {
            if now - f.sent_at <= self.cfg.max_delay {
                f.got += 1;
            }
        }
        if let Some(m) = &mut self.mm {
            if m.rx.on_data(now, d.seq, d.sent_at) {
                self.send_ack(io);
                let active = now < self.cfg.stop + self.cfg.max_delay;
                self.rearm_ack(now, active, io);
            }
            return;
        }
        let interval = self.report_interval();
        let Some(r) = &mut self.tfrc else { return };
        let rtt = r.tx.rtt.unwrap_or(interval);
        let urgent = r.rx.on_data(now, d.seq, d.sent_at, d.size, rtt, r.tx.s);
        let first = r.report_at.is_none();
        if first {
            r.report_at = Some(now + interval);
            io.wake_at(now + interval);
        }
        // The first data packet is answered at once (the sender's first RTT sample).
        if urgent || (first && r.tx.rtt.is_none() && r.report_seq == 0) {
            self.send_report(now, io);
        }
    }

    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        let (mut sent, mut skipped, mut recv, mut dec) = (0u64, 0u64, 0u64, 0u64);
        let (mut psnr_sum, mut mos_sum, mut n_psnr) = (0.0, 0.0, 0u64);
        let (mut rate_sum, mut rate_n) = (0.0, 0u64);
        for a in apps {
            let f = a.evaluated();
            let (d, psnr) = a.judge();
            for (i, fr) in f.iter().enumerate() {
                if fr.sent_at < a.cfg.warmup {
                    continue;
                }
                sent += fr.sent as u64;
                skipped += !fr.sent as u64;
                recv += decode::received(fr, a.cfg.threshold) as u64;
                dec += d[i] as u64;
                if psnr[i].is_finite() {
                    psnr_sum += psnr[i];
                    mos_sum += psnr::mos(psnr[i]) as f64;
                    n_psnr += 1;
                }
            }
            if let Some(r) = &a.tfrc {
                rate_sum += r.rate_sum;
                rate_n += r.rate_n;
            }
        }
        let frac = |x: u64| {
            if sent > 0 {
                1.0 - x as f64 / sent as f64
            } else {
                f64::NAN
            }
        };
        let mean = |s: f64, n: u64| if n > 0 { s / n as f64 } else { f64::NAN };
        out.push(("frames_sent", Val::U(sent)));
        out.push(("frames_skipped", Val::U(skipped)));
        out.push(("frames_received", Val::U(recv)));
        out.push(("frames_decodable", Val::U(dec)));
        out.push(("frame_loss_rate", Val::F(frac(recv))));
        out.push(("decodable_frame_loss_rate", Val::F(frac(dec))));
        out.push(("psnr_db_mean", Val::F(mean(psnr_sum, n_psnr))));
        out.push(("video_mos", Val::F(mean(mos_sum, n_psnr))));
        out.push(("tfrc_rate_bps_mean", Val::F(mean(rate_sum * 8.0, rate_n))));
    }

    fn tables(apps: &[&Self], entry: &str, out: &mut Vec<Table>) {
        if !apps.iter().any(|a| a.cfg.frame_rows) {
            return;
        }
        let mut t = frames_table();
        for a in apps.iter().filter(|a| a.cfg.frame_rows) {
            let (dec, psnr) = a.judge();
            for (i, f) in a.evaluated().iter().enumerate() {
                t.push(vec![
                    Val::S(entry.to_string()),
                    Val::U(a.flow as u64),
                    Val::U(i as u64),
                    Val::S(f.ty.letter().to_string()),
                    Val::B(f.sent),
                    Val::U(f.sent_at),
                    Val::U(f.fragments as u64),
                    Val::U(f.got as u64),
                    Val::B(decode::received(f, a.cfg.threshold)),
                    Val::B(dec[i]),
                    Val::F(psnr[i]),
                ]);
            }
        }
        out.push(t);
    }
}

/// The `frames` table's schema (docs/output.md).
pub fn frames_table() -> Table {
    Table::new(
        "frames",
        &[
            ("app", Ty::S),
            ("flow", Ty::U),
            ("frame", Ty::U),
            ("type", Ty::S),
            ("sent", Ty::B),
            ("sent_at_ns", Ty::U),
            ("fragments", Ty::U),
            ("fragments_received", Ty::U),
            ("received", Ty::B),
            ("decodable", Ty::B),
            ("psnr_db", Ty::F),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Action;
    use crate::sim::rng::Rng;

    fn app(responsive: bool) -> VideoApp {
        app_with(responsive, false)
    }

    fn app_with(responsive: bool, mmapp: bool) -> VideoApp {
        let frames = Frames::Gop {
            pattern: source::parse_pattern("IBBP").unwrap().into(),
            sizes: [0, 2000, 1000, 500],
            dist: SizeDist::Fixed,
            rng: Rng::stream(1, "x"),
        };
        let cfg = Arc::new(Config {
            fps: 25.0,
            payload: 960,
            header: 40,
            threshold: 1.0,
            max_delay: NS_PER_S,
            order: Order::Display,
            end: 10 * NS_PER_S,
            stop: 10 * NS_PER_S,
            warmup: 0,
            model: None,
            frame_rows: false,
        });
        let scaling =
            responsive.then(|| Arc::new(Scaling::new(&frames.mean_sizes(), 25.0, 960, 40)));
        VideoApp::new(3, frames, NS_PER_S, cfg, scaling, mmapp)
    }

    /// Frame 0 (I, 2000 B) at 1 s: 3 packets of 1000, 1000 and 80 + 40 = 120 B, tagged
    /// unit 0, type 1, fragments 0..3 of 3, sequence numbers 0..3; next wake 40 ms later.
    #[test]
    fn an_i_frame_goes_out_as_tagged_fragments() {
        let mut a = app(false);
        let mut io = AppIo::new(0);
        a.start(&mut io);
        assert_eq!(io.actions(), &[Action::WakeAt(NS_PER_S)]);
        io.reset(0);
        a.on_wake(NS_PER_S, &mut io);
        let sends: Vec<(u32, u64, AppTag)> = io
            .actions()
            .iter()
            .filter_map(|x| match *x {
                Action::Send {
                    size,
                    seq,
                    tag,
                    reverse: false,
                    ..
                } => Some((size, seq, tag)),
                _ => None,
            })
            .collect();
        let tag = |fragment| AppTag {
            unit: 0,
            unit_type: 1,
            fragment,
            fragments: 3,
        };
        assert_eq!(
            sends,
            vec![(1000, 0, tag(0)), (1000, 1, tag(1)), (120, 2, tag(2))]
        );
        assert!(io
            .actions()
            .contains(&Action::WakeAt(NS_PER_S + 40 * NS_PER_MS)));
    }

    /// The receiver answers the first data packet with a report at once (40 B, back on
    /// the flow); when it returns, the sender takes its RTT sample from it.
    #[test]
    fn reports_go_back_and_give_the_sender_its_rtt() {
        let mut a = app(true);
        let mut io = AppIo::new(0);
        let d = Arrival {
            flow: 3,
            reverse: false,
            seq: 0,
            size: 1000,
            sent_at: NS_PER_S,
            tag: AppTag {
                unit: 0,
                unit_type: 1,
                fragment: 0,
                fragments: 3,
            },
            ecn: crate::net::packet::Ecn::default(),
        };
        a.records.push(FrameRec {
            ty: FrameType::I,
            sent_at: NS_PER_S,
            sent: true,
            fragments: 3,
            got: 0,
        });
        a.on_datagram(NS_PER_S + 20 * NS_PER_MS, &d, &mut io);
        assert!(io.actions().iter().any(|x| matches!(
            x,
            Action::Send {
                reverse: true,
                size: FEEDBACK_BYTES,
                seq: 0,
                ..
            }
        )));
        assert_eq!(a.records[0].got, 1);
        io.reset(0);
        let back = Arrival {
            reverse: true,
            seq: 0,
            size: FEEDBACK_BYTES,
            tag: AppTag::default(),
            ..d
        };
        a.on_datagram(NS_PER_S + 40 * NS_PER_MS, &back, &mut io);
        let r = a.tfrc.as_ref().unwrap();
        assert_eq!(r.tx.rtt, Some(40 * NS_PER_MS)); // sent at 1 s, report back at 1.04 s
        assert!(r.reports.is_empty());
    }

    /// `control = "mmapp"`, GOP IBBP: the sender starts at scale 0 = I frames only, so
    /// frame 0 (I) goes out and frame 1 (B) is skipped. The first data packet (one-way
    /// 20 ms) makes the receiver adjust (0 → 1), send a 40 B ACK at once and arm its
    /// timer one RTT estimate (40 ms) later; the ACK sets the sender's scale to 1, the
    /// level that keeps P frames (top 2 − 1), applied from the next I frame.
    #[test]
    fn mmapp_starts_at_i_frames_and_scales_up_on_a_lossless_ack() {
        let mut a = app_with(true, true);
        let mut io = AppIo::new(0);
        a.start(&mut io);
        a.on_wake(NS_PER_S, &mut io);
        a.on_wake(NS_PER_S + 40 * NS_PER_MS, &mut io);
        assert!(a.records[0].sent && !a.records[1].sent);
        io.reset(0);
        let d = Arrival {
            flow: 3,
            reverse: false,
            seq: 0,
            size: 1000,
            sent_at: NS_PER_S,
            tag: AppTag {
                unit: 0,
                unit_type: 1,
                fragment: 0,
                fragments: 3,
            },
            ecn: crate::net::packet::Ecn::default(),
        };
        let t = NS_PER_S + 20 * NS_PER_MS;
        a.on_datagram(t, &d, &mut io);
        let acks: Vec<&Action> = io
            .actions()
            .iter()
            .filter(|x| matches!(x, Action::Send { reverse: true, .. }))
            .collect();
        assert_eq!(acks.len(), 1);
        assert!(matches!(
            acks[0],
            Action::Send {
                size: FEEDBACK_BYTES,
                seq: 0,
                ..
            }
        ));
        assert!(io.actions().contains(&Action::WakeAt(t + 40 * NS_PER_MS)));
        let back = Arrival {
            reverse: true,
            seq: 0,
            size: FEEDBACK_BYTES,
            tag: AppTag::default(),
            ..d
        };
        a.on_datagram(t + 20 * NS_PER_MS, &back, &mut io);
        let m = a.mm.as_ref().unwrap();
        assert_eq!((m.scale, m.rx.top, m.level), (1, 2, 2));
        assert!(m.acks.is_empty());
    }
}
