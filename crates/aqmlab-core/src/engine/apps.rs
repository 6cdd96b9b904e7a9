//! Application glue: run the sans-IO apps and execute the actions they ask for.

use super::*;
use crate::app::{Action, AnyApp, AppIo, Arrival, FlowKind};

impl Simulation {
    /// Let app `a` run `f` (start, wake, transfer done), then execute its actions in the
    /// order it asked for them.
    pub(super) fn run_app(&mut self, a: usize, f: impl FnOnce(&mut AnyApp, Nanos, &mut AppIo)) {
        let now = self.now();
        let mut io = std::mem::replace(&mut self.app_io, AppIo::new(0));
        io.reset(self.flows.len() as u32);
        f(&mut self.apps[a], now, &mut io);
        for act in io.drain() {
            self.execute(a, act);
        }
        self.app_io = io;
    }

    /// A datagram of flow `d.flow` arrived at its end: tell the flow's app if it listens.
    pub(super) fn on_datagram(&mut self, d: Arrival) {
        let a = self.flows[d.flow as usize].app as usize;
        if self.apps[a].wants_datagrams() {
            self.run_app(a, |app, now, io| app.on_datagram(now, &d, io));
        }
    }

    pub(super) fn on_app(&mut self, a: usize) {
        self.run_app(a, |app, now, io| app.on_wake(now, io));
    }

    fn execute(&mut self, a: usize, act: Action) {
        let now = self.now();
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
            }
            Action::Write { flow, bytes, fin } => {
                let s = self.sender_of(flow);
                if let TcpEndpoint::Sender(snd) = &mut self.tcp[s] {
                    let st = &mut self.flows[flow as usize].stats;
                    snd.write(now, bytes, fin, &mut self.seg_buf, st);
                }
                self.tcp_after(s);
            }
            Action::Connect { flow } => {
                let s = self.sender_of(flow);
                if let TcpEndpoint::Sender(snd) = &mut self.tcp[s] {
                    snd.open(now, &mut self.seg_buf);
                }
                self.tcp_after(s);
            }
            Action::StopWriting { flow } => {
                let s = self.sender_of(flow);
                if let TcpEndpoint::Sender(snd) = &mut self.tcp[s] {
                    snd.stop_writing();
                }
            }
            Action::NotifyReceived { flow, bytes } => {
                let (_, r) = self.flows[flow as usize].tcp.expect("a TCP flow");
                // The mark lies ahead of what has arrived (the response is written in
                // the same callback), so it is checked when segments arrive, never here:
                // that keeps apps from being re-entered while their actions run.
                if let TcpEndpoint::Receiver(rcv) = &mut self.tcp[r as usize] {
                    rcv.notify_at = Some(bytes);
                }
            }
            Action::Abort { flow } => {
                let (s, r) = self.flows[flow as usize].tcp.expect("a TCP flow");
                if let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] {
                    snd.release();
                }
                if let TcpEndpoint::Receiver(rcv) = &mut self.tcp[r as usize] {
                    rcv.notify_at = None;
                }
            }
            Action::Send {
                flow,
                size,
                seq,
                kind,
                reverse,
                tag,
            } => {
                let p = self.new_packet(flow, reverse, size, kind);
                self.packets[p].seq = seq;
                self.packets[p].tag = tag;
                if let crate::app::ClassSpec::Tag(map) = &self.flows[flow as usize].class {
                    self.packets[p].class = crate::app::ClassSpec::of_tag(map, tag.unit_type);
                }
                self.send(p);
            }
        }
    }

    /// The sender endpoint of TCP flow `flow`.
    fn sender_of(&self, flow: u32) -> usize {
        self.flows[flow as usize].tcp.expect("a TCP flow").0 as usize
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
        let i = self.flows.len() as u32;
        self.flows.push(Flow {
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
            pep: None,
        });
        if let Some(n) = self.entry_flows.get_mut(entry as usize) {
            *n += 1;
        }
        if let Some(e) = self.entries.get(entry as usize) {
            if matches!(e.class, crate::app::ClassSpec::Random(_)) {
                // Numbered within the entry, so other entries do not move the stream.
                let k = self.entry_flows[entry as usize] - 1;
                self.flows[i as usize].class_rng = Some(crate::sim::rng::Rng::stream(
                    self.seed,
                    &format!("traffic[{}].class.flow[{k}]", e.name),
                ));
            }
        }
        i
    }

    /// If receiver endpoint `r` reached its `notify_at` mark: clear it, tell the app.
    pub(super) fn check_received(&mut self, r: usize) {
        let TcpEndpoint::Receiver(rcv) = &mut self.tcp[r] else {
            return;
        };
        if rcv.notify_at.is_some_and(|m| rcv.delivered >= m) {
            rcv.notify_at = None;
            let flow = self.tcp_flow[r];
            let a = self.flows[flow as usize].app as usize;
            self.run_app(a, |app, now, io| app.on_received(now, flow, io));
        }
    }

    /// A transfer of `flow` was acknowledged completely: tell its app, and release a
    /// connection whose last byte (FIN) is acknowledged.
    pub(super) fn on_transfer_done(&mut self, flow: u32) {
        // A split flow's transfer is done for the app when the terminal has it (PEP).
        if self.pep_upstream_done(flow) {
            let a = self.flows[flow as usize].app as usize;
            self.run_app(a, |app, now, io| app.on_transfer_done(now, flow, io));
        }
        let s = self.sender_of(flow);
        if let TcpEndpoint::Sender(snd) = &mut self.tcp[s] {
            if snd.app_fin && snd.snd_una >= snd.app_written {
                snd.release();
            }
        }
    }
}
