//! The IPv4 header fields the emulator reads and the one it writes.
//!
//! Layout from RFC 791 §3.1 (version/IHL, TOS, total length, fragment offset, protocol,
//! addresses); the two low TOS bits are the ECN field of RFC 3168 §5 (00 Not-ECT,
//! 10 ECT(0), 01 ECT(1), 11 CE); ports are the first four bytes of the TCP (RFC 793)
//! and UDP (RFC 768) headers. Setting CE updates the header checksum incrementally as
//! RFC 1624 §3 eqn. 3 gives it: HC' = ~(~HC + ~m + m'), so the rest of the header is
//! never re-summed.

use crate::net::packet::Ecn;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// What the emulator needs from one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// The datagram length the header declares (what a link serialises).
    pub total_len: u16,
    pub ecn: Ecn,
    /// The six DSCP bits (RFC 2474).
    pub dscp: u8,
    pub proto: u8,
    pub src: u32,
    pub dst: u32,
    /// Zero for protocols without ports and for non-first fragments.
    pub sport: u16,
    pub dport: u16,
}

fn ecn_from_bits(bits: u8) -> Ecn {
    match bits & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// Parse `b` as an IPv4 datagram; None if it is not one (IPv6, truncated, bad lengths).
pub fn parse(b: &[u8]) -> Option<Ipv4Info> {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return None;
    }
    let ihl = (b[0] & 0x0f) as usize * 4;
    let total_len = u16::from_be_bytes([b[2], b[3]]);
    if ihl < 20 || (total_len as usize) < ihl || total_len as usize > b.len() {
        return None;
    }
    let frag_offset = u16::from_be_bytes([b[6], b[7]]) & 0x1fff;
    let proto = b[9];
    let word = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let has_ports =
        matches!(proto, PROTO_TCP | PROTO_UDP) && frag_offset == 0 && total_len as usize >= ihl + 4;
    let (sport, dport) = if has_ports {
        (
            u16::from_be_bytes([b[ihl], b[ihl + 1]]),
            u16::from_be_bytes([b[ihl + 2], b[ihl + 3]]),
        )
    } else {
        (0, 0)
    };
    Some(Ipv4Info {
        total_len,
        ecn: ecn_from_bits(b[1]),
        dscp: b[1] >> 2,
        proto,
        src: word(12),
        dst: word(16),
        sport,
        dport,
    })
}

/// Set the ECN field of the IPv4 header in `b` to CE (11) and patch the checksum
/// (RFC 1624 eqn. 3 on the 16-bit word holding version/IHL and TOS).
pub fn set_ce(b: &mut [u8]) {
    let old = u16::from_be_bytes([b[0], b[1]]);
    b[1] |= 0b11;
    let new = u16::from_be_bytes([b[0], b[1]]);
    let hc = u16::from_be_bytes([b[10], b[11]]);
    let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let hc2 = !(sum as u16);
    b[10..12].copy_from_slice(&hc2.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header checksum summed from scratch (RFC 791: one's complement of the one's
    /// complement sum of the header's 16-bit words, checksum field as zero).
    fn full_checksum(h: &[u8]) -> u16 {
        let mut sum = 0u32;
        for i in (0..h.len()).step_by(2) {
            if i != 10 {
                sum += u16::from_be_bytes([h[i], h[i + 1]]) as u32;
            }
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    /// A 20-byte UDP/IPv4 header 192.168.0.1 → 192.168.0.199, 115 bytes, whose
    /// checksum is 0xb861 (the worked example commonly used for RFC 791's checksum).
    fn header() -> Vec<u8> {
        let mut h = vec![
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        // UDP ports 5001 -> 9 and the rest of the datagram.
        h.extend_from_slice(&[0x13, 0x89, 0x00, 0x09]);
        h.resize(0x73, 0);
        h
    }

    #[test]
    fn the_worked_example_checksum_is_what_the_oracle_computes() {
        assert_eq!(full_checksum(&header()[..20]), 0xb861);
    }

    #[test]
    fn parses_sizes_addresses_ports_and_ecn() {
        let mut h = header();
        h[1] = 0b1011_1010; // DSCP 46 (EF), ECT(0)
        let i = parse(&h).unwrap();
        assert_eq!(i.total_len, 115);
        assert_eq!(i.dscp, 46);
        assert_eq!(i.ecn, Ecn::Ect0);
        assert_eq!(i.proto, PROTO_UDP);
        assert_eq!(i.src, 0xc0a8_0001);
        assert_eq!(i.dst, 0xc0a8_00c7);
        assert_eq!((i.sport, i.dport), (5001, 9));
    }

    #[test]
    fn refuses_non_ipv4_and_inconsistent_lengths() {
        let mut h = header();
        h[0] = 0x60;
        assert!(parse(&h).is_none());
        let h = header();
        assert!(parse(&h[..100]).is_none(), "total length beyond the buffer");
        let mut h = header();
        h[0] = 0x44; // IHL 16 bytes
        assert!(parse(&h).is_none());
    }

    #[test]
    fn a_later_fragment_has_no_ports() {
        let mut h = header();
        h[6] = 0x00;
        h[7] = 0x10; // offset 16 * 8 bytes
        assert_eq!(parse(&h).unwrap().sport, 0);
    }

    #[test]
    fn setting_ce_keeps_the_checksum_valid() {
        for tos in [0x02u8, 0x01, 0xb8 | 0x02, 0xfd] {
            let mut h = header();
            h[1] = tos;
            let c = full_checksum(&h[..20]);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            set_ce(&mut h);
            assert_eq!(h[1], tos | 3);
            assert_eq!(
                u16::from_be_bytes([h[10], h[11]]),
                full_checksum(&h[..20]),
                "tos {tos:#x}"
            );
        }
        // Hand-worked: TOS 0x00 -> 0x03 adds 3 to the sum, so 0xb861 becomes 0xb85e.
        let mut h = header();
        set_ce(&mut h);
        assert_eq!(u16::from_be_bytes([h[10], h[11]]), 0xb85e);
    }
}
