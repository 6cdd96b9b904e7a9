//! Reading the parameters of a named component (a queue discipline, a traffic kind)
//! from a scenario table, with an error for every unknown or malformed key.
//!
//! Each component declares its parameters once as `ParamDoc`s (name, type, default,
//! meaning); `aqmlab qdiscs` prints those, and `Params::finish` rejects any key that
//! the component did not read.

use super::bdp::{self, BaseRtt};
use super::error::{Result, ScenarioError};
use super::units::{self, Limit};
use crate::sim::time::Nanos;

/// The shortest period accepted for a run-long timer (`Params::timer_period_or`): 100 µs,
/// ten times below the shortest update interval in the qdiscs' sources (REM's 2 ms,
/// PIE's 15 ms, DualPI2's 16 ms), and a bounded cost of 10 000 events per simulated second.
pub const MIN_TIMER_PERIOD: Nanos = 100_000;
use serde_json::{Map, Value};

/// Documentation of one parameter.
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    pub name: &'static str,
    /// `duration`, `rate`, `size`, `limit`, `float`, `int`, `bool`, `string`.
    pub ty: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

/// A parameter's documentation, for `const` tables: `param(name, type, default, doc)`.
pub const fn param(
    name: &'static str,
    ty: &'static str,
    default: &'static str,
    doc: &'static str,
) -> ParamDoc {
    ParamDoc {
        name,
        ty,
        default,
        doc,
    }
}

/// Documentation of one component kind.
#[derive(Clone, Copy, Debug)]
pub struct KindDoc {
    pub kind: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamDoc],
}

/// A parameter table under `path`, with the keys read so far.
pub struct Params<'a> {
    path: String,
    map: &'a Map<String, Value>,
    read: Vec<&'static str>,
    /// Keys handled by the caller (e.g. `kind`), never reported as unknown.
    ignored: &'static [&'static str],
    /// A queue discipline's link (rate, MTU, base RTT of its flows), for limits in BDP.
    bdp: Option<(u64, u32, BaseRtt)>,
    /// Keys read under other names (`Params::aliased`): `(name, key)`.
    aliases: Option<&'static [(&'static str, &'static str)]>,
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

impl<'a> Params<'a> {
    pub fn new(
        path: impl Into<String>,
        map: &'a Map<String, Value>,
        ignored: &'static [&'static str],
    ) -> Self {
        Params {
            path: path.into(),
            map,
            read: Vec::new(),
            ignored,
            bdp: None,
            aliases: None,
        }
    }

    /// A reader of the same table whose parameter `name` is the key `alias` for each
    /// `(name, alias)` (a component's parameters kept under flat names on its parent's
    /// table, e.g. `vegas_alpha` for the congestion control's `alpha`); names not
    /// listed are absent. This table accepts the aliases as read.
    pub fn aliased(&mut self, aliases: &'static [(&'static str, &'static str)]) -> Params<'a> {
        self.read.extend(aliases.iter().map(|(_, key)| *key));
        Params {
            path: self.path.clone(),
            map: self.map,
            read: Vec::new(),
            ignored: &[],
            bdp: None,
            aliases: Some(aliases),
        }
    }

    /// The key parameter `name` is read from (None: an alias reader without it).
    fn key<'n>(&self, name: &'n str) -> Option<&'n str> {
        match self.aliases {
            None => Some(name),
            Some(a) => a.iter().find(|(n, _)| *n == name).map(|(_, key)| *key),
        }
    }

    /// Let `limit` keys be written in bandwidth-delay products of a link of `rate_bps`,
    /// `mtu` and base RTT `rtt` (`scenario::bdp`).
    pub fn with_bdp(mut self, rate_bps: u64, mtu: u32, rtt: BaseRtt) -> Self {
        self.bdp = Some((rate_bps, mtu, rtt));
        self
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// The keys looked up so far (present or not): what the reader accepts.
    pub fn keys_read(&self) -> &[&'static str] {
        &self.read
    }

    /// The full path of key `name`.
    pub fn key_path(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{}", self.path, name)
        }
    }

    /// An error about key `name`.
    pub fn error(&self, name: &str, msg: impl Into<String>) -> ScenarioError {
        ScenarioError::new(self.key_path(self.key(name).unwrap_or(name)), msg)
    }

    /// The raw value of `name`, without marking it read (for checks that only look,
    /// such as recognising another tool's spelling to name the right key).
    pub fn peek(&self, name: &str) -> Option<&'a Value> {
        self.map.get(self.key(name)?)
    }

    fn get(&mut self, name: &'static str) -> Option<&'a Value> {
        let key = self.key(name)?;
        self.read.push(key);
        self.map.get(key)
    }

    fn text(&mut self, name: &'static str, what: &str) -> Result<Option<(&'a str, &'a Value)>> {
        match self.get(name) {
            None => Ok(None),
            Some(v @ Value::String(s)) => Ok(Some((s.as_str(), v))),
            Some(v) => Err(self.error(
                name,
                format!("{}: expected {what} as a string with a unit", show(v)),
            )),
        }
    }

    fn unit<T>(
        &mut self,
        name: &'static str,
        what: &str,
        parse: fn(&str) -> std::result::Result<T, String>,
    ) -> Result<Option<T>> {
        match self.text(name, what)? {
            None => Ok(None),
            Some((s, v)) => parse(s)
                .map(Some)
                .map_err(|e| self.error(name, format!("{}: {e}", show(v)))),
        }
    }

    pub fn duration(&mut self, name: &'static str) -> Result<Option<Nanos>> {
        self.unit(name, "a duration", units::parse_duration)
    }

    pub fn duration_or(&mut self, name: &'static str, default: Nanos) -> Result<Nanos> {
        Ok(self.duration(name)?.unwrap_or(default))
    }

    /// A duration that must be greater than zero.
    pub fn positive_duration_or(&mut self, name: &'static str, default: Nanos) -> Result<Nanos> {
        let d = self.duration_or(name, default)?;
        if d == 0 {
            return Err(self.error(name, "0: expected a duration greater than zero"));
        }
        Ok(d)
    }

    /// The period of a timer that fires for the whole run (a qdisc's update interval):
    /// at least [`MIN_TIMER_PERIOD`], so that a typo like `tupdate = "1ns"` is refused
    /// instead of costing a billion events per simulated second.
    pub fn timer_period_or(&mut self, name: &'static str, default: Nanos) -> Result<Nanos> {
        let d = self.duration_or(name, default)?;
        if d < MIN_TIMER_PERIOD {
            return Err(self.error(
                name,
                format!(
                    "{d}ns: expected a timer period of at least {} us",
                    MIN_TIMER_PERIOD / 1000
                ),
            ));
        }
        Ok(d)
    }

    pub fn rate(&mut self, name: &'static str) -> Result<Option<u64>> {
        self.unit(name, "a rate", units::parse_rate)
    }

    pub fn required_rate(&mut self, name: &'static str) -> Result<u64> {
        self.rate(name)?
            .ok_or_else(|| self.error(name, "missing: expected a rate like \"10Mbit\""))
    }

    pub fn size(&mut self, name: &'static str) -> Result<Option<u64>> {
        self.unit(name, "a size", units::parse_size)
    }

    pub fn size_or(&mut self, name: &'static str, default: u64) -> Result<u64> {
        Ok(self.size(name)?.unwrap_or(default))
    }

    /// A queue limit: packets, bytes, or (for a queue discipline) a multiple of its
    /// link's bandwidth-delay product, `"1BDP"` (`scenario::bdp`).
    pub fn limit(&mut self, name: &'static str) -> Result<Option<Limit>> {
        if let Some(Value::String(s)) = self.map.get(name) {
            if let Some(k) = bdp::parse_multiple(s) {
                self.read.push(name);
                let shown = format!("\"{s}\"");
                let k = k.map_err(|e| self.error(name, format!("{shown}: {e}")))?;
                let Some((rate, mtu, rtt)) = self.bdp else {
                    return Err(self.error(
                        name,
                        format!("{shown}: a limit in BDP is only for a queue discipline on a link; expected packets or bytes"),
                    ));
                };
                return bdp::packets(k, rate, mtu, rtt)
                    .map(|n| Some(Limit::Packets(n)))
                    .map_err(|e| self.error(name, format!("{shown}: {e}")));
            }
        }
        self.unit(name, "a limit", units::parse_limit)
    }

    pub fn limit_or(&mut self, name: &'static str, default: Limit) -> Result<Limit> {
        Ok(self.limit(name)?.unwrap_or(default))
    }

    /// A number within [lo, hi].
    pub fn f64_or(&mut self, name: &'static str, default: f64, lo: f64, hi: f64) -> Result<f64> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.as_f64() {
                Some(x) if x >= lo && x <= hi => Ok(x),
                _ => Err(self.error(
                    name,
                    format!("{}: expected a number in [{lo}, {hi}]", show(v)),
                )),
            },
        }
    }

    /// A whole number within [lo, hi].
    pub fn u64_or(&mut self, name: &'static str, default: u64, lo: u64, hi: u64) -> Result<u64> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.as_u64() {
                Some(x) if x >= lo && x <= hi => Ok(x),
                _ => Err(self.error(
                    name,
                    format!("{}: expected a whole number in [{lo}, {hi}]", show(v)),
                )),
            },
        }
    }

    pub fn bool_or(&mut self, name: &'static str, default: bool) -> Result<bool> {
        match self.get(name) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.error(name, format!("{}: expected true or false", show(v)))),
        }
    }

    /// One of `choices`.
    pub fn choice_or(
        &mut self,
        name: &'static str,
        default: &'static str,
        choices: &[&'static str],
    ) -> Result<&'static str> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => {
                let s = v.as_str().unwrap_or("");
                choices.iter().copied().find(|c| *c == s).ok_or_else(|| {
                    self.error(
                        name,
                        format!("{}: expected one of {}", show(v), choices.join(", ")),
                    )
                })
            }
        }
    }

    pub fn string(&mut self, name: &'static str) -> Result<Option<&'a str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.error(name, format!("{}: expected a string", show(v)))),
        }
    }

    /// The raw value, for callers that parse structure themselves.
    pub fn raw(&mut self, name: &'static str) -> Option<&'a Value> {
        self.get(name)
    }

    /// Fail on any key that was not read: a typo must never be silently ignored.
    pub fn finish(self, component: &str) -> Result<()> {
        let mut keys: Vec<&String> = self.map.keys().collect();
        keys.sort();
        for k in keys {
            if !self.read.contains(&k.as_str()) && !self.ignored.contains(&k.as_str()) {
                let mut known: Vec<&str> = self.read.clone();
                known.sort();
                known.dedup();
                return Err(self.error(
                    k,
                    format!(
                        "unknown parameter for {component}{}; expected one of: {}",
                        crate::scenario::suggest::did_you_mean(k, known.iter().copied()),
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Render a value for messages.
pub fn show_value(v: &Value) -> String {
    show(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_key_is_named_with_its_path() {
        let v = json!({"kind": "codel", "target": "5ms", "targte": "5ms"});
        let mut p = Params::new(
            "topology.bottleneck.qdisc",
            v.as_object().unwrap(),
            &["kind"],
        );
        assert_eq!(p.duration_or("target", 1).unwrap(), 5_000_000);
        let e = p.finish("qdisc codel").unwrap_err();
        assert_eq!(e.path, "topology.bottleneck.qdisc.targte");
        assert!(e.message.contains("expected one of: target"), "{e}");
    }

    #[test]
    fn bad_unit_names_value_and_expectation() {
        let v = json!({"rate": "5 parsecs"});
        let mut p = Params::new("traffic[0]", v.as_object().unwrap(), &[]);
        let e = p.rate("rate").unwrap_err();
        assert_eq!(e.path, "traffic[0].rate");
        assert!(
            e.message.contains("\"5 parsecs\"") && e.message.contains("unknown unit"),
            "{e}"
        );
    }
}
