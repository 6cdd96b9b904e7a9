//! Forwarding and links: enqueue, the qdisc glue, transmission, propagation, discard.
use super::*;

impl Simulation {
    /// A fresh packet of the flow in slot `slot` (`Simulation::slot`), in the given
    /// direction, stamped with the current time.
    pub fn new_packet(
        &mut self,
        slot: u32,
        reverse: bool,
        size: u32,
        kind: PacketKind,
    ) -> PacketId {
        let now = self.now();
        let f = &mut self.flows[slot as usize];
        f.in_net += 1;
        let p = self.packets.alloc();
        let pk = &mut self.packets[p];
        pk.flow = f.id;
        pk.flow_slot = slot;
        pk.reverse = reverse;
        (pk.src, pk.dst) = if reverse {
            (f.dst, f.src)
        } else {
            (f.src, f.dst)
        };
        pk.size = size;
        pk.kind = kind;
        pk.hash = f.hash;
        pk.class = match (&f.class, &mut f.class_rng) {
            (crate::app::ClassSpec::Fixed(c), _) => *c,
            (spec, Some(rng)) => spec.draw(rng),
            (_, None) => 0,
        };
        pk.created = now;
        if !reverse {
            pk.dscp = f.dscp;
            f.stats.packets_sent += 1;
            f.stats.bytes_sent += size as u64;
            f.stats.active_since(now);
        }
        p
    }

    /// Send `p` from its source node.
    pub fn send(&mut self, p: PacketId) {
        let src = self.packets[p].src;
        self.at_node(src, p);
    }

    pub(super) fn at_node(&mut self, node: u32, p: PacketId) {
        let dst = self.packets[p].dst;
        if dst == node {
            self.deliver(p);
            return;
        }
        let l = self.routes.next_link(node, dst);
        if l == NO_ROUTE {
            // Unreachable destination (only reverse traffic can get here: forward routes
            // are checked when the simulation is built). Counted as a drop.
            self.discard(p, Cause::NoRoute, None, Stage::Enqueue);
            return;
        }
        self.link_enqueue(l as usize, p);
    }

    pub(super) fn deliver(&mut self, p: PacketId) {
        let now = self.now();
        let pk = &self.packets[p];
        let slot = pk.flow_slot;
        let f = &mut self.flows[slot as usize];
        f.in_net -= 1;
        if f.closing && f.in_net == 0 {
            self.to_release.push(slot);
        }
        if !pk.reverse {
            // The packet counter counts packets created in the measurement window, so
            // delivered and dropped stay parts of sent after a warm-up; bytes and delay
            // count every delivery in the window (goodput is a rate over the window).
            if pk.created >= self.warmup {
                f.stats.packets_delivered += 1;
            }
            // Sent before the warm-up, delivered in the window: active from the warm-up.
            f.stats.active_since(pk.created.max(self.warmup));
            if pk.kind != PacketKind::Tcp {
                // TCP counts in-order payload (goodput) at the receiver instead.
                f.stats.bytes_delivered += pk.size as u64;
                f.stats.active_to = Some(now);
            }
            f.stats.record_owd(now - pk.created);
        }
        self.delivered += 1;
        if pk.kind == PacketKind::Tcp {
            let seg = Segment {
                tcp: pk.tcp,
                ecn: pk.ecn,
            };
            let (s, r) = f.tcp.expect("TCP packets belong to TCP flows");
            let e = if pk.reverse { s } else { r };
            self.packets.free(p);
            self.tcp_input(e as usize, &seg);
        } else {
            let d = crate::app::Arrival {
                flow: pk.flow,
                reverse: pk.reverse,
                seq: pk.seq,
                size: pk.size,
                sent_at: pk.created,
                tag: pk.tag,
                ecn: pk.ecn,
            };
            self.packets.free(p);
            self.on_datagram(slot as usize, d);
        }
    }

    pub(super) fn link_enqueue(&mut self, l: usize, p: PacketId) {
        let now = self.now();
        self.settle_tx(l, self.events.key());
        let link = &mut self.links[l];
        let pk = &mut self.packets[p];
        let size = pk.size;
        link.stats.arrive(now, size);
        pk.enqueued = now;
        pk.marked_here = false;
        if !link.outages.is_empty() && link.is_down(now) {
            self.discard(p, Cause::Outage, Some(l), Stage::Enqueue);
            return;
        }
        if link.loss > 0.0 && link.loss_rng.chance(link.loss) {
            self.discard(p, Cause::Random, Some(l), Stage::Enqueue);
            return;
        }
        if link.tx.is_none() && link.access.is_none() && link.qdisc.fifo_passes(size) {
            // Cut-through: the packet would go into the empty FIFO and straight out again
            // at this instant (accepted, no drop, no timer, sojourn 0), so both qdisc calls
            // are skipped with the same outcome. The queue length is 0 before and after:
            // its time averages have nothing to add (`TimeAverage::set` of the value it
            // holds), and `arrive` has closed the sample intervals up to now. Most
            // arrivals at fast access links take this path.
            link.stats.enqueued += 1;
            self.transmit(l, p, 0);
            return;
        }
        if self.with_qdisc(l, |q, ctx| q.enqueue(p, ctx)) {
            self.links[l].stats.enqueued += 1;
        }
        let queued = self.after_qdisc(l).packets;
        let link = &mut self.links[l];
        if link.access.is_some() {
            self.access_step(l, false);
        } else if link.tx.is_none() {
            self.start_tx(l);
        } else if let Some(seq) = link.tx_lazy {
            if queued > 0 {
                // Something waits now: the transmission ends with its event after all.
                link.tx_lazy = None;
                self.events.schedule_reserved(
                    link.tx_end,
                    seq,
                    Event::LinkTxDone { link: l as u32 },
                );
            }
        }
    }

    /// Complete link `l`'s event-less transmission (`start_tx`) if its
    /// transmission-complete event would have been handled before the event with key
    /// `before` (`EventQueue::key`): the counters `on_tx_done` keeps, and the idle time.
    /// The dequeue that event would have made finds the FIFO empty and changes nothing.
    /// Runs at every arrival at a link and at its far end, so the test is inlined.
    #[inline(always)]
    pub(super) fn settle_tx(&mut self, l: usize, before: (Nanos, u64)) {
        let link = &self.links[l];
        if let Some(seq) = link.tx_lazy {
            if (link.tx_end, seq) < before {
                self.complete_lazy_tx(l);
            }
        }
    }

    /// The counters of link `l`'s event-less transmission, at its end (`settle_tx`).
    #[inline(never)]
    fn complete_lazy_tx(&mut self, l: usize) {
        let link = &mut self.links[l];
        let end = link.tx_end;
        let (_, started) = link.tx.take().expect("an event-less transmission");
        link.tx_lazy = None;
        link.stats.busy_ns += end - started.max(link.stats.window_start);
        // as of the transmission's end: nothing touched the link since (it would have settled)
        link.stats.sent(end, link.tx_size);
        link.idle_since.get_or_insert(end);
        self.hops += 1;
    }

    /// `settle_tx` on every link.
    pub(super) fn settle_links(&mut self, before: (Nanos, u64)) {
        for l in 0..self.links.len() {
            self.settle_tx(l, before);
        }
    }

    /// Run `f` on link `l`'s qdisc with a context for this instant.
    #[inline]
    pub(super) fn with_qdisc<T>(
        &mut self,
        l: usize,
        f: impl FnOnce(&mut Qdisc, &mut QdiscCtx) -> T,
    ) -> T {
        // Two calls, so the common unmonitored one builds its context without copying an
        // empty `Monitored` through the stack.
        match self.links[l].monitor {
            None => self.qdisc_call(l, None, f),
            Some(m) => {
                let monitor = self.monitored(m as usize);
                self.qdisc_call(l, Some(monitor), f)
            }
        }
    }

    #[inline(always)]
    fn qdisc_call<T>(
        &mut self,
        l: usize,
        monitor: Option<crate::qdisc::monitor::Monitored>,
        f: impl FnOnce(&mut Qdisc, &mut QdiscCtx) -> T,
    ) -> T {
        let link = &mut self.links[l];
        let link_rate_bps = link.qdisc_rate_bps();
        let mut ctx = QdiscCtx {
            now: self.events.now(),
            packets: &mut self.packets,
            events: &mut self.qevents,
            rng: &mut link.qdisc_rng,
            link_rate_bps,
            mtu: link.mtu,
            monitor,
        };
        f(&mut link.qdisc, &mut ctx)
    }

    /// What a discipline monitoring link `m` sees of it now (`qdisc::monitor`). Out of
    /// line and cold: few links are monitored, and inlined it bloats every qdisc call.
    #[cold]
    #[inline(never)]
    pub(super) fn monitored(&self, m: usize) -> crate::qdisc::monitor::Monitored {
        let link = &self.links[m];
        crate::qdisc::monitor::Monitored {
            len_packets: link.qdisc.len_packets(),
            len_bytes: link.qdisc.len_bytes(),
            rate_bps: link.rate_bps,
            idle_since: link.idle_since,
            sent_bytes: link.sent_bytes,
        }
    }

    /// Apply the drops and marks the qdisc reported, update queue-length averages and
    /// the qdisc timer; returns the queue's state (so callers need not ask again). Runs
    /// after every qdisc call: the rare drops and marks are out of line so that this
    /// stays small enough to inline into its callers.
    #[inline]
    pub(super) fn after_qdisc(&mut self, l: usize) -> QueueState {
        if !self.qevents.is_empty() {
            self.apply_qdisc_events(l);
        }
        let now = self.now();
        let link = &mut self.links[l];
        let state = link.qdisc.queue_state();
        link.stats.set_qlen(now, state.packets as u64, state.bytes);
        self.arm_qdisc_timer(l, state.timer);
        state
    }

    /// The drops and marks the qdisc just reported on link `l` (`after_qdisc`).
    #[cold]
    #[inline(never)]
    fn apply_qdisc_events(&mut self, l: usize) {
        let mut evs = std::mem::take(&mut self.qevents);
        for e in evs.drain(..) {
            match e.verdict {
                Verdict::Drop(r) => {
                    // Marked here, then dropped: counted once, as the drop.
                    if e.retracts_mark(&self.packets) && self.in_window(l, e.packet) {
                        self.links[l].stats.marks -= 1;
                    }
                    self.discard(e.packet, Cause::Qdisc(r), Some(l), e.at)
                }
                Verdict::Mark => {
                    if self.in_window(l, e.packet) {
                        self.links[l].stats.marks += 1;
                    }
                    self.log_drop(l as u32, e.packet, Cause::Mark, e.at);
                }
            }
        }
        self.qevents = evs;
    }

    /// Schedule link `l`'s qdisc timer for `next` (its `next_timer`), unless it is
    /// already set for then.
    #[inline(always)]
    pub(super) fn arm_qdisc_timer(&mut self, l: usize, next: Option<Nanos>) {
        let link = &mut self.links[l];
        if let Some(t) = next {
            if link.timer_at != Some(t) {
                link.timer_at = Some(t);
                self.events.schedule(
                    t.max(self.events.now()),
                    Event::QdiscTimer { link: l as u32 },
                );
            }
        }
    }

    pub(super) fn on_qdisc_timer(&mut self, l: usize) {
        let now = self.now();
        let link = &mut self.links[l];
        if link.timer_at != Some(now) {
            return; // superseded
        }
        link.timer_at = None;
        self.with_qdisc(l, |q, ctx| q.on_timer(ctx));
        self.after_qdisc(l);
        if self.links[l].access.is_some() {
            self.access_step(l, false);
        } else if self.links[l].tx.is_none() {
            self.start_tx(l);
        }
    }

    pub(super) fn start_tx(&mut self, l: usize) {
        let now = self.now();
        debug_assert!(self.links[l].tx.is_none());
        let next = self.with_qdisc(l, |q, ctx| q.dequeue(ctx));
        let queued = self.after_qdisc(l).packets;
        let Some(p) = next else {
            let link = &mut self.links[l];
            link.idle_since.get_or_insert(now);
            return;
        };
        self.transmit(l, p, queued);
    }

    /// Start serialising packet `p`, just dequeued from link `l` (`queued` packets left).
    /// One borrow of the link throughout (no re-indexing per field group).
    #[inline]
    fn transmit(&mut self, l: usize, p: PacketId, queued: usize) {
        let now = self.now();
        let link = &mut self.links[l];
        let pk = &self.packets[p];
        link.idle_since = None;
        link.sent_bytes += pk.size as u64;
        let sojourn = now - pk.enqueued;
        if pk.enqueued >= link.stats.window_start {
            link.stats.dequeued += 1;
            link.stats.sojourn.record(sojourn);
        }
        link.stats.last_sojourn = sojourn;
        link.tx = Some((p, now));
        link.tx_size = pk.size;
        let done = now + tx_time(pk.size, link.rate_bps);
        link.tx_end = done;
        // On a plain FIFO link nobody watches the packet goes in flight now (every packet
        // of such links does, so their arrivals keep the order of their transmissions),
        // and with nothing else queued there is no event at `done` unless a packet arrives
        // before it (`link_enqueue`).
        link.tx_in_flight =
            !link.watched && matches!(link.qdisc.inner, crate::qdisc::AnyQdisc::Fifo(_));
        if link.tx_in_flight && queued == 0 {
            link.tx_lazy = Some(self.events.reserve());
        } else {
            self.events
                .schedule(done, Event::LinkTxDone { link: l as u32 });
        }
        if link.tx_in_flight {
            if let Some(arrive) = link.put_in_flight(done, p) {
                self.events
                    .schedule(arrive, Event::LinkArrival { link: l as u32 });
            }
        }
        if link.pcap.is_some() {
            self.write_pcap(l, p);
        }
    }

    /// Write packet `p` to link `l`'s capture, now. Out of line and cold: captures are
    /// rare and the write is large.
    #[cold]
    #[inline(never)]
    fn write_pcap(&mut self, l: usize, p: PacketId) {
        let now = self.now();
        if let Some(w) = &mut self.links[l].pcap {
            // An I/O error here must not abort the run; it is reported at the end.
            let _ = w.write(now, &self.packets[p]);
        }
    }

    pub(super) fn on_tx_done(&mut self, l: usize) {
        let now = self.now();
        let link = &mut self.links[l];
        let (p, started) = link.tx.take().expect("tx done without a packet");
        link.stats.busy_ns += now - started.max(link.stats.window_start);
        link.stats.sent(now, link.tx_size);
        self.hops += 1;
        if !link.tx_in_flight {
            if let Some(arrive) = link.put_in_flight(now, p) {
                self.events
                    .schedule(arrive, Event::LinkArrival { link: l as u32 });
            }
        }
        self.start_tx(l);
    }

    pub(super) fn on_link_arrival(&mut self, l: usize) {
        self.settle_tx(l, self.events.key());
        let link = &mut self.links[l];
        let (_, p) = link
            .in_flight
            .pop_front()
            .expect("arrival without a packet");
        if let Some(&(t, _)) = link.in_flight.front() {
            self.events
                .schedule(t, Event::LinkArrival { link: l as u32 });
        }
        let to = link.to;
        self.at_node(to, p);
    }

    pub(super) fn on_rate_change(&mut self, l: usize) {
        let now = self.now();
        let link = &mut self.links[l];
        let (rate, next) = link.rate_change.apply(now);
        if let Some(r) = rate {
            link.rate_bps = r;
        }
        if let Some(t) = next {
            self.events
                .schedule(t, Event::LinkRateChange { link: l as u32 });
        }
    }

    /// Whether packet `p`, in link `l`'s queue, arrived there in the measurement window
    /// (so its fate is counted with its arrival).
    #[inline]
    fn in_window(&self, l: usize, p: PacketId) -> bool {
        self.packets[p].enqueued >= self.links[l].stats.window_start
    }

    /// The one place a packet leaves the network before its destination: count it for
    /// its link (if it was at one) and its flow, log it, free it. Counts are kept only
    /// for packets whose arrival (link) or creation (flow) is in the measurement window,
    /// so drops stay a part of what was offered or sent.
    pub(super) fn discard(&mut self, p: PacketId, cause: Cause, link: Option<usize>, at: Stage) {
        if let Some(l) = link {
            if self.in_window(l, p) {
                let s = &mut self.links[l].stats;
                match cause {
                    Cause::Qdisc(r) => s.count_qdisc_drop(r, at),
                    Cause::Random => s.drops_random += 1,
                    Cause::Outage => s.drops_outage += 1,
                    Cause::NoRoute | Cause::Mark | Cause::TxqOverflow => {}
                }
            }
            self.log_drop(l as u32, p, cause, at);
        }
        let pk = &self.packets[p];
        let slot = pk.flow_slot;
        let f = &mut self.flows[slot as usize];
        if !pk.reverse && pk.created >= self.warmup {
            f.stats.packets_dropped += 1;
        }
        f.in_net -= 1;
        if f.closing && f.in_net == 0 {
            self.to_release.push(slot);
        }
        self.dropped += 1;
        self.packets.free(p);
    }
}
