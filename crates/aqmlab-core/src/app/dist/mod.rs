//! Random values for packet sizes and gaps: fixed, uniform, exponential, truncated
//! normal — each keeps the configured mean exactly, so a source's mean rate is the
//! one configured whatever the shape.
//!
//! - `uniform`: U[mean − spread, mean + spread].
//! - `exp`: `floor + Exp(mean − floor)`, a shifted exponential above the smallest legal
//!   value (40 B for an RTP packet: IP + UDP + RTP headers; 0 for a gap).
//! - `normal`: N(mean, spread²) truncated symmetrically to mean ± 3·spread by
//!   resampling (Box–Muller from two uniforms, libm for bit-identical results).
//!
//! `read` checks that every value the shape can produce is legal (≥ floor), naming
//! the field.

pub mod variates;

use crate::scenario::error::Result;
use crate::scenario::params::Params;
use crate::sim::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Fixed,
    Uniform,
    Exp,
    Normal,
}

pub const SHAPES: &[&str] = &["fixed", "uniform", "exp", "normal"];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dist {
    pub shape: Shape,
    pub mean: f64,
    /// Half-width (uniform) or standard deviation (normal).
    pub spread: f64,
    /// Smallest legal value (exp's shift).
    pub floor: f64,
}

impl Dist {
    pub fn fixed(v: f64) -> Dist {
        Dist {
            shape: Shape::Fixed,
            mean: v,
            spread: 0.0,
            floor: 0.0,
        }
    }

    /// Read the shape from `shape_key` and its spread from `spread_key` (already
    /// converted to the mean's unit by `spread`); `mean_key` names the mean in errors.
    pub fn read(
        p: &mut Params,
        shape_key: &'static str,
        spread_key: &'static str,
        mean_key: &str,
        mean: f64,
        spread: Option<f64>,
        floor: f64,
    ) -> Result<Dist> {
        let shape = match p.choice_or(shape_key, "fixed", SHAPES)? {
            "uniform" => Shape::Uniform,
            "exp" => Shape::Exp,
            "normal" => Shape::Normal,
            _ => Shape::Fixed,
        };
        let needs_spread = matches!(shape, Shape::Uniform | Shape::Normal);
        let spread = match (needs_spread, spread) {
            (true, Some(s)) => s,
            (true, None) => {
                return Err(p.error(
                    spread_key,
                    format!(
                        "missing: `{shape_key}` = \"{}\" needs a spread",
                        SHAPES[shape as usize]
                    ),
                ))
            }
            (false, Some(_)) => {
                return Err(p.error(
                    spread_key,
                    format!("only `{shape_key}` = \"uniform\" or \"normal\" takes a spread"),
                ))
            }
            (false, None) => 0.0,
        };
        let lowest = match shape {
            Shape::Fixed | Shape::Exp => mean,
            Shape::Uniform => mean - spread,
            Shape::Normal => mean - 3.0 * spread,
        };
        if mean < floor || (lowest < floor && shape != Shape::Exp) {
            return Err(p.error(
                if lowest < floor && mean >= floor { spread_key } else { mean_key },
                format!(
                    "mean {mean} with spread {spread}: a {} value can be {lowest}, below the smallest legal {floor}",
                    SHAPES[shape as usize]
                ),
            ));
        }
        Ok(Dist {
            shape,
            mean,
            spread,
            floor,
        })
    }

    /// One draw (the `Fixed` shape draws nothing).
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self.shape {
            Shape::Fixed => self.mean,
            Shape::Uniform => rng.uniform_range(self.mean - self.spread, self.mean + self.spread),
            Shape::Exp => self.floor + rng.exponential(self.mean - self.floor),
            Shape::Normal => loop {
                let z = standard_normal(rng);
                if z.abs() <= 3.0 {
                    break self.mean + self.spread * z;
                }
            },
        }
    }
}

/// Box–Muller: one standard normal from two uniforms.
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.uniform(); // (0, 1]
    let u2 = rng.uniform();
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_sd(d: &Dist, n: usize) -> (f64, f64, f64, f64) {
        let mut r = Rng::stream(3, "dist");
        let xs: Vec<f64> = (0..n).map(|_| d.sample(&mut r)).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        (m, v.sqrt(), lo, hi)
    }

    /// Moments against theory (n = 200 000, tolerances ≈ 5 standard errors):
    /// uniform ±100 around 500 has sd 100/√3 = 57.735; exp shifted by 40 with mean 500
    /// has sd 460; the 3σ-truncated normal has sd σ·√(1 − 6φ(3)/(2Φ(3) − 1)) =
    /// 0.98658·σ.
    #[test]
    fn shapes_keep_the_mean_and_have_the_right_spread() {
        let n = 200_000;
        let u = Dist {
            shape: Shape::Uniform,
            mean: 500.0,
            spread: 100.0,
            floor: 40.0,
        };
        let (m, sd, lo, hi) = mean_sd(&u, n);
        assert!(
            (m - 500.0).abs() < 0.7 && (sd - 57.735).abs() < 0.5,
            "{m} {sd}"
        );
        assert!(lo >= 400.0 && hi < 600.0);
        let e = Dist {
            shape: Shape::Exp,
            mean: 500.0,
            spread: 0.0,
            floor: 40.0,
        };
        let (m, sd, lo, _) = mean_sd(&e, n);
        assert!(
            (m - 500.0).abs() < 5.2 && (sd - 460.0).abs() < 6.0,
            "{m} {sd}"
        );
        assert!(lo >= 40.0);
        let g = Dist {
            shape: Shape::Normal,
            mean: 500.0,
            spread: 100.0,
            floor: 40.0,
        };
        let (m, sd, lo, hi) = mean_sd(&g, n);
        assert!(
            (m - 500.0).abs() < 1.2 && (sd - 98.658).abs() < 0.8,
            "{m} {sd}"
        );
        assert!(lo >= 200.0 && hi <= 800.0);
    }
}
