//! Building a `Simulation` from a scenario.
use super::*;
use crate::scenario::bdp;

impl Simulation {
    /// Build a simulation of `spec` with `seed` (overriding the scenario's own seed).
    pub fn new(spec: &ScenarioSpec, seed: Option<u64>, opts: &RunOptions) -> Result<Simulation> {
        let seed = seed.unwrap_or(spec.seed);
        let max_memory = spec
            .max_memory
            .map_or_else(guard::default_max_memory, |m| m.0);
        guard::check_topology_estimate(&spec.topology, max_memory)?;
        let end = spec.duration.0;
        let warmup = spec.warmup.map_or(0, |w| w.0);
        let (topo, traffic) = build_network(spec, seed, end, warmup)?;
        let mut links = topo.links;
        let stats_interval = spec
            .output
            .stats_interval
            .map_or(crate::scenario::spec::DEFAULT_STATS_INTERVAL, |d| d.0);
        for link in &mut links {
            link.stats.sample_every(stats_interval, 0);
        }

        let link_ids = |names: &[String], field: &str| -> Result<Vec<u32>> {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    links
                        .iter()
                        .position(|l| &l.name == n)
                        .map(|x| x as u32)
                        .ok_or_else(|| {
                            let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
                            ScenarioError::new(
                                format!("{field}[{i}]"),
                                format!("\"{n}\": no such link; links are: {}", known.join(", ")),
                            )
                        })
                })
                .collect()
        };
        let pcap_links = link_ids(&spec.output.pcap, "output.pcap")?;
        let series = match spec.output.timeseries {
            Some(iv) => Some(Series {
                interval: iv.0,
                links: match &spec.output.timeseries_links {
                    Some(names) => link_ids(names, "output.timeseries_links")?,
                    None => (0..links.len() as u32).collect(),
                },
                rows: Vec::new(),
            }),
            None => None,
        };
        let mut pcap_files = Vec::new();
        if !pcap_links.is_empty() {
            let dir = opts.out_dir.as_deref().ok_or_else(|| {
                ScenarioError::new(
                    "output.pcap",
                    "writing pcap needs an output directory (--out DIR, or out= in Python)",
                )
            })?;
            std::fs::create_dir_all(dir).map_err(|e| {
                ScenarioError::new(
                    "output.pcap",
                    format!("cannot create {}: {e}", dir.display()),
                )
            })?;
            for &l in &pcap_links {
                let link = &mut links[l as usize];
                let path = crate::output::pcap::unique_pcap_path(dir, &link.name, &pcap_files);
                link.pcap = Some(Box::new(PcapWriter::create(&path).map_err(|e| {
                    ScenarioError::new(
                        "output.pcap",
                        format!("cannot write {}: {e}", path.display()),
                    )
                })?));
                pcap_files.push(path);
            }
        }

        let unroutable = |a: u32, b: u32| topo.routes.next_link(a, b) == NO_ROUTE;
        for &(entry, src, dst, both) in &traffic.routes {
            if unroutable(src, dst) || (both && unroutable(dst, src)) {
                let name = &traffic.entries[entry as usize].name;
                return Err(ScenarioError::new(
                    format!("traffic[{entry}]"),
                    format!(
                        "`{name}`: no route between {} and {} in the direction it needs (links are one-way unless duplex)",
                        topo.nodes[src as usize].name, topo.nodes[dst as usize].name
                    ),
                ));
            }
        }
        let mut sim = Simulation {
            name: spec.name.clone(),
            warnings: topo.warnings,
            seed,
            end,
            warmup: spec.warmup.map(|w| w.0).unwrap_or(0),
            events: EventQueue::new(),
            packets: PacketArena::new(),
            nodes: topo.nodes,
            routes: topo.routes,
            links,
            flows: Vec::with_capacity(traffic.flows.len()),
            flow_slot: Default::default(),
            static_flows: traffic.flows.len() as u32,
            next_flow: 0,
            free_flows: Vec::new(),
            free_endpoints: Vec::new(),
            to_release: Vec::new(),
            conn_totals: (0..traffic.entries.len())
                .map(|_| ConnTotals::default())
                .collect(),
            flow_records: Vec::new(),
            apps: traffic.apps,
            app_entry: traffic.app_entry,
            app_io: AppIo::new(0),
            entry_flows: vec![0; traffic.entries.len()],
            entries: traffic.entries,
            drop_log: spec.output.drops.then(Vec::new),
            series,
            delivered: 0,
            dropped: 0,
            hops: 0,
            pcap_files,
            tcp: Vec::new(),
            tcp_timer: Vec::new(),
            tcp_flow: Vec::new(),
            sojourn_hist: spec.output.sojourn_hist,
            owd_hist: spec.output.owd_hist,
            tcp_series: spec.output.tcp_timeseries.map(|iv| TcpSeries {
                interval: iv.0,
                rows: Vec::new(),
            }),
            flow_series: spec.output.flow_timeseries.map(|iv| FlowSeries {
                interval: iv.0,
                rows: Vec::new(),
            }),
            transfer_log: spec.output.transfers.then(TransferLog::default),
            seg_buf: Vec::with_capacity(64),
            qevents: Vec::with_capacity(64),
            wall: std::time::Duration::ZERO,
            guard: guard::Guard {
                max_memory,
                max_events_per_second: spec
                    .max_events_per_second
                    .unwrap_or(crate::scenario::spec::DEFAULT_MAX_EVENTS_PER_SECOND),
                ..Default::default()
            },
            failure: None,
            peps: Vec::new(),
            pep_at: Vec::new(),
        };
        sim.build_peps(spec)?;
        if !sim.peps.is_empty() {
            // A PEP splits a connection into two of aqmlab's own TCP; ns-2's one-way
            // agents have no such relay.
            for (i, a) in sim.apps.iter().enumerate() {
                if let crate::app::AnyApp::Tcp(t) = a {
                    if t.cfg.ns2.is_some() {
                        let entry = &sim.entries[sim.app_entry[i] as usize].name;
                        return Err(ScenarioError::new(
                            format!("traffic[{entry}].profile"),
                            "\"ns2\" (ns-2's one-way agents) cannot cross a PEP node; use linux, ns3 or rfc",
                        ));
                    }
                }
            }
        }
        sim.check_series_estimate()?;
        // First in the queue, so the counters restart before anything else happens at
        // that instant: a packet counts when it is created or arrives at or after it.
        if sim.warmup > 0 {
            sim.events.schedule(sim.warmup, Event::WarmupEnd);
        }
        for f in &traffic.flows {
            let cc = f.tcp.map_or("", |c| c.cc.name());
            let id = sim.add_flow(f.entry, f.kind, f.src, f.dst, cc, f.app);
            if let Some(cfg) = f.tcp {
                sim.add_tcp_endpoints(id, cfg);
                sim.pep_intercept(id);
            }
        }
        for a in 0..sim.apps.len() {
            sim.run_app(a, |app, _, io| app.start(io));
        }
        for l in 0..sim.links.len() {
            if let Some(t) = sim.links[l].rate_change.first() {
                sim.events
                    .schedule(t, Event::LinkRateChange { link: l as u32 });
            }
            let timer = sim.links[l].qdisc.next_timer();
            sim.arm_qdisc_timer(l, timer);
        }
        if sim.series.is_some() {
            sim.events.schedule(0, Event::Sample);
        }
        if sim.tcp_series.is_some() {
            sim.events.schedule(0, Event::TcpSample);
        }
        if sim.flow_series.is_some() {
            sim.events.schedule(0, Event::FlowSample);
        }
        Ok(sim)
    }
}

/// The network and its traffic. A topology with queue limits in BDP is built twice:
/// first to learn the traffic's routes (BDP limits stand in as one packet), then with
/// each link's base RTT (`scenario::bdp`); the traffic is built again on the final one.
fn build_network(
    spec: &ScenarioSpec,
    seed: u64,
    end: Nanos,
    warmup: Nanos,
) -> Result<(topology::Topology, app::Traffic)> {
    if !has_bdp_limit(&spec.topology) {
        let topo = topology::build(&spec.topology, seed)?;
        let traffic = app::build(&spec.traffic, &topo, seed, end, warmup)?;
        return Ok((topo, traffic));
    }
    let first = topology::build_with_rtts(&spec.topology, seed, Vec::new(), bdp::BaseRtt::Pending)?;
    let traffic = app::build(&spec.traffic, &first, seed, end, warmup)?;
    let rtts = base_rtts(&first, &traffic);
    let topo = topology::build_with_rtts(&spec.topology, seed, rtts, bdp::BaseRtt::NoFlows)?;
    let traffic = app::build(&spec.traffic, &topo, seed, end, warmup)?;
    Ok((topo, traffic))
}

/// True if a queue discipline of the topology (or a child of one) has a limit in BDP.
fn has_bdp_limit(t: &crate::scenario::spec::TopologySpec) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(m) => m.iter().any(|(k, x)| {
                (k == "limit" && x.as_str().is_some_and(|s| bdp::parse_multiple(s).is_some()))
                    || walk(x)
            }),
            serde_json::Value::Array(a) => a.iter().any(walk),
            _ => false,
        }
    }
    let hosts = t.hosts.iter().flat_map(|h| [&h.left, &h.right]);
    [&t.bottleneck, &t.reverse]
        .into_iter()
        .chain(hosts)
        .flatten()
        .chain(&t.links)
        .filter_map(|l| l.qdisc.as_ref())
        .any(walk)
}

/// Each link's base RTT over the flows of `traffic` that cross it (`scenario::bdp`).
fn base_rtts(topo: &topology::Topology, traffic: &app::Traffic) -> Vec<bdp::BaseRtt> {
    let route = |mut at: u32, dst: u32| {
        let mut links = Vec::new();
        while at != dst && links.len() <= topo.links.len() {
            let l = topo.routes.next_link(at, dst);
            if l == NO_ROUTE {
                break;
            }
            links.push(l);
            at = topo.links[l as usize].to;
        }
        links
    };
    let paths: Vec<_> = traffic
        .routes
        .iter()
        .map(|&(_, src, dst, both)| (route(src, dst), route(dst, src), both))
        .collect();
    let delay: Vec<Nanos> = topo.links.iter().map(|l| l.delay).collect();
    bdp::link_base_rtts(topo.links.len(), &delay, &paths)
}
