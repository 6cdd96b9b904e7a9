//! The E-model: a voice call's transmission rating R and its MOS.
//!
//! Three models, selected per `voip` entry (`emodel = "g107" | "cole-rosenbluth" |
//! "ns2voip"`):
//!
//! - **ITU-T G.107 (06/2015), §3**: `R = Ro − Is − Id − Ie,eff + A` with every other
//!   parameter at its Table 3 default (SLR 8, RLR 2, STMR 15, LSTR 18, Ds = Dr = 3,
//!   TELR 65, WEPL 110, qdu 1, Nc −70, Nfor −64, Ps = Pr = 35, A 0), which gives
//!   `R = 93.2` for a perfect call. The delay impairment `Id = Idte + Idle + Idd` is
//!   computed from the mouth-to-ear delay `Ta` with the talker-echo delay `T = Ta` and
//!   the listener-echo round trip `Tr = 2·Ta` (echo returns over the same path: the
//!   usual planning assumption of G.108 §6, stated here because G.107 leaves T and Tr
//!   as inputs). `Idd` uses `mT = 100 ms`, `sT = 1` (the defaults that make it the
//!   pre-2011 formula). Loss enters through `Ie,eff = Ie + (95 − Ie)·Ppl/(Ppl/BurstR +
//!   Bpl)` (G.107 eq. 3-29) with `Ppl` in **percent** and the codec's `Ie`, `Bpl`
//!   from ITU-T G.113 Appendix I (G.711 without PLC: Ie 0, Bpl 4.3; with PLC: Ie 0,
//!   Bpl 25.1; G.729A + VAD: Ie 11, Bpl 19).
//! - **Cole & Rosenbluth 2001** ("Voice over IP performance monitoring", ACM CCR 31(2),
//!   eqs. 5–6 and Table 2): `R = 94.2 − 0.024·d − 0.11·(d − 177.3)·H(d − 177.3) − Ie`
//!   with `d` in ms and the loss fit `Ie = γ1 + γ2·ln(1 + γ3·e)` — **natural** log,
//!   `e` a loss **fraction** — with (γ1, γ2, γ3) = (0, 30, 15) for G.711 and
//!   (11, 40, 10) for G.729A. This is what the DOCSIS study (White & Padden,
//!   CableLabs 2012, §3.2.2, citing Cole) used. C&R's 94.2 is `Ro − Is` with the G.107 of their time; today's
//!   defaults give `Ro − Is = 93.36` (R = 93.2 after the 0.15 of listener echo at zero
//!   delay), so the two models differ by about one point at low delay, as published.
//! - **ns2voip++** (`VoipDecoder::eModel`, `voip_decoder.cc`, University of Pisa; the
//!   rural-broadband paper's voice tool): `R = Ro − Id − Ie,eff + A` with `Ro = 93.2`,
//!   Cole & Rosenbluth's delay term `Id = 0.024·d + 0.11·(d − 177.3)·H(d − 177.3)`, the
//!   G.107 loss term `Ie,eff = Ie + (95 − Ie)·p/(p + Bpl)` (p in percent, the codec's
//!   G.113 Ie/Bpl; ns2voip++'s `emodel G.729A` sets 11/19, `G.711` 0/4.3) and the
//!   advantage factor `A = 5`, its constructor's default, which `emodel G.729A` leaves
//!   as it is. So a perfect call rates 98.2.
//!
//! R → MOS is G.107 (06/2015) Annex B, eq. (B-4), for both: 1 for R < 0, 4.5 for
//! R > 100, `1 + 0.035R + 7·10⁻⁶·R(R − 60)(100 − R)` between. The cubic dips below 1
//! for 0 < R < 6.5153 (the root of R² − 160R + 1000 = 0; minimum 0.9888 at R ≈ 3.3),
//! although the scale it maps to is 1–4.5, so MOS is the cubic floored at 1: `MOS = 1`
//! for R < 6.5153. ns2voip++ (the VoIP module of the rural-broadband study's ns-2,
//! `VoipDecoder::eModel` in `voip_decoder.cc`) floors it the same way
//! (`mos = (mos < 1) ? 1 : mos`).

/// Which R formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EModel {
    G107,
    ColeRosenbluth,
    Ns2Voip,
}

/// ns2voip++'s `emodel_Ro_` and `emodel_A_` (`VoipDecoder::VoipDecoder`).
pub const NS2VOIP_RO: f64 = 93.2;
pub const NS2VOIP_A: f64 = 5.0;

/// ns2voip++ `VoipDecoder::eModel`'s R for delay `d` ms and loss fraction `loss`.
pub fn ns2voip_r(c: &CodecImpairment, d: f64, loss: f64) -> f64 {
    let id = 0.024 * d + if d > 177.3 { 0.11 * (d - 177.3) } else { 0.0 };
    let p = loss * 100.0;
    let ie_eff = c.ie + (95.0 - c.ie) * p / (p + c.bpl);
    NS2VOIP_RO - id - ie_eff + NS2VOIP_A
}

/// A codec's loss impairment parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodecImpairment {
    /// G.113 equipment impairment factor.
    pub ie: f64,
    /// G.113 packet-loss robustness factor.
    pub bpl: f64,
    /// Cole & Rosenbluth loss fit (γ1, γ2, γ3).
    pub cr: (f64, f64, f64),
}

/// G.711 without packet-loss concealment (G.113 App. I: Bpl 4.3).
pub const G711: CodecImpairment = CodecImpairment {
    ie: 0.0,
    bpl: 4.3,
    cr: (0.0, 30.0, 15.0),
};
/// G.711 with packet-loss concealment (G.113 App. I: Bpl 25.1).
pub const G711_PLC: CodecImpairment = CodecImpairment {
    ie: 0.0,
    bpl: 25.1,
    cr: (0.0, 30.0, 15.0),
};
/// G.729A with VAD (G.113 App. I: Ie 11, Bpl 19).
pub const G729A: CodecImpairment = CodecImpairment {
    ie: 11.0,
    bpl: 19.0,
    cr: (11.0, 40.0, 10.0),
};

fn pow10(x: f64) -> f64 {
    libm::pow(10.0, x)
}

/// G.107 Table 3 defaults (the ones this model does not vary).
const SLR: f64 = 8.0;
const RLR: f64 = 2.0;
const STMR: f64 = 15.0;
const LSTR: f64 = 18.0;
const DS: f64 = 3.0;
const TELR: f64 = 65.0;
const WEPL: f64 = 110.0;
const QDU: f64 = 1.0;
const NC: f64 = -70.0;
const NFOR: f64 = -64.0;
const PS: f64 = 35.0;
const PR: f64 = 35.0;
const A: f64 = 0.0;

/// G.107 §3.3: the total noise power `No` (dBm0p) and the basic rate `Ro`.
fn g107_noise() -> (f64, f64) {
    let olr = SLR + RLR;
    let nos = PS - SLR - DS - 100.0 + 0.004 * (PS - olr - DS - 14.0).powi(2);
    let pre = PR + 10.0 * libm::log10(1.0 + pow10((10.0 - LSTR) / 10.0));
    let nor = RLR - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
    let nfo = NFOR + RLR;
    let no = 10.0
        * libm::log10(pow10(NC / 10.0) + pow10(nos / 10.0) + pow10(nor / 10.0) + pow10(nfo / 10.0));
    (no, 15.0 - 1.5 * (SLR + no))
}

/// G.107 §3.4: `STMRo` (with talker echo of delay `t` ms) and `Ist`.
fn g107_stmro_ist(t: f64) -> (f64, f64) {
    let stmro =
        -10.0 * libm::log10(pow10(-STMR / 10.0) + libm::exp(-t / 4.0) * pow10(-TELR / 10.0));
    let term = |a: f64, b: f64, c: f64| libm::pow(1.0 + libm::pow((stmro + a) / b, c), 1.0 / c);
    let ist =
        12.0 * term(-13.0, 6.0, 8.0) - 28.0 * term(1.0, 19.4, 35.0) - 13.0 * term(-3.0, 33.0, 13.0)
            + 29.0;
    (stmro, ist)
}

/// G.107 §3.4: the simultaneous impairment `Is = Iolr + Ist + Iq` (at talker-echo
/// delay `t`, which only moves `Ist` through `STMRo`).
fn g107_is(no: f64, ro: f64, t: f64) -> f64 {
    let olr = SLR + RLR;
    let xolr = olr + 0.2 * (64.0 + no - RLR);
    let iolr = 20.0 * (libm::pow(1.0 + libm::pow(xolr / 8.0, 8.0), 1.0 / 8.0) - xolr / 8.0);
    let (_, ist) = g107_stmro_ist(t);
    let q = 37.0 - 15.0 * libm::log10(QDU);
    let g = 1.07 + 0.258 * q + 0.0602 * q * q;
    let y = (ro - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
    let z = 46.0 / 30.0 - g / 40.0;
    let iq = 15.0 * libm::log10(1.0 + pow10(y) + pow10(z));
    iolr + ist + iq
}

/// G.107 §3.5: the delay impairment `Id = Idte + Idle + Idd` for a mouth-to-ear delay
/// `ta` ms, with `T = ta` and `Tr = 2·ta` (see the module doc).
pub fn g107_id(ta: f64) -> f64 {
    let (no, ro) = g107_noise();
    let t = ta;
    let tr = 2.0 * ta;
    let (_, ist) = g107_stmro_ist(t);
    // Talker echo.
    let roe = -1.5 * (no - RLR);
    let mut terv = TELR - 40.0 * libm::log10((1.0 + t / 10.0) / (1.0 + t / 150.0))
        + 6.0 * libm::exp(-0.3 * t * t);
    if STMR < 9.0 {
        terv += ist / 2.0;
    }
    let re = 80.0 + 2.5 * (terv - 14.0);
    let mut idte = ((roe - re) / 2.0 + libm::sqrt((roe - re).powi(2) / 4.0 + 100.0) - 1.0)
        * (1.0 - libm::exp(-t));
    if STMR > 20.0 {
        idte = libm::sqrt(idte * idte + ist * ist);
    }
    // Listener echo.
    let rle = 10.5 * (WEPL + 7.0) * libm::pow(tr + 1.0, -0.25);
    let idle = (ro - rle) / 2.0 + libm::sqrt((ro - rle).powi(2) / 4.0 + 169.0);
    // Absolute delay (mT = 100 ms, sT = 1).
    let idd = if ta > 100.0 {
        let x = libm::log10(ta / 100.0) / libm::log10(2.0);
        25.0 * (libm::pow(1.0 + x.powi(6), 1.0 / 6.0)
            - 3.0 * libm::pow(1.0 + (x / 3.0).powi(6), 1.0 / 6.0)
            + 2.0)
    } else {
        0.0
    };
    idte + idle + idd
}

/// G.107 eq. 3-29: `Ie,eff` for a loss of `ppl` **percent** (BurstR = 1: random loss).
pub fn g107_ie_eff(c: &CodecImpairment, ppl: f64, burst_r: f64) -> f64 {
    c.ie + (95.0 - c.ie) * ppl / (ppl / burst_r + c.bpl)
}

/// R per G.107 for mouth-to-ear delay `ta` ms and loss fraction `loss` (0–1).
pub fn g107_r(c: &CodecImpairment, ta: f64, loss: f64) -> f64 {
    let (no, ro) = g107_noise();
    ro - g107_is(no, ro, ta) - g107_id(ta) - g107_ie_eff(c, 100.0 * loss, 1.0) + A
}

/// R per Cole & Rosenbluth for one-way delay `d` ms and loss fraction `loss` (0–1).
pub fn cole_rosenbluth_r(c: &CodecImpairment, d: f64, loss: f64) -> f64 {
    let (g1, g2, g3) = c.cr;
    let late = if d > 177.3 { 0.11 * (d - 177.3) } else { 0.0 };
    94.2 - 0.024 * d - late - (g1 + g2 * libm::log(1.0 + g3 * loss))
}

impl EModel {
    /// R for mouth-to-ear delay `delay_ms` and total loss fraction `loss`.
    pub fn r(self, c: &CodecImpairment, delay_ms: f64, loss: f64) -> f64 {
        match self {
            EModel::G107 => g107_r(c, delay_ms, loss),
            EModel::ColeRosenbluth => cole_rosenbluth_r(c, delay_ms, loss),
            EModel::Ns2Voip => ns2voip_r(c, delay_ms, loss),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EModel::G107 => "g107",
            EModel::ColeRosenbluth => "cole-rosenbluth",
            EModel::Ns2Voip => "ns2voip",
        }
    }
}

/// G.107 Annex B: MOS (conversational quality, estimated) from R, in [1, 4.5] (the
/// cubic floored at 1 where it dips below, 0 < R < 6.5153: see the module doc).
pub fn mos(r: f64) -> f64 {
    if r.is_nan() {
        return f64::NAN;
    }
    if r >= 100.0 {
        return 4.5;
    }
    let r = r.max(0.0);
    (1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r)).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    /// G.107 with every default and no delay or loss: the well-known R = 93.2.
    /// By hand (G.107 §3): OLR = 10; Nos = 35 − 8 − 3 − 100 + 0.004·(35 − 10 − 3 − 14)²
    /// = −75.744; Pre = 35 + 10·lg(1 + 10^−0.8) = 35.6389; Nor = 2 − 121 + 35.6389 +
    /// 0.008·0.6389² = −83.3578; Nfo = −62; No = 10·lg(10^−7 + 10^−7.5744 +
    /// 10^−8.33578 + 10^−6.2) = −61.1792; Ro = 15 − 1.5·(8 − 61.1792) = 94.7688.
    /// Xolr = 10 + 0.2·(64 − 61.1792 − 2) = 10.1642, Iolr = 20·((1 + 1.27052⁸)^⅛ −
    /// 1.27052) = 0.4402; STMRo = 15.0000 → Ist = −0.0007; Q = 37, G = 93.0298,
    /// Y = (94.7688 − 100)/15 + 46/8.4 − G/9 = −5.2092, Z = 46/30 − G/40 = −0.7924,
    /// Iq = 15·lg(1 + 10^Y + 10^Z) = 0.9741 → Is = 1.4136. Idte = 0 (factor 1 − e⁰),
    /// Rle = 10.5·117·1^−¼ = 1228.5, Idle = (94.7688 − 1228.5)/2 + √(566.866² + 169) =
    /// 0.1490, Idd = 0 (Ta ≤ 100). R = 94.7688 − 1.4136 − 0.1490 = 93.2062.
    #[test]
    fn g107_defaults_give_93_2() {
        let (no, ro) = g107_noise();
        close(no, -61.1792, 1e-4);
        close(ro, 94.7688, 1e-4);
        close(g107_is(no, ro, 0.0), 1.4136, 1e-4);
        close(g107_id(0.0), 0.1490, 1e-4);
        close(g107_r(&G711, 0.0, 0.0), 93.2062, 1e-4);
    }

    /// G.107 at Ta = 200 ms (T = 200, Tr = 400): X = lg(200/100)/lg 2 = 1,
    /// Idd = 25·((1 + 1)^⅙ − 3·(1 + 3⁻⁶)^⅙ + 2) = 25·(1.122462 − 3.000686 + 2) =
    /// 3.0444. TERV = 65 − 40·lg(21/2.33333) + 6·e^−12000 = 65 − 38.1697 = 26.8303,
    /// Re = 80 + 2.5·12.8303 = 112.0757, Roe = −1.5·(−61.1792 − 2) = 94.7688,
    /// Idte = ((Roe − Re)/2 + √((Roe − Re)²/4 + 100) − 1)·(1 − e^−200) = −8.6534 +
    /// 13.2243 − 1 = 3.5708; Rle = 1228.5·401^−¼ = 274.5295, Idle = (94.7688 −
    /// 274.5295)/2 + √(89.8804² + 169) = 0.9353. Id = 3.5708 + 0.9353 + 3.0444 = 7.5505.
    /// With 2 % loss on G.729A: Ie,eff = 11 + 84·2/(2/1 + 19) = 19 exactly. Is at
    /// T = 200 is the zero-delay 1.4136 (e^−50 leaves STMRo at 15).
    /// R = 94.7688 − 1.4136 − 7.5505 − 19 = 66.8047.
    #[test]
    fn g107_worked_example_200ms_2pct_g729a() {
        close(g107_id(200.0), 7.5505, 1e-4);
        close(g107_ie_eff(&G729A, 2.0, 1.0), 19.0, 1e-12);
        close(g107_r(&G729A, 200.0, 0.02), 66.8047, 1e-4);
        // G.711 without PLC, 1 % loss: Ie,eff = 95·1/(1 + 4.3) = 17.924528.
        close(g107_ie_eff(&G711, 1.0, 1.0), 17.924528, 1e-6);
        // Below 100 ms Idd is 0, so R only falls by the echo terms.
        assert!(g107_id(100.0) < 3.0);
    }

    /// Cole & Rosenbluth, G.711, d = 150 ms, e = 0.02: R = 94.2 − 0.024·150 − 0 −
    /// 30·ln(1.3) = 94.2 − 3.6 − 7.870928 = 82.729072; MOS = 1 + 0.035·82.729072 +
    /// 7e-6·82.729072·22.729072·17.270928 = 1 + 2.895518 + 0.227328 = 4.122846.
    /// G.729A, d = 250 ms, e = 0.05: R = 94.2 − 6 − 0.11·72.7 − 11 − 40·ln(1.5) =
    /// 94.2 − 6 − 7.997 − 11 − 16.218604 = 52.984396.
    #[test]
    fn cole_rosenbluth_worked_examples() {
        let r = cole_rosenbluth_r(&G711, 150.0, 0.02);
        close(r, 82.729072, 1e-6);
        close(mos(r), 4.122846, 1e-6);
        close(cole_rosenbluth_r(&G729A, 250.0, 0.05), 52.984396, 1e-6);
        // Natural log, not log10: with lg the G.711 term would be 3.418, R 87.18.
        assert!(EModel::ColeRosenbluth.r(&G711, 150.0, 0.02) < 83.0);
    }

    /// G.107 Annex B anchor points: R = 50 → 1 + 1.75 + 7e-6·50·(−10)·50 = 2.575;
    /// R = 80 → 1 + 2.8 + 7e-6·80·20·20 = 4.024; clamps at both ends.
    #[test]
    fn mos_mapping() {
        close(mos(50.0), 2.575, 1e-12);
        close(mos(80.0), 4.024, 1e-12);
        assert_eq!(mos(-5.0), 1.0);
        assert_eq!(mos(120.0), 4.5);
        assert!(mos(f64::NAN).is_nan());
    }

    /// MOS stays in [1, 4.5]. By hand: R = 0 → 1; R = 5: cubic 1 + 0.175 +
    /// 7e-6·5·(−55)·95 = 1.175 − 0.182875 = 0.992125 → floored to 1; R = 6.5: 1 + 0.2275
    /// − 7e-6·6.5·53.5·93.5 = 1.2275 − 0.2276 = 0.99990 → 1; R = 6.6: 1.231 −
    /// 7e-6·6.6·53.4·93.4 = 1.231 − 0.230425 = 1.000575 (above the root 6.5153, the cubic
    /// itself); R = 93.2 (G.107's default connection): 1 + 3.262 +
    /// 7e-6·93.2·33.2·6.8 = 4.262 + 0.147286 = 4.409286; R = 100 → 4.5, R = 130 → 4.5.
    #[test]
    fn mos_range_small_and_large_r() {
        assert_eq!(mos(0.0), 1.0);
        assert_eq!(mos(5.0), 1.0);
        assert_eq!(mos(6.5), 1.0);
        close(mos(6.6), 1.000575, 1e-6);
        close(mos(93.2), 4.409286, 1e-6);
        assert_eq!(mos(100.0), 4.5);
        assert_eq!(mos(130.0), 4.5);
        let root = 80.0 - libm::sqrt(5400.0);
        close(root, 6.5153, 1e-4);
        for i in -100..=1500 {
            let m = mos(i as f64 * 0.1);
            assert!((1.0..=4.5).contains(&m), "R = {}: {m}", i as f64 * 0.1);
        }
        // Continuous at the root and monotone above it.
        close(mos(root + 1e-9), 1.0, 1e-9);
        assert!(mos(7.0) > mos(6.6) && mos(99.9) < 4.5);
    }

    /// ns2voip++'s E-model by hand, G.729A (Ie 11, Bpl 19): 100 ms, 2 % loss →
    /// Id = 2.4, Ie,eff = 11 + 84·2/21 = 19.0, R = 93.2 − 2.4 − 19 + 5 = 76.8; 250 ms,
    /// no loss → Id = 6 + 0.11·72.7 = 13.997, R = 93.2 − 13.997 − 11 + 5 = 73.203;
    /// a perfect call 98.2 (MOS 4.48).
    #[test]
    fn ns2voip_r_by_hand() {
        close(EModel::Ns2Voip.r(&G729A, 100.0, 0.02), 76.8, 1e-9);
        close(EModel::Ns2Voip.r(&G729A, 250.0, 0.0), 73.203, 1e-9);
        close(EModel::Ns2Voip.r(&G711, 0.0, 0.0), 98.2, 1e-9);
        let r: f64 = 98.2;
        close(
            mos(r),
            1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r),
            1e-12,
        );
    }
}
