//! CAKE's overhead compensation: the length a packet occupies on the wire below the
//! shaper, Linux `net/sched/sch_cake.c` `cake_calc_overhead` (commit 0280f429dc21),
//! options `overhead`, `mpu`, `atm`/`ptm` of tc-cake(8).
//!
//! `len` is the packet's size in aqmlab (the IP packet; Linux's `qdisc_pkt_len` on an
//! Ethernet device also holds the 14-byte MAC header, which `overhead` replaces: with
//! an `overhead` given Linux first strips the network offset, so both start from the IP
//! length). Then, in Linux's order:
//!
//! 1. `len += overhead` (may be negative; tc allows −64..256),
//! 2. `len = max(len, mpu)`,
//! 3. ATM (ADSL): `ceil(len / 48) · 53` — every 48-byte cell payload costs a 53-byte
//!    cell; PTM (VDSL2): `len + ceil(len / 64)` — one byte per 64 or part thereof
//!    (Linux calls this "conservative and easier to calculate than the precise value").
//!
//! The result drives the shaper's clock and the DRR deficits. tc's keyword `docsis` is
//! `overhead 18 mpu 64 noatm`, `ethernet` is `overhead 38 mpu 84 noatm` (tc-cake(8)).

use crate::scenario::error::Result;
use crate::scenario::params::Params;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cells {
    None,
    Atm,
    Ptm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Framing {
    pub overhead: i32,
    pub mpu: u32,
    pub cells: Cells,
}

impl Framing {
    /// tc cake's default, `raw`: no compensation.
    pub const RAW: Framing = Framing {
        overhead: 0,
        mpu: 0,
        cells: Cells::None,
    };

    /// Read `overhead`, `mpu`, `atm` ("none", "atm", "ptm").
    pub fn read(p: &mut Params) -> Result<Self> {
        let overhead = match p.raw("overhead") {
            None => 0,
            Some(v) => match v.as_i64() {
                Some(x) if (-64..=256).contains(&x) => x as i32,
                _ => {
                    return Err(p.error(
                        "overhead",
                        format!(
                            "{}: expected a whole number of bytes from -64 to 256",
                            crate::scenario::params::show_value(v)
                        ),
                    ))
                }
            },
        };
        let mpu = p.u64_or("mpu", 0, 0, 256)? as u32;
        let cells = match p.choice_or("atm", "none", &["none", "atm", "ptm"])? {
            "atm" => Cells::Atm,
            "ptm" => Cells::Ptm,
            _ => Cells::None,
        };
        Ok(Framing {
            overhead,
            mpu,
            cells,
        })
    }

    /// The adjusted length of a packet of `len` bytes.
    #[inline]
    pub fn adjusted(&self, len: u32) -> u32 {
        if *self == Self::RAW {
            return len;
        }
        let mut l = (len as i64 + self.overhead as i64).max(0) as u32;
        l = l.max(self.mpu);
        match self.cells {
            Cells::None => l,
            Cells::Atm => l.div_ceil(48) * 53,
            Cells::Ptm => l + l.div_ceil(64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atm_ptm_and_mpu_arithmetic() {
        // ADSL (pppoa-vcmux is overhead 10 atm): 1500 + 10 = 1510 B = 31.46 cells →
        // 32 cells of 53 B = 1696 B. A 40-byte ACK: 50 B → 2 cells = 106 B.
        let adsl = Framing {
            overhead: 10,
            mpu: 0,
            cells: Cells::Atm,
        };
        assert_eq!(adsl.adjusted(1500), 1696);
        assert_eq!(adsl.adjusted(40), 106);
        // Exactly one cell's payload: 38 + 10 = 48 → 1 cell.
        assert_eq!(adsl.adjusted(38), 53);
        // PTM: 1500 + 0 → 1500 + ceil(1500/64) = 1500 + 24 = 1524.
        let vdsl = Framing {
            overhead: 0,
            mpu: 0,
            cells: Cells::Ptm,
        };
        assert_eq!(vdsl.adjusted(1500), 1524);
        assert_eq!(vdsl.adjusted(64), 65);
        // docsis = overhead 18 mpu 64: a 40-byte ACK is 58 → raised to the 64-byte mpu;
        // 1500 → 1518.
        let docsis = Framing {
            overhead: 18,
            mpu: 64,
            cells: Cells::None,
        };
        assert_eq!(docsis.adjusted(40), 64);
        assert_eq!(docsis.adjusted(1500), 1518);
        // A negative overhead never makes a length negative.
        let neg = Framing {
            overhead: -64,
            mpu: 0,
            cells: Cells::None,
        };
        assert_eq!(neg.adjusted(40), 0);
        assert_eq!(Framing::RAW.adjusted(1500), 1500);
    }
}
