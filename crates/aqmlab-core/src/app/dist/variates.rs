//! Random variates the web models need, on the simulator's `Rng`, with `libm` for the
//! transcendental functions (same bits on every machine).
//!
//! - Normal: Box–Muller (one of the pair is used, so each draw costs two uniforms).
//! - Weibull(shape k, scale λ): inverse transform `λ·(−ln(1−u))^(1/k)`, the
//!   parameterisation of ns-2's `RNG::rweibull(shape, scale)` and `qweibull`.
//! - Gamma(shape a, scale θ): Marsaglia & Tsang, "A simple method for generating gamma
//!   variables", ACM TOMS 26(3), 2000 (a ≥ 1; a < 1 by their boost `G(a+1)·U^(1/a)`).
//! - Inverse CDF by linear interpolation in a table, as ns-2's `FX::LinearInterpolate`
//!   (packmime_ranvar.cc), except that outside the table the end value is held rather
//!   than the end slope extended (see `InvCdf::at`).

use crate::sim::rng::Rng;

pub fn normal(rng: &mut Rng) -> f64 {
    // 1 − u lies in (0, 1], so the log is finite.
    let u1 = 1.0 - rng.uniform();
    let u2 = rng.uniform();
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
}

pub fn weibull(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    weibull_quantile(rng.uniform(), shape, scale)
}

/// The Weibull quantile at probability `p`.
pub fn weibull_quantile(p: f64, shape: f64, scale: f64) -> f64 {
    scale * libm::pow(-libm::log(1.0 - p), 1.0 / shape)
}

pub fn gamma(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.uniform();
        return gamma(rng, shape + 1.0, scale) * libm::pow(u, 1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / libm::sqrt(9.0 * d);
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = 1.0 - rng.uniform();
        if libm::log(u) < 0.5 * x * x + d - d * v + d * libm::log(v) {
            return d * v * scale;
        }
    }
}

/// ln Γ(x).
pub fn ln_gamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// ns-2's `RNG::logitinv` (tools/rng.h), in base 2: `2^x / (1 + 2^x)` (its `logit`
/// is `log2(x / (1 − x))`), not the natural-base logistic function.
pub fn logit_inv(x: f64) -> f64 {
    1.0 / (1.0 + libm::exp2(-x))
}

/// A piecewise-linear inverse CDF: x ascending, y at each x.
pub struct InvCdf {
    pub x: &'static [f64],
    pub y: &'static [f64],
}

impl InvCdf {
    /// Linear interpolation; outside [x₀, xₙ] the end value. ns-2 extends the end
    /// slope instead, which for the log-scale tails reaches 2^60 bytes at p = 1 − 2^−53;
    /// holding the end caps sizes at the largest the fit was made from.
    pub fn at(&self, v: f64) -> f64 {
        let (x, y) = (self.x, self.y);
        if v <= x[0] {
            return y[0];
        }
        let n = x.len();
        if v >= x[n - 1] {
            return y[n - 1];
        }
        let i = x.partition_point(|&xi| xi <= v) - 1;
        y[i] + (y[i + 1] - y[i]) * (v - x[i]) / (x[i + 1] - x[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sample moments against the analytic ones: a wrong formula (shape and scale
    /// swapped, a missing 1/shape) moves the mean by far more than the tolerance,
    /// which is 5 standard errors.
    #[test]
    fn weibull_gamma_normal_match_their_moments() {
        let mut r = Rng::stream(7, "web.dist");
        let n = 200_000;
        let mean = |f: &mut dyn FnMut() -> f64| (0..n).map(|_| f()).sum::<f64>() / n as f64;
        // Weibull(k=0.63, λ=305): mean λ·Γ(1+1/k) = 305·Γ(2.5873) = 436.9...
        let k = 0.63;
        let want = 305.0 * libm::exp(ln_gamma(1.0 + 1.0 / k));
        let sd = 305.0 * libm::sqrt(libm::exp(ln_gamma(1.0 + 2.0 / k)) - (want / 305.0).powi(2));
        let got = mean(&mut || weibull(&mut r, k, 305.0));
        assert!(
            (got - want).abs() < 5.0 * sd / (n as f64).sqrt(),
            "{got} vs {want}"
        );
        // Gamma(3.22, 1/3.22): mean 1, variance 1/3.22.
        let got = mean(&mut || gamma(&mut r, 3.22, 1.0 / 3.22));
        assert!(
            (got - 1.0).abs() < 5.0 * (1.0f64 / 3.22).sqrt() / (n as f64).sqrt(),
            "{got}"
        );
        // Gamma(0.5, 2): mean 1 (the boosted branch).
        let got = mean(&mut || gamma(&mut r, 0.5, 2.0));
        assert!(
            (got - 1.0).abs() < 5.0 * 2.0f64.sqrt() / (n as f64).sqrt(),
            "{got}"
        );
        // Normal: mean 0, variance 1.
        let got = mean(&mut || normal(&mut r));
        assert!(got.abs() < 5.0 / (n as f64).sqrt(), "{got}");
        let var = mean(&mut || normal(&mut r).powi(2));
        assert!(
            (var - 1.0).abs() < 5.0 * 2.0f64.sqrt() / (n as f64).sqrt(),
            "{var}"
        );
    }

    /// Base 2: logitinv(1) = 2/3 (the natural logistic would give 0.731).
    #[test]
    fn logit_inv_is_base_2_as_ns2() {
        assert!((logit_inv(1.0) - 2.0 / 3.0).abs() < 1e-15);
        assert!((logit_inv(-2.0) - 0.2).abs() < 1e-15);
    }

    #[test]
    fn inverse_cdf_interpolates_and_holds_its_ends() {
        static X: [f64; 3] = [0.0, 0.5, 1.0];
        static Y: [f64; 3] = [10.0, 20.0, 40.0];
        let f = InvCdf { x: &X, y: &Y };
        assert_eq!(f.at(0.25), 15.0);
        assert_eq!(f.at(0.75), 30.0);
        assert_eq!(f.at(0.5), 20.0);
        assert_eq!(f.at(-1.0), 10.0);
        assert_eq!(f.at(2.0), 40.0);
    }
}
