//! Run guards: a run that cannot advance simulated time, or whose state would outgrow
//! the machine, stops with an error that says why instead of hanging or being killed.

use super::*;
use crate::net::packet::Packet;

/// More events than this at one instant means time is not advancing (a source whose
/// gaps round to 0 ns). Legitimate bursts at one instant are far smaller: 100 000
/// flows starting together are a few hundred thousand events.
pub const MAX_EVENTS_AT_ONE_INSTANT: u32 = 10_000_000;

/// The event budget is checked per tenth of a simulated second (a tenth of it each).
pub const EVENT_BUDGET_WINDOW: Nanos = 100_000_000;

/// The memory estimate is refreshed this often (events).
pub const MEMORY_CHECK_EVERY: u64 = 1 << 16;

#[derive(Clone, Copy, Debug, Default)]
pub struct Guard {
    pub last_time: Nanos,
    pub same_time: u32,
    pub max_memory: u64,
    /// Events allowed per simulated second (a tenth of them per
    /// [`EVENT_BUDGET_WINDOW`]), the end of the current window and what is left of it.
    pub max_events_per_second: u64,
    pub window_end: Nanos,
    pub events_left: u64,
}

/// Why a run stopped before its end.
#[derive(Clone, Debug, PartialEq)]
pub enum RunFailure {
    Stalled {
        at: Nanos,
        /// The component whose event repeated at that instant (the last one handled).
        what: String,
    },
    /// More than `limit`/10 events in the tenth of a simulated second from `from`.
    TooManyEvents {
        from: Nanos,
        limit: u64,
        what: String,
    },
    Memory {
        bytes: u64,
        limit: u64,
        what: &'static str,
    },
}

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunFailure::Stalled { at, what } => write!(
                f,
                "simulated time stopped advancing at {:.6} s: more than {MAX_EVENTS_AT_ONE_INSTANT} events at one instant, the last from {what}",
                *at as f64 / 1e9
            ),
            RunFailure::TooManyEvents { from, limit, what } => write!(
                f,
                "the 100 ms of simulated time from {:.1} s took more than {} events (max_events_per_second = {limit}), the last from {what}; raise max_events_per_second if this load is intended",
                *from as f64 / 1e9,
                limit / 10
            ),
            RunFailure::Memory { bytes, limit, what } => write!(
                f,
                "this run would keep ~{:.2} GB, mostly {what}, above max_memory = {:.2} GB; shorten the run, raise output intervals, lower buffer limits or raise max_memory",
                *bytes as f64 / 1e9,
                *limit as f64 / 1e9
            ),
        }
    }
}

impl std::error::Error for RunFailure {}

/// The default `max_memory`: half the memory this process may use — the smallest of
/// the machine's memory (`/proc/meminfo` MemTotal), the cgroup's limit
/// (`/sys/fs/cgroup/memory.max`, cgroup v2) and the address-space limit (RLIMIT_AS) —
/// so that a run under a limit fails with a clear error instead of being aborted by
/// the allocator (8 GB when none can be read).
pub fn default_max_memory() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    [total, cgroup, address_space_limit()]
        .into_iter()
        .flatten()
        .min()
        .map_or(8_000_000_000, |b| b / 2)
}

/// RLIMIT_AS, when one is set.
#[cfg(target_os = "linux")]
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `r`, which lives for the call.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

#[cfg(not(target_os = "linux"))]
fn address_space_limit() -> Option<u64> {
    None
}

/// Bytes one dumbbell host pair costs at least before any traffic: four access links
/// and two nodes with their names (a lower bound: qdisc queues and routes add more).
pub const HOST_PAIR_BYTES: u64 = 4 * std::mem::size_of::<crate::net::link::Link>() as u64
    + 2 * (std::mem::size_of::<crate::net::topology::Node>() as u64 + 16);

/// Refuse, before anything is allocated, a topology whose host groups alone would
/// exceed `max_memory` (a `count = 1e9` typo would otherwise allocate until killed).
pub fn check_topology_estimate(
    spec: &crate::scenario::spec::TopologySpec,
    max_memory: u64,
) -> Result<()> {
    let mut bytes = 0u64;
    for (gi, g) in spec.hosts.iter().enumerate() {
        bytes = bytes.saturating_add(u64::from(g.count).saturating_mul(HOST_PAIR_BYTES));
        if bytes > max_memory {
            return Err(ScenarioError::new(
                format!("topology.hosts[{gi}].count"),
                format!(
                    "{}: the host groups up to this one would take ~{:.2} GB (~{} B per host pair) before any traffic, above max_memory = {:.2} GB; use fewer host pairs or raise max_memory",
                    g.count,
                    bytes as f64 / 1e9,
                    HOST_PAIR_BYTES,
                    max_memory as f64 / 1e9
                ),
            ));
        }
    }
    Ok(())
}

/// Bytes that `n` rows of `T` take.
fn rows<T>(n: usize) -> u64 {
    (n * std::mem::size_of::<T>()) as u64
}

impl Simulation {
    /// Which component an event belongs to, for a stalled run's error.
    pub(super) fn describe_event(&self, ev: Event) -> String {
        let link = |l: u32| {
            let l = &self.links[l as usize];
            format!("link {} ({})", l.name, l.qdisc.kind_name())
        };
        match ev {
            Event::LinkTxDone { link: l } | Event::LinkArrival { link: l } => {
                format!("{}: check its rate", link(l))
            }
            Event::QdiscTimer { link: l } => format!("the queue discipline timer of {}", link(l)),
            Event::LinkRateChange { link: l } => format!("the rate schedule of {}", link(l)),
            Event::AccessTimer { link: l } => format!("the access model of {}", link(l)),
            Event::App { app } => {
                let e = &self.entries[self.app_entry[app as usize] as usize];
                format!(
                    "traffic entry \"{}\" ({}): a source too fast for 1 ns resolution? check its rate and sizes",
                    e.name, e.kind
                )
            }
            Event::Transport { .. } => "a TCP endpoint's timer".to_string(),
            Event::Sample | Event::TcpSample | Event::FlowSample => {
                "the time-series sampler".to_string()
            }
            Event::WarmupEnd => "the end of the warm-up".to_string(),
        }
    }

    /// The biggest parts of the run's state, in bytes, largest first.
    pub fn memory_parts(&self) -> Vec<(&'static str, u64)> {
        let mut parts = vec![
            ("packets", rows::<Packet>(self.packets.capacity())),
            ("flows", rows::<Flow>(self.flows.len())),
            ("TCP endpoints", rows::<TcpEndpoint>(self.tcp.len())),
            (
                "time-series rows",
                self.series
                    .as_ref()
                    .map_or(0, |s| rows::<SampleRow>(s.rows.len())),
            ),
            (
                "TCP time-series rows",
                self.tcp_series
                    .as_ref()
                    .map_or(0, |s| rows::<TcpSampleRow>(s.rows.len())),
            ),
            (
                "flow time-series rows",
                self.flow_series
                    .as_ref()
                    .map_or(0, |s| rows::<FlowSampleRow>(s.rows.len())),
            ),
            (
                "drop-log rows",
                self.drop_log
                    .as_ref()
                    .map_or(0, |l| rows::<DropRecord>(l.len())),
            ),
            ("pending events", self.events.len() as u64 * 32),
        ];
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        parts
    }

    pub(super) fn check_memory(&self) -> std::result::Result<(), RunFailure> {
        let parts = self.memory_parts();
        let bytes: u64 = parts.iter().map(|p| p.1).sum();
        if bytes > self.guard.max_memory {
            return Err(RunFailure::Memory {
                bytes,
                limit: self.guard.max_memory,
                what: parts[0].0,
            });
        }
        Ok(())
    }

    /// Refuse a run whose opt-in time series alone would exceed `max_memory`.
    pub(super) fn check_series_estimate(&self) -> Result<()> {
        if let Some(s) = &self.series {
            let samples = self.end / s.interval + 1;
            let est = samples.saturating_mul(s.links.len() as u64) * rows::<SampleRow>(1);
            if est > self.guard.max_memory {
                return Err(ScenarioError::new(
                    "output.timeseries",
                    format!(
                        "this run would keep ~{:.2} GB of time-series rows ({samples} samples x {} links), above max_memory = {:.2} GB; use a longer interval, `output.timeseries_links`, or raise max_memory",
                        est as f64 / 1e9,
                        s.links.len(),
                        self.guard.max_memory as f64 / 1e9
                    ),
                ));
            }
        }
        if let Some(s) = &self.flow_series {
            let samples = self.end / s.interval + 1;
            let flows = self.static_flows.max(1) as u64;
            let est = samples
                .saturating_mul(flows)
                .saturating_mul(rows::<FlowSampleRow>(1));
            if est > self.guard.max_memory {
                return Err(ScenarioError::new(
                    "output.flow_timeseries",
                    format!(
                        "this run would keep ~{:.2} GB of flow time-series rows ({samples} samples x {flows} flows), above max_memory = {:.2} GB; use a longer interval or raise max_memory",
                        est as f64 / 1e9,
                        self.guard.max_memory as f64 / 1e9
                    ),
                ));
            }
        }
        if let Some(s) = &self.tcp_series {
            // One row per TCP flow per sample; the flows known at build time (at least one).
            let samples = self.end / s.interval + 1;
            let flows = self.flows.len().max(1) as u64;
            let est = samples
                .saturating_mul(flows)
                .saturating_mul(rows::<TcpSampleRow>(1));
            if est > self.guard.max_memory {
                return Err(ScenarioError::new(
                    "output.tcp_timeseries",
                    format!(
                        "this run would keep ~{:.2} GB of TCP time-series rows ({samples} samples x {flows} flows), above max_memory = {:.2} GB; use a longer interval or raise max_memory",
                        est as f64 / 1e9,
                        self.guard.max_memory as f64 / 1e9
                    ),
                ));
            }
        }
        Ok(())
    }
}
