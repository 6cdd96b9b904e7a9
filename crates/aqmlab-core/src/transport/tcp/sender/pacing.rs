//! Pacing (Linux's earliest-departure-time model; with `linux_pacing`, Linux's skb
//! steps and TSO autosizing, `linux_pace`) and rate-based control: the
//! delivery-rate sample handed to a controller with `Caps::rate_samples` (Linux
//! `tcp_cong_control` → `cong_control`), and the pacing rate (the controller's own, or
//! Linux `tcp_update_pacing_rate`).

use super::TcpSender;
use crate::sim::time::{Nanos, NS_PER_S};
use crate::transport::tcp::cc::{CaState, Pacing, RateSample};

/// The largest skb TSO autosizing builds (Linux `sk_gso_max_size`, 64 KB on a device
/// without a lower limit; `linux_tso`).
const GSO_MAX_BYTES: u64 = 65_536;

impl TcpSender {
    /// Linux `__tcp_transmit_skb` + `tcp_update_skb_after_send` (net/ipv4/tcp_output.c):
    /// an skb leaves at max(next_send, now); the next one `len` payload bytes (the
    /// headerless skb's `skb->len`) at the pacing rate later, less a credit of up to half
    /// of that for an skb that left late (`credit = wstamp − prior_wstamp`); no step
    /// until `data_segs_out` (counted in `emit`, before it) reaches 10, so the first 9
    /// data segments are not paced ("Original sch_fq does not pace first 10 MSS").
    /// With `linux_tso` an skb
    /// of new data holds up to `tso_segs` segments (`burst_left` more may follow this one
    /// at once); a retransmission is an skb of its own (`tcp_xmit_retransmit_queue` sends
    /// the lost skbs one by one; the scoreboard's are single segments).
    /// Step the departure time after sending a segment of `payload` bytes (`wire` on the
    /// wire), for a flow that `paces`: count it in `data_segs_out` with
    /// `linux_pacing`, then, once there is a rate, Linux's step (`linux_pace`) or the
    /// wire size at the rate.
    #[inline(never)] // off the path of flows that do not pace
    pub(super) fn pace(&mut self, now: Nanos, payload: u64, wire: u32, retrans: bool) {
        if self.cfg.linux_pacing {
            self.data_segs_out += 1;
        }
        if self.pacing_rate > 0 {
            if self.cfg.linux_pacing {
                self.linux_pace(now, payload, retrans);
            } else {
                let gap = wire as u128 * NS_PER_S as u128 / self.pacing_rate as u128;
                self.next_send = self.next_send.max(now) + gap as Nanos;
            }
        }
    }

    fn linux_pace(&mut self, now: Nanos, payload: u64, retrans: bool) {
        if self.burst_left > 0 && !retrans {
            self.burst_left -= 1;
            self.burst_bytes += payload;
        } else {
            let prior = self.next_send;
            self.burst_wstamp = prior.max(now);
            self.burst_credit = self.burst_wstamp - prior;
            self.burst_bytes = payload;
            self.burst_left = if self.cfg.linux_tso && !retrans {
                self.tso_segs() - 1
            } else {
                0
            };
        }
        self.next_send = self.burst_wstamp;
        if self.data_segs_out >= 10 {
            let len =
                (self.burst_bytes as u128 * NS_PER_S as u128 / self.pacing_rate as u128) as Nanos;
            self.next_send += len - (len / 2).min(self.burst_credit);
        }
    }

    /// Segments per skb, Linux `tcp_tso_segs` → `tcp_tso_autosize` (tcp_output.c): the
    /// pacing rate's 1 ms (`sk_pacing_shift` 10; at most `GSO_MAX_BYTES`) in whole
    /// segments, at least the controller's `min_tso_segs` (Linux `tcp_min_tso_segs` = 2;
    /// BBR: 1 below 1.2 Mbit/s). (`tcp_tso_rtt_log` = 9 adds 64 KB >> (min_rtt_us >> 9):
    /// nothing for a min RTT above 16 ms.)
    fn tso_segs(&self) -> u64 {
        let mtu = self.w.mss + self.cfg.header_bytes as u64;
        if let Some(n) = self.cc.tso_segs(self.pacing_rate, mtu) {
            return n;
        }
        let min = self.cc.min_tso_segs(self.pacing_rate);
        ((self.pacing_rate >> 10).min(GSO_MAX_BYTES) / self.w.mss).max(min)
    }

    /// A rate-based controller (BBR) on every ACK, after loss detection (Linux
    /// `tcp_cong_control` → `cong_control`): finish the delivery-rate sample, let the
    /// controller set cwnd and the pacing rate.
    pub(super) fn controller_ack(&mut self, now: Nanos, prior_in_flight: u64, losses: u64) {
        let sample = self.rate.finish(now, self.rtt.min_rtt);
        let in_flight = self.pipe();
        let rs = RateSample {
            now,
            delivered: sample.delivered,
            interval: sample.interval,
            prior_delivered: sample.prior_delivered,
            is_app_limited: sample.is_app_limited,
            acked_sacked: sample.acked_sacked,
            losses,
            prior_in_flight,
            in_flight,
            rtt: self.ca_rtt_sample(now),
            tp_delivered: self.rate.delivered,
            tp_lost: self.lost_total,
            delivered_mstamp: self.rate.delivered_mstamp,
            ca_state: if self.in_recovery {
                CaState::Recovery
            } else if self.in_loss {
                CaState::Loss
            } else {
                CaState::Open
            },
            edt: self.next_send.max(now),
        };
        if self.cc.on_rate_sample(&mut self.w, &rs) {
            // PROBE_RTT: its low-rate samples must not lower the estimate.
            self.rate.mark_app_limited(in_flight);
        }
    }

    /// The RTT sample of this ACK for the controller. With `bbr_ca_rtt`, Linux
    /// `tcp_clean_rtx_queue` + `tcp_ack_update_rtt` (`ca_rtt_us`): `rs->rtt_us` is the RTT
    /// of the latest segment this ACK SACKs, else of the latest it cumulatively acks if
    /// none of them was retransmitted, else the timestamp echo's; without, the echo's.
    fn ca_rtt_sample(&self, now: Nanos) -> Option<Nanos> {
        if !self.ca_rtt {
            return self.ack_rtt;
        }
        let acked = self.ca_ack_ts.filter(|_| !self.retrans_acked);
        self.ca_sack_ts.or(acked).map(|t| now - t).or(self.ack_rtt)
    }

    /// The pacing rate after an ACK or the handshake: the controller's own
    /// (`Pacing::Own`), else Linux `tcp_update_pacing_rate` when pacing.
    #[inline]
    pub(super) fn set_pacing_rate(&mut self) {
        if self.caps.pacing == Pacing::Own {
            self.pacing_rate = self.cc.pacing_rate();
        } else if self.paces {
            self.update_pacing_rate();
        }
    }

    /// Linux `tcp_update_pacing_rate` for controllers without their own rate:
    /// max(cwnd, outstanding) / SRTT × 200 % while cwnd < ssthresh/2, else × 120 %
    /// (the controller's `Caps::pacing_ca_percent`; Prague: × 100 %, and with
    /// `Caps::pacing_mtu` cwnd counted in packets of MSS + header bytes, the outstanding
    /// bytes ignored, as `prague_update_pacing_rate`).
    pub(super) fn update_pacing_rate(&mut self) {
        if !self.rtt.has_sample || self.rtt.srtt == 0 {
            return;
        }
        let ratio: u128 = if self.w.cwnd < self.w.ssthresh / 2 {
            200
        } else {
            self.caps.pacing_ca_percent as u128
        };
        let wnd = if self.caps.pacing_mtu {
            let mtu = self.w.mss + self.cfg.header_bytes as u64;
            self.cc.send_window(&self.w) as u128 * mtu as u128 / self.w.mss as u128
        } else {
            self.cc
                .send_window(&self.w)
                .max(self.snd_nxt - self.snd_una) as u128
        };
        self.pacing_rate = (wnd * ratio * NS_PER_S as u128 / (100 * self.rtt.srtt as u128)) as u64;
    }
}
