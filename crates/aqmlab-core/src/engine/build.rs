//! Building a `Simulation` from a scenario.
use super::*;

impl Simulation {
    /// Build a simulation of `spec` with `seed` (overriding the scenario's own seed).
    pub fn new(spec: &ScenarioSpec, seed: Option<u64>, opts: &RunOptions) -> Result<Simulation> {
        let seed = seed.unwrap_or(spec.seed);
        let topo = topology::build(&spec.topology, seed)?;
        let end = spec.duration.0;
        let traffic = app::build(&spec.traffic, &topo, seed, end)?;
        let mut links = topo.links;

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
                let path = pcap_path(dir, &link.name);
                link.pcap = Some(PcapWriter::create(&path).map_err(|e| {
                    ScenarioError::new(
                        "output.pcap",
                        format!("cannot write {}: {e}", path.display()),
                    )
                })?);
                pcap_files.push(path);
            }
        }

        for f in &traffic.flows {
            let no_way_back =
                f.kind == "tcp" && topo.nodes[f.dst as usize].routes[f.src as usize] == NO_ROUTE;
            if topo.nodes[f.src as usize].routes[f.dst as usize] == NO_ROUTE || no_way_back {
                let name = &traffic
                    .entries
                    .get(f.entry as usize)
                    .map(|e| e.name.as_str())
                    .unwrap_or("?");
                return Err(ScenarioError::new(
                    "traffic",
                    format!(
                        "`{name}`: no route between {} and {} in the direction it needs (links are one-way unless duplex)",
                        topo.nodes[f.src as usize].name, topo.nodes[f.dst as usize].name
                    ),
                ));
            }
        }
        let mut sim = Simulation {
            name: spec.name.clone(),
            seed,
            end,
            warmup: spec.warmup.map(|w| w.0).unwrap_or(0),
            events: EventQueue::new(),
            packets: PacketArena::new(),
            nodes: topo.nodes,
            links,
            flows: Vec::with_capacity(traffic.flows.len()),
            apps: traffic.apps,
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
            tcp_series: spec.output.tcp_timeseries.map(|iv| TcpSeries {
                interval: iv.0,
                rows: Vec::new(),
            }),
            seg_buf: Vec::with_capacity(64),
            qevents: Vec::with_capacity(64),
            wall: std::time::Duration::ZERO,
        };
        for f in &traffic.flows {
            let id = sim.add_flow(f.entry, f.kind, f.src, f.dst, f.cc.clone(), f.app);
            if let Some(cfg) = f.tcp {
                sim.add_tcp_endpoints(id, cfg);
            }
        }
        for (i, t) in traffic.first.iter().enumerate() {
            if let Some(t) = t {
                sim.events.schedule(*t, Event::App { app: i as u32 });
            }
            // Single-connection TCP apps that stop early get an event at `stop`.
            if let App::Tcp(a) = &sim.apps[i] {
                if a.flow.is_some() && a.stop < end && t.is_some() {
                    sim.events.schedule(a.stop, Event::App { app: i as u32 });
                }
            }
        }
        for l in 0..sim.links.len() {
            if let Some(t) = sim.links[l].rate_change.first() {
                sim.events
                    .schedule(t, Event::LinkRateChange { link: l as u32 });
            }
            sim.arm_qdisc_timer(l);
        }
        if sim.series.is_some() {
            sim.events.schedule(0, Event::Sample);
        }
        if sim.tcp_series.is_some() {
            sim.events.schedule(0, Event::TcpSample);
        }
        if sim.warmup > 0 {
            sim.events.schedule(sim.warmup, Event::WarmupEnd);
        }
        Ok(sim)
    }
}

fn pcap_path(dir: &Path, link: &str) -> PathBuf {
    let safe: String = link
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}.pcap"))
}
