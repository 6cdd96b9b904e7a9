//! Pacing (Linux's earliest-departure-time model) and rate-based control: the
//! delivery-rate sample handed to a controller with `Caps::rate_samples` (Linux
//! `tcp_cong_control` → `cong_control`), and the pacing rate (the controller's own, or
//! Linux `tcp_update_pacing_rate`).

use super::TcpSender;
use crate::sim::time::{Nanos, NS_PER_S};
use crate::transport::tcp::cc::{CaState, Pacing, RateSample};

impl TcpSender {
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
            rtt: self.ack_rtt,
            tp_delivered: self.rate.delivered,
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

    /// The pacing rate after an ACK or the handshake: the controller's own
    /// (`Pacing::Own`), else Linux `tcp_update_pacing_rate` when pacing.
    #[inline]
    pub(super) fn set_pacing_rate(&mut self) {
        if self.caps.pacing == Pacing::Own {
            self.pacing_rate = self.cc.pacing_rate();
        } else if self.cfg.pacing {
            self.update_pacing_rate();
        }
    }

    /// Linux `tcp_update_pacing_rate` for controllers without their own rate:
    /// max(cwnd, outstanding) / SRTT × 200 % while cwnd < ssthresh/2, else × 120 %
    /// (the controller's `Caps::pacing_ca_percent`; Prague: × 100 %).
    pub(super) fn update_pacing_rate(&mut self) {
        if !self.rtt.has_sample || self.rtt.srtt == 0 {
            return;
        }
        let ratio: u128 = if self.w.cwnd < self.w.ssthresh / 2 {
            200
        } else {
            self.caps.pacing_ca_percent as u128
        };
        let wnd = self
            .cc
            .send_window(&self.w)
            .max(self.snd_nxt - self.snd_una) as u128;
        self.pacing_rate = (wnd * ratio * NS_PER_S as u128 / (100 * self.rtt.srtt as u128)) as u64;
    }
}
