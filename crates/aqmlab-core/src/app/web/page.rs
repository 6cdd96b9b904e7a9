//! `web-page`: the page model of the CableLabs DOCSIS cable-modem studies (G. White and
//! J. Padden, "Preliminary Study of CoDel AQM in a DOCSIS Network", CableLabs, 2012,
//! §3.2.3 and Appendix A; reused in G. White, "Active Queue Management in DOCSIS 3.x
//! Cable Modems", CableLabs, 2014; their ns-2 web model).
//!
//! A page: the client requests an HTML object (`html`, 100 KB) from server 1 on its own
//! connection; when it has arrived, it opens `conns_per_server` (6) connections to each
//! of the `servers` (4) and fetches `objects` (25) objects of `object_size` (25 KB) per
//! server, each connection asking for the server's next object as soon as its previous
//! one has arrived (HTTP/1.1 persistent connections, no pipelining). The page load time
//! is from the HTML request to the arrival of the last object. After it, the user
//! thinks `think` (5 s) and loads the next page. Requests, handshakes and losses are
//! `conn.rs`'s.
//!
//! `size_model = "lognormal"`: the study's second model. The `servers·objects` object
//! sizes are drawn per page from a log-normal with `log10` mean `lognormal_mean10`
//! (3.34) and standard deviation `lognormal_sd10` (0.84) and scaled so that they add up
//! to `page_total` (600 KB); the HTML object keeps its size (our reading: the study
//! says "100 object sizes ... scaled to 600 KB in total"). Object k goes to server
//! `k / objects`.
//!
//! `keep_alive = true`: connections stay open across pages (HTTP keep-alive); the
//! HTML connection becomes one of server 1's, and the next page reuses them without a
//! handshake (the TCP sender's restart-after-idle applies). A user then makes at most
//! `servers × conns_per_server` connections (plus new ones after a failed page), so
//! its flows stop growing with the run length; by default each page opens new ones.
//!
//! A page not complete `timeout` (60 s) after its first request fails: its connections
//! are aborted, it counts in `pages_failed` (and in the PLT statistics at the timeout
//! unless `failed_plt = "exclude"`), and the user thinks and goes on.

use super::conn::{Event, Http, Timer};
use super::stats::{self, PageLog};
use super::{p, read_common, Common};
use crate::app::bulk::tcp::tcp_params;
use crate::app::{AppIo, Application, EntryBuild, TrafficKind};
use crate::output::table::Val;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};
use std::collections::VecDeque;

pub const WEB_PAGE: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "web-page",
        summary: "web pages as in the DOCSIS study: HTML, then parallel persistent connections to several servers; page load time",
        source: "CableLabs DOCSIS AQM studies (White & Padden 2012 §3.2.3) page model; docs/traffic/web-page.md",
        params: tcp_params![
            p("servers", "int or list", "4", "servers: a count (all at the entry's source node) or a list of node names, server 1 first"),
            p("conns_per_server", "int", "6", "parallel connections per server after the HTML object"),
            p("objects", "int", "25", "objects per server"),
            p("html", "size", "100KB", "the HTML object, from server 1"),
            p("object_size", "size", "25KB", "size of each object (size_model = fixed)"),
            p("size_model", "string", "fixed", "fixed, or lognormal: object sizes drawn per page and scaled to page_total"),
            p("lognormal_mean10", "float", "3.34", "size_model = lognormal: mean of log10(size/B)"),
            p("lognormal_sd10", "float", "0.84", "size_model = lognormal: standard deviation of log10(size/B)"),
            p("page_total", "size", "600KB", "size_model = lognormal: bytes of all objects of a page (without the HTML)"),
            p("think", "duration", "5s", "pause after a page (loaded or failed) before the next"),
            p("request_size", "size", "300B", "HTTP request payload (a datagram from the client, plus header_bytes)"),
            p("timeout", "duration", "60s", "a page not loaded this long after its first request fails"),
            p("failed_plt", "string", "censor", "failed pages in the PLT statistics: censor (at the timeout) or exclude"),
            p("page_rows", "bool", "false", "one row per page in the `pages` table"),
            p("keep_alive", "bool", "false", "keep connections open across pages and reuse them (no handshake); bounds the flows a user makes"),
        ],
    },
    build,
};

/// Timer codes of `Timer::Kind`.
const START: u8 = 0;
const TIMEOUT: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeModel {
    Fixed(u64),
    LogNormal { mean10: f64, sd10: f64, total: u64 },
}

/// The page being loaded.
struct Page {
    id: u64,
    start: Nanos,
    html_done: bool,
    /// Object sizes not yet requested, per server.
    queues: Vec<VecDeque<u64>>,
    left: u32,
    objects: u32,
    bytes: u64,
}

/// One web user: a client and its servers.
pub struct WebPage {
    pub client: u32,
    pub servers: Vec<u32>,
    pub conns_per_server: u32,
    pub objects: u32,
    pub html: u64,
    pub sizes: SizeModel,
    pub think: Nanos,
    pub request: u64,
    pub stop: Nanos,
    /// Reuse connections across pages (`keep_alive`); idle ones per server.
    pub keep_alive: bool,
    idle: Vec<Vec<u32>>,
    start: Nanos,
    http: Http,
    page: Option<Page>,
    pages: u64,
    rng: Rng,
    pub log: PageLog,
}

fn build(p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    let c: Common = read_common(p)?;
    let servers_spec = read_servers(p, e)?;
    let conns = p.u64_or("conns_per_server", 6, 1, 1000)? as u32;
    let objects = p.u64_or("objects", 25, 0, 100_000)? as u32;
    let html = p.size_or("html", 100_000)?;
    if html == 0 {
        return Err(p.error("html", "expected a size greater than zero"));
    }
    let object_size = p.size_or("object_size", 25_000)?;
    let sizes = match p.choice_or("size_model", "fixed", &["fixed", "lognormal"])? {
        "fixed" => SizeModel::Fixed(object_size),
        _ => SizeModel::LogNormal {
            mean10: p.f64_or("lognormal_mean10", 3.34, -10.0, 20.0)?,
            sd10: p.f64_or("lognormal_sd10", 0.84, 0.0, 10.0)?,
            total: p.size_or("page_total", 600_000)?,
        },
    };
    let n_servers = match &servers_spec {
        ServersSpec::Count(n) => *n as u64,
        ServersSpec::Nodes(v) => v.len() as u64,
    };
    // Page bytes must fit the TCP byte counters with room for a run's pages.
    let per_object = match sizes {
        SizeModel::Fixed(s) => s,
        SizeModel::LogNormal { total, .. } => total,
    };
    let page_bytes = (per_object as u128) * (objects as u128) * (n_servers as u128) + html as u128;
    if page_bytes > (1u128 << 48) {
        let key = match sizes {
            SizeModel::Fixed(_) => "object_size",
            SizeModel::LogNormal { .. } => "page_total",
        };
        return Err(p.error(
            key,
            format!("a page of {page_bytes} bytes: expected at most 2^48 bytes per page"),
        ));
    }
    if matches!(sizes, SizeModel::Fixed(0)) && objects > 0 {
        return Err(p.error("object_size", "expected a size greater than zero"));
    }
    if let SizeModel::LogNormal { total, .. } = sizes {
        if total < objects as u64 * n_servers {
            return Err(p.error("page_total", "expected at least one byte per object"));
        }
    }
    let think = p.duration_or("think", 5 * NS_PER_S)?;
    let request = p.size_or("request_size", 300)?;
    let keep_alive = p.bool_or("keep_alive", false)?;
    if request == 0 || request > super::conn::MAX_REQUEST_FRAGMENTS * c.cfg.mss as u64 {
        return Err(p.error("request_size", format!("{request}B: expected 1B to 64 MSS")));
    }
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        let servers = match &servers_spec {
            ServersSpec::Count(n) => vec![src; *n as usize],
            ServersSpec::Nodes(v) => v.clone(),
        };
        for &s in &servers {
            if s == dst {
                return Err(p.error("servers", "a server is the client node itself"));
            }
            e.need_route(s, dst, true);
        }
        let app = WebPage {
            client: dst,
            idle: vec![Vec::new(); servers.len()],
            keep_alive,
            servers,
            conns_per_server: conns,
            objects,
            html,
            sizes,
            think,
            request,
            stop: e.stop,
            start: e.start_for(&format!("user[{k}]")),
            http: Http::new(c.cfg),
            page: None,
            pages: 0,
            rng: e.rng(&format!("user[{k}]")),
            log: PageLog::new(k as u32, c.timeout, c.failed_plt, c.page_rows),
        };
        e.add_app(app);
    }
    Ok(())
}

enum ServersSpec {
    Count(u32),
    Nodes(Vec<u32>),
}

fn read_servers(p: &mut Params, e: &EntryBuild) -> Result<ServersSpec> {
    let Some(v) = p.raw("servers") else {
        return Ok(ServersSpec::Count(4));
    };
    if let Some(n) = v.as_u64() {
        if (1..=1000).contains(&n) {
            return Ok(ServersSpec::Count(n as u32));
        }
    }
    let Some(list) = v.as_array().filter(|l| !l.is_empty()) else {
        return Err(p.error(
            "servers",
            format!(
                "{}: expected a server count from 1 to 1000 or a list of node names",
                crate::scenario::params::show_value(v)
            ),
        ));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, x) in list.iter().enumerate() {
        let node = x.as_str().and_then(|n| e.topo.node(n)).ok_or_else(|| {
            p.error(
                &format!("servers[{i}]"),
                format!(
                    "{}: no such node; nodes are: {:?}",
                    crate::scenario::params::show_value(x),
                    e.topo.node_index.keys().collect::<Vec<_>>()
                ),
            )
        })?;
        out.push(node);
    }
    Ok(ServersSpec::Nodes(out))
}

impl WebPage {
    /// The object sizes of a new page, per server.
    fn draw_sizes(&mut self) -> Vec<VecDeque<u64>> {
        let n = self.servers.len() * self.objects as usize;
        let sizes: Vec<u64> = match self.sizes {
            SizeModel::Fixed(s) => vec![s; n],
            SizeModel::LogNormal {
                mean10,
                sd10,
                total,
            } => {
                let raw: Vec<f64> = (0..n)
                    .map(|_| {
                        libm::exp10(
                            mean10 + sd10 * crate::app::dist::variates::normal(&mut self.rng),
                        )
                    })
                    .collect();
                scale_to_total(&raw, total)
            }
        };
        let per = self.objects as usize;
        (0..self.servers.len())
            .map(|s| sizes[s * per..(s + 1) * per].iter().copied().collect())
            .collect()
    }

    fn start_page(&mut self, now: Nanos, io: &mut AppIo) {
        let id = self.pages;
        self.pages += 1;
        let queues = self.draw_sizes();
        let objects: u32 = queues.iter().map(|q| q.len() as u32).sum();
        self.page = Some(Page {
            id,
            start: now,
            html_done: false,
            queues,
            left: objects + 1,
            objects: objects + 1,
            bytes: 0,
        });
        let f = self.conn_to(io, 0);
        let last = !self.keep_alive;
        self.http
            .request(now, io, f, self.request, self.html, last, 0);
        let t = now.saturating_add(self.log.timeout);
        self.http.timers.set(t, Timer::Kind(TIMEOUT, id), io);
    }

    /// The next page after `think`, if before `stop`.
    fn next_page(&mut self, now: Nanos, io: &mut AppIo) {
        self.page = None;
        let t = now.saturating_add(self.think);
        if t < self.stop {
            self.http.timers.set(t, Timer::Kind(START, 0), io);
        }
    }

    /// A connection to server `s`: an idle kept-alive one, or a new one.
    fn conn_to(&mut self, io: &mut AppIo, s: usize) -> u32 {
        match self.idle[s].pop() {
            Some(f) => f,
            None => self.http.open(io, self.client, self.servers[s], s as u64),
        }
    }

    /// Connection `flow` to server `s` has nothing more to fetch: keep it for the next
    /// page, or let it go (`abort`: stop its sender, whose FIN may not be acknowledged
    /// yet; the client already has everything).
    fn done_with(&mut self, io: &mut AppIo, flow: u32, s: usize, abort: bool) {
        if self.keep_alive {
            self.idle[s].push(flow);
        } else {
            self.http.close(io, flow, abort);
        }
    }

    /// Ask for server `s`'s next object on `flow`; false if none is left.
    fn fetch_next(&mut self, now: Nanos, io: &mut AppIo, flow: u32, s: usize) -> bool {
        let page = self.page.as_mut().expect("a page is loading");
        let Some(size) = page.queues[s].pop_front() else {
            return false;
        };
        let last = page.queues[s].is_empty() && !self.keep_alive;
        self.http
            .request(now, io, flow, self.request, size, last, 0);
        true
    }

    fn on_kind(&mut self, now: Nanos, io: &mut AppIo, code: u8, arg: u64) {
        match code {
            START => self.start_page(now, io),
            _ => {
                // TIMEOUT of page `arg`, if it is still loading.
                if self.page.as_ref().is_some_and(|pg| pg.id == arg) {
                    let pg = self.page.as_ref().expect("checked");
                    self.log.failed(pg.id, pg.start, pg.objects, pg.bytes);
                    let flows: Vec<u32> = self.http.conns.keys().copied().collect();
                    for f in flows {
                        self.http.close(io, f, true);
                    }
                    self.idle.iter_mut().for_each(Vec::clear);
                    self.next_page(now, io);
                }
            }
        }
    }
}

/// Scale positive `raw` sizes to whole bytes adding up to `total` (each at least 1):
/// floor of the scaled values, the remainder to the largest fractional parts (ties to
/// the lower index), so the sum is exact.
pub fn scale_to_total(raw: &[f64], total: u64) -> Vec<u64> {
    let n = raw.len() as u64;
    if n == 0 {
        return Vec::new();
    }
    let spare = total - n; // one byte each is reserved
    let sum: f64 = raw.iter().sum();
    let exact: Vec<f64> = raw.iter().map(|r| r / sum * spare as f64).collect();
    let mut out: Vec<u64> = exact.iter().map(|x| libm::floor(*x) as u64).collect();
    let given: u64 = out.iter().sum();
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by(|&a, &b| {
        let fa = exact[a] - libm::floor(exact[a]);
        let fb = exact[b] - libm::floor(exact[b]);
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &i in order.iter().take((spare.saturating_sub(given)) as usize) {
        out[i] += 1;
    }
    out.iter().map(|x| x + 1).collect()
}

impl Application for WebPage {
    fn start(&mut self, io: &mut AppIo) {
        if self.start < self.stop {
            self.http.timers.set(self.start, Timer::Kind(START, 0), io);
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
        let Some(c) = self.http.conns.get(&flow) else {
            return;
        };
        let (owner, got) = (c.owner, c.resp);
        let Some(page) = self.page.as_mut() else {
            return;
        };
        page.left -= 1;
        page.bytes += got;
        if !page.html_done {
            page.html_done = true;
            // Kept alive, the HTML connection becomes one of server 1's.
            self.done_with(io, flow, 0, false);
            for s in 0..self.servers.len() {
                for _ in 0..self.conns_per_server {
                    if self.page.as_ref().expect("loading").queues[s].is_empty() {
                        break;
                    }
                    let f = self.conn_to(io, s);
                    self.fetch_next(now, io, f, s);
                }
            }
        } else if !self.fetch_next(now, io, flow, owner as usize) {
            // Nothing left for this server: the connection is done (its FIN went
            // with the last response, or it is let go here) or kept for the next page.
            self.done_with(io, flow, owner as usize, true);
        }
        let pg = self.page.as_ref().expect("loading");
        if pg.left == 0 {
            let (id, start, n, bytes) = (pg.id, pg.start, pg.objects, pg.bytes);
            self.log.completed(id, start, now, n, bytes);
            self.next_page(now, io);
        }
    }

    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        stats::report(apps.iter().map(|a| &a.log), out);
        // A page loading when the run ends is unfinished (not failed).
        let unfinished = apps.iter().filter(|a| a.page.is_some()).count() as u64;
        if let Some(v) = out.iter_mut().find(|(n, _)| *n == "pages_unfinished") {
            v.1 = Val::U(unfinished);
        }
        let resent: u64 = apps.iter().map(|a| a.http.resent).sum();
        out.push(("requests_resent", resent.into()));
    }
}
