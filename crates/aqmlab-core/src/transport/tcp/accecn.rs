//! ECN feedback negotiation and the AccECN ACE field (RFC 9768, "More Accurate
//! Explicit Congestion Notification (AccECN) Feedback in TCP"; Linux ≥ 6.18
//! `net/ipv4/tcp_input.c` `tcp_ecn_rcv_synack`, `__tcp_accecn_process`,
//! `include/net/tcp_ecn.h`).
//!
//! - Negotiation (RFC 9768 §3.1.1, Tables 1–2): an AccECN client sends the SYN with
//!   AE = CWR = ECE = 1, a classic RFC 3168 client with CWR = ECE = 1. An AccECN server
//!   answering an AccECN SYN sets (AE, CWR, ECE) of its SYN-ACK to the code of the
//!   SYN's IP-ECN field (not-ECT → 0,1,0: the SYN is never ECT here); a classic server,
//!   or an AccECN server answering a classic SYN, sends 0,0,1 (RFC 3168); a server
//!   without ECN 0,0,0. The client reads the SYN-ACK: 0,1,0 / 0,1,1 / 1,0,0 / 1,1,0
//!   (and the unused 1,1,1) mean AccECN, 0,0,1 and 1,0,1 classic ECN, 0,0,0 none.
//!   A client that asked for classic ECN only never sees an AccECN answer.
//! - ACE (§3.2.2): the receiver counts CE-marked packets in `r.cep`, starting at 5
//!   (§3.2.1, Linux `TCP_ACCECN_CEP_INIT_OFFSET`), and every ACK carries `r.cep mod 8`
//!   in AE (bit 2), CWR (bit 1), ECE (bit 0). The receiver sends an ACK at once when
//!   6 CE marks are pending since its last ACK (Linux `TCP_ACCECN_ACE_MAX_DELTA`), so
//!   the 3-bit field cannot wrap unseen.
//! - The sender's delta (Linux `__tcp_accecn_process` without the option): `d =
//!   (ACE − s.cep) mod 8`; if the ACK newly delivers more than 7 packets the field may
//!   have wrapped, and the sender takes the safe (largest consistent) value
//!   `n − ((n − d) mod 8)` (RFC 9768 §3.2.2.5.2 and Appendix A.2).
//! - Not modelled: the AccECN TCP option (byte counters EE0B/ECEB/EE1B, §3.2.3). Linux
//!   sends it (sysctl `tcp_ecn_option`) and uses it to pick between `d` and the safe
//!   delta when more than 7 packets are acknowledged at once; here the safe delta is
//!   always taken then.
//!   Its 11 bytes (padded) are not added to the ACKs' wire size. Also not modelled: the
//!   handshake's echo of the SYN-ACK's IP-ECN field in the client's first ACK, the
//!   mangling and middlebox-failure checks (§3.2.2.3, §3.2.2.4), ECT on
//!   retransmissions.

use crate::net::packet::tcp_flags as F;

/// What an endpoint offers (client) or accepts (server) in the ECN negotiation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnSupport {
    Off,
    /// RFC 3168.
    Classic,
    /// RFC 9768, falling back to RFC 3168 with a classic peer.
    AccEcn,
}

impl EcnSupport {
    /// Names accepted by `ecn = "..."` and `receiver_ecn = "..."`.
    pub const NAMES: &'static [&'static str] = &["off", "classic", "accecn"];

    pub fn from_name(name: &str) -> Option<EcnSupport> {
        match name {
            "off" => Some(EcnSupport::Off),
            "classic" => Some(EcnSupport::Classic),
            "accecn" => Some(EcnSupport::AccEcn),
            _ => None,
        }
    }
}

/// The feedback a connection negotiated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Feedback {
    /// Not-ECT data, no feedback.
    #[default]
    None,
    /// RFC 3168: ECE latched until CWR (or DCTCP's per-packet echo).
    Classic,
    /// RFC 9768: the ACE counter on every ACK.
    AccEcn,
}

/// `r.cep` and `s.cep` start here (RFC 9768 §3.2.1).
pub const CEP_INIT: u32 = 5;
/// CE marks pending at the receiver that force an immediate ACK (Linux
/// `TCP_ACCECN_ACE_MAX_DELTA`).
pub const ACE_MAX_DELTA: u32 = 6;
const ACE_MASK: u32 = 7;

/// The SYN's ECN flags and AE bit for a client offering `s`.
pub fn syn_flags(s: EcnSupport) -> (u8, bool) {
    match s {
        EcnSupport::Off => (0, false),
        EcnSupport::Classic => (F::ECE | F::CWR, false),
        EcnSupport::AccEcn => (F::ECE | F::CWR, true),
    }
}

/// A server accepting `own` answers a SYN with these flags: the outcome and its
/// SYN-ACK's ECN flags and AE bit.
pub fn answer_syn(flags: u8, ae: bool, own: EcnSupport) -> (Feedback, u8, bool) {
    let ece_cwr = flags & (F::ECE | F::CWR) == F::ECE | F::CWR;
    match (own, ece_cwr, ae) {
        (EcnSupport::Off, _, _) | (_, false, _) => (Feedback::None, 0, false),
        // AccECN both ways: the SYN was not-ECT, code 0,1,0.
        (EcnSupport::AccEcn, true, true) => (Feedback::AccEcn, F::CWR, false),
        _ => (Feedback::Classic, F::ECE, false),
    }
}

/// What a client that offered `offered` negotiated from the SYN-ACK's flags.
pub fn read_synack(offered: EcnSupport, flags: u8, ae: bool) -> Feedback {
    let (cwr, ece) = (flags & F::CWR != 0, flags & F::ECE != 0);
    match (offered, ae, cwr, ece) {
        (EcnSupport::Off, ..) | (_, false, false, false) => Feedback::None,
        (_, _, false, true) => Feedback::Classic,
        (EcnSupport::AccEcn, ..) => Feedback::AccEcn,
        // An AccECN answer to a classic SYN is a broken server: no ECN.
        (EcnSupport::Classic, ..) => Feedback::None,
    }
}

/// The ACE field's flags and AE bit carrying `cep mod 8`.
#[inline]
pub fn ace_flags(cep: u32) -> (u8, bool) {
    let ace = cep & ACE_MASK;
    let flags = if ace & 2 != 0 { F::CWR } else { 0 } | if ace & 1 != 0 { F::ECE } else { 0 };
    (flags, ace & 4 != 0)
}

/// The ACE value of an ACK.
#[inline]
pub fn read_ace(flags: u8, ae: bool) -> u32 {
    (ae as u32) << 2 | ((flags & F::CWR != 0) as u32) << 1 | (flags & F::ECE != 0) as u32
}

/// New CE-marked packets the ACK reports (Linux `__tcp_accecn_process`): `s_cep` is
/// the sender's count so far, `delivered` the packets this ACK newly acknowledges or
/// SACKs.
#[inline]
pub fn ace_delta(ace: u32, s_cep: u32, delivered: u32) -> u32 {
    let d = ace.wrapping_sub(s_cep) & ACE_MASK;
    if delivered <= ACE_MASK {
        d
    } else {
        delivered - (delivered.wrapping_sub(d) & ACE_MASK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EcnSupport::*;

    /// RFC 9768 Table 2 for the four pairings, client offer × server support.
    #[test]
    fn negotiation_matrix() {
        let cases = [
            (AccEcn, AccEcn, Feedback::AccEcn),
            (AccEcn, Classic, Feedback::Classic),
            (AccEcn, Off, Feedback::None),
            (Classic, AccEcn, Feedback::Classic),
            (Classic, Classic, Feedback::Classic),
            (Off, AccEcn, Feedback::None),
        ];
        for (client, server, want) in cases {
            let (f, ae) = syn_flags(client);
            let (srv, sf, sae) = answer_syn(f, ae, server);
            assert_eq!(srv, want, "{client:?} -> {server:?} (server side)");
            assert_eq!(
                read_synack(client, sf, sae),
                want,
                "{client:?} -> {server:?}"
            );
        }
        // The AccECN SYN-ACK for a not-ECT SYN is 0,1,0.
        assert_eq!(
            answer_syn(F::ECE | F::CWR, true, AccEcn),
            (Feedback::AccEcn, F::CWR, false)
        );
        // 1,0,1 (the historic nonce) is classic; 1,1,1 AccECN.
        assert_eq!(read_synack(AccEcn, F::ECE, true), Feedback::Classic);
        assert_eq!(read_synack(AccEcn, F::ECE | F::CWR, true), Feedback::AccEcn);
    }

    #[test]
    fn ace_round_trips_through_the_three_bits() {
        for cep in 0..20 {
            let (f, ae) = ace_flags(cep);
            assert_eq!(read_ace(f, ae), cep % 8);
        }
        // 5 = 0b101: AE and ECE.
        assert_eq!(ace_flags(5), (F::ECE, true));
    }

    /// Hand-worked: s.cep = 5 (nothing seen), the receiver saw 3 CE marks (r.cep = 8,
    /// ACE = 0): d = (0 − 5) mod 8 = 3. With 10 packets delivered at once the field may
    /// have wrapped: safe = 10 − ((10 − 3) mod 8) = 10 − 7 = 3; with 12
    /// delivered: 12 − ((12 − 3) mod 8) = 12 − 1 = 11 (3 or 11 marks fit; take 11).
    #[test]
    fn delta_wraps_mod_8_and_takes_the_safe_value_beyond_7_packets() {
        assert_eq!(ace_delta(0, 5, 2), 3);
        assert_eq!(ace_delta(5, 5, 2), 0);
        assert_eq!(ace_delta(4, 5, 7), 7);
        assert_eq!(ace_delta(0, 5, 10), 3);
        assert_eq!(ace_delta(0, 5, 12), 11);
        assert_eq!(
            ace_delta(5, 5, 8),
            8,
            "8 packets, all marked, look like none"
        );
    }
}
