//! HTTP over the simulator's one-way TCP: the client's requests, the server's
//! responses, the handshake, retransmission of lost requests, and a timer queue.
//!
//! The TCP model carries data one way, so a connection is a TCP flow from the server
//! (sender) to the client (receiver). Requests travel back from the client as
//! datagrams of `request bytes + header_bytes` on the same flow (reverse direction, so
//! they queue behind whatever shares the client's uplink) — "a request of configurable
//! size", not segments of a reverse byte stream.
//!
//! Handshake. A real connection is SYN (c→s), SYN-ACK (s→c), ACK+GET (c→s), response.
//! Here the client's first request goes first (c→s) and stands in for the SYN; on it the
//! server opens its TCP sender, whose SYN (s→c) stands in for the SYN-ACK and whose
//! SYN-ACK (c→s) for the ACK carrying the GET; then the response flows. Same packets in
//! the same directions, so the first response byte leaves the server after the same
//! 1.5 RTT (plus queueing) as in the real exchange and the PLT includes the handshake.
//!
//! Losses. A lost server SYN or client SYN-ACK is the TCP sender's SYN timeout:
//! retransmission after `initial_rto`, doubling (`transport/tcp/sender/`,
//! RFC 6298 §5.5, RFC 9293 §3.8.1). A lost request is resent by the client after
//! `initial_rto` for the first request of a connection (the SYN it stands in for) and
//! `min_rto` for later ones (a connection with an RTT sample), doubling per resend up
//! to `max_rto`. The client resends only if the server has not got the whole request
//! (the model knows both ends; a real client learns it from the TCP ACK), so there are
//! no spurious resends. A request larger than one segment goes as several datagrams
//! (at most 64); the server needs all of them.
//!
//! Completion. The response is done when the client's TCP receiver holds all its bytes
//! in order (`AppIo::notify_received`), not when the server sees the ACK.

use super::super::AppIo;
use crate::net::packet::AppTag;
use crate::sim::time::Nanos;
use crate::transport::tcp::TcpConfig;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Most datagrams one request may take.
pub const MAX_REQUEST_FRAGMENTS: u64 = 64;

/// A timer of a web app. `Kind` timers belong to the traffic kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Timer {
    /// Resend request `req` of `flow` if the server has not got it.
    Resend { flow: u32, req: u32, attempt: u32 },
    /// The server's think time for request `req` of `flow` is over: respond.
    Respond { flow: u32, req: u32 },
    /// The kind's own timers (code, argument).
    Kind(u8, u64),
}

/// Timers in time order (ties in the order they were set), each also a wake-up.
#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(Nanos, u64, Timer)>>,
    seq: u64,
}

impl Timers {
    pub fn set(&mut self, at: Nanos, t: Timer, io: &mut AppIo) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, t)));
        io.wake_at(at);
    }

    /// The next timer due at or before `now`.
    pub fn pop_due(&mut self, now: Nanos) -> Option<Timer> {
        if self.heap.peek().is_some_and(|Reverse((t, _, _))| *t <= now) {
            self.heap.pop().map(|Reverse((_, _, t))| t)
        } else {
            None
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// One HTTP connection (client side and server side).
#[derive(Clone, Debug)]
pub struct Conn {
    /// What the kind uses the connection for (a page, a server index).
    pub owner: u64,
    pub server: u32,
    /// The server has opened its TCP sender.
    pub open: bool,
    /// Requests sent on it so far; the current one is number `req`.
    pub req: u32,
    /// The current request: datagrams, payload bytes, response bytes, close after it,
    /// server delay.
    frags: u32,
    frag_bytes: u32,
    /// Response bytes of the current request.
    pub resp: u64,
    last: bool,
    delay: Nanos,
    /// Fragments of the current request the server has (bit i = fragment i).
    got: u64,
    /// When the client sent the current request (first time).
    pub req_at: Nanos,
    /// Response bytes the connection has carried when the current response is complete.
    pub resp_end: u64,
}

/// The HTTP connections of one web app.
pub struct Http {
    pub cfg: TcpConfig,
    pub conns: BTreeMap<u32, Conn>,
    pub timers: Timers,
    /// Requests resent (all apps' counts add up in the report).
    pub resent: u64,
}

/// What the app learns from `Http`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A kind timer fired.
    Kind(u8, u64),
}

impl Http {
    pub fn new(cfg: TcpConfig) -> Self {
        Http {
            cfg,
            conns: BTreeMap::new(),
            timers: Timers::default(),
            resent: 0,
        }
    }

    /// A new connection from `client` to `server` (no packet yet: the first request
    /// opens it).
    pub fn open(&mut self, io: &mut AppIo, client: u32, server: u32, owner: u64) -> u32 {
        let flow = io.new_tcp_flow(server, client, self.cfg);
        self.conns.insert(
            flow,
            Conn {
                owner,
                server,
                open: false,
                req: 0,
                frags: 0,
                frag_bytes: 0,
                resp: 0,
                last: false,
                delay: 0,
                got: 0,
                req_at: 0,
                resp_end: 0,
            },
        );
        flow
    }

    /// The client sends a request of `bytes` payload for a response of `resp` bytes;
    /// the server waits `delay` before answering; `last`: the server closes after it.
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        now: Nanos,
        io: &mut AppIo,
        flow: u32,
        bytes: u64,
        resp: u64,
        last: bool,
        delay: Nanos,
    ) {
        let mss = self.cfg.mss as u64;
        let c = self
            .conns
            .get_mut(&flow)
            .expect("request on an open connection");
        let frags = bytes.div_ceil(mss).clamp(1, MAX_REQUEST_FRAGMENTS);
        c.req += 1;
        c.frags = frags as u32;
        c.frag_bytes = bytes.div_ceil(frags).max(1) as u32;
        c.resp = resp;
        c.last = last;
        c.delay = delay;
        c.got = 0;
        c.req_at = now;
        let (req, first) = (c.req, !c.open);
        self.send_request(io, flow);
        let rto = if first {
            self.cfg.initial_rto
        } else {
            self.cfg.min_rto
        };
        self.timers.set(
            now + rto,
            Timer::Resend {
                flow,
                req,
                attempt: 1,
            },
            io,
        );
    }

    fn send_request(&self, io: &mut AppIo, flow: u32) {
        let c = &self.conns[&flow];
        let hdr = self.cfg.header_bytes;
        for i in 0..c.frags {
            if c.got & (1 << i) != 0 {
                continue;
            }
            let tag = AppTag {
                unit: c.req,
                unit_type: 0,
                fragment: i as u16,
                fragments: c.frags as u16,
            };
            io.send_tagged(flow, true, c.frag_bytes + hdr, c.req as u64, tag);
        }
    }

    /// A request datagram reached the server.
    pub fn on_request(&mut self, now: Nanos, io: &mut AppIo, flow: u32, tag: AppTag) {
        let Some(c) = self.conns.get_mut(&flow) else {
            return; // the connection was given up
        };
        let all = if c.frags >= 64 {
            u64::MAX
        } else {
            (1u64 << c.frags) - 1
        };
        if tag.unit != c.req || c.got == all {
            return; // an old or duplicate request
        }
        c.got |= 1 << tag.fragment;
        if c.got != all {
            return;
        }
        if c.delay > 0 {
            let at = now + c.delay;
            let req = c.req;
            self.timers.set(at, Timer::Respond { flow, req }, io);
        } else {
            self.respond(io, flow);
        }
    }

    /// The server writes the response (and opens its sender on the first request).
    fn respond(&mut self, io: &mut AppIo, flow: u32) {
        let c = self.conns.get_mut(&flow).expect("a live connection");
        c.resp_end += c.resp;
        io.notify_received(flow, c.resp_end);
        io.write(flow, c.resp, c.last);
        if !c.open {
            c.open = true;
            io.connect(flow);
        }
    }

    /// Run the timers due at `now`; kind timers are handed back through `on_kind`.
    pub fn on_wake(
        &mut self,
        now: Nanos,
        io: &mut AppIo,
        mut on_kind: impl FnMut(Event, &mut AppIo, &mut Self),
    ) {
        while let Some(t) = self.timers.pop_due(now) {
            match t {
                Timer::Resend { flow, req, attempt } => {
                    let Some(c) = self.conns.get(&flow) else {
                        continue;
                    };
                    let all = if c.frags >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << c.frags) - 1
                    };
                    if c.req != req || c.got == all {
                        continue;
                    }
                    let first = !c.open;
                    self.resent += 1;
                    self.send_request(io, flow);
                    let base = if first {
                        self.cfg.initial_rto
                    } else {
                        self.cfg.min_rto
                    };
                    let rto = base
                        .saturating_mul(1u64 << attempt.min(32))
                        .min(self.cfg.max_rto);
                    self.timers.set(
                        now + rto,
                        Timer::Resend {
                            flow,
                            req,
                            attempt: attempt + 1,
                        },
                        io,
                    );
                }
                Timer::Respond { flow, req } => {
                    if self.conns.get(&flow).is_some_and(|c| c.req == req) {
                        self.respond(io, flow);
                    }
                }
                Timer::Kind(code, arg) => on_kind(Event::Kind(code, arg), io, self),
            }
        }
    }

    /// Forget a connection; `abort` also stops its TCP sender (a given-up page).
    pub fn close(&mut self, io: &mut AppIo, flow: u32, abort: bool) {
        if self.conns.remove(&flow).is_some() && abort {
            io.abort(flow);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Action;

    fn tag(req: u32, fragment: u16, fragments: u16) -> AppTag {
        AppTag {
            unit: req,
            unit_type: 0,
            fragment,
            fragments,
        }
    }

    /// The first request opens the server's connection (write, SYN, receipt mark); a
    /// duplicate is ignored; the second request on the open connection only writes.
    #[test]
    fn requests_open_then_reuse_the_connection() {
        let cfg = TcpConfig::default(); // mss 1448, header 52, initial_rto 1 s
        let mut h = Http::new(cfg);
        let mut io = AppIo::new(7);
        let f = h.open(&mut io, 1, 2, 0);
        assert_eq!(f, 7);
        h.request(0, &mut io, f, 300, 25_000, false, 0);
        let acts: Vec<Action> = io.drain().collect();
        assert!(matches!(
            acts[0],
            Action::NewTcpFlow {
                flow: 7,
                src: 2,
                dst: 1,
                ..
            }
        ));
        assert!(matches!(
            acts[1],
            Action::Send {
                flow: 7,
                size: 352,
                reverse: true,
                ..
            }
        ));
        assert_eq!(acts[2], Action::WakeAt(1_000_000_000));
        h.on_request(10, &mut io, f, tag(1, 0, 1));
        let acts: Vec<Action> = io.drain().collect();
        assert_eq!(
            acts,
            vec![
                Action::NotifyReceived {
                    flow: 7,
                    bytes: 25_000
                },
                Action::Write {
                    flow: 7,
                    bytes: 25_000,
                    fin: false
                },
                Action::Connect { flow: 7 },
            ]
        );
        h.on_request(11, &mut io, f, tag(1, 0, 1));
        assert!(io.actions().is_empty(), "duplicate request answered");
        // The resend timer finds the request delivered: nothing is sent.
        h.on_wake(1_000_000_000, &mut io, |_, _, _| panic!("no kind timers"));
        assert!(io.actions().is_empty());
        assert_eq!(h.resent, 0);
        // Second request: later requests resend after min_rto (200 ms).
        h.request(2_000, &mut io, f, 300, 10_000, true, 0);
        let acts: Vec<Action> = io.drain().collect();
        assert_eq!(acts[1], Action::WakeAt(2_000 + 200_000_000));
        h.on_request(3_000, &mut io, f, tag(2, 0, 1));
        let acts: Vec<Action> = io.drain().collect();
        assert_eq!(
            acts,
            vec![
                Action::NotifyReceived {
                    flow: 7,
                    bytes: 35_000
                },
                Action::Write {
                    flow: 7,
                    bytes: 10_000,
                    fin: true
                },
            ]
        );
    }

    /// A 3000-byte request is three datagrams (⌈3000/1448⌉, 1000 B each); the server
    /// answers only when all are there; a lost one is resent alone after 1 s, then
    /// after 2 s more.
    #[test]
    fn fragmented_request_needs_every_fragment_and_resends_the_missing_one() {
        let mut h = Http::new(TcpConfig::default());
        let mut io = AppIo::new(0);
        let f = h.open(&mut io, 1, 2, 0);
        h.request(0, &mut io, f, 3000, 500, true, 0);
        let sends = io
            .drain()
            .filter(|a| matches!(a, Action::Send { size: 1052, .. }))
            .count();
        assert_eq!(sends, 3);
        h.on_request(5, &mut io, f, tag(1, 0, 3));
        h.on_request(6, &mut io, f, tag(1, 2, 3));
        assert!(io.actions().is_empty());
        h.on_wake(1_000_000_000, &mut io, |_, _, _| {});
        let acts: Vec<Action> = io.drain().collect();
        assert_eq!(acts.len(), 2, "{acts:?}");
        assert!(matches!(
            acts[0],
            Action::Send {
                tag: AppTag { fragment: 1, .. },
                ..
            }
        ));
        assert_eq!(acts[1], Action::WakeAt(3_000_000_000));
        h.on_request(1_000_000_010, &mut io, f, tag(1, 1, 3));
        assert!(matches!(
            io.actions()[1],
            Action::Write {
                bytes: 500,
                fin: true,
                ..
            }
        ));
    }
}
