//! CAKE's Diffserv tins, from Linux `net/sched/sch_cake.c` (commit 0280f429dc21): the
//! DSCP → tin tables `precedence`, `diffserv8`, `diffserv4`, `diffserv3` and
//! `besteffort`, and each mode's tin thresholds and weights from `cake_config_besteffort`,
//! `cake_config_precedence`, `cake_config_diffserv8`, `cake_config_diffserv4` and
//! `cake_config_diffserv3`. `cake_init` makes `diffserv3` the default.
//!
//! A tin has a **threshold rate** (its `cake_set_rate` bandwidth, which also scales its
//! COBALT target/interval and flow quantum) and a **tin quantum** (its DRR weight when
//! the qdisc is unshaped). The orders put the most important tin last: Linux's shaped
//! tin choice (`cake_dequeue`) keeps the *last* tin whose schedule is due, so a tin
//! below its threshold has priority over the ones before it.
//!
//! | mode | tins (index: threshold, quantum) |
//! |---|---|
//! | besteffort | 0: R, 65535 |
//! | precedence, diffserv8 | i: R·(7/8)^i, 256·(7/8)^i (each step `x·7 >> 3`, quantum ≥ 1) |
//! | diffserv4 | 0 best effort: R, 1024; 1 bulk: R/16, 64; 2 video: R/2, 512; 3 voice: R/4, 256 |
//! | diffserv3 | 0 best effort: R, 1024; 1 bulk: R/16, 64; 2 voice: R/4, 256 |
//!
//! `R` is the shaper rate in bytes/s (Linux keeps `rate_bps` in bytes/s and shifts it
//! there). A DSCP whose table entry is beyond the mode's tins goes to tin 0
//! (`cake_select_tin`). Linux's overrides by firewall mark or `skb->priority` have no
//! counterpart here.

/// Linux's tables, indexed by DSCP (0–63).
const PRECEDENCE: [u8; 64] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
    4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7,
];
const DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2, 1, 2, 1, 2, 1, 2, 1, 2, 5, 2, 4, 2, 4, 2, 4, 2, 3, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 3, 2, 3, 2, 3, 2, 6, 2, 2, 2, 6, 2, 6, 2, 7, 2, 2, 2, 2, 2, 2, 2, 7, 2, 2, 2, 2, 2, 2, 2,
];
const DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 2, 0, 2, 0, 2, 0, 3, 0, 0, 0, 3, 0, 3, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
];
const DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
];
const BESTEFFORT: [u8; 64] = [0; 64];

/// tc's `diffserv` keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diffserv {
    Besteffort,
    Precedence,
    Diffserv8,
    Diffserv4,
    Diffserv3,
}

/// One tin's configuration: threshold rate (bit/s, 0 = unshaped) and DRR weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TinConfig {
    pub bandwidth: u64,
    pub quantum: u16,
}

impl Diffserv {
    pub const NAMES: [&'static str; 5] = [
        "diffserv3",
        "diffserv4",
        "diffserv8",
        "besteffort",
        "precedence",
    ];

    pub fn from_name(s: &str) -> Diffserv {
        match s {
            "besteffort" => Diffserv::Besteffort,
            "precedence" => Diffserv::Precedence,
            "diffserv8" => Diffserv::Diffserv8,
            "diffserv4" => Diffserv::Diffserv4,
            _ => Diffserv::Diffserv3,
        }
    }

    fn table(self) -> &'static [u8; 64] {
        match self {
            Diffserv::Besteffort => &BESTEFFORT,
            Diffserv::Precedence => &PRECEDENCE,
            Diffserv::Diffserv8 => &DIFFSERV8,
            Diffserv::Diffserv4 => &DIFFSERV4,
            Diffserv::Diffserv3 => &DIFFSERV3,
        }
    }

    /// The tins for a shaper of `bandwidth` bit/s (0 = unshaped), in Linux's order.
    pub fn tins(self, bandwidth: u64) -> Vec<TinConfig> {
        let r = bandwidth / 8; // Linux works in bytes/s
        let tin = |bytes: u64, quantum: u32| TinConfig {
            bandwidth: bytes * 8,
            quantum: quantum as u16,
        };
        match self {
            Diffserv::Besteffort => vec![tin(r, 65535)],
            Diffserv::Precedence | Diffserv::Diffserv8 => {
                let (mut rate, mut quantum) = (r, 256u32);
                (0..8)
                    .map(|_| {
                        let t = tin(rate, quantum.max(1));
                        rate = (rate * 7) >> 3;
                        quantum = (quantum * 7) >> 3;
                        t
                    })
                    .collect()
            }
            Diffserv::Diffserv4 => vec![
                tin(r, 1024),
                tin(r >> 4, 1024 >> 4),
                tin(r >> 1, 1024 >> 1),
                tin(r >> 2, 1024 >> 2),
            ],
            Diffserv::Diffserv3 => {
                vec![tin(r, 1024), tin(r >> 4, 1024 >> 4), tin(r >> 2, 1024 >> 2)]
            }
        }
    }

    /// Linux `cake_select_tin`: the tin of a packet with this DSCP among `tins` tins.
    #[inline]
    pub fn tin_of(self, dscp: u8, tins: usize) -> usize {
        let t = self.table()[(dscp & 63) as usize] as usize;
        if t >= tins {
            0
        } else {
            t
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::dscp::from_name;

    fn tin(mode: Diffserv, name: &str) -> usize {
        let n = mode.tins(0).len();
        mode.tin_of(from_name(name).unwrap(), n)
    }

    /// The classes named in the comments of Linux's `cake_config_diffserv*`.
    #[test]
    fn named_codepoints_land_in_the_tins_linux_lists() {
        use Diffserv::*;
        // diffserv3: Latency Sensitive (CS7, CS6, EF, VA, TOS4) = 2, Low Priority (LE,
        // CS1) = 1, everything else best effort = 0.
        for n in ["CS7", "CS6", "EF", "VA"] {
            assert_eq!(tin(Diffserv3, n), 2, "{n}");
        }
        assert_eq!(Diffserv3.tin_of(4, 3), 2); // TOS4 (min delay) = 4
        for n in ["LE", "CS1"] {
            assert_eq!(tin(Diffserv3, n), 1, "{n}");
        }
        for n in ["DF", "AF11", "AF41", "CS5", "CS4", "CS2", "AF23"] {
            assert_eq!(tin(Diffserv3, n), 0, "{n}");
        }
        // diffserv4: Latency Sensitive (CS7, CS6, EF, VA, CS5, CS4) = 3; Streaming Media
        // (AF4x, AF3x, CS3, AF2x, TOS4, CS2) = 2; Best Effort (DF, AF1x, TOS2) = 0;
        // Background (LE, CS1) = 1.
        for n in ["CS7", "CS6", "EF", "VA", "CS5", "CS4"] {
            assert_eq!(tin(Diffserv4, n), 3, "{n}");
        }
        for n in ["AF41", "AF43", "AF31", "CS3", "AF21", "AF22", "CS2"] {
            assert_eq!(tin(Diffserv4, n), 2, "{n}");
        }
        assert_eq!(Diffserv4.tin_of(4, 4), 2); // TOS4
        for n in ["DF", "AF11", "AF12", "AF13"] {
            assert_eq!(tin(Diffserv4, n), 0, "{n}");
        }
        assert_eq!(Diffserv4.tin_of(2, 4), 0); // TOS2
        for n in ["LE", "CS1"] {
            assert_eq!(tin(Diffserv4, n), 1, "{n}");
        }
        // diffserv8: Network Control (CS6, CS7) = 7; Minimum Latency (EF, VA, CS5, CS4)
        // = 6; Interactive Shell (CS2) = 5; Low Latency Transactions (AF2x, TOS4) = 4;
        // Video (AF4x, AF3x, CS3) = 3; Bog Standard (DF) = 2; High Throughput (AF1x,
        // TOS2, CS1) = 1; Background (LE) = 0.
        for (names, t) in [
            (&["CS6", "CS7"][..], 7),
            (&["EF", "VA", "CS5", "CS4"][..], 6),
            (&["CS2"][..], 5),
            (&["AF21", "AF23"][..], 4),
            (&["AF41", "AF31", "CS3"][..], 3),
            (&["DF"][..], 2),
            (&["AF11", "AF13", "CS1"][..], 1),
            (&["LE"][..], 0),
        ] {
            for n in names {
                assert_eq!(tin(Diffserv8, n), t, "{n}");
            }
        }
        assert_eq!(Diffserv8.tin_of(4, 8), 4); // TOS4
        assert_eq!(Diffserv8.tin_of(2, 8), 1); // TOS2
                                               // precedence: the top three DSCP bits; besteffort: everything in 0.
        for d in 0..64u8 {
            assert_eq!(Precedence.tin_of(d, 8), (d >> 3) as usize);
            assert_eq!(Besteffort.tin_of(d, 1), 0);
        }
    }

    #[test]
    fn thresholds_and_weights_follow_cake_config() {
        // 10 Mbit/s = 1 250 000 B/s.
        let r = 1_250_000u64;
        let bw = |t: &[TinConfig]| t.iter().map(|t| t.bandwidth / 8).collect::<Vec<_>>();
        let q = |t: &[TinConfig]| t.iter().map(|t| t.quantum).collect::<Vec<_>>();
        let d3 = Diffserv::Diffserv3.tins(10_000_000);
        assert_eq!(bw(&d3), vec![r, r >> 4, r >> 2]); // 1 250 000, 78 125, 312 500
        assert_eq!(q(&d3), vec![1024, 64, 256]);
        let d4 = Diffserv::Diffserv4.tins(10_000_000);
        assert_eq!(bw(&d4), vec![r, 78_125, 625_000, 312_500]);
        assert_eq!(q(&d4), vec![1024, 64, 512, 256]);
        // diffserv8: x·7 >> 3 each step: 1 250 000, 1 093 750, 957 031, 837 402, 732 726,
        // 641 135, 560 993, 490 868; quantum 256, 224, 196, 171, 149, 130, 113, 98.
        let d8 = Diffserv::Diffserv8.tins(10_000_000);
        assert_eq!(
            bw(&d8),
            vec![1_250_000, 1_093_750, 957_031, 837_402, 732_726, 641_135, 560_993, 490_868]
        );
        assert_eq!(q(&d8), vec![256, 224, 196, 171, 149, 130, 113, 98]);
        assert_eq!(Diffserv::Precedence.tins(10_000_000), d8);
        assert_eq!(
            Diffserv::Besteffort.tins(10_000_000),
            vec![TinConfig {
                bandwidth: 10_000_000,
                quantum: 65535
            }]
        );
        // Unshaped: every threshold 0.
        assert!(Diffserv::Diffserv4.tins(0).iter().all(|t| t.bandwidth == 0));
        // A table entry beyond the tins goes to tin 0 (only reachable with fewer tins).
        assert_eq!(Diffserv::Diffserv8.tin_of(56, 4), 0);
    }
}
