//! Application glue: run the sans-IO apps and execute the actions they ask for.

use super::*;
use crate::app::{Action, AnyApp, AppIo, Arrival, FlowKind};

impl Simulation {
    /// Let app `a` run `f` (start, wake, transfer done), then execute its actions in the
    /// order it asked for them.
    pub(super) fn run_app(&mut self, a: usize, f: impl FnOnce(&mut AnyApp, Nanos, &mut AppIo)) {
        let now = self.now();
        let mut io = std::mem::replace(&mut self.app_io, AppIo::new(0));
        io.reset(self.next_flow);
        f(&mut self.apps[a], now, &mut io);
        for act in io.drain() {
            self.execute(a, act);
        }
        self.app_io = io;
    }

    /// A datagram of flow `d.flow` (in slot `slot`) arrived at its end: tell the flow's
    /// app if it listens.
    pub(super) fn on_datagram(&mut self, slot: usize, d: Arrival) {
        let a = self.flows[slot].app as usize;
        if self.apps[a].wants_datagrams() {
            self.run_app(a, |app, now, io| app.on_datagram(now, &d, io));
        }
    }

    pub(super) fn on_app(&mut self, a: usize) {
        self.run_app(a, |app, now, io| app.on_wake(now, io));
    }

    fn execute(&mut self, a: usize, act: Action) {
        let now = self.now();
        // An action on a released connection (one that finished, then its page timed
        // out and aborts it) has nothing left to act on.
        let flow_of = |act: &Action| match *act {
            Action::Write { flow, .. }
            | Action::Connect { flow }
            | Action::StopWriting { flow }
            | Action::NotifyReceived { flow, .. }
            | Action::Abort { flow }
            | Action::Send { flow, .. } => Some(flow),
            Action::WakeAt(_) | Action::NewTcpFlow { .. } => None,
        };
        let slot = match flow_of(&act) {
            Some(id) => match self.slot(id) {
                Some(s) => s,
                None => return,
            },
            None => 0,
        };
        match act {
            Action::WakeAt(t) => self.events.schedule(t, Event::App { app: a as u32 }),
            Action::NewTcpFlow {
                flow,
                src,
                dst,
                cfg,
            } => {
                let entry = self.app_entry[a];
                let f = self.add_flow(entry, FlowKind::Tcp, src, dst, cfg.cc.name(), a as u32);
                debug_assert_eq!(f, flow, "flow ids are handed out in order");
                self.add_tcp_endpoints(f, cfg);
                self.pep_intercept(f);
                let s = self.slot(f).expect("just made");
                self.flows[s].conn = self.flows[s].pep.is_none();
            }
            Action::Write { flow, bytes, fin } => {
                if let (Some(log), true) = (&mut self.transfer_log, bytes != u64::MAX) {
                    log.written(flow, now, bytes);
                }
                let s = self.sender_of(slot);
                let st = &mut self.flows[slot].stats;
                match &mut self.tcp[s] {
                    TcpEndpoint::Sender(snd) => snd.write(now, bytes, fin, &mut self.seg_buf, st),
                    TcpEndpoint::Ns2Sender(snd) => {
                        snd.write(now, bytes, fin, &mut self.seg_buf, st)
                    }
                    _ => {}
                }
                self.tcp_after(s);
            }
            Action::Connect { .. } => {
                let s = self.sender_of(slot);
                match &mut self.tcp[s] {
                    TcpEndpoint::Sender(snd) => snd.open(now, &mut self.seg_buf),
                    TcpEndpoint::Ns2Sender(snd) => {
                        snd.open(now, &mut self.seg_buf, &mut self.flows[slot].stats)
                    }
                    _ => {}
                }
                self.tcp_after(s);
            }
            Action::StopWriting { .. } => {
                let s = self.sender_of(slot);
                match &mut self.tcp[s] {
                    TcpEndpoint::Sender(snd) => snd.stop_writing(),
                    TcpEndpoint::Ns2Sender(snd) => snd.stop_writing(),
                    _ => {}
                }
            }
            Action::NotifyReceived { bytes, .. } => {
                let (_, r) = self.flows[slot].tcp.expect("a TCP flow");
                // The mark lies ahead of what has arrived (the response is written in
                // the same callback), so it is checked when segments arrive, never here:
                // that keeps apps from being re-entered while their actions run.
                match &mut self.tcp[r as usize] {
                    TcpEndpoint::Receiver(rcv) => rcv.notify_at = Some(bytes),
                    TcpEndpoint::Ns2Sink(rcv) => rcv.notify_at = Some(bytes),
                    _ => {}
                }
            }
            Action::Abort { .. } => {
                let (s, r) = self.flows[slot].tcp.expect("a TCP flow");
                match &mut self.tcp[s as usize] {
                    TcpEndpoint::Sender(snd) => snd.release(),
                    TcpEndpoint::Ns2Sender(snd) => snd.release(),
                    _ => {}
                }
                match &mut self.tcp[r as usize] {
                    TcpEndpoint::Receiver(rcv) => rcv.notify_at = None,
                    TcpEndpoint::Ns2Sink(rcv) => rcv.notify_at = None,
                    _ => {}
                }
                self.finish_conn(slot);
            }
            Action::Send {
                size,
                seq,
                kind,
                reverse,
                tag,
                ..
            } => {
                let p = self.new_packet(slot as u32, reverse, size, kind);
                let pk = &mut self.packets[p];
                pk.seq = seq;
                pk.tag = tag;
                if !reverse {
                    pk.ecn = self.flows[slot].ecn;
                }
                if let crate::app::ClassSpec::Tag(map) = &self.flows[slot].class {
                    self.packets[p].class = crate::app::ClassSpec::of_tag(map, tag.unit_type);
                }
                self.send(p);
            }
        }
    }

    /// The sender endpoint of the TCP flow in slot `slot`.
    fn sender_of(&self, slot: usize) -> usize {
        self.flows[slot].tcp.expect("a TCP flow").0 as usize
    }

    /// Add a flow (at build time, or when an app opens a new connection).
    pub fn add_flow(
        &mut self,
        entry: u32,
        kind: FlowKind,
        src: u32,
        dst: u32,
        cc: &'static str,
        app: u32,
    ) -> u32 {
        let i = self.next_flow;
        self.next_flow += 1;
        let slot = self.new_slot(Flow {
            id: i,
            entry,
            kind,
            src,
            dst,
            cc,
            hash: flow_hash(src, dst, i, kind.protocol()),
            stats: FlowStats::default(),
            tcp: None,
            app,
            class: self
                .entries
                .get(entry as usize)
                .map_or(crate::app::ClassSpec::Fixed(0), |e| e.class.clone()),
            class_rng: None,
            dscp: self.entries.get(entry as usize).map_or(0, |e| e.dscp),
            ecn: self
                .entries
                .get(entry as usize)
                .map_or(Ecn::NotEct, |e| e.ecn),
            pep: None,
            conn: false,
            in_net: 0,
            closing: false,
        });
        if let Some(n) = self.entry_flows.get_mut(entry as usize) {
            *n += 1;
        }
        if let Some(e) = self.entries.get(entry as usize) {
            if matches!(e.class, crate::app::ClassSpec::Random(_)) {
                // Numbered within the entry, so other entries do not move the stream.
                let k = self.entry_flows[entry as usize] - 1;
                self.flows[slot].class_rng = Some(crate::sim::rng::Rng::stream(
                    self.seed,
                    &format!("traffic[{}].class.flow[{k}]", e.name),
                ));
            }
        }
        i
    }

    /// If receiver endpoint `r` reached its `notify_at` mark: clear it, tell the app.
    pub(super) fn check_received(&mut self, r: usize) {
        let (notify_at, delivered) = match &mut self.tcp[r] {
            TcpEndpoint::Receiver(rcv) => (&mut rcv.notify_at, rcv.delivered),
            TcpEndpoint::Ns2Sink(rcv) => (&mut rcv.notify_at, rcv.delivered),
            _ => return,
        };
        if notify_at.is_some_and(|m| delivered >= m) {
            *notify_at = None;
            let f = &self.flows[self.tcp_flow[r] as usize];
            let (flow, a) = (f.id, f.app as usize);
            self.run_app(a, |app, now, io| app.on_received(now, flow, io));
        }
    }

    /// A transfer of the flow in slot `slot` was acknowledged completely: tell its app,
    /// and release a connection whose last byte (FIN) is acknowledged.
    pub(super) fn on_transfer_done(&mut self, slot: u32) {
        let slot = slot as usize;
        let flow = self.flows[slot].id;
        let (now, entry) = (self.now(), self.flows[slot].entry);
        if let Some(log) = &mut self.transfer_log {
            log.done(flow, entry, now);
        }
        // A split flow's transfer is done for the app when the terminal has it (PEP).
        if self.pep_upstream_done(slot) {
            let a = self.flows[slot].app as usize;
            self.run_app(a, |app, now, io| app.on_transfer_done(now, flow, io));
        }
        let s = self.sender_of(slot);
        match &mut self.tcp[s] {
            TcpEndpoint::Sender(snd) if snd.app_fin && snd.snd_una >= snd.app_written => {
                snd.release();
                self.finish_conn(slot);
            }
            TcpEndpoint::Ns2Sender(snd) if snd.app_fin && snd.all_acked() => {
                snd.release();
                self.finish_conn(slot);
            }
            _ => {}
        }
    }
}
