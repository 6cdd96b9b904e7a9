//! AccECN (RFC 9768) end to end on one connection: the SYN/SYN-ACK negotiation matrix,
//! and the ACE counter across many wraps, also when ACKs are thinned so that one ACK
//! covers more than 7 packets (the safe delta of Linux `__tcp_accecn_process`).
//!
//! The path is built by hand (`common::marking_path`, as in `tcp_ecn.rs`): a sans-IO
//! sender and receiver joined by a 10 Mbit/s bottleneck with a 100-packet FIFO that sets CE on every ECT packet arriving to
//! at least `k` queued packets (a step AQM), 20 ms each way; the ACK path keeps only
//! every `ack_every`-th ACK (and the SYN-ACK and the final ACK).

mod common;
use aqmlab_core::net::packet::{tcp_flags as F, Ecn};
use aqmlab_core::sim::time::{NS_PER_MS, NS_PER_S};
use aqmlab_core::transport::tcp::accecn::{Feedback, CEP_INIT};
use aqmlab_core::transport::tcp::cc::CcSpec;
use aqmlab_core::transport::tcp::receiver::TcpReceiver;
use aqmlab_core::transport::tcp::sender::TcpSender;
use aqmlab_core::transport::tcp::{EcnSupport, TcpConfig};
use common::marking_path::MarkingPath;

struct Run {
    snd: TcpSender,
    rcv: TcpReceiver,
    marks: u64,
    /// ECN codepoints of the data segments sent (first transmissions).
    ect0: u64,
    ect1: u64,
    not_ect: u64,
    /// ACKs carrying ECE, CWR or AE.
    ace_acks: u64,
    retransmits: u64,
}

/// The FIFO's limit, packets: beyond it arrivals are dropped.
const LIMIT: usize = 100;

fn transfer(cfg: TcpConfig, segs: u64, k: usize, ack_every: usize) -> Run {
    let total = segs * cfg.mss as u64;
    let mut p = MarkingPath::new(cfg, total, 10_000_000, 20 * NS_PER_MS, k, LIMIT);
    let (mut ect0, mut ect1, mut not_ect, mut ace_acks, mut acks) = (0, 0, 0, 0, 0usize);
    let mut on_data = |s: &aqmlab_core::transport::tcp::Segment| {
        if s.tcp.payload > 0 {
            match s.ecn {
                Ecn::Ect0 => ect0 += 1,
                Ecn::Ect1 => ect1 += 1,
                _ => not_ect += 1,
            }
        }
    };
    let mut keep_ack = |s: &aqmlab_core::transport::tcp::Segment| {
        if s.tcp.flags & (F::ECE | F::CWR) != 0 || s.tcp.ae {
            ace_acks += 1;
        }
        let keep = s.has(F::SYN) || s.tcp.ack >= total || acks.is_multiple_of(ack_every);
        acks += 1;
        keep
    };
    while p.snd.snd_una < total && p.now < 600 * NS_PER_S {
        if !p.step(u64::MAX, &mut on_data, &mut keep_ack) {
            break;
        }
    }
    assert_eq!(p.snd.snd_una, total, "the transfer completes");
    Run {
        marks: p.marks,
        ect0,
        ect1,
        not_ect,
        ace_acks,
        retransmits: p.sst.retransmits,
        snd: p.snd,
        rcv: p.rcv,
    }
}

fn cfg(cc: &str, offer: EcnSupport, accept: EcnSupport) -> TcpConfig {
    TcpConfig {
        cc: CcSpec::named(cc).unwrap(),
        ecn: offer != EcnSupport::Off,
        accecn: offer == EcnSupport::AccEcn,
        receiver_ecn: Some(accept),
        l4s: cc == "prague",
        ..TcpConfig::default()
    }
}

/// RFC 9768 §3.1.1: AccECN both ways → AccECN; an AccECN client with a classic server,
/// and a classic client with an AccECN server → RFC 3168; a server without ECN → none.
/// Each outcome shows on the wire: AccECN data is ECT(0) (Reno) and the marks come
/// back counted exactly in the ACE field (s.cep = r.cep after the transfer); RFC 3168
/// data is ECT(0) and the receiver latches ECE; without ECN data is not-ECT and never
/// marked.
#[test]
fn negotiation_matrix() {
    use EcnSupport::*;
    let cases = [
        (AccEcn, AccEcn, Feedback::AccEcn),
        (AccEcn, Classic, Feedback::Classic),
        (AccEcn, Off, Feedback::None),
        (Classic, AccEcn, Feedback::Classic),
    ];
    for (offer, accept, want) in cases {
        let r = transfer(cfg("reno", offer, accept), 2000, 8, 1);
        eprintln!(
            "{offer:?} -> {accept:?}: {:?}, marks {}, ECT(0) {}, not-ECT {}, s.cep {}, r.cep {}",
            r.snd.feedback, r.marks, r.ect0, r.not_ect, r.snd.s_cep, r.rcv.r_cep
        );
        assert_eq!(r.snd.feedback, want, "{offer:?} -> {accept:?}");
        assert_eq!(r.rcv.feedback, want, "{offer:?} -> {accept:?}");
        match want {
            Feedback::None => {
                assert_eq!((r.marks, r.ect0, r.ace_acks), (0, 0, 0));
                assert!(r.retransmits > 0, "losses replace the marks");
            }
            Feedback::Classic => {
                assert!(r.marks > 0 && r.ect0 > 0 && r.ace_acks > 0);
                assert_eq!(r.rcv.r_cep, CEP_INIT, "no ACE counting");
            }
            Feedback::AccEcn => {
                assert!(r.marks > 8 && r.ect0 > 0);
                assert_eq!(r.rcv.r_cep - CEP_INIT, r.marks as u32);
                assert_eq!(r.snd.s_cep, r.rcv.r_cep, "every mark fed back");
            }
        }
    }
}

/// Prague offers AccECN only: with a classic receiver it refuses RFC 3168
/// (`TCP_CONG_NO_FALLBACK_RFC3168`) and sends not-ECT; with an AccECN one, ECT(1).
#[test]
fn prague_refuses_classic_feedback() {
    let r = transfer(
        cfg("prague", EcnSupport::AccEcn, EcnSupport::Classic),
        2000,
        8,
        1,
    );
    assert_eq!((r.snd.feedback, r.ect1, r.marks), (Feedback::None, 0, 0));
    let r = transfer(
        cfg("prague", EcnSupport::AccEcn, EcnSupport::AccEcn),
        2000,
        8,
        1,
    );
    assert_eq!(r.snd.feedback, Feedback::AccEcn);
    assert!(r.ect1 > 0 && r.ect0 == 0 && r.marks > 0);
    assert_eq!(r.snd.s_cep, r.rcv.r_cep);
}

/// Every packet CE-marked (k = 0) for 400 segments: r.cep wraps the 3-bit field 50
/// times. With every ACK delivered (2 packets each) the sender's count is exact; with
/// only one ACK in 5 delivered (about 10 packets each, > 7) the field is ambiguous and
/// the safe delta `n − ((n − d) mod 8)` is taken, which is exact when all are marked.
/// The price of safety: with no marks at all (k beyond the window) and thinned ACKs the
/// safe delta counts 8 phantom marks per ambiguous ACK.
#[test]
fn ace_wraps_and_the_safe_delta_with_thinned_acks() {
    let c = cfg("reno", EcnSupport::AccEcn, EcnSupport::AccEcn);
    for every in [1, 5] {
        let r = transfer(c, 400, 0, every);
        eprintln!(
            "ack 1 in {every}: marks {}, r.cep {}, s.cep {}, retransmits {}",
            r.marks, r.rcv.r_cep, r.snd.s_cep, r.retransmits
        );
        assert_eq!(r.rcv.r_cep - CEP_INIT, r.marks as u32);
        assert!(r.marks >= 400);
        assert_eq!(r.snd.s_cep, r.rcv.r_cep, "ack 1 in {every}");
    }
    let r = transfer(c, 2000, 100_000, 5);
    eprintln!(
        "no marks, ack 1 in 5: s.cep {} r.cep {}",
        r.snd.s_cep, r.rcv.r_cep
    );
    assert_eq!((r.marks, r.rcv.r_cep), (0, CEP_INIT));
    assert!(r.snd.s_cep > CEP_INIT, "the safe delta over-counts");
    assert_eq!((r.snd.s_cep - CEP_INIT) % 8, 0);
}
