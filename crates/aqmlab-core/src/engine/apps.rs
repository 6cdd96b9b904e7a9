//! Application glue: run the apps and execute what they ask for.
use super::*;

impl Simulation {
    pub(super) fn on_app(&mut self, a: usize) {
        let now = self.now();
        match &mut self.apps[a] {
            App::Udp(src) => {
                let (d, next) = src.on_timer(now);
                let flow = src.flow;
                if let Some(t) = next {
                    self.events.schedule(t, Event::App { app: a as u32 });
                }
                let p = self.new_packet(flow, false, d.size, PacketKind::Udp);
                self.packets[p].seq = d.seq;
                self.send(p);
            }
            App::Tcp(_) => self.on_tcp_app(a),
        }
    }

    /// Add a flow (at build time, or when a TCP app opens a new connection).
    pub fn add_flow(
        &mut self,
        entry: u32,
        kind: &'static str,
        src: u32,
        dst: u32,
        cc: String,
        app: u32,
    ) -> u32 {
        let i = self.flows.len() as u32;
        self.flows.push(Flow {
            entry,
            kind,
            src,
            dst,
            cc,
            hash: flow_hash(src, dst, i, if kind == "tcp" { 6 } else { 17 }),
            stats: FlowStats::default(),
            tcp: None,
            app,
            class: self.entries.get(entry as usize).map_or(0, |e| e.class),
        });
        i
    }

    pub(super) fn on_tcp_app(&mut self, a: usize) {
        use crate::app::tcp::Pattern;
        let now = self.now();
        let App::Tcp(app) = &mut self.apps[a] else {
            return;
        };
        let (pattern, cfg, entry, src, dst) = (app.pattern, app.cfg, app.entry, app.src, app.dst);
        if now >= app.stop {
            // `stop` of a single-connection app: the application writes no more.
            if let Some(f) = app.flow {
                if let Some((s, _)) = self.flows[f as usize].tcp {
                    if let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] {
                        snd.stop_writing();
                    }
                }
            }
            return;
        }
        let opened = app.opened;
        app.opened += 1;
        let flow = match pattern {
            Pattern::Open { .. } | Pattern::Closed { .. } => {
                let gap = app.gap();
                let stop = app.stop;
                if matches!(pattern, Pattern::Open { .. }) && now + gap < stop {
                    self.events
                        .schedule(now + gap, Event::App { app: a as u32 });
                }
                let f = self.add_flow(entry, "tcp", src, dst, cfg.cc.name().to_string(), a as u32);
                self.add_tcp_endpoints(f, cfg);
                if let App::Tcp(app) = &mut self.apps[a] {
                    app.flow = Some(f);
                }
                f
            }
            _ => app.flow.expect("single-connection TCP apps have a flow"),
        };
        let (bytes, fin) = match pattern {
            Pattern::Bulk => (u64::MAX, false),
            Pattern::File { size, restart } => (size, !restart),
            Pattern::OnOff { size, .. } => (size, false),
            Pattern::Open { size, .. } | Pattern::Closed { size, .. } => (size, true),
        };
        let (s, _) = self.flows[flow as usize].tcp.expect("a TCP flow");
        let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] else {
            unreachable!("endpoint pairs are (sender, receiver)")
        };
        let st = &mut self.flows[flow as usize].stats;
        let fresh = matches!(pattern, Pattern::Open { .. } | Pattern::Closed { .. }) || opened == 0;
        snd.write(now, bytes, fin, &mut self.seg_buf, st);
        if fresh {
            snd.open(now, &mut self.seg_buf);
        }
        self.tcp_after(s as usize);
    }

    /// A transfer of `flow` was acknowledged completely.
    pub(super) fn on_transfer_done(&mut self, flow: u32) {
        use crate::app::tcp::Pattern;
        let now = self.now();
        let a = self.flows[flow as usize].app as usize;
        let App::Tcp(app) = &mut self.apps[a] else {
            return;
        };
        match app.pattern {
            Pattern::File {
                size,
                restart: true,
            } if now < app.stop => {
                let (s, _) = self.flows[flow as usize].tcp.expect("a TCP flow");
                if let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] {
                    let st = &mut self.flows[flow as usize].stats;
                    snd.write(now, size, false, &mut self.seg_buf, st);
                }
                self.tcp_after(s as usize);
            }
            Pattern::OnOff { pause, .. } if now + pause < app.stop => {
                self.events
                    .schedule(now + pause, Event::App { app: a as u32 });
            }
            Pattern::Closed { .. } => {
                let t = now + app.gap();
                if t < app.stop {
                    self.events.schedule(t, Event::App { app: a as u32 });
                }
            }
            _ => {}
        }
        // A connection whose last byte (FIN) is acknowledged is finished.
        let (s, _) = self.flows[flow as usize].tcp.expect("a TCP flow");
        if let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] {
            if snd.app_fin && snd.snd_una >= snd.app_written {
                snd.release();
            }
        }
    }
}
