//! Topology builders (explicit graph, dumbbell); routes come from `routing`.
//!
//! Dumbbell layout: host pairs `G_l{i}` ↔ `G_r{i}` for each host group `G`, left hosts
//! attached to the left router (default name `L`), right hosts to the right router
//! (`R`), and the bottleneck `L->R` with its reverse `R->L`. Links are named
//! `FROM->TO` unless given a `name`.

use super::access::{self, Access, ModelSpec};
use super::jitter::Jitter;
use super::link::{Link, RateChange};
use crate::measure::link_stats::LinkStats;
use crate::qdisc::{self, LinkInfo};
use crate::scenario::bdp::BaseRtt;
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::spec::{LinkSpec, Rate, TopologySpec};
use crate::sim::rng::Rng;
use serde_json::json;
use std::collections::{BTreeMap, VecDeque};

use super::routing::Routes;
pub use super::routing::NO_ROUTE;

pub struct Node {
    pub name: String,
}

/// The built network.
pub struct Topology {
    /// Things that are allowed but probably not meant (`qdisc::target_check`).
    pub warnings: Vec<String>,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub routes: Routes,
    /// Dumbbell host groups: name → (left host, right host) node pairs.
    pub groups: BTreeMap<String, Vec<(u32, u32)>>,
    pub node_index: BTreeMap<String, u32>,
}

impl Topology {
    pub fn node(&self, name: &str) -> Option<u32> {
        self.node_index.get(name).copied()
    }

    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }
}

struct Builder {
    seed: u64,
    warnings: Vec<String>,
    nodes: Vec<Node>,
    node_index: BTreeMap<String, u32>,
    links: Vec<Link>,
    /// Link names so far (a linear scan per link made 10 000 host pairs quadratic).
    link_names: std::collections::BTreeSet<String>,
    /// Links whose discipline monitors another link: (link, qdisc path, qdisc spec).
    monitors: Vec<(usize, String, Option<serde_json::Value>)>,
    /// Per link (by index), the base RTT of its flows for limits in BDP; links past
    /// the end get `default_rtt`.
    base_rtts: Vec<BaseRtt>,
    default_rtt: BaseRtt,
}

const DEFAULT_MTU: u32 = 1500;

impl Builder {
    fn rtt_of(&self, link: usize) -> BaseRtt {
        self.base_rtts
            .get(link)
            .copied()
            .unwrap_or(self.default_rtt)
    }

    fn add_node(&mut self, name: &str, path: &str) -> Result<u32> {
        if name.is_empty() {
            return Err(ScenarioError::new(
                path,
                "\"\": expected a non-empty node name",
            ));
        }
        if self.node_index.contains_key(name) {
            return Err(ScenarioError::new(
                path,
                format!("\"{name}\": duplicate node name"),
            ));
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            name: name.to_string(),
        });
        self.node_index.insert(name.to_string(), id);
        Ok(id)
    }

    /// Add the link `from → to` described by `spec` (at `path`). `default_qdisc` is used
    /// when the spec has none.
    fn add_link(
        &mut self,
        from: u32,
        to: u32,
        spec: &LinkSpec,
        path: &str,
        name: Option<String>,
    ) -> Result<()> {
        spec.validate(path)?;
        let mtu = spec.mtu.map(|m| m.0 as u32).unwrap_or(DEFAULT_MTU);
        let name = name.unwrap_or_else(|| {
            format!(
                "{}->{}",
                self.nodes[from as usize].name, self.nodes[to as usize].name
            )
        });
        if !self.link_names.insert(name.clone()) {
            return Err(ScenarioError::new(
                path,
                format!("\"{name}\": duplicate link name"),
            ));
        }
        let model = ModelSpec {
            model: spec.model.as_ref(),
            legacy: spec.docsis.as_ref().map(|v| ("docsis", v)),
        };
        let access = access::build(&model, path, &name, self.seed, spec.rate.0, mtu)?.map(Box::new);
        let info = LinkInfo {
            base_rtt: self.rtt_of(self.links.len()),
            rate_bps: access.as_ref().map_or(spec.rate.0, |m| m.feed_rate_bps()),
            mtu,
            delay: spec.delay.map_or(0, |d| d.0),
        };
        let default_q = json!({"kind": "pfifo", "limit": "1000pkt"});
        let q_spec = spec.qdisc.as_ref().unwrap_or(&default_q);
        let q = qdisc::build(q_spec, &format!("{path}.qdisc"), &info)?;
        if let Some(w) = qdisc::target_check::warning(q_spec, &format!("{path}.qdisc"), &info) {
            self.warnings.push(w);
        }
        if q.monitor.is_some() {
            // Rebuilt once every link exists, with the monitored link's `LinkInfo`.
            self.monitors.push((
                self.links.len(),
                format!("{path}.qdisc"),
                spec.qdisc.clone(),
            ));
        }
        let rate_change = if let Some(steps) = &spec.rate_schedule {
            RateChange::Schedule {
                steps: steps.iter().map(|s| (s.at.0, s.rate.0)).collect(),
                next: 0,
            }
        } else if let Some(p) = &spec.rate_process {
            RateChange::Random {
                every_min: p.every_min.0,
                every_max: p.every_max.0,
                rates: p.rates.iter().map(|r| r.0).collect(),
                rng: Rng::stream(self.seed, &format!("link[{name}].rate")),
            }
        } else {
            RateChange::Fixed
        };
        let delay = match spec.delay_max {
            None => spec.delay.map(|d| d.0).unwrap_or(0),
            Some(max) => {
                let min = spec.delay.map_or(0, |d| d.0);
                let mut r = Rng::stream(self.seed, &format!("link[{name}].delay"));
                min + r.below(max.0 - min + 1)
            }
        };
        let jitter = spec.jitter.as_ref().map(|j| {
            Box::new(Jitter::new(
                j.amplitude.0,
                j.interval.0,
                Rng::stream(self.seed, &format!("link[{name}].jitter")),
            ))
        });
        self.links.push(Link {
            qdisc_rng: Rng::stream(self.seed, &format!("link[{name}].qdisc")),
            loss_rng: Rng::stream(self.seed, &format!("link[{name}].loss")),
            name,
            from,
            to,
            rate_bps: spec.rate.0,
            delay,
            mtu,
            loss: spec.loss.unwrap_or(0.0),
            outages: spec
                .outages
                .iter()
                .flatten()
                .map(|o| (o.start.0, o.end.0))
                .collect(),
            qdisc: q,
            tx: None,
            tx_size: 0,
            tx_end: 0,
            tx_lazy: None,
            tx_in_flight: false,
            watched: false,
            jitter,
            in_flight: VecDeque::new(),
            timer_at: None,
            rate_change,
            stats: LinkStats::default(),
            pcap: None,
            access,
            access_timer_at: None,
            monitor: None,
            idle_since: Some(0),
            sent_bytes: 0,
        });
        Ok(())
    }
}

/// A link model describes one direction: it cannot be used where one spec makes both.
fn one_way_model(spec: &LinkSpec, path: &str, why: &str) -> Result<()> {
    if spec.model.is_some() {
        return Err(ScenarioError::new(
            format!("{path}.model"),
            format!("a link model describes one direction; {why}"),
        ));
    }
    Ok(())
}

fn default_access() -> LinkSpec {
    LinkSpec {
        from: None,
        to: None,
        duplex: None,
        name: None,
        rate: Rate(1_000_000_000),
        delay: None,
        delay_max: None,
        jitter: None,
        qdisc: None,
        mtu: None,
        loss: None,
        outages: None,
        rate_schedule: None,
        rate_process: None,
        model: None,
        docsis: None,
    }
}

fn no_graph_fields(spec: &LinkSpec, path: &str) -> Result<()> {
    for (field, set) in [
        ("from", spec.from.is_some()),
        ("to", spec.to.is_some()),
        ("duplex", spec.duplex.is_some()),
    ] {
        if set {
            return Err(ScenarioError::new(
                format!("{path}.{field}"),
                "only links of a `graph` topology take this field",
            ));
        }
    }
    Ok(())
}

pub fn build(spec: &TopologySpec, seed: u64) -> Result<Topology> {
    build_with_rtts(spec, seed, Vec::new(), BaseRtt::Unknown)
}

/// `build`, with the base RTT of each link's flows (by link index; `default_rtt` for
/// the others) for queue limits in BDP (`scenario::bdp`).
pub fn build_with_rtts(
    spec: &TopologySpec,
    seed: u64,
    base_rtts: Vec<BaseRtt>,
    default_rtt: BaseRtt,
) -> Result<Topology> {
    let mut b = Builder {
        base_rtts,
        default_rtt,
        seed,
        warnings: Vec::new(),
        nodes: Vec::new(),
        node_index: BTreeMap::new(),
        links: Vec::new(),
        link_names: Default::default(),
        monitors: Vec::new(),
    };
    let mut groups = BTreeMap::new();
    match spec.kind.as_str() {
        "dumbbell" => {
            for (field, set) in [
                ("nodes", !spec.nodes.is_empty()),
                ("links", !spec.links.is_empty()),
            ] {
                if set {
                    return Err(ScenarioError::new(
                        format!("topology.{field}"),
                        "a dumbbell takes `bottleneck` and `hosts`, not explicit nodes and links (use kind = \"graph\")",
                    ));
                }
            }
            let fwd = spec.bottleneck.as_ref().ok_or_else(|| {
                ScenarioError::new(
                    "topology.bottleneck",
                    "missing: a dumbbell needs a bottleneck",
                )
            })?;
            no_graph_fields(fwd, "topology.bottleneck")?;
            if spec.hosts.is_empty() {
                return Err(ScenarioError::new(
                    "topology.hosts",
                    "missing: a dumbbell needs at least one host group",
                ));
            }
            let [ln, rn] = spec
                .routers
                .clone()
                .unwrap_or(["L".to_string(), "R".to_string()]);
            let l = b.add_node(&ln, "topology.routers[0]")?;
            let r = b.add_node(&rn, "topology.routers[1]")?;
            b.add_link(l, r, fwd, "topology.bottleneck", fwd.name.clone())?;
            let rev = spec.reverse.clone().unwrap_or_else(|| LinkSpec {
                name: None,
                qdisc: None,
                rate_schedule: None,
                rate_process: None,
                loss: None,
                model: None,
                docsis: None,
                ..fwd.clone()
            });
            no_graph_fields(&rev, "topology.reverse")?;
            b.add_link(r, l, &rev, "topology.reverse", rev.name.clone())?;
            for (gi, g) in spec.hosts.iter().enumerate() {
                let gpath = format!("topology.hosts[{gi}]");
                if g.count == 0 {
                    return Err(ScenarioError::new(
                        format!("{gpath}.count"),
                        "0: expected at least 1 host pair",
                    ));
                }
                if groups.contains_key(&g.name) {
                    return Err(ScenarioError::new(
                        format!("{gpath}.name"),
                        format!("\"{}\": duplicate host group", g.name),
                    ));
                }
                let left = g.left.clone().unwrap_or_else(default_access);
                let right = g.right.clone().unwrap_or_else(default_access);
                no_graph_fields(&left, &format!("{gpath}.left"))?;
                no_graph_fields(&right, &format!("{gpath}.right"))?;
                let why = "host access links are two-way: use a graph topology, or the dumbbell's bottleneck and reverse";
                one_way_model(&left, &format!("{gpath}.left"), why)?;
                one_way_model(&right, &format!("{gpath}.right"), why)?;
                let mut pairs = Vec::new();
                for i in 0..g.count {
                    let hl = b.add_node(&format!("{}_l{i}", g.name), &format!("{gpath}.name"))?;
                    let hr = b.add_node(&format!("{}_r{i}", g.name), &format!("{gpath}.name"))?;
                    b.add_link(hl, l, &left, &format!("{gpath}.left"), None)?;
                    b.add_link(l, hl, &left, &format!("{gpath}.left"), None)?;
                    b.add_link(hr, r, &right, &format!("{gpath}.right"), None)?;
                    b.add_link(r, hr, &right, &format!("{gpath}.right"), None)?;
                    pairs.push((hl, hr));
                }
                groups.insert(g.name.clone(), pairs);
            }
        }
        "graph" => {
            for (field, set) in [
                ("bottleneck", spec.bottleneck.is_some()),
                ("reverse", spec.reverse.is_some()),
                ("hosts", !spec.hosts.is_empty()),
                ("routers", spec.routers.is_some()),
            ] {
                if set {
                    return Err(ScenarioError::new(
                        format!("topology.{field}"),
                        "only a dumbbell topology takes this field",
                    ));
                }
            }
            if spec.nodes.is_empty() {
                return Err(ScenarioError::new(
                    "topology.nodes",
                    "missing: a graph needs nodes",
                ));
            }
            for (i, n) in spec.nodes.iter().enumerate() {
                b.add_node(&n.name, &format!("topology.nodes[{i}].name"))?;
            }
            for (i, ls) in spec.links.iter().enumerate() {
                let path = format!("topology.links[{i}]");
                let end = |field: &str, v: &Option<String>, b: &Builder| -> Result<u32> {
                    let name = v.as_ref().ok_or_else(|| {
                        ScenarioError::new(
                            format!("{path}.{field}"),
                            "missing: expected a node name",
                        )
                    })?;
                    b.node_index.get(name).copied().ok_or_else(|| {
                        ScenarioError::new(
                            format!("{path}.{field}"),
                            format!(
                                "\"{name}\": no such node; nodes are: {}",
                                b.node_index.keys().cloned().collect::<Vec<_>>().join(", ")
                            ),
                        )
                    })
                };
                let from = end("from", &ls.from, &b)?;
                let to = end("to", &ls.to, &b)?;
                if from == to {
                    return Err(ScenarioError::new(
                        format!("{path}.to"),
                        format!(
                            "\"{}\": a link cannot connect a node to itself",
                            b.nodes[to as usize].name
                        ),
                    ));
                }
                if ls.duplex.unwrap_or(true) {
                    one_way_model(
                        ls,
                        &path,
                        "set `duplex = false` and give the other direction its own link",
                    )?;
                }
                b.add_link(from, to, ls, &path, ls.name.clone())?;
                if ls.duplex.unwrap_or(true) {
                    let rev_name = ls.name.as_ref().map(|n| format!("{n}.rev"));
                    b.add_link(to, from, ls, &path, rev_name)?;
                }
            }
        }
        other => {
            return Err(ScenarioError::new(
                "topology.kind",
                format!("\"{other}\": expected \"dumbbell\" or \"graph\""),
            ))
        }
    }
    resolve_monitors(&mut b)?;
    let ends: Vec<(u32, u32)> = b.links.iter().map(|l| (l.from, l.to)).collect();
    Ok(Topology {
        warnings: std::mem::take(&mut b.warnings),
        routes: Routes::compute(b.nodes.len(), &ends),
        nodes: b.nodes,
        links: b.links,
        groups,
        node_index: b.node_index,
    })
}

/// Resolve each `qdisc.monitor` name to a link index and rebuild that discipline with the
/// monitored link's rate and MTU (its derived defaults, e.g. AVQRED's capacities, are the
/// monitored link's).
fn resolve_monitors(b: &mut Builder) -> Result<()> {
    for (l, path, spec) in std::mem::take(&mut b.monitors) {
        let spec = spec.expect("only a given qdisc table can name a monitor");
        let name = b.links[l]
            .qdisc
            .monitor
            .clone()
            .expect("recorded with a monitor");
        let Some(m) = b.links.iter().position(|x| x.name == name) else {
            let known: Vec<&str> = b.links.iter().map(|x| x.name.as_str()).collect();
            return Err(ScenarioError::new(
                format!("{path}.monitor"),
                format!("\"{name}\": no such link; links are: {}", known.join(", ")),
            ));
        };
        if m == l {
            return Err(ScenarioError::new(
                format!("{path}.monitor"),
                format!("\"{name}\": a discipline monitors its own link without `monitor`; name another link"),
            ));
        }
        let info = LinkInfo {
            base_rtt: b.rtt_of(m),
            rate_bps: b.links[m].rate_bps,
            mtu: b.links[m].mtu,
            delay: b.links[m].delay,
        };
        b.links[l].qdisc = qdisc::build(&spec, &path, &info)?;
        b.links[l].monitor = Some(m as u32);
        b.links[m].watched = true;
    }
    Ok(())
}
