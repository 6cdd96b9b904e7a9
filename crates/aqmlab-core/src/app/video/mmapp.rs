//! "Five rate media scaling", the responsive multimedia application of Chung and
//! Claypool's ns-2 `Application/MmApp` (J. Chung, M. Claypool, *NS by Example*, "Add
//! New Application and Agent", WPI, http://nile.wpi.edu/NS/new_app_agent.html; code
//! `mm-app.cc`, Jae Chung, 1999/2001: `MmApp::account_recv_pkt`, `adjust_scale`,
//! `send_ack_pkt`, `set_scale`), used as the rate control of the video app's
//! `control = "mmapp"`.
//!
//! The receiver does the congestion control:
//! - on every data packet it updates its RTT estimate, `rtt ← 0.9·rtt + 0.1·2·owd`
//!   (owd = arrival − send time; the first packet sets `rtt = 2·owd`), counts it
//!   received and counts the gap in sequence numbers before it as lost;
//! - the first packet, and after that a timer every `rtt`, trigger an adjustment: if any
//!   packet arrived since the last one, the scale is halved (integer division) when any
//!   was lost, else raised by one up to the top scale; the counts restart and the scale
//!   goes back to the sender in a 40 B ACK, which the sender adopts.
//! - The sender starts at scale 0 (its lowest rate).
//!
//! Where we differ: `mm-app.cc` starts its ACK timer only when the packet with sequence
//! number 0 arrives (if that one is lost the stream never scales up); here the first
//! packet that arrives starts it. Its five scales are five arbitrary constant rates;
//! the video app maps scale `s` to the media-scaling level `top − s` of
//! `scaling.rs` (top = every frame, 0 = I frames only), as the paper's MPEG_APP
//! "highest frame rate" is every frame.

use crate::sim::time::Nanos;

/// The receiver's side of the control: RTT estimate, loss count and scale decision.
#[derive(Clone, Debug)]
pub struct MmReceiver {
    /// Highest scale.
    pub top: usize,
    /// The scale last decided (and sent back).
    pub scale: usize,
    /// RTT estimate, ns (None before the first packet).
    pub rtt: Option<f64>,
    last_seq: Option<u64>,
    recv: u64,
    lost: u64,
}

impl MmReceiver {
    pub fn new(top: usize) -> Self {
        MmReceiver {
            top,
            scale: 0,
            rtt: None,
            last_seq: None,
            recv: 0,
            lost: 0,
        }
    }

    /// A data packet `seq`, sent at `sent_at`, arrived at `now`. True for the first
    /// packet (the caller then adjusts and acknowledges at once).
    pub fn on_data(&mut self, now: Nanos, seq: u64, sent_at: Nanos) -> bool {
        let sample = 2.0 * now.saturating_sub(sent_at) as f64;
        let first = self.rtt.is_none();
        self.rtt = Some(match self.rtt {
            None => sample,
            Some(r) => 0.9 * r + 0.1 * sample,
        });
        self.recv += 1;
        if let Some(last) = self.last_seq {
            self.lost += seq.saturating_sub(last + 1);
        }
        self.last_seq = Some(self.last_seq.map_or(seq, |l| l.max(seq)));
        first
    }

    /// `adjust_scale`: halve on loss, else one up (to `top`), if anything arrived.
    pub fn adjust(&mut self) -> usize {
        if self.recv > 0 {
            self.scale = if self.lost > 0 {
                self.scale / 2
            } else {
                (self.scale + 1).min(self.top)
            };
        }
        self.recv = 0;
        self.lost = 0;
        self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;

    /// A hand trace: top 3. First packet (owd 10 ms): rtt 20 ms, adjust → 1. Packets 1,
    /// 2 with owd 20 ms: rtt 0.9·20 + 0.1·40 = 22, then 0.9·22 + 0.1·40 = 23.8 ms; no
    /// loss → 2; again → 3; again stays 3 (top). Then packet 8 after 4 (5, 6, 7 lost)
    /// → 3/2 = 1; a period without packets keeps 1; a lossless one → 2.
    #[test]
    fn scale_trace_by_hand() {
        let ms = NS_PER_MS;
        let mut r = MmReceiver::new(3);
        assert!(r.on_data(10 * ms, 0, 0));
        assert_eq!(r.rtt, Some(20.0 * ms as f64));
        assert_eq!(r.adjust(), 1);
        assert!(!r.on_data(120 * ms, 1, 100 * ms));
        assert!(!r.on_data(140 * ms, 2, 120 * ms));
        assert!((r.rtt.unwrap() - 23.8 * ms as f64).abs() < 1e-6);
        assert_eq!(r.adjust(), 2);
        r.on_data(150 * ms, 3, 140 * ms);
        assert_eq!(r.adjust(), 3);
        r.on_data(160 * ms, 4, 150 * ms);
        assert_eq!(r.adjust(), 3);
        r.on_data(200 * ms, 8, 190 * ms); // 5, 6, 7 lost
        assert_eq!(r.adjust(), 1);
        assert_eq!(r.adjust(), 1); // nothing arrived: no change
        r.on_data(300 * ms, 9, 290 * ms);
        assert_eq!(r.adjust(), 2);
    }
}
