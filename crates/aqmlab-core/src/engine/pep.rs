//! PEP glue: intercept TCP connections whose path crosses a PEP node, move the bytes
//! between the two legs, announce the PEP's windows, report end-to-end completions.
//! The bookkeeping is `crate::pep` (sans-IO); this file only connects it to the TCP
//! endpoints.
//!
//! A connection from a server S to a terminal-side node T through the PEP at P becomes
//! two flows: the app's flow (S → P; its receiver is the PEP, so the server's RTT is
//! the S–P one) and, once the server's SYN reaches P, a flow of the PEP (P → T, the
//! PEP's `tcp` configuration) in the same traffic entry, owned by the same app. The app
//! hears `on_transfer_done` for its flow when the terminal has acknowledged the whole
//! transfer (not when the PEP has), so think times start when the user has the page;
//! the PEP flow's `completion_s` is that end-to-end time, from the server's SYN.
use super::*;
use crate::net::packet::{tcp_flags, Ecn};
use crate::pep::Pep;

/// Which leg of a split connection a flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PepLeg {
    /// The server's flow, ending at PEP `pep`; connection `conn` there.
    Up { pep: u32, conn: u32 },
    /// The PEP's own flow to the terminal.
    Down { pep: u32, conn: u32 },
}

impl Simulation {
    /// Build the PEPs of the nodes that have `function = { kind = "pep" }`.
    pub(super) fn build_peps(&mut self, spec: &ScenarioSpec) -> Result<()> {
        self.pep_at = vec![None; self.nodes.len()];
        for (i, n) in spec.topology.nodes.iter().enumerate() {
            let Some(f) = &n.function else { continue };
            let node = i as u32;
            let pep = crate::pep::build(f, &format!("topology.nodes[{i}].function"), node)?;
            self.pep_at[i] = Some(self.peps.len() as u32);
            self.peps.push(pep);
        }
        Ok(())
    }

    /// A TCP flow was created: if its path crosses a PEP, it now ends there.
    pub(super) fn pep_intercept(&mut self, flow: u32) {
        if self.peps.is_empty() {
            return;
        }
        let (src, dst) = {
            let f = &self.flows[self.pep_slot(flow)];
            (f.src, f.dst)
        };
        let mut node = src;
        let mut hops = 0;
        while node != dst && hops <= self.links.len() {
            let l = self.routes.next_link(node, dst);
            if l == NO_ROUTE {
                return;
            }
            node = self.links[l as usize].to;
            hops += 1;
            if node == dst {
                return;
            }
            if let Some(p) = self.pep_at[node as usize] {
                let conn = self.peps[p as usize].open(flow, dst);
                let s = self.pep_slot(flow);
                let f = &mut self.flows[s];
                f.dst = node;
                f.pep = Some(PepLeg::Up { pep: p, conn });
                let w = self.peps[p as usize].window(conn);
                self.set_tcp_window_limit(flow, Some(w));
                return;
            }
        }
    }

    /// Before endpoint `e` takes `seg`: at a PEP with flow control, a CE mark on a data
    /// segment is the PEP's signal and is not passed on (so not echoed to the server).
    /// Returns Some(marked) for the data segments that flow control counts.
    pub(super) fn pep_take_mark(&self, e: usize, seg: &mut Segment) -> Option<bool> {
        let flow = self.tcp_flow[e] as usize;
        let Some(PepLeg::Up { pep, .. }) = self.flows[flow].pep else {
            return None;
        };
        if !matches!(self.tcp[e], TcpEndpoint::Receiver(_))
            || self.peps[pep as usize].cfg.flow_control.is_none()
            || seg.tcp.payload == 0
        {
            return None;
        }
        let marked = seg.ecn == Ecn::Ce;
        if marked {
            seg.ecn = Ecn::Ect0;
        }
        Some(marked)
    }

    /// After endpoint `e` (of a split flow) took a segment: forward data, open the
    /// terminal-side leg at the server's SYN, follow the terminal's ACKs.
    pub(super) fn pep_after_input(&mut self, e: usize, marked: Option<bool>) {
        let flow = self.tcp_flow[e];
        match (self.flows[flow as usize].pep, &self.tcp[e]) {
            (Some(PepLeg::Up { pep, conn }), TcpEndpoint::Receiver(r)) => {
                let delivered = r.delivered;
                let fin = r.fin_at.is_some_and(|f| r.rcv_nxt >= f);
                let established =
                    r.state == crate::transport::tcp::receiver::ReceiverState::Established;
                if established && self.peps[pep as usize].conns[conn as usize].down.is_none() {
                    self.pep_open_down(pep, conn, flow as usize);
                }
                let now = self.now();
                let fwd = self.peps[pep as usize].on_upstream(now, conn, delivered, fin, marked);
                if fwd.bytes > 0 || fwd.fin {
                    if let Some(down) = self.peps[pep as usize].conns[conn as usize].down {
                        let d = self.pep_slot(down);
                        let s = self.flows[d].tcp.expect("a TCP flow").0 as usize;
                        if let TcpEndpoint::Sender(snd) = &mut self.tcp[s] {
                            let st = &mut self.flows[d].stats;
                            snd.append(now, fwd.bytes, fwd.fin, &mut self.seg_buf, st);
                        }
                        self.tcp_after(s);
                    }
                }
                self.pep_update_windows(pep, conn);
            }
            (Some(PepLeg::Down { pep, conn }), TcpEndpoint::Sender(s)) => {
                let acked = s.snd_una;
                let done = self.peps[pep as usize].on_downstream_ack(conn, acked);
                for _ in 0..done {
                    self.pep_transfer_done(pep, conn);
                }
                self.pep_maybe_close(pep, conn);
                self.pep_update_windows(pep, conn);
            }
            _ => {}
        }
    }

    /// The server's SYN reached the PEP: open the PEP's connection to the terminal
    /// (`up`: the slot of the server's flow).
    fn pep_open_down(&mut self, pep: u32, conn: u32, up: usize) {
        let (node, cfg, spoof) = {
            let p = &self.peps[pep as usize];
            (p.node, p.cfg.tcp, p.cfg.spoof_handshake)
        };
        let client = self.peps[pep as usize].conns[conn as usize].client;
        let (entry, app) = {
            let f = &self.flows[up];
            (f.entry, f.app)
        };
        let down = self.add_flow(entry, FlowKind::Tcp, node, client, cfg.cc.name(), app);
        self.add_tcp_endpoints(down, cfg);
        let d = self.pep_slot(down);
        self.flows[d].pep = Some(PepLeg::Down { pep, conn });
        self.peps[pep as usize].conns[conn as usize].down = Some(down);
        let s = self.flows[d].tcp.expect("a TCP flow").0 as usize;
        let now = self.now();
        if let TcpEndpoint::Sender(snd) = &mut self.tcp[s] {
            snd.open(now, &mut self.seg_buf);
            if spoof {
                // The handshake is spoofed at both ends: nothing crosses the satellite,
                // the sender is established at once with the terminal's window.
                self.seg_buf.clear();
                let mut synack = Segment::default();
                synack.tcp.flags = tcp_flags::SYN | tcp_flags::ACK;
                synack.tcp.window = cfg.rwnd.min(u32::MAX as u64) as u32;
                snd.on_segment(now, &synack, &mut self.seg_buf, &mut self.flows[d].stats);
                self.seg_buf.clear();
            }
        }
        self.tcp_after(s);
    }

    /// Announce the current window on every open upstream leg of `conn`'s user.
    fn pep_update_windows(&mut self, pep: u32, conn: u32) {
        let n = self.peps[pep as usize].user_conns(conn).len();
        for i in 0..n {
            let c = self.peps[pep as usize].user_conns(conn)[i];
            let (up, w) = {
                let p = &self.peps[pep as usize];
                (p.conns[c as usize].up, p.window(c))
            };
            self.set_tcp_window_limit(up, Some(w));
        }
    }

    /// The terminal has a whole transfer of `conn`: count it on the PEP's flow (its
    /// completion time runs from the server's SYN) and tell the app, for its own flow.
    fn pep_transfer_done(&mut self, pep: u32, conn: u32) {
        let now = self.now();
        let c = &self.peps[pep as usize].conns[conn as usize];
        let (up, down) = (c.up, c.down.expect("acknowledged by the terminal"));
        let (up_s, down_s) = (self.pep_slot(up), self.pep_slot(down));
        let s = self.flows[up_s].tcp.expect("a TCP flow").0 as usize;
        let opened = match &self.tcp[s] {
            TcpEndpoint::Sender(snd) => snd.opened_at,
            _ => now,
        };
        let st = &mut self.flows[down_s].stats;
        st.transfers += 1;
        if st.completion.is_none() {
            st.completion = Some(now - opened);
        }
        let a = self.flows[up_s].app as usize;
        self.run_app(a, |app, now, io| app.on_transfer_done(now, up, io));
    }

    /// The server's sender on the split flow in slot `slot` saw a transfer acknowledged
    /// by the PEP. Returns true if the app should hear of it now (the terminal has it
    /// all).
    pub(super) fn pep_upstream_done(&mut self, slot: usize) -> bool {
        let Some(PepLeg::Up { pep, conn }) = self.flows[slot].pep else {
            return true;
        };
        let s = self.flows[slot].tcp.expect("a TCP flow").0 as usize;
        let end = match &self.tcp[s] {
            TcpEndpoint::Sender(snd) => snd.snd_una,
            _ => return false,
        };
        if self.peps[pep as usize].on_upstream_transfer_done(conn, end) {
            self.pep_transfer_done(pep, conn);
        }
        false
    }

    /// Release the PEP's sender once the FIN'd stream is all acknowledged.
    fn pep_maybe_close(&mut self, pep: u32, conn: u32) {
        let p = &self.peps[pep as usize];
        let c = &p.conns[conn as usize];
        if !(c.fin && p.drained(conn)) {
            return;
        }
        let Some(down) = c.down else { return };
        let s = self.flows[self.pep_slot(down)].tcp.expect("a TCP flow").0 as usize;
        if let TcpEndpoint::Sender(snd) = &mut self.tcp[s] {
            if snd.state != SenderState::Closed {
                snd.release();
            }
        }
        self.peps[pep as usize].close(conn);
    }

    /// The slot of a split connection's flow (PEP legs are never released).
    fn pep_slot(&self, flow: u32) -> usize {
        self.slot(flow).expect("PEP legs are never released")
    }

    /// The PEP at `pep` (for results and tests).
    pub fn pep(&self, pep: usize) -> Option<&Pep> {
        self.peps.get(pep)
    }
}
