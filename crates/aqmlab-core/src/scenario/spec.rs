//! The typed scenario: fixed-structure parts (top level, topology, output).
//! See `docs/scenario.md` for the reference.

use super::error::{Result, ScenarioError};
use super::units;
use crate::sim::time::Nanos;
use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::Value;

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:path, $what:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let v = Value::deserialize(d)?;
                match &v {
                    Value::String(s) => $parse(s)
                        .map($name)
                        .map_err(|e| de::Error::custom(format!("\"{s}\": {e}"))),
                    other => Err(de::Error::custom(format!(
                        "{other}: expected {} as a string with a unit",
                        $what
                    ))),
                }
            }
        }
    };
}

unit_type!(Duration, Nanos, units::parse_duration, "a duration");
unit_type!(Rate, u64, units::parse_rate, "a rate");
unit_type!(Size, u64, units::parse_size, "a size");

fn default_name() -> String {
    "scenario".into()
}
fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Simulated time to run.
    pub duration: Duration,
    /// Statistics are collected from this time on.
    #[serde(default)]
    pub warmup: Option<Duration>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub topology: TopologySpec,
    /// One table per traffic source group; read per kind by `app::build`.
    #[serde(default)]
    pub traffic: Vec<Value>,
    #[serde(default)]
    pub output: OutputSpec,
    /// Stop the run with an error when its state would exceed this (default: half the
    /// machine's memory).
    #[serde(default)]
    pub max_memory: Option<Size>,
    /// Stop the run with an error when a tenth of a simulated second takes more than a
    /// tenth of this many events (default [`DEFAULT_MAX_EVENTS_PER_SECOND`]): a source far too fast for the
    /// scenario would otherwise run for hours.
    #[serde(default)]
    pub max_events_per_second: Option<u64>,
}

/// The default `max_events_per_second`: 50 million, ~3x what 10 Gbit/s of full-sized
/// packets over a dumbbell take (~830 000 packets/s × ~12 events each ≈ 10^7), and
/// about a minute of CPU per simulated second.
pub const DEFAULT_MAX_EVENTS_PER_SECOND: u64 = 50_000_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    /// `dumbbell` or `graph`.
    pub kind: String,
    /// Dumbbell: the forward (left → right) bottleneck.
    #[serde(default)]
    pub bottleneck: Option<LinkSpec>,
    /// Dumbbell: the reverse (right → left) bottleneck; defaults to the forward rate and
    /// delay with a 1000-packet pfifo.
    #[serde(default)]
    pub reverse: Option<LinkSpec>,
    /// Dumbbell: the names of the left and right routers.
    #[serde(default)]
    pub routers: Option<[String; 2]>,
    /// Dumbbell: groups of host pairs.
    #[serde(default)]
    pub hosts: Vec<HostGroup>,
    /// Graph: the nodes.
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    /// Graph: the links.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    /// What the node does besides forwarding: `{ kind = "pep", ... }` (`crate::pep`).
    #[serde(default)]
    pub function: Option<Value>,
}

fn default_count() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostGroup {
    pub name: String,
    #[serde(default = "default_count")]
    pub count: u32,
    /// Access link of each left host (both directions); default 1 Gbit/s, 0 ms.
    #[serde(default)]
    pub left: Option<LinkSpec>,
    /// Access link of each right host (both directions); default 1 Gbit/s, 0 ms.
    #[serde(default)]
    pub right: Option<LinkSpec>,
}

/// A link, or in a graph a pair of links (`duplex`, the default).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Graph links only: endpoints.
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub to: Option<String>,
    /// Graph links only: also create the reverse direction (default true).
    #[serde(default)]
    pub duplex: Option<bool>,
    /// A name for the `queues` table; default `"FROM->TO"`.
    #[serde(default)]
    pub name: Option<String>,
    pub rate: Rate,
    #[serde(default)]
    pub delay: Option<Duration>,
    /// With `delay`: the link's delay is drawn once, U[delay, delay_max], from the
    /// stream `link[NAME].delay` (per-terminal GEO delays of the satellite study).
    #[serde(default)]
    pub delay_max: Option<Duration>,
    /// Per-packet delay variation that keeps FIFO order (`net/jitter`):
    /// `{ amplitude = "5ms", interval = "1ms", distribution = "uniform" }`.
    #[serde(default)]
    pub jitter: Option<JitterSpec>,
    /// Queue discipline table; default `{ kind = "pfifo", limit = "1000pkt" }`.
    #[serde(default)]
    pub qdisc: Option<Value>,
    /// Largest packet in bytes (CoDel/DRR defaults); default 1500 B.
    #[serde(default)]
    pub mtu: Option<Size>,
    /// Bernoulli loss probability applied to every packet entering the link.
    #[serde(default)]
    pub loss: Option<f64>,
    /// Link-down windows: `[{ start = "10s", end = "13s" }, ...]`. Every packet offered
    /// to the link in [start, end) is lost (reason `outage`); packets already queued or
    /// propagating still arrive. Windows must be increasing and disjoint.
    #[serde(default)]
    pub outages: Option<Vec<Outage>>,
    /// Piecewise-constant rate: `[{ at = "10s", rate = "1Mbit" }, ...]`.
    #[serde(default)]
    pub rate_schedule: Option<Vec<RateStep>>,
    /// Random rate process: every U[every_min, every_max] redraw the rate from `rates`.
    #[serde(default)]
    pub rate_process: Option<RateProcess>,
    /// An access model instead of the plain transmitter, by kind with its parameters:
    /// `{ kind = "docsis", ... }` (`net/access`, docs/access/README.md). The older
    /// spelling, a kind name with the parameters in a key of that name
    /// (`model = "docsis"` with `docsis = { ... }`), still works.
    #[serde(default)]
    pub model: Option<Value>,
    /// The older spelling's parameter table for `model = "docsis"`.
    #[serde(default)]
    pub docsis: Option<Value>,
}

/// A link's jitter: an offset from [−amplitude, +amplitude] added to its delay, redrawn
/// every `interval`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    pub amplitude: Duration,
    pub interval: Duration,
    /// Distribution of the offset; `"uniform"` (the default) is the one there is.
    #[serde(default)]
    pub distribution: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub start: Duration,
    pub end: Duration,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    pub at: Duration,
    pub rate: Rate,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateProcess {
    pub every_min: Duration,
    pub every_max: Duration,
    pub rates: Vec<Rate>,
}

/// Default interval of the `queues` table's per-interval samples: 100 ms, the interval
/// Byun's test-bed measured at (dissertation §4.3, "once every 100 msec").
pub const DEFAULT_STATS_INTERVAL: Nanos = 100_000_000;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Sample interval of the `timeseries` table; off when absent.
    #[serde(default)]
    pub timeseries: Option<Duration>,
    /// Interval of the fixed-interval samples behind the `queues` table's `_std` and
    /// `arrival_bps` columns (default `DEFAULT_STATS_INTERVAL`).
    #[serde(default)]
    pub stats_interval: Option<Duration>,
    /// Links sampled in the time series (default: all).
    #[serde(default)]
    pub timeseries_links: Option<Vec<String>>,
    /// Keep the per-drop event log (`drops` table).
    #[serde(default)]
    pub drops: bool,
    /// Links whose transmitted packets are written to `LINK.pcap`.
    #[serde(default)]
    pub pcap: Vec<String>,
    /// Sample interval of the per-flow `tcp` table (cwnd, ssthresh, srtt, in flight);
    /// off when absent.
    #[serde(default)]
    pub tcp_timeseries: Option<Duration>,
    /// Sample interval of the per-flow `flow_series` table (cumulative delivered bytes
    /// and packets of every flow); off when absent.
    #[serde(default)]
    pub flow_timeseries: Option<Duration>,
    /// One row per finite TCP transfer (`transfers` table).
    #[serde(default)]
    pub transfers: bool,
    /// Keep the per-packet sojourn distribution of every link (`sojourn_hist` table).
    #[serde(default)]
    pub sojourn_hist: bool,
    /// Report every flow's one-way delay distribution (`owd_hist` table).
    #[serde(default)]
    pub owd_hist: bool,
}

/// A `ScenarioError` naming the first NaN or infinite float in `v`.
fn check_finite(v: &toml::Value, path: &str) -> Result<()> {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        toml::Value::Float(x) if !x.is_finite() => Err(ScenarioError::new(
            path,
            format!("{x}: expected a finite number"),
        )),
        toml::Value::Table(t) => t.iter().try_for_each(|(k, x)| check_finite(x, &join(k))),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check_finite(x, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

impl ScenarioSpec {
    /// Read a scenario from a JSON value.
    pub fn from_value(v: Value) -> Result<ScenarioSpec> {
        if !v.is_object() {
            return Err(ScenarioError::new("", "a scenario must be a table"));
        }
        let spec: ScenarioSpec = serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            ScenarioError::new(path, e.into_inner().to_string())
        })?;
        spec.validate()?;
        Ok(spec)
    }

    pub fn from_toml_str(text: &str) -> Result<ScenarioSpec> {
        let t: toml::Value = toml::from_str(text)
            .map_err(|e| ScenarioError::new("", format!("invalid TOML: {e}")))?;
        // TOML has nan and inf; JSON values cannot hold them (they would turn into
        // null and fail later with a misleading message), and no field means them.
        check_finite(&t, "")?;
        let v: Value = serde_json::to_value(t)
            .map_err(|e| ScenarioError::new("", format!("invalid TOML: {e}")))?;
        Self::from_value(v)
    }

    pub fn from_json_str(text: &str) -> Result<ScenarioSpec> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            let hint = if ["NaN", "Infinity"].iter().any(|w| text.contains(w)) {
                " (NaN and Infinity are not JSON values: every number must be finite)"
            } else {
                ""
            };
            ScenarioError::new("", format!("invalid JSON: {e}{hint}"))
        })?;
        Self::from_value(v)
    }

    /// Checks that need more than one field.
    fn validate(&self) -> Result<()> {
        if self.max_events_per_second == Some(0) {
            return Err(ScenarioError::new(
                "max_events_per_second",
                "0: expected a positive number of events",
            ));
        }
        if self.duration.0 == 0 {
            return Err(ScenarioError::new(
                "duration",
                "\"0s\": expected a duration greater than zero",
            ));
        }
        if let Some(w) = self.warmup {
            if w.0 >= self.duration.0 {
                return Err(ScenarioError::new(
                    "warmup",
                    "must be shorter than `duration`",
                ));
            }
        }
        if let Some(t) = self.output.timeseries {
            if t.0 == 0 {
                return Err(ScenarioError::new(
                    "output.timeseries",
                    "expected an interval greater than zero",
                ));
            }
        }
        if let Some(t) = self.output.flow_timeseries {
            if t.0 == 0 {
                return Err(ScenarioError::new(
                    "output.flow_timeseries",
                    "expected an interval greater than zero",
                ));
            }
        }
        if let Some(t) = self.output.stats_interval {
            if t.0 == 0 {
                return Err(ScenarioError::new(
                    "output.stats_interval",
                    "\"0s\": expected an interval greater than zero",
                ));
            }
        }
        if let Some(t) = self.output.tcp_timeseries {
            if t.0 == 0 {
                return Err(ScenarioError::new(
                    "output.tcp_timeseries",
                    "expected an interval greater than zero",
                ));
            }
        }
        Ok(())
    }
}

impl JitterSpec {
    /// Checks of a link's jitter at `path`, over the link's (least) delay `delay`: the
    /// amplitude may not exceed it (a negative delay has no meaning, and clamping it at
    /// zero would skew the distribution the scenario asked for).
    pub fn validate(&self, path: &str, delay: Nanos) -> Result<()> {
        if self.amplitude.0 == 0 {
            return Err(ScenarioError::new(
                format!("{path}.amplitude"),
                "0ns: expected an amplitude greater than zero (leave `jitter` out for none)",
            ));
        }
        if self.amplitude.0 > delay {
            return Err(ScenarioError::new(
                format!("{path}.amplitude"),
                format!(
                    "{}ns: expected at most the link's `delay` ({delay}ns): a delay cannot go below zero",
                    self.amplitude.0
                ),
            ));
        }
        if self.interval.0 == 0 {
            return Err(ScenarioError::new(
                format!("{path}.interval"),
                "0ns: expected an interval greater than zero",
            ));
        }
        match self.distribution.as_deref() {
            None | Some("uniform") => Ok(()),
            Some(d) => Err(ScenarioError::new(
                format!("{path}.distribution"),
                format!("\"{d}\": expected \"uniform\""),
            )),
        }
    }
}

impl LinkSpec {
    /// Checks of one link's own fields, at `path`.
    pub fn validate(&self, path: &str) -> Result<()> {
        if let Some(m) = self.delay_max {
            let d = self.delay.map_or(0, |d| d.0);
            if m.0 < d {
                return Err(ScenarioError::new(
                    format!("{path}.delay_max"),
                    format!("{}ns: expected at least `delay` ({d}ns)", m.0),
                ));
            }
        }
        if let Some(j) = &self.jitter {
            j.validate(&format!("{path}.jitter"), self.delay.map_or(0, |d| d.0))?;
        }
        if let Some(l) = self.loss {
            if !(0.0..=1.0).contains(&l) {
                return Err(ScenarioError::new(
                    format!("{path}.loss"),
                    format!("{l}: expected a probability in [0, 1]"),
                ));
            }
        }
        if let Some(m) = self.mtu {
            if m.0 < 68 || m.0 > 65535 {
                return Err(ScenarioError::new(
                    format!("{path}.mtu"),
                    format!("{}B: expected an MTU between 68B and 65535B", m.0),
                ));
            }
        }
        if let Some(p) = &self.rate_process {
            if p.rates.is_empty() {
                return Err(ScenarioError::new(
                    format!("{path}.rate_process.rates"),
                    "expected at least one rate",
                ));
            }
            if p.every_min.0 == 0 || p.every_max.0 < p.every_min.0 {
                return Err(ScenarioError::new(
                    format!("{path}.rate_process"),
                    "expected 0 < every_min <= every_max",
                ));
            }
        }
        if let Some(o) = &self.outages {
            let mut prev_end = 0;
            for (i, w) in o.iter().enumerate() {
                if w.end.0 <= w.start.0 || (i > 0 && w.start.0 < prev_end) {
                    return Err(ScenarioError::new(
                        format!("{path}.outages[{i}]"),
                        "expected start < end, windows increasing and disjoint",
                    ));
                }
                prev_end = w.end.0;
            }
        }
        if let Some(s) = &self.rate_schedule {
            for (i, w) in s.windows(2).enumerate() {
                if w[1].at.0 <= w[0].at.0 {
                    return Err(ScenarioError::new(
                        format!("{path}.rate_schedule[{}].at", i + 1),
                        "expected times in increasing order",
                    ));
                }
            }
        }
        if self.rate_schedule.is_some() && self.rate_process.is_some() {
            return Err(ScenarioError::new(
                path,
                "give either rate_schedule or rate_process, not both",
            ));
        }
        Ok(())
    }
}
