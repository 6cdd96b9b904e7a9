//! The modem's default classifier for the Low Latency service flow: a packet whose ECN
//! field is ECT(1) or CE, or whose DSCP is EF (46), goes to the LL SF, every other packet
//! to the Classic SF (DOCSIS 3.1 MULPI, default LL classifiers; docsis-ns3
//! `DocsisLowLatencyPacketFilter::DoClassify`, `model/docsis-l4s-packet-filter.cc:149-175`,
//! whose optional ECT(0)-as-LL switch is off by default and not modelled).

use crate::net::packet::{Ecn, Packet};

/// DSCP Expedited Forwarding (RFC 3246).
pub const DSCP_EF: u8 = 46;

/// The service flow a packet is classified into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sf {
    Classic,
    LowLatency,
}

pub fn classify(p: &Packet) -> Sf {
    if matches!(p.ecn, Ecn::Ect1 | Ecn::Ce) || p.dscp == DSCP_EF {
        Sf::LowLatency
    } else {
        Sf::Classic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ect1_ce_and_ef_are_low_latency() {
        let mut p = Packet::default();
        for (ecn, dscp, want) in [
            (Ecn::NotEct, 0, Sf::Classic),
            (Ecn::Ect0, 0, Sf::Classic),
            (Ecn::Ect1, 0, Sf::LowLatency),
            (Ecn::Ce, 0, Sf::LowLatency),
            (Ecn::NotEct, DSCP_EF, Sf::LowLatency),
            (Ecn::Ect0, 10, Sf::Classic),
        ] {
            p.ecn = ecn;
            p.dscp = dscp;
            assert_eq!(classify(&p), want, "{ecn:?} dscp {dscp}");
        }
    }
}
