//! Emulation: a scenario's dumbbell bottleneck applied in real time to real packets
//! between two network namespaces (`aqmlab emulate`, `docs/emulation.md`).
//!
//! The Python side (`python/aqmlab/emulate/`) creates the namespaces, addresses, routes
//! and the traffic; this module owns the data path. It creates one TUN device in each
//! namespace (`sys::open_tun` after `setns`), reads every IPv4 datagram the left
//! namespace routes into its TUN, runs it through a `pipe::Pipe` built from the
//! scenario's bottleneck link — the same `Qdisc` code, parameters and random stream
//! (`link[L->R].qdisc`) as a simulation of that scenario and seed — and writes it into
//! the right namespace's TUN at its computed departure + delay; the reverse link
//! (`R->L`) does the same the other way. The access links of a dumbbell are folded in
//! as extra per-host delay (their serialisation, 1 Gbit/s by default, is not modelled).
//!
//! Timing: one thread, CLOCK_MONOTONIC ns, `ppoll` with 1 ns timer slack until
//! `busy_poll_ns` before the next deadline, then spinning; optionally SCHED_FIFO. The
//! scheduling error (actual write time − computed departure) of every datagram is
//! recorded and reported (`sched_error`), so a run shows how honest its timing was.
//!
//! Control: the process's control fd (stdin) — a `g` starts the measurement clock
//! (t0; statistics restart at t0 + warm-up, and are reported as they stand at
//! t0 + `measure_ns`), a `q` or end-of-file stops the run.

pub mod ipv4;
pub mod pipe;
pub mod sys;

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::measure::histogram::Histogram;
use crate::net::topology;
use crate::qdisc::Discipline;
use crate::scenario::{ScenarioError, ScenarioSpec};
use crate::sim::time::{millis, secs, Nanos, NS_PER_MS};
use pipe::{Pipe, PipeSpec};

/// How `emulate::run` is wired to the namespaces the caller made.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuConfig {
    /// Namespace files (`/var/run/netns/NAME`) of the left (senders of the forward
    /// direction) and right sides.
    pub left_netns: String,
    pub right_netns: String,
    /// TUN device names to create in them.
    pub left_tun: String,
    pub right_tun: String,
    /// Every host of the dumbbell that has an address: node name and IPv4 address.
    pub hosts: Vec<HostAddr>,
    /// Seed of the qdisc random streams (None: the scenario's).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Spin instead of sleeping when the next deadline is this close (ns).
    #[serde(default = "default_busy_poll")]
    pub busy_poll_ns: u64,
    /// Ask for SCHED_FIFO (root).
    #[serde(default)]
    pub realtime: bool,
    /// Run on this CPU only (None: wherever the scheduler puts it), e.g. one kept
    /// free of other work with `isolcpus`.
    #[serde(default)]
    pub cpu: Option<usize>,
    /// Stop after this long even without a stop command (a safety net, ns).
    pub max_duration_ns: u64,
    /// End of the measurement, after the start command (ns; None: at the stop). The
    /// emulator keeps forwarding after it, so packets in flight still arrive.
    #[serde(default)]
    pub measure_ns: Option<u64>,
}

impl EmuConfig {
    pub fn from_json_str(text: &str) -> Result<Self, ScenarioError> {
        serde_json::from_str(text).map_err(|e| ScenarioError::new("emulate", e.to_string()))
    }
}

fn default_busy_poll() -> u64 {
    50_000
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostAddr {
    pub node: String,
    pub ip: String,
}

#[derive(Debug)]
pub enum EmuError {
    Scenario(ScenarioError),
    Sys(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Scenario(e) => write!(f, "{e}"),
            EmuError::Sys(e) => write!(f, "{e}"),
        }
    }
}

impl From<ScenarioError> for EmuError {
    fn from(e: ScenarioError) -> Self {
        EmuError::Scenario(e)
    }
}

fn sys_err(what: &str) -> impl FnOnce(io::Error) -> EmuError + '_ {
    move |e| EmuError::Sys(format!("{what}: {e}"))
}

/// The two pipes (forward `L->R`, reverse `R->L`) of `spec`'s dumbbell.
pub fn build_pipes(spec: &ScenarioSpec, cfg: &EmuConfig) -> Result<(Pipe, Pipe), ScenarioError> {
    if spec.topology.kind != "dumbbell" {
        return Err(ScenarioError::new(
            "topology.kind",
            format!(
                "\"{}\": emulation supports a dumbbell topology only",
                spec.topology.kind
            ),
        ));
    }
    for (path, l) in [
        ("topology.bottleneck", spec.topology.bottleneck.as_ref()),
        ("topology.reverse", spec.topology.reverse.as_ref()),
    ] {
        let Some(l) = l else { continue };
        for (field, set) in [
            ("rate_schedule", l.rate_schedule.is_some()),
            ("rate_process", l.rate_process.is_some()),
            ("outages", l.outages.is_some()),
            ("jitter", l.jitter.is_some()),
            ("loss", l.loss.is_some_and(|p| p > 0.0)),
        ] {
            if set {
                return Err(ScenarioError::new(
                    format!("{path}.{field}"),
                    "not supported in emulation yet (a fixed rate, delay and qdisc only)",
                ));
            }
        }
    }
    let seed = cfg.seed.unwrap_or(spec.seed);
    let topo = topology::build(&spec.topology, seed)?;
    let mut hosts = Vec::new();
    for (i, h) in cfg.hosts.iter().enumerate() {
        let path = format!("emulate.hosts[{i}]");
        let node = topo.node(&h.node).ok_or_else(|| {
            ScenarioError::new(
                format!("{path}.node"),
                format!("\"{}\": no such host", h.node),
            )
        })?;
        let ip: Ipv4Addr = h.ip.parse().map_err(|_| {
            ScenarioError::new(
                format!("{path}.ip"),
                format!("\"{}\": expected an IPv4 address", h.ip),
            )
        })?;
        let up = topo
            .links
            .iter()
            .find(|l| l.from == node)
            .map_or(0, |l| l.delay);
        let down = topo
            .links
            .iter()
            .find(|l| l.to == node)
            .map_or(0, |l| l.delay);
        hosts.push((u32::from(ip), up, down));
    }
    let node_name = |i: u32| topo.nodes[i as usize].name.clone();
    let mut links = topo.links;
    let names: Vec<(String, String)> = links
        .iter()
        .take(2)
        .map(|l| (node_name(l.from), node_name(l.to)))
        .collect();
    // A dumbbell's first two links are the bottleneck and its reverse (topology::build).
    let rev = links.swap_remove(1);
    let fwd = links.swap_remove(0);
    let log_drops = spec.output.drops;
    let make = |l: crate::net::link::Link, (from, to): (String, String)| {
        Pipe::new(PipeSpec {
            name: l.name,
            from,
            to,
            rate_bps: l.rate_bps,
            delay: l.delay,
            mtu: l.mtu,
            qdisc: l.qdisc,
            rng: l.qdisc_rng,
            hosts: hosts.clone(),
            log_drops,
        })
    };
    let mut it = names.into_iter();
    let f = make(fwd, it.next().expect("two links"));
    let r = make(rev, it.next().expect("two links"));
    Ok((f, r))
}

/// Create a TUN named `name` inside the namespace at `ns`, then return to `home`.
fn tun_in(ns: &str, name: &str, home: &std::fs::File) -> Result<std::os::fd::OwnedFd, EmuError> {
    sys::enter_netns(ns).map_err(sys_err(ns))?;
    let fd = sys::open_tun(name);
    // SAFETY: setns on a descriptor we own.
    let back = unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) };
    if back != 0 {
        return Err(EmuError::Sys(format!(
            "returning to the original namespace: {}",
            io::Error::last_os_error()
        )));
    }
    fd.map_err(sys_err(name))
}

/// One time-series sample of a pipe.
fn sample(p: &Pipe, t: Nanos) -> Value {
    json!({
        "time_ns": t,
        "link": p.name,
        "qlen_pkts": p.qdisc.len_packets() as u64,
        "qlen_bytes": p.qdisc.len_bytes(),
        "sojourn_ms": millis(p.stats.last_sojourn),
        "rate_bps": p.rate_bps,
        "drop_prob": p.qdisc.drop_prob().unwrap_or(f64::NAN),
    })
}

fn nan_null(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The `queues` row of a pipe, measured over [window_start, end].
fn queue_row(p: &Pipe, end: Nanos) -> Value {
    let s = &p.stats;
    let end = end.max(s.window_start + 1);
    let window = end - s.window_start;
    let ms = |ns: f64| nan_null(ns / 1e6);
    let offered = s.arrivals;
    json!({
        "link": p.name, "qdisc": p.qdisc.kind_name(), "from": p.from, "to": p.to,
        "rate_bps": p.rate_bps,
        "sojourn_ms_mean": ms(s.sojourn.mean()),
        "sojourn_ms_p50": ms(s.sojourn.quantile(0.5)),
        "sojourn_ms_p95": ms(s.sojourn.quantile(0.95)),
        "sojourn_ms_p99": ms(s.sojourn.quantile(0.99)),
        "sojourn_ms_max": millis(s.sojourn.max()),
        "qlen_pkts_mean": s.qlen_pkts.mean(end),
        "qlen_bytes_mean": s.qlen_bytes.mean(end),
        "arrivals": s.arrivals, "enqueued": s.enqueued, "dequeued": s.dequeued,
        "drops": s.qdisc_drops(), "drops_overflow": s.drops_overflow,
        "drops_early": s.drops_early, "drops_forced": s.drops_forced,
        "drops_random": 0, "drops_outage": 0, "marks": s.marks,
        "drop_rate": if offered > 0 { s.qdisc_drops() as f64 / offered as f64 } else { 0.0 },
        "utilization": s.busy_ns as f64 / window as f64,
        "throughput_bps": s.tx_bytes as f64 * 8.0 / secs(window),
    })
}

fn flow_rows(p: &Pipe) -> Vec<Value> {
    p.flows
        .iter()
        .filter_map(|f| {
            let k = f.key?;
            Some(json!({
                "link": p.name, "proto": k.proto,
                "src": Ipv4Addr::from(k.src).to_string(), "dst": Ipv4Addr::from(k.dst).to_string(),
                "sport": k.sport, "dport": k.dport,
                "packets": f.packets, "bytes": f.bytes, "drops": f.drops, "marks": f.marks,
            }))
        })
        .collect()
}

fn drop_rows(p: &Pipe, t0: Nanos, until: Nanos) -> Vec<Value> {
    let Some(log) = &p.drop_log else {
        return Vec::new();
    };
    log.iter()
        .filter(|d| d.time <= until)
        .map(|d| {
            let k = p.flows[d.flow as usize].key;
            json!({
                "time_ns": d.time.saturating_sub(t0), "link": p.name,
                "src": k.map(|k| Ipv4Addr::from(k.src).to_string()),
                "sport": k.map(|k| k.sport), "dport": k.map(|k| k.dport),
                "packet": d.packet, "size_bytes": d.size, "reason": d.reason.name(), "at": d.at.name(),
            })
        })
        .collect()
}

/// Summary of the scheduling error in µs.
fn sched_summary(h: &Histogram) -> Value {
    let us = |ns: f64| nan_null(ns / 1e3);
    json!({
        "count": h.count(),
        "mean_us": us(h.mean()),
        "p50_us": us(h.quantile(0.5)),
        "p99_us": us(h.quantile(0.99)),
        "p999_us": us(h.quantile(0.999)),
        "max_us": h.max() as f64 / 1e3,
    })
}

/// Run the emulator until the control fd says stop (or `max_duration_ns`). Writes
/// `ready\n` to `ready_fd` once both TUN devices exist. Returns the report (JSON).
pub fn run(
    spec: &ScenarioSpec,
    cfg: &EmuConfig,
    control: RawFd,
    ready_fd: RawFd,
) -> Result<Value, EmuError> {
    let (mut fwd, mut rev) = build_pipes(spec, cfg)?;
    let home = std::fs::File::open("/proc/thread-self/ns/net").map_err(sys_err("own namespace"))?;
    let tun_l = tun_in(&cfg.left_netns, &cfg.left_tun, &home)?;
    let tun_r = tun_in(&cfg.right_netns, &cfg.right_tun, &home)?;
    drop(home);
    sys::set_nonblocking(control).map_err(sys_err("control fd"))?;
    sys::precise_timers();
    let priority = if cfg.realtime {
        sys::realtime(10)
    } else {
        None
    };
    let cpu = choose_cpu(cfg.cpu)?;
    let (lfd, rfd) = (tun_l.as_raw_fd(), tun_r.as_raw_fd());
    sys::write(ready_fd, b"ready\n").map_err(sys_err("ready fd"))?;

    let warmup = spec.warmup.map_or(0, |w| w.0);
    let ts_every = spec.output.timeseries.map(|d| d.0.max(NS_PER_MS));
    let start = sys::mono_ns();
    let hard_stop = start + cfg.max_duration_ns;
    let mut t0: Option<Nanos> = None;
    let mut restart_at: Option<Nanos> = None;
    let mut ts_next: Option<Nanos> = None;
    let mut series: Vec<Value> = Vec::new();
    let mut sched = Histogram::new();
    let (mut late_1ms, mut write_errors, mut spins, mut sleeps) = (0u64, 0u64, 0u64, 0u64);
    let mut buf = vec![0u8; 65536];
    let mut check_control_at = 0;
    let mut stop_reason = "max_duration";
    let mut measure_end: Option<Nanos> = None;
    // The first late departures (computed time, lateness), for diagnosis.
    let mut late_log: Vec<(Nanos, Nanos)> = Vec::with_capacity(1000);
    let mut snapshot: Option<Value> = None;
    const BATCH: usize = 64;
    'run: loop {
        let now = sys::mono_ns();
        if now >= hard_stop {
            break;
        }
        if now >= check_control_at {
            check_control_at = now + NS_PER_MS;
            loop {
                match sys::read(control, &mut buf[..64]).map_err(sys_err("control fd"))? {
                    sys::Read::Got(n) => {
                        if buf[..n].contains(&b'g') && t0.is_none() {
                            t0 = Some(now);
                            restart_at = Some(now + warmup);
                            measure_end = cfg.measure_ns.map(|d| now + d.max(warmup));
                            ts_next = ts_every.map(|_| now);
                        }
                        if buf[..n].contains(&b'q') {
                            stop_reason = "stopped";
                            break 'run;
                        }
                    }
                    sys::Read::WouldBlock => break,
                    sys::Read::Eof => {
                        stop_reason = "stopped";
                        break 'run;
                    }
                }
            }
        }
        if let Some(w) = restart_at.filter(|&w| now >= w) {
            fwd.advance(w);
            rev.advance(w);
            fwd.restart_stats(w);
            rev.restart_stats(w);
            sched = Histogram::new();
            late_1ms = 0;
            restart_at = None;
        }
        // Time series as a simulation writes them: every interval from time zero to
        // the end of the measurement, both ends included.
        while let (Some(t), Some(every), Some(z)) = (ts_next, ts_every, t0) {
            if now < t || measure_end.is_some_and(|m| t > m) {
                break;
            }
            for p in [&mut fwd, &mut rev] {
                p.advance(t);
                series.push(sample(p, t - z));
            }
            ts_next = Some(t + every);
        }
        if let Some(m) = measure_end.filter(|&m| now >= m && restart_at.is_none()) {
            fwd.advance(m);
            rev.advance(m);
            snapshot = Some(measurement(&fwd, &rev, m, &sched, late_1ms));
            measure_end = None;
            ts_next = None;
        }
        for (p, out) in [(&mut fwd, rfd), (&mut rev, lfd)] {
            p.advance(now);
            while let Some((slot, due)) = p.pop_due(now) {
                let t = sys::mono_ns();
                if sys::write(out, p.datagram(slot)).is_err() {
                    write_errors += 1;
                }
                let err = t.saturating_sub(due);
                sched.record(err);
                if err > NS_PER_MS {
                    late_1ms += 1;
                    if late_log.len() < 1000 {
                        late_log.push((due, err));
                    }
                }
                p.release(slot);
            }
        }
        let mut more = false;
        for (p, inp) in [(&mut fwd, lfd), (&mut rev, rfd)] {
            let mut n = 0;
            while n < BATCH {
                match sys::read(inp, &mut buf).map_err(sys_err("TUN read"))? {
                    sys::Read::Got(len) => {
                        p.arrive(sys::mono_ns(), &buf[..len]);
                        n += 1;
                    }
                    sys::Read::WouldBlock => break,
                    sys::Read::Eof => return Err(EmuError::Sys("TUN device closed".into())),
                }
            }
            more |= n == BATCH;
        }
        if more {
            continue;
        }
        let next = [
            fwd.next_deadline(),
            rev.next_deadline(),
            ts_next,
            restart_at,
            measure_end,
            Some(hard_stop),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("hard stop is always a deadline");
        let now = sys::mono_ns();
        if next <= now + cfg.busy_poll_ns {
            spins += 1;
            continue;
        }
        sleeps += 1;
        let ready = sys::wait_readable(&[lfd, rfd, control], Some(next - now - cfg.busy_poll_ns))
            .map_err(sys_err("ppoll"))?;
        if ready & 0b100 != 0 {
            check_control_at = 0;
        }
    }
    let end = sys::mono_ns();
    fwd.advance(end);
    rev.advance(end);
    let z = t0.unwrap_or(start);
    let mut report = snapshot.unwrap_or_else(|| measurement(&fwd, &rev, end, &sched, late_1ms));
    let until = report["end_mono_ns"].as_u64().unwrap_or(end);
    let mut drops = drop_rows(&fwd, z, until);
    drops.extend(drop_rows(&rev, z, until));
    let extra = json!({
        "stop": stop_reason,
        "realtime": priority.is_some(),
        "priority": priority,
        "cpu": cpu,
        "busy_poll_ns": cfg.busy_poll_ns,
        "t0_mono_ns": z,
        "drops": drops,
        "timeseries": series,
        "write_errors": write_errors,
        "rejected": fwd.rejected + rev.rejected,
        "loop": {"spins": spins, "sleeps": sleeps},
        "late": late_log.iter().map(|&(t, e)| json!([t.saturating_sub(z), e])).collect::<Vec<_>>(),
    });
    if let (Value::Object(r), Value::Object(e)) = (&mut report, extra) {
        r.extend(e);
    }
    Ok(report)
}

/// Pin the emulator to `wanted` (None: leave it to the scheduler); a CPU outside the
/// allowed set is an error naming both.
fn choose_cpu(wanted: Option<usize>) -> Result<Option<usize>, EmuError> {
    let Some(c) = wanted else { return Ok(None) };
    let allowed = sys::allowed_cpus().map_err(sys_err("CPU affinity"))?;
    if !allowed.contains(&c) {
        return Err(EmuError::Scenario(ScenarioError::new(
            "emulate.cpu",
            format!("{c}: not a CPU this process may run on; expected one of {allowed:?}"),
        )));
    }
    sys::pin_to_cpu(c).map_err(sys_err("CPU affinity"))?;
    Ok(Some(c))
}

/// The measured part of the report, as the statistics stand at `end`.
fn measurement(fwd: &Pipe, rev: &Pipe, end: Nanos, sched: &Histogram, late_1ms: u64) -> Value {
    let mut flows = flow_rows(fwd);
    flows.extend(flow_rows(rev));
    json!({
        "window_start_mono_ns": fwd.stats.window_start,
        "end_mono_ns": end,
        "measured_s": secs(end.saturating_sub(fwd.stats.window_start)),
        "queues": [queue_row(fwd, end), queue_row(rev, end)],
        "flows": flows,
        "sched_error": sched_summary(sched),
        "late_over_1ms": late_1ms,
        "in_network": (fwd.in_network() + rev.in_network()) as u64,
    })
}
