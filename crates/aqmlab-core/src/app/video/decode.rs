//! Frame reassembly and decodability (the MPEG-1 dependencies of Chung & Claypool's
//! Rb-RIO paper, Section 2, and the decodable-frame
//! rate of myEvalvid: Ke, Shieh, Hwang, Ziviani, JISE 24(2), 2008).
//!
//! A frame is **received** when at least `ceil(threshold · fragments)` of its packets
//! arrived in time (threshold 1: all of them). It is **decodable** when:
//! - I: received;
//! - P: received and the previous reference (I/P) is decodable — the chain breaks until
//!   the next I;
//! - B: received and both its references are decodable. In **display order** (the
//!   synthetic GOP sends `IBBPBBPBB` as shown) those are the previous and the next I/P;
//!   in **decode order** (bitstream order, as Evalvid traces list frames: `I P B B P B
//!   B`) the two newest I/P before it. Where only one reference exists (the stream's
//!   first B frames in decode order; B frames after the last sent reference in display
//!   order, when the stream stops) that one must be decodable.
//!
//! Frames the sender skipped (media scaling) are neither received nor decodable.

use super::frame::FrameType;
use crate::sim::time::Nanos;

/// What the receiver knows about one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameRec {
    pub ty: FrameType,
    /// When the frame was due (sent, or skipped by the sender).
    pub sent_at: Nanos,
    /// False if media scaling skipped it.
    pub sent: bool,
    pub fragments: u16,
    /// Fragments that arrived in time.
    pub got: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Display,
    Decode,
}

/// Received: enough fragments arrived (`threshold` in (0, 1]).
pub fn received(f: &FrameRec, threshold: f64) -> bool {
    let need = (threshold * f.fragments as f64 - 1e-9).ceil().max(1.0) as u16;
    f.sent && f.got >= need
}

/// Decodability of each frame, in `out` (cleared first).
pub fn decodable(frames: &[FrameRec], threshold: f64, order: Order, out: &mut Vec<bool>) {
    out.clear();
    out.resize(frames.len(), false);
    // References first: I alone, P on the previous reference.
    let mut prev_ref: Option<bool> = None;
    for (i, f) in frames.iter().enumerate() {
        let ok = received(f, threshold);
        match f.ty {
            FrameType::I => out[i] = ok,
            FrameType::P => out[i] = ok && prev_ref == Some(true),
            FrameType::B => continue,
        }
        prev_ref = Some(out[i]);
    }
    match order {
        Order::Display => {
            // Next reference's decodability, by a backward pass.
            let mut next_ref: Option<bool> = None;
            let mut next = vec![None; frames.len()];
            for i in (0..frames.len()).rev() {
                next[i] = next_ref;
                if frames[i].ty.is_reference() {
                    next_ref = Some(out[i]);
                }
            }
            let mut prev: Option<bool> = None;
            for (i, f) in frames.iter().enumerate() {
                if f.ty.is_reference() {
                    prev = Some(out[i]);
                } else {
                    let refs_ok = prev == Some(true) && next[i] != Some(false);
                    out[i] = received(f, threshold) && refs_ok;
                }
            }
        }
        Order::Decode => {
            let (mut newest, mut older): (Option<bool>, Option<bool>) = (None, None);
            for (i, f) in frames.iter().enumerate() {
                if f.ty.is_reference() {
                    older = newest;
                    newest = Some(out[i]);
                } else {
                    let refs_ok = newest == Some(true) && older != Some(false);
                    out[i] = received(f, threshold) && refs_ok;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FrameType::*;

    fn gop(types: &str, lost: &[usize]) -> Vec<FrameRec> {
        types
            .chars()
            .enumerate()
            .map(|(i, c)| FrameRec {
                ty: FrameType::from_letter(c).unwrap(),
                sent_at: i as Nanos,
                sent: true,
                fragments: 4,
                got: if lost.contains(&i) { 3 } else { 4 },
            })
            .collect()
    }

    fn show(d: &[bool]) -> String {
        d.iter().map(|&b| if b { '1' } else { '0' }).collect()
    }

    /// Two GOPs `IBBPBBPBB IBBPBBPBB` + a closing I, display order:
    /// - frame 3 (first P) loses a packet: P3 and P6 undecodable (chain), B1 B2 (next
    ///   ref P3 bad), B4 B5, B7 B8 (prev ref P6 bad) too; only I0 survives in GOP 1;
    /// - frame 14 (B) loses a packet: only B14 is lost;
    /// - I9 and everything that needs it is fine; B16 B17 sit between P15 and I18.
    #[test]
    fn hand_worked_display_order() {
        let f = gop("IBBPBBPBBIBBPBBPBBI", &[3, 14]);
        let mut d = Vec::new();
        decodable(&f, 1.0, Order::Display, &mut d);
        assert_eq!(show(&d), "1000000001111101111");
        // A lost I frame: the whole GOP goes, and so do the B frames before it (their
        // next reference), here B7 and B8.
        let f = gop("IBBPBBPBBIBBPBBPBBI", &[9]);
        decodable(&f, 1.0, Order::Display, &mut d);
        assert_eq!(show(&d), "1111111000000000001");
        // Threshold 0.75: 3 of 4 fragments suffice, nothing is lost.
        decodable(&f, 0.75, Order::Display, &mut d);
        assert!(d.iter().all(|&x| x));
    }

    /// Decode order `I P B B P B B I`: B needs the two newest references before it.
    /// Losing P1 breaks P1, B2, B3 (refs I0, P1), P4, B5, B6; I7 restarts.
    /// Losing only P4 breaks P4, B5, B6, and B2, B3 stay (refs I0, P1).
    #[test]
    fn hand_worked_decode_order() {
        let mut d = Vec::new();
        decodable(&gop("IPBBPBBI", &[1]), 1.0, Order::Decode, &mut d);
        assert_eq!(show(&d), "10000001");
        decodable(&gop("IPBBPBBI", &[4]), 1.0, Order::Decode, &mut d);
        assert_eq!(show(&d), "11110001");
    }

    #[test]
    fn skipped_frames_are_neither_received_nor_references() {
        let mut f = gop("IBBPBBPBBI", &[]);
        for i in [1, 2, 4, 5, 7, 8] {
            f[i].sent = false; // media scaling dropped the B frames
        }
        let mut d = Vec::new();
        decodable(&f, 1.0, Order::Display, &mut d);
        assert_eq!(show(&d), "1001001001");
        f[6].sent = false; // and the last P
        decodable(&f, 1.0, Order::Display, &mut d);
        assert_eq!(show(&d), "1001000001");
        assert!(!received(&f[6], 1.0));
        assert_eq!(f[0].ty, I);
    }
}
