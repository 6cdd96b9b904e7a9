//! Engine-level properties: packet conservation on random scenarios, determinism,
//! stream independence, topologies and rate changes.

mod common;

use aqmlab_core::qdisc::Discipline;
use aqmlab_core::sim::rng::Rng;
use aqmlab_core::{run_scenario, Results, RunOptions, ScenarioSpec, Simulation};

fn pick<'a>(r: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[r.below(xs.len() as u64) as usize]
}

/// A random dumbbell or chain with random FIFOs, loss and UDP sources.
fn random_scenario(r: &mut Rng) -> String {
    let qdisc = |r: &mut Rng| {
        let limit = 1 + r.below(60);
        let kinds = [
            "pfifo",
            "bfifo",
            "pfifo_head_drop",
            "droptail",
            "red",
            "ared",
            "pie",
            "docsis_pie",
            "codel",
            "fq_codel",
            "drr",
            "sfq",
            "sfq_codel",
            "prio",
            "rio",
            "rb_red",
            "rb_rio",
            "avq",
            "gk",
            "avqred",
            "pfavqred",
            "sred",
            "choke",
        ];
        match pick(r, &kinds) {
            "bfifo" => format!("{{ kind = \"bfifo\", limit = \"{}B\" }}", 1500 + r.below(30_000)),
            // tc's derived thresholds need a limit of 12 or more packets.
            "choke" => format!("{{ kind = \"choke\", limit = \"{limit}pkt\", min = 1, max = 4, wq = 0.002 }}"),
            "red" => format!("{{ kind = \"red\", limit = \"{limit}pkt\", min = \"2pkt\", max = \"8pkt\", gentle = true }}"),
            "prio" => format!(
                "{{ kind = \"prio\", bands = 2, children = [{{ kind = \"codel\", limit = \"{limit}pkt\" }}, {{ kind = \"pfifo\", limit = \"{limit}pkt\" }}] }}"
            ),
            k => format!("{{ kind = \"{k}\", limit = \"{limit}pkt\" }}"),
        }
    };
    let rate = |r: &mut Rng| format!("{}kbit", 200 + r.below(20_000));
    let duration = 200 + r.below(3000);
    let mut s = format!("name = \"random\"\nduration = \"{duration}ms\"\n");
    if r.chance(0.4) {
        s += &format!("warmup = \"{}ms\"\n", r.below(duration));
    }
    let dumbbell = r.chance(0.5);
    if dumbbell {
        s += &format!(
            "[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"{}\"\ndelay = \"{}ms\"\nqdisc = {}\nloss = {}\n",
            rate(r),
            r.below(50),
            qdisc(r),
            if r.chance(0.3) { r.uniform() * 0.1 } else { 0.0 }
        );
        if r.chance(0.3) {
            let a = r.below(duration);
            s += &format!(
                "outages = [{{ start = \"{a}ms\", end = \"{}ms\" }}]\n",
                a + 1 + r.below(500)
            );
        }
        let groups = 1 + r.below(3);
        for g in 0..groups {
            s += &format!(
                "[[topology.hosts]]\nname = \"g{g}\"\ncount = {}\nleft = {{ rate = \"{}\", delay = \"{}ms\", qdisc = {} }}\n",
                1 + r.below(3),
                rate(r),
                r.below(20),
                qdisc(r)
            );
        }
        for g in 0..groups {
            let dir = pick(r, &["forward", "reverse"]);
            s += &traffic(r, &format!("hosts = \"g{g}\"\ndirection = \"{dir}\""));
        }
    } else {
        let n = 3 + r.below(4);
        s += "[topology]\nkind = \"graph\"\nnodes = [";
        for i in 0..n {
            s += &format!("{{ name = \"n{i}\" }}, ");
        }
        s += "]\n";
        for i in 0..n - 1 {
            s += &format!(
                "[[topology.links]]\nfrom = \"n{i}\"\nto = \"n{}\"\nrate = \"{}\"\ndelay = \"{}ms\"\nqdisc = {}\n",
                i + 1,
                rate(r),
                r.below(30),
                qdisc(r)
            );
        }
        for _ in 0..1 + r.below(4) {
            let a = r.below(n);
            let mut b = r.below(n);
            if a == b {
                b = (a + 1) % n;
            }
            s += &traffic(r, &format!("src = \"n{a}\"\ndst = \"n{b}\""));
        }
    }
    s
}

fn traffic(r: &mut Rng, place: &str) -> String {
    let kind = pick(
        r,
        &[
            "udp-cbr",
            "udp-poisson",
            "tcp-bulk",
            "tcp-file",
            "tcp-arrivals",
        ],
    );
    if kind.starts_with("tcp") {
        let cc = pick(r, &["reno", "newreno", "cubic"]);
        let mut t = format!(
            "[[traffic]]\nkind = \"{kind}\"\n{place}\ncc = \"{cc}\"\nstart = \"{}ms\"\n",
            r.below(100)
        );
        match kind {
            "tcp-file" => {
                t += &format!("size = \"{}B\"\nrestart = true\n", 1000 + r.below(200_000))
            }
            "tcp-arrivals" => {
                t += &format!(
                    "size = \"{}B\"\nrate = {}\n",
                    1000 + r.below(100_000),
                    1 + r.below(20)
                )
            }
            _ => {}
        }
        return t;
    }
    let mut t = format!(
        "[[traffic]]\nkind = \"{kind}\"\n{place}\nrate = \"{}kbit\"\nsize = \"{}B\"\nstart = \"{}ms\"\n",
        100 + r.below(5000),
        40 + r.below(1460),
        r.below(100)
    );
    if kind == "udp-poisson" && r.chance(0.5) {
        t += "size_dist = \"exp\"\n";
    }
    t
}

fn check_conservation(text: &str, seed: u64) {
    let spec = ScenarioSpec::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut sim = Simulation::new(&spec, Some(seed), &RunOptions::default()).unwrap();
    sim.run().unwrap();
    let created = sim.packets.created();
    let live = sim.packets.live() as u64;
    assert_eq!(
        live,
        sim.in_network(),
        "arena live packets vs packets in the network\n{text}"
    );
    assert_eq!(
        created,
        sim.delivered + sim.dropped + live,
        "conservation\n{text}"
    );
    let warm = spec.warmup.is_some_and(|w| w.0 > 0);
    let lost = |s: &aqmlab_core::measure::link_stats::LinkStats| {
        s.qdisc_drops() + s.drops_random + s.drops_outage
    };
    if !warm {
        // Every drop is attributed to a link with a reason, once.
        let link_drops: u64 = sim.links.iter().map(|l| lost(&l.stats)).sum();
        assert_eq!(link_drops, sim.dropped, "drops by reason\n{text}");
    }
    for l in &sim.links {
        let s = &l.stats;
        // Every arrival at a link is lost on the wire, dropped by the qdisc (at enqueue
        // or later), sent, or still queued: exactly one of these. After a warm-up the
        // fates count only packets that arrived in the window, and the queue may still
        // hold older ones.
        let fates = lost(s) + s.dequeued;
        let queued = l.qdisc.len_packets() as u64;
        let ctx = format!("{} ({}): {s:?}\n{text}", l.name, l.qdisc.kind_name());
        if warm {
            assert!(fates <= s.arrivals && s.arrivals <= fates + queued, "{ctx}");
        } else {
            assert_eq!(s.arrivals, fates + queued, "{ctx}");
        }
        assert!(
            s.enqueued <= s.arrivals - s.drops_random - s.drops_outage,
            "{ctx}"
        );
    }
    check_ratios(&aqmlab_core::results::collect(&sim), text);
}

/// Ratios are ratios and parts are parts, per link, per flow and per app.
fn check_ratios(r: &Results, text: &str) {
    let q = r.table("queues");
    for (i, (d, u)) in q
        .f64s("drop_rate")
        .iter()
        .zip(q.f64s("utilization"))
        .enumerate()
    {
        assert!(
            (0.0..=1.0).contains(d),
            "queues row {i} drop_rate {d}\n{text}"
        );
        assert!(
            (0.0..=1.0 + 1e-9).contains(&u),
            "queues row {i} utilization {u}\n{text}"
        );
    }
    let f = r.table("flows");
    let (sent, delivered, dropped) = (
        f.f64s("packets_sent"),
        f.f64s("packets_delivered"),
        f.f64s("packets_dropped"),
    );
    for (i, l) in f.f64s("loss_rate").iter().enumerate() {
        assert!(
            (0.0..=1.0).contains(l),
            "flows row {i} loss_rate {l}\n{text}"
        );
        assert!(
            delivered[i] + dropped[i] <= sent[i],
            "flows row {i}: delivered {} + dropped {} > sent {}\n{text}",
            delivered[i],
            dropped[i],
            sent[i]
        );
    }
    for (i, l) in r.table("apps").f64s("loss_rate").iter().enumerate() {
        assert!(
            (0.0..=1.0).contains(l),
            "apps row {i} loss_rate {l}\n{text}"
        );
    }
}

#[test]
fn packets_are_conserved_on_random_scenarios() {
    let mut r = Rng::stream(2026, "conservation");
    for i in 0..300 {
        let text = random_scenario(&mut r);
        check_conservation(&text, i);
    }
}

const TWO_SOURCES: &str = r#"
name = "det"
duration = "20s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "2Mbit"
delay = "10ms"
qdisc = { kind = "pfifo", limit = "30pkt" }
[[topology.hosts]]
name = "a"
count = 2
left = { rate = "100Mbit", delay = "2ms" }
[[traffic]]
kind = "udp-poisson"
name = "p"
hosts = "a"
rate = "1.2Mbit"
size = "700B"
size_dist = "exp"
"#;

/// The tables minus wall-clock columns, rendered exactly (Debug prints every f64 so
/// that it round-trips, and NaN equals NaN here, unlike `==` on floats).
fn without_wall(mut r: Results) -> String {
    for t in &mut r.tables {
        t.columns
            .retain(|(n, _)| n != "wall_time_s" && n != "events_per_s");
    }
    format!("{:?}", r.tables)
}

#[test]
fn same_seed_gives_identical_tables_and_another_seed_does_not() {
    let a = without_wall(common::run(TWO_SOURCES, 5));
    let b = without_wall(common::run(TWO_SOURCES, 5));
    let c = without_wall(common::run(TWO_SOURCES, 6));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

const DISJOINT: &str = r#"
duration = "30s"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }, { name = "c" }, { name = "d" }]
links = [
  { from = "a", to = "b", rate = "1Mbit", delay = "5ms", qdisc = { kind = "pfifo", limit = "20pkt" } },
  { from = "c", to = "d", rate = "1Mbit", delay = "5ms" },
]
"#;

const PROBE: &str = r#"
[[traffic]]
kind = "udp-poisson"
name = "probe"
src = "a"
dst = "b"
rate = "900kbit"
size = "500B"
size_dist = "exp"
"#;

const OTHER: &str = r#"
[[traffic]]
kind = "udp-poisson"
name = "other"
src = "c"
dst = "d"
rate = "500kbit"
"#;

#[test]
fn adding_an_unrelated_flow_leaves_other_sources_packet_times_alone() {
    // The probe's queueing statistics are a function of its own send times and sizes
    // only (its path carries nothing else), so they must not move when another source,
    // placed before or after it in the file, joins the scenario.
    let alone = common::run(&format!("{DISJOINT}{PROBE}"), 3);
    let after = common::run(&format!("{DISJOINT}{PROBE}{OTHER}"), 3);
    let before = common::run(&format!("{DISJOINT}{OTHER}{PROBE}"), 3);
    let row = |r: &Results| {
        let f = r.table("flows");
        let i = f.find("app", "probe").unwrap();
        let cols = [
            "packets_sent",
            "bytes_sent",
            "packets_dropped",
            "owd_ms_mean",
            "owd_ms_p99",
        ];
        cols.map(|c| f.f64s(c)[i])
    };
    assert!(
        row(&alone)[2] > 0.0,
        "the probe's queue should overflow sometimes"
    );
    assert_eq!(row(&alone), row(&after));
    assert_eq!(row(&alone), row(&before));
    assert_eq!(after.table("flows").rows(), 2);
}

#[test]
fn dumbbell_routes_through_the_bottleneck_and_names_links() {
    let r = common::run(TWO_SOURCES, 1);
    let q = r.table("queues");
    let names = q.strs("link");
    for n in ["L->R", "R->L", "a_l0->L", "L->a_l0", "a_r1->R", "R->a_r1"] {
        assert!(names.contains(&n.to_string()), "{n} in {names:?}");
    }
    // All forward traffic crossed the bottleneck; nothing went backwards.
    let sent: f64 = r.table("flows").f64s("packets_sent").iter().sum();
    let arrivals = common::cell(&r, "queues", "link", "L->R", "arrivals");
    // (the last packets may still be on the access links when the run ends)
    assert!(
        arrivals <= sent && sent - arrivals <= 2.0,
        "{arrivals} vs {sent}"
    );
    assert_eq!(common::cell(&r, "queues", "link", "R->L", "arrivals"), 0.0);
}

#[test]
fn graph_uses_shortest_paths() {
    // a - b - c - d plus a shortcut a - d: a->d traffic takes the shortcut.
    let text = r#"
duration = "2s"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }, { name = "c" }, { name = "d" }]
links = [
  { from = "a", to = "b", rate = "10Mbit" },
  { from = "b", to = "c", rate = "10Mbit" },
  { from = "c", to = "d", rate = "10Mbit" },
  { from = "a", to = "d", rate = "1Mbit", delay = "50ms" },
]
[[traffic]]
kind = "udp-cbr"
src = "a"
dst = "d"
rate = "100kbit"
[[traffic]]
kind = "udp-cbr"
src = "b"
dst = "d"
rate = "100kbit"
"#;
    let r = common::run(text, 1);
    assert!(common::cell(&r, "queues", "link", "a->d", "arrivals") > 0.0);
    assert_eq!(common::cell(&r, "queues", "link", "a->b", "arrivals"), 0.0);
    assert!(common::cell(&r, "queues", "link", "c->d", "arrivals") > 0.0);
}

#[test]
fn rate_schedule_changes_the_service_rate() {
    // 1.5 Mbit/s CBR into a link at 2 Mbit/s, then 1 Mbit/s from 5 s: the queue builds
    // only after the change; throughput = 2/3 of the time at 1.5 then 1.0 Mbit/s.
    let text = r#"
duration = "10s"
output = { timeseries = "500ms", timeseries_links = ["a->b"] }
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ from = "a", to = "b", rate = "2Mbit", duplex = false, qdisc = { kind = "pfifo", limit = "100000pkt" }, rate_schedule = [{ at = "5s", rate = "1Mbit" }] }]
[[traffic]]
kind = "udp-cbr"
src = "a"
dst = "b"
rate = "1.5Mbit"
size = "1000B"
"#;
    let r = common::run(text, 1);
    let ts = r.table("timeseries");
    let rates = ts.f64s("rate_bps");
    let qlen = ts.f64s("qlen_pkts");
    let t = ts.f64s("time_ns");
    for i in 0..t.len() {
        if t[i] < 5e9 {
            assert_eq!(rates[i], 2e6);
            assert!(qlen[i] <= 1.0);
        } else if t[i] > 6e9 {
            assert_eq!(rates[i], 1e6);
            assert!(qlen[i] > 10.0);
        }
    }
    let thr = common::cell(&r, "queues", "link", "a->b", "throughput_bps");
    assert!((thr - 1.25e6).abs() / 1.25e6 < 0.01, "{thr}");
}

#[test]
fn random_rate_process_draws_from_the_set_at_the_configured_intervals() {
    let text = r#"
duration = "30s"
output = { timeseries = "1ms", timeseries_links = ["a->b"] }
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
[[topology.links]]
from = "a"
to = "b"
rate = "2Mbit"
duplex = false
rate_process = { every_min = "10ms", every_max = "30ms", rates = ["0.5Mbit", "1Mbit", "1.5Mbit", "2Mbit", "2.5Mbit", "3Mbit", "3.5Mbit"] }
"#;
    let r = common::run(text, 4);
    let rates = r.table("timeseries").f64s("rate_bps");
    let allowed: Vec<f64> = (1..=7).map(|k| k as f64 * 0.5e6).collect();
    let mut changes = 0;
    let mut run_len = 0;
    let mut min_run = usize::MAX;
    let mut max_run = 0;
    for w in rates.windows(2).skip(1) {
        assert!(allowed.contains(&w[1]), "{}", w[1]);
        run_len += 1;
        if w[1] != w[0] {
            changes += 1;
            min_run = min_run.min(run_len);
            max_run = max_run.max(run_len);
            run_len = 0;
        }
    }
    // A redraw every U[10,30] ms (mean 20 ms) for 30 s: ~1500 redraws, 6/7 of which
    // change the value: ~1286 visible changes.
    assert!((1150..1420).contains(&changes), "{changes}");
    // Constant stretches last 10..30 ms (sampled at 1 ms), or multiples when the same
    // rate is redrawn.
    assert!(min_run >= 9, "{min_run}");
    assert!(max_run >= 30, "{max_run}");
    // Every value is used, about equally.
    for a in &allowed {
        let share = rates.iter().filter(|x| *x == a).count() as f64 / rates.len() as f64;
        assert!((share - 1.0 / 7.0).abs() < 0.03, "{a}: {share}");
    }
}

#[test]
fn warmup_restarts_statistics() {
    let text = format!("warmup = \"10s\"\n{TWO_SOURCES}");
    let r = common::run(&text, 1);
    let full = common::run(TWO_SOURCES, 1);
    let sent_w: f64 = r.table("flows").f64s("packets_sent").iter().sum();
    let sent_f: f64 = full.table("flows").f64s("packets_sent").iter().sum();
    assert!((sent_w / sent_f - 0.5).abs() < 0.03, "{sent_w} vs {sent_f}");
    let thr_w = common::cell(&r, "queues", "link", "L->R", "throughput_bps");
    let thr_f = common::cell(&full, "queues", "link", "L->R", "throughput_bps");
    assert!(
        (thr_w / thr_f - 1.0).abs() < 0.05,
        "throughput is per measured second: {thr_w} vs {thr_f}"
    );
}

#[test]
fn drop_log_records_every_drop_with_its_reason() {
    let text = format!("{TWO_SOURCES}\n[output]\ndrops = true\n").replace("1.2Mbit", "3Mbit");
    let r = common::run(&text, 1);
    let drops = r.table("drops");
    let total: f64 = r.table("queues").f64s("drops").iter().sum();
    assert!(total > 100.0);
    assert_eq!(drops.rows() as f64, total);
    assert!(drops.strs("reason").iter().all(|x| x == "overflow"));
    assert!(drops.strs("link").iter().all(|x| x == "L->R"));
    let t = drops.f64s("time_ns");
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn memory_stays_flat_in_simulated_time() {
    // Arena slots (the high-water mark of live packets) must not grow with run length.
    let short = TWO_SOURCES.replace("20s", "10s");
    let long = TWO_SOURCES.replace("20s", "100s");
    let a = common::run(&short, 2);
    let b = common::run(&long, 2);
    let slots = |r: &Results| r.table("summary").f64s("arena_slots")[0];
    assert!(
        slots(&b) <= slots(&a) * 1.5 + 10.0,
        "{} vs {}",
        slots(&a),
        slots(&b)
    );
}

#[test]
fn run_scenario_matches_stepwise_runs() {
    let spec = common::spec(TWO_SOURCES);
    let whole = without_wall(run_scenario(&spec, Some(9), &RunOptions::default()).unwrap());
    let mut sim = Simulation::new(&spec, Some(9), &RunOptions::default()).unwrap();
    for k in 1..=7 {
        sim.run_until(sim.end * k / 7).unwrap();
    }
    let stepped = without_wall(aqmlab_core::results::collect(&sim));
    assert_eq!(whole, stepped);
}

#[test]
fn outage_drops_count_as_the_flows_losses() {
    // 1000 B at 800 kbit/s = 100 packets/s for 10 s; the bottleneck is down for 1 s:
    // exactly the 100 packets offered in [2 s, 3 s) are lost, and the flow says so.
    let text = r#"
duration = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "1ms"
outages = [{ start = "2s", end = "3s" }]
[[topology.hosts]]
name = "a"
[[traffic]]
kind = "udp-cbr"
name = "cbr"
hosts = "a"
rate = "800kbit"
size = "1000B"
"#;
    let r = common::run(text, 1);
    let outage = r.table("queues").f64s("drops_outage").iter().sum::<f64>();
    assert_eq!(outage, 100.0);
    assert_eq!(
        common::cell(&r, "flows", "app", "cbr", "packets_dropped"),
        100.0
    );
    assert_eq!(common::cell(&r, "flows", "app", "cbr", "loss_rate"), 0.1);
    assert_eq!(common::cell(&r, "apps", "app", "cbr", "loss_rate"), 0.1);
}

#[test]
fn start_jitter_makes_seeds_of_a_deterministic_scenario_differ() {
    // Bulk TCP into a pfifo has no randomness: every seed gives the same tables, unless
    // the flows start at random times.
    let base = r#"
duration = "5s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "5Mbit"
delay = "10ms"
qdisc = { kind = "pfifo", limit = "50pkt" }
[[topology.hosts]]
name = "a"
count = 3
[[traffic]]
kind = "tcp-bulk"
hosts = "a"
"#;
    let tables = |text: &str, seed| {
        let mut r = common::run(text, seed);
        r.tables[0].columns.retain(|(n, _)| n != "seed");
        without_wall(r)
    };
    let same = |text: &str| tables(text, 1) == tables(text, 2);
    assert!(same(base));
    let jittered = base.replace("hosts = \"a\"\n", "hosts = \"a\"\nstart_jitter = \"1s\"\n");
    assert!(!same(&jittered));
    // Each flow's first packet leaves in [0, 1 s]: no flow delivers before its start,
    // and the three starts differ.
    let spec = common::spec(
        &base
            .replace(
                "[topology]",
                "output = { tcp_timeseries = \"1ms\" }\n[topology]",
            )
            .replace("hosts = \"a\"\n", "hosts = \"a\"\nstart_jitter = \"1s\"\n"),
    );
    let r = run_scenario(&spec, Some(3), &RunOptions::default()).unwrap();
    let tcp = r.table("tcp");
    let (time, flow) = (tcp.f64s("time_ns"), tcp.f64s("flow"));
    let first: Vec<f64> = (0..3)
        .map(|f| {
            time.iter()
                .zip(&flow)
                .find(|(_, &x)| x == f as f64)
                .map(|(t, _)| *t)
                .unwrap()
        })
        .collect();
    assert!(first.iter().all(|&t| t <= 1.001e9), "{first:?}");
    assert!(first[0] != first[1] && first[1] != first[2], "{first:?}");
}
