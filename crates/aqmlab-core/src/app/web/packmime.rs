//! `web-packmime`: PackMime-HTTP connections between a client and a server (one
//! generator per host pair), the model of `packmime_model.rs`: new connections at
//! `rate` per second with the fitted Weibull gaps; on each, a request of the fitted
//! request size, a server delay, a response of the fitted response size.
//!
//! HTTP/1.0 (the default, `persistent = 0`): one request and response per connection.
//! With probability `persistent` (ns-2's `P_PERSISTENT` is 0.09) a connection is
//! persistent: it carries pages × objects requests, one at a time; the next request
//! goes the fitted gap between objects (same page) or between pages after the previous
//! response has arrived, and persistent responses take the fitted persistent size. (How
//! ns-2's `packmime.cc` sequences a persistent connection was not read here; this
//! sequencing is ours, built from the ranvars it uses.)
//!
//! Each request–response is one "page" of the PLT columns: its load time is from the
//! request (the connection's first includes the handshake) to the arrival of the whole
//! response. A response not complete `timeout` after its request fails and its
//! connection is aborted (any later requests planned on it are not made).

use super::conn::{Event, Http, Timer};
use super::packmime_model::Model;
use super::stats::{self, PageLog};
use super::{p, read_common};
use crate::app::bulk::tcp::tcp_params;
use crate::app::{AppIo, Application, EntryBuild, TrafficKind};
use crate::output::table::Val;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{from_secs_f64 as from_secs, Nanos};
use crate::transport::tcp::TcpConfig;
use std::collections::BTreeMap;

pub const WEB_PACKMIME: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "web-packmime",
        summary: "PackMime-HTTP web connections (fitted request/response sizes, server delays, Weibull arrivals); response times as PLT",
        source: "Cao, Cleveland, Gao, Jeffay, Smith, Weigle, INFOCOM 2004; ns-2.35 packmime_ranvar.cc; docs/traffic/web-packmime.md",
        params: tcp_params![
            p("rate", "float", "required", "new connections per second (per host pair)"),
            p("persistent", "float", "0", "probability that a connection is persistent (HTTP/1.1); 0 = HTTP/1.0; ns-2 uses 0.09"),
            p("server_delay", "bool", "true", "the fitted server think time before each response"),
            p("timeout", "duration", "60s", "a response not complete this long after its request fails"),
            p("failed_plt", "string", "censor", "failed responses in the PLT statistics: censor (at the timeout) or exclude"),
            p("page_rows", "bool", "false", "one row per request-response in the `pages` table"),
        ],
    },
    build,
};

const ARRIVE: u8 = 0;
const NEXT: u8 = 1;
const TIMEOUT: u8 = 2;

/// What is left to do on one connection.
struct Plan {
    persistent: bool,
    /// Objects left in the current page after the current one, and pages after it.
    objects_left: u32,
    pages_left: u32,
    /// Awaiting the response to the current request: its page id and request size.
    waiting: Option<(u64, u64)>,
}

/// The PackMime generator of one host pair.
pub struct PackMime {
    pub client: u32,
    pub server: u32,
    pub persistent: f64,
    pub server_delay: bool,
    pub start: Nanos,
    pub stop: Nanos,
    pub model: Model,
    http: Http,
    plans: BTreeMap<u32, Plan>,
    responses: u64,
    pub connections: u64,
    rng: Rng,
    pub log: PageLog,
}

fn build(p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    let c = read_common(p)?;
    let rate = p.f64_or("rate", f64::NAN, 1e-6, 1e6)?;
    if rate.is_nan() {
        return Err(p.error("rate", "missing: expected new connections per second"));
    }
    let persistent = p.f64_or("persistent", 0.0, 0.0, 1.0)?;
    let server_delay = p.bool_or("server_delay", true)?;
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        e.need_route(src, dst, true);
        let mut rng = e.rng(&format!("pair[{k}]"));
        let model = Model::new(rate, &mut rng);
        let mut a = PackMime::new(dst, src, c.cfg, model, rng);
        a.persistent = persistent;
        a.server_delay = server_delay;
        a.start = e.start_for(&format!("pair[{k}]"));
        a.stop = e.stop;
        a.log = PageLog::new(k as u32, c.timeout, c.failed_plt, c.page_rows);
        e.add_app(a);
    }
    Ok(())
}

impl PackMime {
    pub fn new(client: u32, server: u32, cfg: TcpConfig, model: Model, rng: Rng) -> Self {
        PackMime {
            client,
            server,
            persistent: 0.0,
            server_delay: true,
            start: 0,
            stop: u64::MAX,
            model,
            http: Http::new(cfg),
            plans: BTreeMap::new(),
            responses: 0,
            connections: 0,
            rng,
            log: PageLog::new(0, 60_000_000_000, stats::FailedPlt::Censor, false),
        }
    }

    fn arrival_gap(&mut self) -> Nanos {
        from_secs(self.model.arrival_gap(&mut self.rng))
    }

    /// Send the next request on `flow`.
    fn request(&mut self, now: Nanos, io: &mut AppIo, flow: u32) {
        let plan = self.plans.get_mut(&flow).expect("a planned connection");
        let last = plan.objects_left == 0 && plan.pages_left == 0;
        let req = (libm::round(self.model.request_size(&mut self.rng)) as u64).clamp(
            1,
            super::conn::MAX_REQUEST_FRAGMENTS * self.http.cfg.mss as u64,
        );
        let resp = if plan.persistent {
            self.model.persist_rsp.sample(&mut self.rng)
        } else {
            self.model.response_size(&mut self.rng)
        };
        // At least one byte; at most 2^40 (the log-normal tail is unbounded).
        let resp = (libm::round(resp) as u64).clamp(1, 1 << 40);
        let delay = if self.server_delay {
            from_secs(Model::server_delay(&mut self.rng))
        } else {
            0
        };
        let id = self.responses;
        self.responses += 1;
        plan.waiting = Some((id, req));
        self.http.request(now, io, flow, req, resp, last, delay);
        let t = now.saturating_add(self.log.timeout);
        self.http.timers.set(
            t,
            Timer::Kind(TIMEOUT, (flow as u64) << 32 | (id & 0xffff_ffff)),
            io,
        );
    }

    fn arrive(&mut self, now: Nanos, io: &mut AppIo) {
        let next = now.saturating_add(self.arrival_gap());
        if next < self.stop {
            self.http.timers.set(next, Timer::Kind(ARRIVE, 0), io);
        }
        self.connections += 1;
        let persistent = self.persistent > 0.0 && self.rng.chance(self.persistent);
        let (objects_left, pages_left) = if persistent {
            let pages = Model::pages(&mut self.rng);
            (Model::objects(&mut self.rng) - 1, pages - 1)
        } else {
            (0, 0)
        };
        let flow = self.http.open(io, self.client, self.server, 0);
        self.plans.insert(
            flow,
            Plan {
                persistent,
                objects_left,
                pages_left,
                waiting: None,
            },
        );
        self.request(now, io, flow);
    }

    fn on_kind(&mut self, now: Nanos, io: &mut AppIo, code: u8, arg: u64) {
        match code {
            ARRIVE => self.arrive(now, io),
            NEXT => {
                if self.plans.contains_key(&(arg as u32)) {
                    self.request(now, io, arg as u32);
                }
            }
            _ => {
                let (flow, id) = ((arg >> 32) as u32, arg & 0xffff_ffff);
                let Some(plan) = self.plans.get(&flow) else {
                    return;
                };
                if let Some((w, req)) = plan.waiting.filter(|(w, _)| w & 0xffff_ffff == id) {
                    let start = self.http.conns[&flow].req_at;
                    self.log.failed_req(w, start, 1, 0, req);
                    self.plans.remove(&flow);
                    self.http.close(io, flow, true);
                }
            }
        }
    }
}

impl Application for PackMime {
    fn start(&mut self, io: &mut AppIo) {
        let first = self.start.saturating_add(self.arrival_gap());
        if first < self.stop {
            self.http.timers.set(first, Timer::Kind(ARRIVE, 0), io);
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        let mut due = Vec::new();
        self.http
            .on_wake(now, io, |Event::Kind(c, a), _, _| due.push((c, a)));
        for (c, a) in due {
            self.on_kind(now, io, c, a);
        }
    }

    fn wants_datagrams(&self) -> bool {
        true
    }

    fn on_datagram(&mut self, now: Nanos, d: &crate::app::Arrival, io: &mut AppIo) {
        if d.reverse {
            self.http.on_request(now, io, d.flow, d.tag);
        }
    }

    fn on_received(&mut self, now: Nanos, flow: u32, io: &mut AppIo) {
        let Some(plan) = self.plans.get_mut(&flow) else {
            return;
        };
        let Some((id, req)) = plan.waiting.take() else {
            return;
        };
        let c = &self.http.conns[&flow];
        self.log.completed_req(id, c.req_at, now, 1, c.resp, req);
        let gap = if plan.objects_left > 0 {
            plan.objects_left -= 1;
            Some(self.model.obj_gap.sample(&mut self.rng))
        } else if plan.pages_left > 0 {
            plan.pages_left -= 1;
            plan.objects_left = Model::objects(&mut self.rng) - 1;
            Some(self.model.page_gap.sample(&mut self.rng))
        } else {
            None
        };
        match gap {
            Some(g) => {
                let t = now.saturating_add(from_secs(g));
                self.http.timers.set(t, Timer::Kind(NEXT, flow as u64), io);
            }
            None => {
                self.plans.remove(&flow);
                self.http.close(io, flow, false);
            }
        }
    }

    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        stats::report(apps.iter().map(|a| &a.log), out);
        let waiting = apps
            .iter()
            .flat_map(|a| a.plans.values())
            .filter(|p| p.waiting.is_some())
            .count() as u64;
        if let Some(v) = out.iter_mut().find(|(n, _)| *n == "pages_unfinished") {
            v.1 = Val::U(waiting);
        }
        let conns: u64 = apps.iter().map(|a| a.connections).sum();
        out.push(("connections", conns.into()));
        let resent: u64 = apps.iter().map(|a| a.http.resent).sum();
        out.push(("requests_resent", resent.into()));
    }
}
