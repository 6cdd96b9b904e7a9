//! The window outside loss recovery: restart after idle (RFC 5681 §4.1, Linux
//! `tcp_cwnd_restart`) and congestion-window validation (Linux `tcp_cwnd_validate`,
//! `tcp_cwnd_application_limited`). See `sender/mod.rs` for when the profiles use them.

use super::TcpSender;
use crate::sim::time::Nanos;
use crate::transport::tcp::IdleRestart;

impl TcpSender {
    /// RFC 5681 §4.1 / Linux `tcp_cwnd_restart`: new data after more than an RTO
    /// without sending any, with nothing in flight.
    pub(super) fn restart_after_idle(&mut self, now: Nanos) {
        let Some(last) = self.last_send else {
            return;
        };
        if self.caps.controls_cwnd {
            return; // Linux skips it for `cong_control` (BBR)
        }
        let idle = now - last;
        let rto = self.rtt.rto();
        if idle <= rto {
            return;
        }
        let restart = (self.cfg.iw as u64 * self.w.mss).min(self.w.cwnd);
        match self.cfg.idle_restart {
            IdleRestart::Off => {}
            IdleRestart::Rfc5681 => self.w.cwnd = restart,
            IdleRestart::Linux => {
                self.w.ssthresh = self.current_ssthresh();
                let mut cwnd = self.w.cwnd;
                let mut left = idle - rto;
                while left > 0 && cwnd > restart {
                    cwnd /= 2;
                    left = left.saturating_sub(rto);
                }
                self.w.cwnd = cwnd.max(restart);
                self.cwnd_stamp = now;
                self.cwnd_used = 0;
            }
        }
    }

    /// Linux `tcp_current_ssthresh` outside a window reduction: max(ssthresh, ¾·cwnd).
    pub(super) fn current_ssthresh(&self) -> u64 {
        if self.in_recovery {
            self.w.ssthresh
        } else {
            self.w.ssthresh.max(self.w.cwnd / 2 + self.w.cwnd / 4)
        }
    }

    /// Linux `tcp_is_cwnd_limited`: cwnd-limited in this window of data, or in slow
    /// start with cwnd below twice the most bytes outstanding.
    #[inline]
    pub(super) fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_out)
    }

    /// Linux `tcp_cwnd_validate` after a send attempt that sent data or hit cwnd.
    pub(super) fn cwnd_validate(&mut self, now: Nanos, limited: bool) {
        let out = self.snd_nxt - self.snd_una;
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && out > self.max_out)
        {
            self.cwnd_limited = limited;
            self.max_out = out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        if self.is_cwnd_limited() {
            self.cwnd_used = 0;
            self.cwnd_stamp = now;
        } else {
            self.cwnd_used = self.cwnd_used.max(out);
            if now - self.cwnd_stamp >= self.rtt.rto() {
                self.cwnd_application_limited(now);
            }
        }
    }

    /// Linux `tcp_cwnd_application_limited` (RFC 2861's decay): after an RTO of
    /// application-limited sending, cwnd moves halfway down to what was used.
    pub(super) fn cwnd_application_limited(&mut self, now: Nanos) {
        let open = !self.in_recovery && self.recover.is_none_or(|r| self.snd_una >= r);
        if open && !self.caps.controls_cwnd {
            let used = self.cwnd_used.max(self.cfg.iw as u64 * self.w.mss);
            if used < self.w.cwnd {
                self.w.ssthresh = self.current_ssthresh();
                self.w.cwnd = (self.w.cwnd + used) / 2;
            }
            self.cwnd_used = 0;
        }
        self.cwnd_stamp = now;
    }
}
