//! The glue between a link's sans-IO access model (`net::access`) and the event queue:
//! run the model with its feed (the link's qdisc) for this instant, put its departures
//! on the link's propagation pipe, and keep one pending timer event for it.
use super::*;

impl Simulation {
    /// Run link `l`'s model: `timer` for a due timer, else after packets entered its
    /// feed. Out of line: links without an access model (most) keep
    /// their enqueue path small.
    #[inline(never)]
    pub(super) fn access_step(&mut self, l: usize, timer: bool) {
        let now = self.now();
        let monitor = self.links[l].monitor.map(|m| self.monitored(m as usize));
        let link = &mut self.links[l];
        let Some(model) = link.access.as_mut() else {
            return;
        };
        if !timer && model.waits_for_timer(now) {
            return;
        }
        let mut ctx = QdiscCtx {
            monitor,
            now,
            packets: &mut self.packets,
            events: &mut self.qevents,
            rng: &mut link.qdisc_rng,
            link_rate_bps: model.feed_rate_bps(),
            mtu: link.mtu,
        };
        if timer {
            model.on_timer(&mut link.qdisc, &mut ctx, &mut link.stats, link.rate_bps);
        } else {
            model.pull(&mut link.qdisc, &mut ctx, &mut link.stats, link.rate_bps);
        }
        // An untouched feed needs no `after_qdisc`: its drops and marks were applied, its
        // length recorded and its timer armed when it last changed. (Recording the same
        // length later adds the same area to its time average, and the sample intervals
        // close with the same values at the next call, which comes before any change.)
        let touched = model.touched_feed();
        self.launch(l);
        if touched {
            self.after_qdisc(l);
        }
        self.arm_access_timer(l);
    }

    /// Put the model's departures on the link: count them, write pcap, propagate; discard
    /// the packets its own full queues dropped.
    fn launch(&mut self, l: usize) {
        while let Some(p) = self.links[l].access.as_mut().and_then(|m| m.pop_drop()) {
            self.discard(p, Cause::TxqOverflow, Some(l), Stage::Enqueue);
        }
        let link = &mut self.links[l];
        let Some(model) = link.access.as_mut() else {
            return;
        };
        for (done, p) in model.departures() {
            let pk = &self.packets[p];
            link.stats.sent(done, pk.size);
            link.sent_bytes += pk.size as u64;
            link.stats.busy_ns += tx_time(pk.size, link.rate_bps);
            if let Some(w) = &mut link.pcap {
                // An I/O error here must not abort the run; it is reported at the end.
                let _ = w.write(done, pk);
            }
            self.hops += 1;
            let arrive = crate::net::jitter::arrival(&mut link.jitter, done, link.delay);
            link.in_flight.push_back((arrive, p));
            if link.in_flight.len() == 1 {
                self.events
                    .schedule(arrive, Event::LinkArrival { link: l as u32 });
            }
        }
    }

    fn arm_access_timer(&mut self, l: usize) {
        let link = &mut self.links[l];
        let Some(t) = link.access.as_ref().and_then(|m| m.next_timer()) else {
            return;
        };
        if link.access_timer_at != Some(t) {
            link.access_timer_at = Some(t);
            self.events.schedule(
                t.max(self.events.now()),
                Event::AccessTimer { link: l as u32 },
            );
        }
    }

    pub(super) fn on_access_timer(&mut self, l: usize) {
        if self.links[l].access_timer_at != Some(self.now()) {
            return; // superseded
        }
        self.links[l].access_timer_at = None;
        self.access_step(l, true);
    }
}
