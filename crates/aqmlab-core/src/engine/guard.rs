//! Run guards: a run that cannot advance simulated time, or whose state would outgrow
//! the machine, stops with an error that says why instead of hanging or being killed.

use super::*;
use crate::net::packet::Packet;

/// More events than this at one instant means time is not advancing (a source whose
/// gaps round to 0 ns). Legitimate bursts at one instant are far smaller: 100 000
/// flows starting together are a few hundred thousand events.
pub const MAX_EVENTS_AT_ONE_INSTANT: u32 = 10_000_000;

/// The memory estimate is refreshed this often (events).
pub const MEMORY_CHECK_EVERY: u64 = 1 << 16;

#[derive(Clone, Copy, Debug, Default)]
pub struct Guard {
    pub last_time: Nanos,
    pub same_time: u32,
    pub max_memory: u64,
}

/// Why a run stopped before its end.
#[derive(Clone, Debug, PartialEq)]
pub enum RunFailure {
    Stalled {
        at: Nanos,
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
            RunFailure::Stalled { at } => write!(
                f,
                "simulated time stopped advancing at {:.6} s: more than {MAX_EVENTS_AT_ONE_INSTANT} events at one instant; a source is too fast for 1 ns resolution (check traffic rates and sizes)",
                *at as f64 / 1e9
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

/// The default `max_memory`: half the machine's memory (8 GB if it cannot be read).
pub fn default_max_memory() -> u64 {
    let total_kb = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    total_kb.map_or(8_000_000_000, |kb| kb * 1024 / 2)
}

/// Bytes that `n` rows of `T` take.
fn rows<T>(n: usize) -> u64 {
    (n * std::mem::size_of::<T>()) as u64
}

impl Simulation {
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
                "drop-log rows",
                self.drop_log
                    .as_ref()
                    .map_or(0, |l| rows::<DropRecord>(l.len())),
            ),
            ("pending events", self.events.len() as u64 * 32),
        ];
        parts.sort_by(|a, b| b.1.cmp(&a.1));
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
        Ok(())
    }
}
