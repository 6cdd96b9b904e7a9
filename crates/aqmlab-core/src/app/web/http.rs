//! `tcp-http`: the satellite-gateway study's HTTP load (Byun, *Congestion Control in
//! Satellite Networks*, PhD dissertation, University of Maryland, 2007, §3.1,
//! paraphrased: start 20 new connections every 5 s (5 s pause between ramps) up to 400
//! live connections; a closed connection is replaced at once; each page 250–550 KB,
//! 10 s think time, per-connection cap 5 Mbit/s; docs/access/satellite-pep.md).
//!
//! Each user is one live connection slot: it fetches a page of U[`size_min`, `size_max`]
//! bytes (server → client, each page on a new TCP connection, closed with FIN), thinks
//! `think` after the page is acknowledged (fixed, the study's 10 s), then fetches the
//! next: the connection that closes is replaced by the user's next one, so the number of
//! users stays constant. Users enter in ramp steps: user `u` (numbered user-major over
//! the entry's pairs, so a step spreads over clients) starts at
//! `start + ⌊u / ramp_step⌋ · ramp_every`. The study's ramp reads "20 new every 5 s"
//! (`ramp_step = 20`, `ramp_every = "5s"`); the "5 s pause" is read as the gap between
//! steps. The per-connection cap is the common TCP `rate_cap` (application write rate).
//! Through a PEP (`crate::pep`) a page counts as done when the terminal has it all.

use crate::app::bulk::tcp::config;
use crate::app::{AppIo, Application, EntryBuild, TrafficKind};
use crate::output::table::Val;
use crate::scenario::error::Result;
use crate::scenario::params::KindDoc;
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};
use crate::transport::tcp::TcpConfig;

use crate::scenario::params::param as p;

pub const KIND: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "tcp-http",
        summary: "HTTP users: uniform page sizes, fixed think time, ramped start (satellite study); plus the common TCP parameters",
        source: "satellite-gateway study (Byun, PhD dissertation, U. Maryland, 2007, §3.1)",
        params: &[
            p("users", "int", "1", "users (live connection slots) per host pair"),
            p("size_min", "size", "required", "smallest page"),
            p("size_max", "size", "required", "largest page (sizes uniform from size_min to size_max)"),
            p("think", "duration", "10s", "think time after a page is acknowledged"),
            p(
                "ramp_step",
                "int",
                "0",
                "users started per ramp step (0: all at `start`)",
            ),
            p("ramp_every", "duration", "5s", "time between ramp steps"),
        ],
    },
    build,
};

fn build(p: &mut crate::scenario::params::Params, e: &mut EntryBuild) -> Result<()> {
    let cfg = config(p)?;
    let users = p.u64_or("users", 1, 1, 1_000_000)?;
    let required = |p: &mut crate::scenario::params::Params, key: &'static str| -> Result<u64> {
        match p.size(key)? {
            Some(0) => Err(p.error(key, "expected a size greater than zero")),
            Some(s) => Ok(s),
            None => Err(p.error(key, "missing: expected a size like \"250KB\"")),
        }
    };
    let size_min = required(p, "size_min")?;
    let size_max = required(p, "size_max")?;
    if size_max < size_min {
        return Err(p.error(
            "size_max",
            format!("{size_max}B: expected at least size_min ({size_min}B)"),
        ));
    }
    let think = p.duration_or("think", 10 * NS_PER_S)?;
    let ramp_step = p.u64_or("ramp_step", 0, 0, 1_000_000)?;
    let ramp_every = p.positive_duration_or("ramp_every", 5 * NS_PER_S)?;
    let pairs = e.pairs.clone();
    for u in 0..users {
        for (k, &(src, dst)) in pairs.iter().enumerate() {
            let n = u * pairs.len() as u64 + k as u64;
            let step = n.checked_div(ramp_step).unwrap_or(0);
            let key = format!("flow[{k}].user[{u}]");
            e.need_route(src, dst, true);
            let user = HttpUser {
                cfg,
                src,
                dst,
                start: e.start_for(&key) + step * ramp_every,
                stop: e.stop,
                size_min,
                size_max,
                think,
                rng: e.rng(&key),
                pages: 0,
                bytes: 0,
            };
            e.add_app(user);
        }
    }
    Ok(())
}

/// One HTTP user (see the module doc).
pub struct HttpUser {
    cfg: TcpConfig,
    src: u32,
    dst: u32,
    start: Nanos,
    stop: Nanos,
    size_min: u64,
    size_max: u64,
    think: Nanos,
    rng: Rng,
    /// Pages requested so far, and their bytes.
    pages: u64,
    bytes: u64,
}

impl Application for HttpUser {
    fn start(&mut self, io: &mut AppIo) {
        if self.start < self.stop {
            io.wake_at(self.start);
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        if now >= self.stop {
            return;
        }
        let size = self.size_min + self.rng.below(self.size_max - self.size_min + 1);
        let f = io.new_tcp_flow(self.src, self.dst, self.cfg);
        io.write(f, size, true);
        io.connect(f);
        self.pages += 1;
        self.bytes += size;
    }

    fn on_transfer_done(&mut self, now: Nanos, _flow: u32, io: &mut AppIo) {
        let t = now + self.think;
        if t < self.stop {
            io.wake_at(t);
        }
    }

    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        out.push(("pages", apps.iter().map(|a| a.pages).sum::<u64>().into()));
        out.push((
            "page_bytes",
            apps.iter().map(|a| a.bytes).sum::<u64>().into(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Action;

    fn user(start: Nanos) -> HttpUser {
        HttpUser {
            cfg: TcpConfig::default(),
            src: 0,
            dst: 1,
            start,
            stop: 100 * NS_PER_S,
            size_min: 250_000,
            size_max: 550_000,
            think: 10 * NS_PER_S,
            rng: Rng::stream(1, "t"),
            pages: 0,
            bytes: 0,
        }
    }

    /// A page: new flow, write with FIN, connect; after it is acknowledged at 12.5 s the
    /// next page comes 10 s later on a new connection; nothing is started after `stop`.
    #[test]
    fn page_think_page() {
        let mut u = user(5 * NS_PER_S);
        let mut io = AppIo::new(7);
        u.start(&mut io);
        assert_eq!(io.actions(), &[Action::WakeAt(5 * NS_PER_S)]);
        io.reset(7);
        u.on_wake(5 * NS_PER_S, &mut io);
        let a = io.actions().to_vec();
        assert!(matches!(
            a[0],
            Action::NewTcpFlow {
                flow: 7,
                src: 0,
                dst: 1,
                ..
            }
        ));
        let Action::Write {
            flow: 7,
            bytes,
            fin: true,
        } = a[1]
        else {
            panic!("{a:?}")
        };
        assert!((250_000..=550_000).contains(&bytes));
        assert_eq!(a[2], Action::Connect { flow: 7 });
        io.reset(8);
        u.on_transfer_done(12_500_000_000, 7, &mut io);
        assert_eq!(io.actions(), &[Action::WakeAt(22_500_000_000)]);
        io.reset(8);
        u.on_transfer_done(95 * NS_PER_S, 8, &mut io);
        assert!(io.actions().is_empty());
    }

    /// 1000 pages from one stream: every size in [250 000, 550 000], mean within four
    /// standard errors of 400 000 (U[250k, 550k] has sd 86.6 kB: 2.74 kB over 1000).
    #[test]
    fn page_sizes_are_uniform_in_range() {
        let mut u = user(0);
        let mut io = AppIo::new(0);
        let mut sum = 0u64;
        for i in 0..1000 {
            io.reset(i);
            u.on_wake(NS_PER_S, &mut io);
            let Action::Write { bytes, .. } = io.actions()[1] else {
                panic!()
            };
            assert!((250_000..=550_000).contains(&bytes));
            sum += bytes;
        }
        let mean = sum as f64 / 1000.0;
        assert!((mean - 400_000.0).abs() < 4.0 * 2_740.0, "{mean}");
        assert_eq!(u.pages, 1000);
    }

    /// 3 pairs × 2 users, ramp_step 2 every 5 s from start 1 s: users are numbered
    /// user-major (u·3 + k), so the starts are 1, 1, 6 (pairs 0, 1, 2 of user 0), then
    /// 6, 11, 11 (user 1).
    #[test]
    fn users_enter_in_ramp_steps() {
        let spec = crate::scenario::spec::ScenarioSpec::from_toml_str(
            r#"
            duration = "1s"
            [topology]
            kind = "graph"
            nodes = [{ name = "a" }, { name = "b" }]
            links = [{ from = "a", to = "b", rate = "1Mbit", delay = "1ms" }]
            "#,
        )
        .unwrap();
        let topo = crate::net::topology::build(&spec.topology, 1).unwrap();
        let mut t = crate::app::Traffic::default();
        let mut e = EntryBuild {
            topo: &topo,
            entry: 0,
            name: "web",
            pairs: vec![(0, 1), (0, 2), (0, 3)],
            start: NS_PER_S,
            start_jitter: 0,
            stop: 100 * NS_PER_S,
            duration: 100 * NS_PER_S,
            warmup: 0,
            seed: 1,
            ecn: crate::net::packet::Ecn::NotEct,
            traffic: &mut t,
        };
        let map = serde_json::json!({"users": 2, "size_min": "250KB", "size_max": "550KB",
                                     "ramp_step": 2, "ramp_every": "5s"});
        let mut p = crate::scenario::params::Params::new("t", map.as_object().unwrap(), &[]);
        build(&mut p, &mut e).unwrap();
        let starts: Vec<Nanos> = t
            .apps
            .iter()
            .map(|a| match a {
                crate::app::AnyApp::Http(u) => u.start / NS_PER_S,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(starts, vec![1, 1, 6, 6, 11, 11]);
    }
}
