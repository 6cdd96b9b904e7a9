//! TCP endpoint glue: segments in and out, timers, completed transfers.
use super::*;

/// A TCP endpoint, indexed by `Event::Transport { endpoint }`. Endpoints sit in one
/// `Vec` and are reached by index on every segment, so the sender is kept inline (no
/// box) even though it is larger than the receiver.
#[allow(clippy::large_enum_variant)]
pub enum TcpEndpoint {
    Sender(TcpSender),
    Receiver(TcpReceiver),
    /// ns-2.35's one-way sender and sink (`profile = "ns2"`).
    Ns2Sender(Ns2Sender),
    Ns2Sink(Ns2Sink),
    /// A released connection's endpoint, waiting to be reused (`conns.rs`).
    Free,
}

impl TcpEndpoint {
    fn next_deadline(&self) -> Option<Nanos> {
        match self {
            TcpEndpoint::Sender(s) => s.next_deadline(),
            TcpEndpoint::Receiver(r) => r.next_deadline(),
            TcpEndpoint::Ns2Sender(s) => s.next_deadline(),
            TcpEndpoint::Ns2Sink(r) => r.next_deadline(),
            TcpEndpoint::Free => None,
        }
    }
}

impl Simulation {
    /// Give flow `flow` (an id) its sender and receiver endpoints.
    pub(super) fn add_tcp_endpoints(&mut self, flow: u32, cfg: TcpConfig) {
        let slot = self.slot(flow).expect("a new flow");
        if let Some(opt) = cfg.ns2 {
            // ns-2's `boot_time_ = Random::uniform(tcpTick_)` (tcp.cc:470), per flow.
            let mut rng =
                crate::sim::rng::Rng::stream(self.seed, &format!("flow[{flow}].ns2.boot_time"));
            let boot = (rng.uniform() * opt.tick as f64) as Nanos;
            let s = Ns2Sender::new(&cfg, &opt, boot);
            let interval = if opt.sink.delayed() { cfg.delack } else { 0 };
            let r = Ns2Sink::new(opt.sink, interval, crate::transport::tcp::ns2::ACK_SIZE);
            let base = self.new_endpoints(
                slot as u32,
                TcpEndpoint::Ns2Sender(s),
                TcpEndpoint::Ns2Sink(r),
            );
            self.flows[slot].tcp = Some((base, base + 1));
            return;
        }
        let s = TcpSender::new(cfg);
        let accurate = s.caps.accurate_ecn();
        let r = TcpReceiver::new(cfg, accurate);
        let base = self.new_endpoints(
            slot as u32,
            TcpEndpoint::Sender(s),
            TcpEndpoint::Receiver(r),
        );
        self.flows[slot].tcp = Some((base, base + 1));
    }

    /// Clamp the advertised receive window of TCP flow `flow` (None: only its buffer
    /// limits it), e.g. from a PEP's buffer flow control. A window that opens is
    /// announced at once with a window update. Returns false if `flow` is not TCP.
    pub fn set_tcp_window_limit(&mut self, flow: u32, limit: Option<u64>) -> bool {
        let Some((_, r)) = self.slot(flow).and_then(|s| self.flows[s].tcp) else {
            return false;
        };
        let now = self.now();
        if let TcpEndpoint::Receiver(rcv) = &mut self.tcp[r as usize] {
            rcv.set_window_limit(now, limit, &mut self.seg_buf);
        }
        self.tcp_after(r as usize);
        true
    }

    /// A segment arrived for endpoint `e`.
    pub(super) fn tcp_input(&mut self, e: usize, seg: &Segment) {
        let now = self.now();
        let flow = self.tcp_flow[e] as usize;
        let split = self.flows[flow].pep.is_some();
        let mut own;
        let (seg, marked) = if split {
            own = *seg;
            let m = self.pep_take_mark(e, &mut own);
            (&own, m)
        } else {
            (seg, None)
        };
        let st = &mut self.flows[flow].stats;
        match &mut self.tcp[e] {
            TcpEndpoint::Sender(s) => s.on_segment(now, seg, &mut self.seg_buf, st),
            TcpEndpoint::Receiver(r) => r.on_segment(now, seg, &mut self.seg_buf, st),
            TcpEndpoint::Ns2Sender(s) => s.on_segment(now, seg, &mut self.seg_buf, st),
            TcpEndpoint::Ns2Sink(r) => r.on_segment(now, seg, &mut self.seg_buf, st),
            TcpEndpoint::Free => {}
        }
        self.tcp_after(e);
        if split {
            self.pep_after_input(e, marked);
        }
    }

    pub(super) fn on_transport_timer(&mut self, e: usize) {
        let now = self.now();
        if self.tcp_timer[e] != Some(now) {
            return; // superseded
        }
        self.tcp_timer[e] = None;
        let flow = self.tcp_flow[e] as usize;
        let st = &mut self.flows[flow].stats;
        match &mut self.tcp[e] {
            TcpEndpoint::Sender(s) => s.on_timer(now, &mut self.seg_buf, st),
            TcpEndpoint::Receiver(r) => r.on_timer(now, &mut self.seg_buf),
            TcpEndpoint::Ns2Sender(s) => s.on_timer(now, &mut self.seg_buf, st),
            TcpEndpoint::Ns2Sink(r) => r.on_timer(now, &mut self.seg_buf),
            TcpEndpoint::Free => {}
        }
        self.tcp_after(e);
    }

    /// After an endpoint ran: send its segments, re-arm its timer, report completions.
    pub(super) fn tcp_after(&mut self, e: usize) {
        let flow = self.tcp_flow[e]; // the flow's slot
        let reverse = matches!(
            self.tcp[e],
            TcpEndpoint::Receiver(_) | TcpEndpoint::Ns2Sink(_)
        );
        if !self.seg_buf.is_empty() {
            let mut buf = std::mem::take(&mut self.seg_buf);
            for seg in buf.drain(..) {
                let p = self.new_packet(flow, reverse, seg.wire_size(), PacketKind::Tcp);
                let pk = &mut self.packets[p];
                pk.tcp = seg.tcp;
                pk.ecn = seg.ecn;
                self.send(p);
            }
            self.seg_buf = buf;
        }
        if let Some(d) = self.tcp[e].next_deadline() {
            if self.tcp_timer[e].is_none_or(|t| d < t) {
                let d = d.max(self.now());
                self.tcp_timer[e] = Some(d);
                self.events
                    .schedule(d, Event::Transport { endpoint: e as u32 });
            }
        }
        match &mut self.tcp[e] {
            TcpEndpoint::Sender(s) => {
                if s.just_completed {
                    s.just_completed = false;
                    self.on_transfer_done(flow);
                }
            }
            TcpEndpoint::Receiver(r) => {
                if r.notify_at.is_some() {
                    self.check_received(e);
                }
            }
            TcpEndpoint::Ns2Sender(s) => {
                if s.just_completed {
                    s.just_completed = false;
                    self.on_transfer_done(flow);
                }
            }
            TcpEndpoint::Ns2Sink(r) => {
                if r.notify_at.is_some() {
                    self.check_received(e);
                }
            }
            TcpEndpoint::Free => {}
        }
    }

    pub(super) fn on_tcp_sample(&mut self) {
        let now = self.now();
        let Some(series) = &mut self.tcp_series else {
            return;
        };
        for (e, ep) in self.tcp.iter().enumerate() {
            if let TcpEndpoint::Ns2Sender(s) = ep {
                if s.released || s.all_acked() {
                    continue;
                }
                series.rows.push(TcpSampleRow {
                    time: now,
                    flow: self.flows[self.tcp_flow[e] as usize].id,
                    cwnd: s.cwnd_bytes(),
                    ssthresh: s.ssthresh.max(0) as u64 * s.cwnd_unit(),
                    srtt: s.rtt.srtt(),
                    in_flight: s.in_flight_bytes(),
                });
                continue;
            }
            if let TcpEndpoint::Sender(s) = ep {
                if s.state == SenderState::Closed || s.snd_una >= s.app_written {
                    continue;
                }
                series.rows.push(TcpSampleRow {
                    time: now,
                    flow: self.flows[self.tcp_flow[e] as usize].id,
                    cwnd: s.cc.send_window(&s.w),
                    ssthresh: s.w.ssthresh,
                    srtt: s.rtt.has_sample.then_some(s.rtt.srtt),
                    in_flight: s.pipe(),
                });
            }
        }
        let next = now + series.interval;
        if next <= self.end {
            self.events.schedule(next, Event::TcpSample);
        }
    }
}
