//! A Performance Enhancing Proxy that splits TCP (RFC 3135: a transport-layer PEP,
//! §2.1.1, with split connections and local acknowledgements; Byun's dissertation,
//! 2007, §2.1 and Fig. 1.2, for the gateway it models).
//!
//! A node with `function = { kind = "pep", ... }` terminates every TCP connection whose
//! path crosses it: the internet server's connection ends at the PEP (the PEP's
//! receiver acknowledges locally, so the server sees the short server–PEP RTT), and the
//! PEP carries the bytes to the terminal on a TCP connection of its own (its sender, the
//! terminal's receiver; configured by the PEP's `tcp` table, the long GEO RTT). Between
//! the two the PEP holds each user's bytes: delivered by the upstream leg, not yet
//! acknowledged by the terminal. The upstream receive window announces
//! `min(max_window, B, buffer − held)` (`Pep::window`), so a slow space link pushes
//! back on the servers; with
//! buffer flow control (`flow_control.rs`) CE marks from the AQM in front of the PEP
//! shrink `B` instead of reaching the servers.
//!
//! This module is sans-IO: it keeps the per-user and per-connection bookkeeping and
//! answers "what to forward" and "what window to announce"; `engine/pep.rs` moves the
//! bytes between the TCP endpoints. With `spoof_handshake` the terminal-side leg is
//! open at once, as between two PEPs that spoof the handshake (Hughes HX System
//! Overview, 2008, "PEP V3"); otherwise it sends a SYN over the satellite first. What is
//! modelled and what is not (no PEP-side congestion control other than the `tcp`
//! table's): docs/access/satellite-pep.md.

pub mod flow_control;

use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::params::{KindDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS};
use crate::transport::tcp::TcpConfig;
use flow_control::{BufferControl, FlowControlConfig};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};

/// The PEP's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PepConfig {
    /// Per-user buffer, bytes (the study: 625 KB).
    pub buffer: u64,
    /// Largest window announced to a server, bytes (the study's MaxRcvWnd, 16 000 B).
    pub max_window: u64,
    /// Buffer flow control (None: marks reach the servers as ordinary ECN).
    pub flow_control: Option<FlowControlConfig>,
    /// TCP of the PEP–terminal leg (both ends).
    pub tcp: TcpConfig,
    /// The terminal-side leg is open at once (the terminal's PEP spoofs the handshake),
    /// instead of after a SYN round trip over the satellite.
    pub spoof_handshake: bool,
}

use crate::scenario::params::param as p;

/// `function = { kind = "pep", ... }` and its parameters.
pub const DOC: KindDoc = KindDoc {
    kind: "pep",
    summary: "split-TCP Performance Enhancing Proxy with per-user buffers and buffer flow control",
    source: "RFC 3135 §2.1.1 (transport-layer PEPs, split connections); Byun, Congestion Control in Satellite Networks, 2007, §2.1, §2.3",
    params: &[
        p("buffer", "size", "625KB", "per-user PEP buffer B (the ceiling of flow control)"),
        p(
            "max_window",
            "size",
            "16000B",
            "largest receive window announced to a server (MaxRcvWnd)",
        ),
        p(
            "flow_control",
            "bool",
            "false",
            "CE marks arriving at the PEP shrink the user's buffer instead of being echoed to the server",
        ),
        p("decr", "float", "0.5", "flow control: B ← B·decr per mark, in (0, 1]"),
        p(
            "incr",
            "float",
            "0.01",
            "flow control: growth per step as a fraction of `buffer`",
        ),
        p(
            "freeze",
            "duration",
            "200ms",
            "flow control: least time between a change of B and the next growth",
        ),
        p(
            "spoof_handshake",
            "bool",
            "false",
            "the terminal-side leg opens without a SYN round trip (both ends run a PEP that spoofs the handshake, RFC 3135 §2.1.1)",
        ),
        p(
            "tcp",
            "table",
            "{}",
            "TCP of the PEP–terminal leg: the common TCP keys (cc, iw, rwnd, mss, …) of `aqmlab traffic`",
        ),
    ],
};

impl PepConfig {
    /// Read a `function` table at `path` (its `kind` already known to be "pep").
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let buffer = p.size_or("buffer", 625_000)?;
        if buffer == 0 {
            return Err(p.error("buffer", "0B: expected a size greater than zero"));
        }
        let max_window = p.size_or("max_window", 16_000)?;
        if max_window == 0 || max_window > u32::MAX as u64 {
            return Err(p.error(
                "max_window",
                format!("{max_window}B: expected a size from 1B to 4294967295B"),
            ));
        }
        let fc = p.bool_or("flow_control", false)?;
        let decr = p.f64_or("decr", 0.5, 0.0, 1.0)?;
        if decr == 0.0 {
            return Err(p.error("decr", "0: expected a factor in (0, 1]"));
        }
        let incr = p.f64_or("incr", 0.01, 0.0, 1.0)?;
        let freeze = p.duration_or("freeze", 200 * NS_PER_MS)?;
        let spoof_handshake = p.bool_or("spoof_handshake", false)?;
        let tcp_path = p.key_path("tcp");
        let tcp = match p.raw("tcp") {
            None => TcpConfig::default(),
            Some(Value::Object(m)) => {
                let mut tp = Params::new(tcp_path, m, &[]);
                let cfg = crate::app::bulk::tcp::config(&mut tp)?;
                if cfg.ns2.is_some() {
                    return Err(tp.error(
                        "profile",
                        "\"ns2\" (ns-2's one-way agents) cannot be a PEP's TCP; use linux, ns3 or rfc",
                    ));
                }
                tp.finish("the PEP's `tcp` table")?;
                cfg
            }
            Some(v) => {
                return Err(ScenarioError::new(
                    tcp_path,
                    format!(
                        "{}: expected a table of TCP keys, like {{ iw = 10, rwnd = \"1MB\" }}",
                        crate::scenario::params::show_value(v)
                    ),
                ))
            }
        };
        Ok(PepConfig {
            buffer,
            max_window,
            flow_control: fc.then_some(FlowControlConfig {
                decr,
                incr: incr * buffer as f64,
                freeze,
            }),
            tcp,
            spoof_handshake,
        })
    }
}

/// Build the PEP of a node's `function` table at `path`.
pub fn build(spec: &Value, path: &str, node: u32) -> Result<Pep> {
    let map = spec.as_object().ok_or_else(|| {
        ScenarioError::new(
            path,
            "expected a table like { kind = \"pep\", buffer = \"625KB\" }",
        )
    })?;
    match map.get("kind") {
        Some(Value::String(k)) if k == "pep" => {}
        Some(v) => {
            return Err(ScenarioError::new(
                format!("{path}.kind"),
                format!(
                    "{}: unknown node function; expected \"pep\"",
                    crate::scenario::params::show_value(v)
                ),
            ))
        }
        None => {
            return Err(ScenarioError::new(
                format!("{path}.kind"),
                "missing: expected a node function such as \"pep\"",
            ))
        }
    }
    let mut p = Params::new(path, map, &["kind"]);
    let cfg = PepConfig::from_params(&mut p)?;
    p.finish("node function `pep`")?;
    Ok(Pep::new(node, cfg))
}

/// One user (terminal-side node): its controlled buffer and the bytes it holds.
#[derive(Clone, Debug)]
struct User {
    buf: BufferControl,
    held: u64,
    /// Its connections whose upstream leg is still open.
    conns: Vec<u32>,
}

/// One split connection.
#[derive(Clone, Debug)]
pub struct Conn {
    /// The server's flow (ends at the PEP).
    pub up: u32,
    /// The PEP's flow to the terminal, once the server's SYN has arrived.
    pub down: Option<u32>,
    /// The terminal-side node.
    pub client: u32,
    user: u32,
    /// In-order bytes the PEP has received on `up`.
    received: u64,
    /// Bytes the terminal has acknowledged on `down`.
    acked: u64,
    /// The upstream FIN has been delivered (and forwarded).
    pub fin: bool,
    /// Ends of the server's transfers not yet acknowledged by the terminal (offsets).
    pending_ends: VecDeque<u64>,
}

/// What to hand to the terminal-side sender after upstream data arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forward {
    pub bytes: u64,
    /// The connection closes after these bytes.
    pub fin: bool,
}

/// A split-TCP PEP at one node.
pub struct Pep {
    pub node: u32,
    pub cfg: PepConfig,
    users: Vec<User>,
    user_of: BTreeMap<u32, u32>,
    pub conns: Vec<Conn>,
}

impl Pep {
    pub fn new(node: u32, cfg: PepConfig) -> Self {
        Pep {
            node,
            cfg,
            users: Vec::new(),
            user_of: BTreeMap::new(),
            conns: Vec::new(),
        }
    }

    /// A server's connection `up` towards terminal-side node `client` is intercepted.
    pub fn open(&mut self, up: u32, client: u32) -> u32 {
        let next = self.users.len() as u32;
        let user = *self.user_of.entry(client).or_insert(next);
        if user == next {
            self.users.push(User {
                buf: BufferControl::new(self.cfg.buffer),
                held: 0,
                conns: Vec::new(),
            });
        }
        let c = self.conns.len() as u32;
        self.users[user as usize].conns.push(c);
        self.conns.push(Conn {
            up,
            down: None,
            client,
            user,
            received: 0,
            acked: 0,
            fin: false,
            pending_ends: VecDeque::new(),
        });
        c
    }

    /// The receive window to announce on `conn`'s upstream leg, for its user:
    /// `min(max_window, max(B, MSS) − held)`. `B` is the user's PEP buffer limit,
    /// shrunk by flow control (`B = buffer` without it), and `B − held` the *available*
    /// PEP buffer: Byun's eq. (2.1) `W = min(B, MaxRcvWind)` with B "the available PEP
    /// buffers" (§2.3), and Fig. 6.1's "PEP buffer limit" decremented per mark. So a slow
    /// space link pushes back, and a shrunk limit caps what the user can hold at the
    /// PEP, not only the window. `B` counts as at least one MSS (of the PEP's `tcp`):
    /// below one segment an idle user's server could send nothing, and without arrivals
    /// `B` would never grow again.
    pub fn window(&self, conn: u32) -> u64 {
        let u = &self.users[self.conns[conn as usize].user as usize];
        let limit = u.buf.cap.max(self.cfg.tcp.mss as f64) as u64;
        limit.saturating_sub(u.held).min(self.cfg.max_window)
    }

    /// The connections sharing `conn`'s user buffer (their windows change together).
    pub fn user_conns(&self, conn: u32) -> &[u32] {
        &self.users[self.conns[conn as usize].user as usize].conns
    }

    /// The user's current controlled buffer `B`, bytes.
    pub fn buffer_of(&self, conn: u32) -> f64 {
        self.users[self.conns[conn as usize].user as usize].buf.cap
    }

    /// Bytes the user of `conn` holds at the PEP.
    pub fn held_of(&self, conn: u32) -> u64 {
        self.users[self.conns[conn as usize].user as usize].held
    }

    /// Upstream: the PEP's receiver on `conn` has now `delivered` in-order bytes in
    /// total (and, with `fin`, has reached the FIN); `marked` is Some(CE) for a data
    /// segment when flow control consumes marks. Returns what to forward.
    pub fn on_upstream(
        &mut self,
        now: Nanos,
        conn: u32,
        delivered: u64,
        fin: bool,
        marked: Option<bool>,
    ) -> Forward {
        let c = &mut self.conns[conn as usize];
        let bytes = delivered - c.received;
        c.received = delivered;
        let fin_now = fin && !c.fin;
        c.fin |= fin;
        let u = &mut self.users[c.user as usize];
        u.held += bytes;
        if let (Some(fc), Some(m)) = (&self.cfg.flow_control, marked) {
            u.buf.on_packet(fc, now, m);
        }
        Forward {
            bytes,
            fin: fin_now,
        }
    }

    /// Downstream: the terminal has acknowledged `acked` bytes in total on `conn`.
    /// Returns how many of the server's transfers are now complete end to end.
    pub fn on_downstream_ack(&mut self, conn: u32, acked: u64) -> usize {
        let c = &mut self.conns[conn as usize];
        let acked = acked.min(c.received);
        if acked > c.acked {
            self.users[c.user as usize].held -= acked - c.acked;
            c.acked = acked;
        }
        let mut done = 0;
        while c.pending_ends.front().is_some_and(|&e| e <= c.acked) {
            c.pending_ends.pop_front();
            done += 1;
        }
        done
    }

    /// The server's sender on `conn` saw its transfer ending at byte `end` acknowledged
    /// (by the PEP). Returns true if the terminal already has it all.
    pub fn on_upstream_transfer_done(&mut self, conn: u32, end: u64) -> bool {
        let c = &mut self.conns[conn as usize];
        if c.acked >= end {
            return true;
        }
        c.pending_ends.push_back(end);
        false
    }

    /// The connection is over on both legs: it no longer shares its user's window.
    pub fn close(&mut self, conn: u32) {
        let u = self.conns[conn as usize].user as usize;
        self.users[u].conns.retain(|&x| x != conn);
    }

    /// Whether every byte received upstream has been acknowledged downstream.
    pub fn drained(&self, conn: u32) -> bool {
        let c = &self.conns[conn as usize];
        c.acked >= c.received
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pep(spec: Value) -> Result<Pep> {
        build(&spec, "topology.nodes[1].function", 1)
    }

    /// B = 625 000, max_window 16 000. Two connections of one user share B:
    /// held 0 → window 16 000; after 620 000 B held → 5 000 on both; terminal acks
    /// 600 000 of conn 0 → held 20 000 → 16 000 again.
    #[test]
    fn window_is_the_users_room_capped_at_max_window() {
        let mut p = pep(json!({"kind": "pep"})).unwrap();
        let a = p.open(10, 7);
        let b = p.open(11, 7);
        let other = p.open(12, 8);
        assert_eq!(p.user_conns(a), &[a, b]);
        assert_eq!(p.window(a), 16_000);
        let f = p.on_upstream(0, a, 610_000, false, None);
        assert_eq!(
            f,
            Forward {
                bytes: 610_000,
                fin: false
            }
        );
        p.on_upstream(0, b, 10_000, true, None);
        assert_eq!((p.window(a), p.window(b)), (5_000, 5_000));
        assert_eq!(p.window(other), 16_000);
        assert_eq!(p.on_downstream_ack(a, 600_000), 0);
        assert_eq!(p.held_of(a), 20_000);
        assert_eq!(p.window(b), 16_000);
    }

    /// With flow control (decr 0.5): each marked data segment halves the limit B; the
    /// window is min(16 000, max(B, MSS) − held): 625 000 → … six marks → 9 765.625 B,
    /// held 6·1448 = 8688 (forwarded, not yet acknowledged by the terminal) → window
    /// 9765 − 8688 = 1077; four more → 610.35 B, counted as one MSS 1448, held 14 480 →
    /// window 0; the terminal acknowledges all → window 1448.
    #[test]
    fn marks_shrink_the_window_through_the_buffer() {
        let mut p = pep(json!({"kind": "pep", "flow_control": true, "decr": 0.5})).unwrap();
        let a = p.open(10, 7);
        let mut got = 0;
        for i in 1..=6u64 {
            got += 1448;
            p.on_upstream(i, a, got, false, Some(true));
        }
        assert_eq!(p.buffer_of(a), 625_000.0 / 64.0);
        assert_eq!(p.window(a), 1077);
        for i in 7..=10u64 {
            got += 1448;
            p.on_upstream(i, a, got, false, Some(true));
        }
        assert_eq!(p.buffer_of(a), 625_000.0 / 1024.0);
        assert_eq!(p.window(a), 0);
        p.on_downstream_ack(a, got);
        assert_eq!(p.window(a), 1448);
    }

    #[test]
    fn transfers_complete_when_the_terminal_has_them() {
        let mut p = pep(json!({"kind": "pep"})).unwrap();
        let a = p.open(10, 7);
        p.on_upstream(0, a, 5000, true, None);
        assert!(!p.on_upstream_transfer_done(a, 5000));
        assert_eq!(p.on_downstream_ack(a, 4000), 0);
        assert_eq!(p.on_downstream_ack(a, 5000), 1);
        assert!(p.drained(a));
    }

    #[test]
    fn bad_parameters_name_their_field() {
        let e = pep(json!({"kind": "pep", "decr": 1.5})).err().unwrap();
        assert_eq!(e.path, "topology.nodes[1].function.decr");
        let e = pep(json!({"kind": "pep", "decr": 0})).err().unwrap();
        assert_eq!(e.path, "topology.nodes[1].function.decr");
        let e = pep(json!({"kind": "pep", "buffer": "0B"})).err().unwrap();
        assert_eq!(e.path, "topology.nodes[1].function.buffer");
        let e = pep(json!({"kind": "pep", "tcp": {"iw": 0}})).err().unwrap();
        assert_eq!(e.path, "topology.nodes[1].function.tcp.iw");
        let e = pep(json!({"kind": "pep", "tcp": {"color": 1}}))
            .err()
            .unwrap();
        assert_eq!(e.path, "topology.nodes[1].function.tcp.color");
        let e = pep(json!({"kind": "pep", "bufer": "1MB"})).err().unwrap();
        assert_eq!(e.path, "topology.nodes[1].function.bufer");
        let e = pep(json!({"kind": "nat"})).err().unwrap();
        assert_eq!(e.path, "topology.nodes[1].function.kind");
    }
}
