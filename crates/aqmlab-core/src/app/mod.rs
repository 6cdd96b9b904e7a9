//! Traffic: reading `[[traffic]]` tables into applications and flows.
//!
//! Common keys of every traffic kind: `kind`, `name`, where it runs — `hosts` (a
//! dumbbell host group; one flow set per host pair, left to right unless
//! `direction = "reverse"`) or `src`/`dst` (node names) — `count` (flows per host
//! pair), `start`, `stop`.

pub mod tcp;
pub mod udp;

use crate::net::topology::Topology;
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use serde_json::Value;

/// A running application instance.
pub enum App {
    Udp(udp::UdpSource),
    Tcp(tcp::TcpApp),
}

/// One `[[traffic]]` entry, for the `apps` table.
pub struct AppEntry {
    pub name: String,
    pub kind: &'static str,
    /// Priority class stamped on every packet of its flows (`Packet::class`).
    pub class: u8,
}

/// A flow to create: who sends to whom, under which entry.
pub struct FlowPlan {
    pub entry: u32,
    pub src: u32,
    pub dst: u32,
    pub kind: &'static str,
    pub cc: String,
    /// TCP flows: the connection's parameters (endpoints are built by the engine).
    pub tcp: Option<crate::transport::tcp::TcpConfig>,
    /// The app that owns the flow (TCP apps react to completed transfers).
    pub app: u32,
}

const COMMON: &[ParamDoc] = &[
    ParamDoc {
        name: "name",
        ty: "string",
        default: "KIND-INDEX",
        doc: "application name in the results",
    },
    ParamDoc {
        name: "hosts",
        ty: "string",
        default: "-",
        doc: "dumbbell host group to run on (one flow set per host pair)",
    },
    ParamDoc {
        name: "direction",
        ty: "string",
        default: "forward",
        doc: "dumbbell: forward (left to right) or reverse",
    },
    ParamDoc {
        name: "src",
        ty: "string",
        default: "-",
        doc: "sending node (instead of hosts)",
    },
    ParamDoc {
        name: "dst",
        ty: "string",
        default: "-",
        doc: "receiving node (instead of hosts)",
    },
    ParamDoc {
        name: "count",
        ty: "int",
        default: "1",
        doc: "flows per host pair",
    },
    ParamDoc {
        name: "start",
        ty: "duration",
        default: "0s",
        doc: "when the source starts",
    },
    ParamDoc {
        name: "stop",
        ty: "duration",
        default: "duration",
        doc: "when the source stops",
    },
    ParamDoc {
        name: "class",
        ty: "int",
        default: "0",
        doc: "priority class (0-255, DSCP-like, higher = more important) of every packet, for class-based schedulers",
    },
];

pub const UDP_CBR: KindDoc = KindDoc {
    kind: "udp-cbr",
    summary: "UDP constant bit rate",
    source: "-",
    params: &[
        ParamDoc {
            name: "rate",
            ty: "rate",
            default: "required",
            doc: "sending rate (IP bytes)",
        },
        ParamDoc {
            name: "size",
            ty: "size",
            default: "1000B",
            doc: "IP datagram size",
        },
    ],
};

pub const UDP_POISSON: KindDoc = KindDoc {
    kind: "udp-poisson",
    summary: "UDP with Poisson arrivals",
    source: "-",
    params: &[
        ParamDoc {
            name: "rate",
            ty: "rate",
            default: "required",
            doc: "mean sending rate",
        },
        ParamDoc {
            name: "size",
            ty: "size",
            default: "1000B",
            doc: "(mean) IP datagram size",
        },
        ParamDoc {
            name: "size_dist",
            ty: "string",
            default: "fixed",
            doc: "fixed or exp (exponential sizes)",
        },
    ],
};

/// Traffic kinds and their parameters (the common ones are in `common_params`).
pub fn kinds() -> Vec<KindDoc> {
    vec![
        UDP_CBR,
        UDP_POISSON,
        tcp::TCP_BULK,
        tcp::TCP_FILE,
        tcp::TCP_ONOFF,
        tcp::TCP_ARRIVALS,
    ]
}

/// Parameters every `tcp-*` kind accepts besides its own.
pub fn tcp_common_params() -> &'static [ParamDoc] {
    tcp::TCP_COMMON
}

pub fn common_params() -> &'static [ParamDoc] {
    COMMON
}

/// Everything the traffic tables create.
#[derive(Default)]
pub struct Traffic {
    pub entries: Vec<AppEntry>,
    pub apps: Vec<App>,
    pub flows: Vec<FlowPlan>,
    /// First event time of each app (None: never runs).
    pub first: Vec<Option<Nanos>>,
}

/// Where an entry's flows run: (src, dst) per flow.
fn placements(p: &mut Params, topo: &Topology) -> Result<Vec<(u32, u32)>> {
    let count = p.u64_or("count", 1, 1, 1_000_000)? as usize;
    let hosts = p.string("hosts")?;
    let src = p.string("src")?;
    let dst = p.string("dst")?;
    let direction = p.choice_or("direction", "forward", &["forward", "reverse"])?;
    let pairs: Vec<(u32, u32)> = match (hosts, src, dst) {
        (Some(g), None, None) => {
            let pairs = topo.groups.get(g).ok_or_else(|| {
                let known: Vec<&String> = topo.groups.keys().collect();
                p.error(
                    "hosts",
                    format!("\"{g}\": no such host group; groups are: {known:?}"),
                )
            })?;
            pairs
                .iter()
                .map(|&(l, r)| {
                    if direction == "forward" {
                        (l, r)
                    } else {
                        (r, l)
                    }
                })
                .collect()
        }
        (None, Some(s), Some(d)) => {
            let node = |key: &str, name: &str| {
                topo.node(name).ok_or_else(|| {
                    p.error(
                        key,
                        format!(
                            "\"{name}\": no such node; nodes are: {:?}",
                            topo.node_index.keys().collect::<Vec<_>>()
                        ),
                    )
                })
            };
            let (s, d) = (node("src", s)?, node("dst", d)?);
            if s == d {
                return Err(p.error("dst", "must differ from `src`"));
            }
            vec![(s, d)]
        }
        (Some(_), _, _) => {
            return Err(p.error("hosts", "give either `hosts` or `src` and `dst`, not both"))
        }
        (None, None, _) => {
            return Err(p.error(
                "hosts",
                "missing: give `hosts` (a dumbbell group) or `src` and `dst`",
            ))
        }
        (None, Some(_), None) => return Err(p.error("dst", "missing: `src` needs a `dst`")),
    };
    Ok(pairs
        .iter()
        .flat_map(|&pr| std::iter::repeat_n(pr, count))
        .collect())
}

fn kind_of(v: &Value, path: &str) -> Result<&'static str> {
    let s = v.get("kind").and_then(|k| k.as_str()).ok_or_else(|| {
        ScenarioError::new(
            format!("{path}.kind"),
            "missing: expected a traffic kind such as \"udp-cbr\"",
        )
    })?;
    kinds()
        .into_iter()
        .map(|k| k.kind)
        .find(|k| *k == s)
        .ok_or_else(|| {
            let names: Vec<&str> = kinds().iter().map(|k| k.kind).collect();
            ScenarioError::new(
                format!("{path}.kind"),
                format!(
                    "\"{s}\": unknown traffic kind; expected one of: {}",
                    names.join(", ")
                ),
            )
        })
}

pub fn build(tables: &[Value], topo: &Topology, seed: u64, duration: Nanos) -> Result<Traffic> {
    let mut t = Traffic::default();
    for (i, v) in tables.iter().enumerate() {
        let path = format!("traffic[{i}]");
        let map = v
            .as_object()
            .ok_or_else(|| ScenarioError::new(&path, "expected a table"))?;
        let kind = kind_of(v, &path)?;
        let mut p = Params::new(&path, map, &["kind"]);
        let name = p
            .string("name")?
            .map(str::to_string)
            .unwrap_or_else(|| format!("{kind}-{i}"));
        if t.entries.iter().any(|e| e.name == name) {
            return Err(p.error("name", format!("\"{name}\": duplicate traffic name")));
        }
        let pairs = placements(&mut p, topo)?;
        let start = p.duration_or("start", 0)?;
        let stop = p.duration_or("stop", duration)?;
        if stop <= start {
            return Err(p.error("stop", "must be later than `start`"));
        }
        let class = p.u64_or("class", 0, 0, 255)? as u8;
        let entry = t.entries.len() as u32;
        match kind {
            "udp-cbr" | "udp-poisson" => {
                let rate = p.required_rate("rate")?;
                let size = p.size_or("size", 1000)?;
                if size == 0 || size > 65_535 {
                    return Err(p.error("size", format!("{size}B: expected 1B to 65535B")));
                }
                let (pattern, dist) = if kind == "udp-cbr" {
                    (udp::Pattern::Cbr, udp::SizeDist::Fixed)
                } else {
                    let d = match p.choice_or("size_dist", "fixed", &["fixed", "exp"])? {
                        "exp" => udp::SizeDist::Exponential,
                        _ => udp::SizeDist::Fixed,
                    };
                    (udp::Pattern::Poisson, d)
                };
                for (k, &(src, dst)) in pairs.iter().enumerate() {
                    let flow = t.flows.len() as u32;
                    let rng = Rng::stream(seed, &format!("traffic[{name}].flow[{k}]"));
                    let mut s = udp::UdpSource::new(
                        flow,
                        pattern,
                        rate,
                        size as u32,
                        dist,
                        start,
                        stop,
                        rng,
                    );
                    t.first.push(s.first_time());
                    t.apps.push(App::Udp(s));
                    t.flows.push(FlowPlan {
                        entry,
                        src,
                        dst,
                        kind: "udp",
                        cc: String::new(),
                        tcp: None,
                        app: t.apps.len() as u32 - 1,
                    });
                }
            }
            "tcp-bulk" | "tcp-file" | "tcp-onoff" | "tcp-arrivals" => {
                let cfg = tcp::config(&mut p)?;
                let pattern = tcp::pattern(kind, &mut p)?;
                let users = match pattern {
                    tcp::Pattern::Closed { .. } => p.u64_or("users", 1, 1, 1_000_000)?,
                    _ => 1,
                };
                for (k, &(src, dst)) in pairs.iter().enumerate() {
                    for u in 0..users {
                        let rng =
                            Rng::stream(seed, &format!("traffic[{name}].flow[{k}].user[{u}]"));
                        let mut a = tcp::TcpApp {
                            pattern,
                            cfg,
                            entry,
                            src,
                            dst,
                            start,
                            stop,
                            flow: None,
                            rng,
                            opened: 0,
                        };
                        let app = t.apps.len() as u32;
                        let first = match pattern {
                            tcp::Pattern::Open { .. } | tcp::Pattern::Closed { .. } => {
                                start + a.gap()
                            }
                            _ => {
                                a.flow = Some(t.flows.len() as u32);
                                t.flows.push(FlowPlan {
                                    entry,
                                    src,
                                    dst,
                                    kind: "tcp",
                                    cc: cfg.cc.name().to_string(),
                                    tcp: Some(cfg),
                                    app,
                                });
                                start
                            }
                        };
                        t.first.push((first < stop).then_some(first));
                        t.apps.push(App::Tcp(a));
                    }
                }
            }
            _ => unreachable!("kind_of returns known kinds"),
        }
        p.finish(&format!("traffic kind `{kind}`"))?;
        t.entries.push(AppEntry { name, kind, class });
    }
    Ok(t)
}
