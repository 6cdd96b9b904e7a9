//! The PackMime-HTTP random variables: J. Cao, W. S. Cleveland, Y. Gao, K. Jeffay,
//! F. D. Smith, M. C. Weigle, "Stochastic Models for Generating Synthetic HTTP Source
//! Traffic", IEEE INFOCOM 2004, as implemented in ns-2.35 `packmime/packmime_ranvar.cc`
//! (fitted parameters and inverse-CDF tables, reimplemented here; the tables are data
//! from that file).
//!
//! (`logitinv(x) = 2^x/(1 + 2^x)`, ns-2's base-2 form, `dist::logit_inv`.)
//! - Connection inter-arrivals: Weibull with shape `logitinv(0.352 + 0.388·log2 r)` and
//!   scale `1/(r·Γ(1 + 1/shape))` (mean `1/r`), r = new connections per second.
//! - Request sizes (ns-2 `PACKMIME_REQ_SIZE`, its "fsize1" fit): with probability 0.5
//!   the body quantile table A (≈ 51 to 422 bytes), else the tail table B in log2
//!   scale: `x = log2(1 − p)`, size `2^B(x)`.
//! - Response sizes (`PACKMIME_RSP_SIZE`, "fsize0"): runs of cache validations (state
//!   0, table A, ≈ 5 to 272 bytes) alternate with runs of downloads (state 1, table B in
//!   log2 scale); run lengths `⌈Weibull(shape_s, scale_s)⌉`, shapes
//!   `logitinv(0.718 + 0.357·log2 r)` and `logitinv(1.293 + 0.316·log2 r)`, scales
//!   0.775 and 3.11. The first run is a download run.
//! - Server delay: `1 / max(Weibull(0.63, 305), 10)` seconds (at most 0.1 s).
//! - Persistent connections (ns-2 ≥ 2.29): P(persistent) = 0.09 (`P_PERSISTENT`);
//!   pages per connection 1 with probability 0.82, else `⌊Weibull(1, 0.417) + 1⌋`
//!   (at least 2); objects per page 1 with probability 0.69, else
//!   `⌊Weibull(1, 1.578) + 1⌋`; gaps between pages `2^(μ_b + √s_b·N·√1.21)` and between
//!   objects `2^(μ_w + √s_w·N·√1.57)` s, response sizes `2^(μ + √s·N·√2.43)` bytes,
//!   where (μ_b, s_b) ~ (N(3.22, 0.73), Γ(1.85, 1/1.85)), (μ_w, s_w) ~ (N(−4.15, 3.12),
//!   Γ(2.35, 1/2.35)), (μ, s) ~ (N(10.62, 0.94), Γ(3.22, 1/3.22)) are drawn once per
//!   generator, as ns-2 draws them once per random-variable object.
//!
//! Deviation: ns-2 drives the inter-arrivals and request sizes through a fractional
//! ARIMA process (long-range dependence, d = 0.33 and 0.31) whose Gaussian output is
//! mapped through the normal CDF to the marginal. Here the uniform is drawn i.i.d., so
//! the marginal distributions are the same and the long-range correlation is absent.
//! Sizes beyond the tables are held at the table end (see `dist::InvCdf`).

use crate::app::dist::variates::{self as dist, InvCdf};
use crate::sim::rng::Rng;

static FSIZE0_A_X: [f64; 100] = [
    1e-04, 0.0102, 0.0203, 0.0304, 0.0405, 0.0506, 0.0607, 0.0708, 0.0809, 0.091, 0.1011, 0.1112,
    0.1213, 0.1314, 0.1415, 0.1516, 0.1617, 0.1718, 0.1819, 0.192, 0.2021, 0.2122, 0.2223, 0.2324,
    0.2425, 0.2526, 0.2627, 0.2728, 0.2829, 0.293, 0.3031, 0.3132, 0.3233, 0.3334, 0.3435, 0.3536,
    0.3637, 0.3738, 0.3839, 0.394, 0.4041, 0.4142, 0.4243, 0.4344, 0.4445, 0.4546, 0.4647, 0.4748,
    0.4849, 0.495, 0.5051, 0.5152, 0.5253, 0.5354, 0.5455, 0.5556, 0.5657, 0.5758, 0.5859, 0.596,
    0.6061, 0.6162, 0.6263, 0.6364, 0.64649, 0.65659, 0.66669, 0.67679, 0.68689, 0.69699, 0.70709,
    0.71719, 0.72729, 0.73739, 0.74749, 0.75759, 0.76769, 0.77779, 0.78789, 0.79799, 0.80809,
    0.81819, 0.82829, 0.83839, 0.84849, 0.85859, 0.86869, 0.87879, 0.88889, 0.89899, 0.90909,
    0.91919, 0.92929, 0.93939, 0.94949, 0.95959, 0.96969, 0.97979, 0.98989, 0.99999,
];
static FSIZE0_A_Y: [f64; 100] = [
    4.645, 22.7357, 40.8041, 53.0108, 61.468, 64.4307, 67.3933, 69.6925, 71.3981, 73.1037, 74.8092,
    80.6677, 87.4875, 93.5693, 97.6514, 101.249, 104.58, 107.021, 109.195, 111.087, 112.752,
    114.273, 115.545, 116.78, 118.014, 119.248, 120.483, 121.551, 122.51, 123.441, 124.312,
    125.119, 125.927, 126.734, 127.524, 128.288, 129.053, 129.818, 130.582, 131.347, 132.143,
    132.973, 133.835, 134.71, 135.603, 136.537, 137.47, 138.404, 139.337, 140.28, 141.233, 142.186,
    143.139, 144.092, 145.045, 145.979, 146.904, 147.816, 148.71, 149.589, 150.485, 151.478,
    152.703, 153.928, 155.403, 157.294, 159.389, 161.953, 165.018, 168.54, 172.7, 177.629, 183.365,
    189.766, 195.845, 200.636, 203.987, 206.43, 208.611, 211.114, 214.424, 218.008, 221.925,
    225.722, 229.242, 232.747, 236.235, 239.952, 244.076, 248.68, 253.434, 257.857, 261.539,
    264.471, 266.742, 268.487, 269.793, 270.794, 271.571, 272.234,
];
static FSIZE0_B_X: [f64; 100] = [
    -18.1793, -17.9957, -17.8121, -17.6285, -17.4449, -17.2613, -17.0777, -16.8941, -16.7104,
    -16.5268, -16.3432, -16.1596, -15.976, -15.7924, -15.6088, -15.4252, -15.2415, -15.0579,
    -14.8743, -14.6907, -14.5071, -14.3235, -14.1399, -13.9563, -13.7726, -13.589, -13.4054,
    -13.2218, -13.0382, -12.8546, -12.671, -12.4874, -12.3038, -12.1201, -11.9365, -11.7529,
    -11.5693, -11.3857, -11.2021, -11.0185, -10.8349, -10.6513, -10.4677, -10.284, -10.1004,
    -9.91682, -9.7332, -9.54959, -9.36598, -9.18237, -8.99876, -8.81515, -8.63154, -8.44792,
    -8.26431, -8.0807, -7.89709, -7.71348, -7.52987, -7.34626, -7.16265, -6.97903, -6.79542,
    -6.61181, -6.4282, -6.24459, -6.06098, -5.87737, -5.69376, -5.51014, -5.32653, -5.14292,
    -4.95931, -4.7757, -4.59209, -4.40848, -4.22486, -4.04125, -3.85764, -3.67403, -3.49042,
    -3.30681, -3.1232, -2.93959, -2.75597, -2.57236, -2.38875, -2.20514, -2.02153, -1.83792,
    -1.65431, -1.47069, -1.28708, -1.10347, -0.91986, -0.73625, -0.55264, -0.36903, -0.18542,
    -0.0018,
];
static FSIZE0_B_Y: [f64; 100] = [
    25.8765, 25.7274, 25.5782, 25.4291, 25.2799, 25.1308, 24.9817, 24.8325, 24.6834, 24.5342,
    24.3851, 24.2359, 24.0868, 23.9377, 23.7885, 23.6394, 23.4902, 23.3411, 23.1919, 23.0428,
    22.8937, 22.7445, 22.5954, 22.4462, 22.2971, 22.1479, 21.9988, 21.8497, 21.7005, 21.5514,
    21.4022, 21.2531, 21.104, 20.9548, 20.8057, 20.6565, 20.5074, 20.3582, 20.2091, 20.06, 19.9108,
    19.7617, 19.6125, 19.4634, 19.3143, 19.1651, 19.016, 18.8668, 18.7177, 18.5685, 18.4194,
    18.2703, 18.1211, 17.972, 17.8228, 17.6737, 17.5245, 17.3754, 17.2263, 17.0771, 16.928,
    16.7788, 16.6297, 16.4806, 16.3314, 16.1823, 16.0331, 15.8842, 15.739, 15.6026, 15.4804,
    15.3778, 15.3003, 15.2465, 15.2045, 15.1597, 15.0978, 15.0044, 14.8675, 14.6932, 14.4968,
    14.2932, 14.0976, 13.9248, 13.7783, 13.6435, 13.5042, 13.3444, 13.1478, 12.9005, 12.6008,
    12.2512, 11.8545, 11.4133, 10.9303, 10.4104, 9.86075, 9.28886, 8.70213, 8.10797,
];
static FSIZE1_A_X: [f64; 100] = [
    3e-05, 0.01013, 0.02023, 0.03033, 0.04043, 0.05053, 0.06063, 0.07074, 0.08084, 0.09094,
    0.10104, 0.11114, 0.12124, 0.13134, 0.14144, 0.15154, 0.16164, 0.17174, 0.18184, 0.19194,
    0.20204, 0.21214, 0.22225, 0.23235, 0.24245, 0.25255, 0.26265, 0.27275, 0.28285, 0.29295,
    0.30305, 0.31315, 0.32325, 0.33335, 0.34345, 0.35355, 0.36365, 0.37376, 0.38386, 0.39396,
    0.40406, 0.41416, 0.42426, 0.43436, 0.44446, 0.45456, 0.46466, 0.47476, 0.48486, 0.49496,
    0.50506, 0.51516, 0.52526, 0.53537, 0.54547, 0.55557, 0.56567, 0.57577, 0.58587, 0.59597,
    0.60607, 0.61617, 0.62627, 0.63637, 0.64647, 0.65657, 0.66667, 0.67677, 0.68688, 0.69698,
    0.70708, 0.71718, 0.72728, 0.73738, 0.74748, 0.75758, 0.76768, 0.77778, 0.78788, 0.79798,
    0.80808, 0.81818, 0.82828, 0.83839, 0.84849, 0.85859, 0.86869, 0.87879, 0.88889, 0.89899,
    0.90909, 0.91919, 0.92929, 0.93939, 0.94949, 0.95959, 0.96969, 0.97979, 0.98989, 1.0,
];
static FSIZE1_A_Y: [f64; 100] = [
    50.9777, 93.8217, 123.301, 146.594, 168.813, 184.263, 193.95, 200.037, 204.696, 210.069,
    217.623, 226.668, 236.226, 245.269, 253.057, 259.624, 265.16, 269.811, 273.754, 277.165,
    280.193, 283.062, 285.893, 288.79, 291.744, 294.738, 297.754, 300.776, 303.784, 306.763,
    309.698, 312.564, 315.349, 318.042, 320.624, 323.107, 325.49, 327.782, 329.987, 332.11,
    334.159, 336.135, 338.047, 339.898, 341.695, 343.443, 345.145, 346.808, 348.439, 350.04,
    351.619, 353.177, 354.716, 356.239, 357.744, 359.233, 360.709, 362.17, 363.619, 365.056,
    366.483, 367.9, 369.31, 370.711, 372.106, 373.496, 374.881, 376.263, 377.643, 379.021, 380.399,
    381.778, 383.159, 384.542, 385.929, 387.321, 388.719, 390.121, 391.528, 392.939, 394.355,
    395.775, 397.199, 398.626, 400.057, 401.491, 402.928, 404.368, 405.81, 407.255, 408.702,
    410.151, 411.602, 413.054, 414.508, 415.963, 417.418, 418.874, 420.331, 421.788,
];
static FSIZE1_B_X: [f64; 100] = [
    -17.7791, -17.5996, -17.4201, -17.2406, -17.0611, -16.8816, -16.7021, -16.5226, -16.3431,
    -16.1635, -15.984, -15.8045, -15.625, -15.4455, -15.266, -15.0865, -14.907, -14.7275, -14.548,
    -14.3685, -14.189, -14.0095, -13.83, -13.6505, -13.471, -13.2915, -13.112, -12.9325, -12.753,
    -12.5735, -12.394, -12.2145, -12.035, -11.8555, -11.676, -11.4965, -11.317, -11.1375, -10.958,
    -10.7785, -10.599, -10.4194, -10.24, -10.0604, -9.88094, -9.70144, -9.52193, -9.34243,
    -9.16293, -8.98342, -8.80392, -8.62442, -8.44491, -8.26541, -8.08591, -7.9064, -7.7269,
    -7.5474, -7.3679, -7.18839, -7.00889, -6.82939, -6.64988, -6.47038, -6.29088, -6.11137,
    -5.93187, -5.75237, -5.57286, -5.39336, -5.21386, -5.03435, -4.85485, -4.67535, -4.49584,
    -4.31634, -4.13684, -3.95733, -3.77783, -3.59833, -3.41883, -3.23932, -3.05982, -2.88032,
    -2.70081, -2.52131, -2.34181, -2.1623, -1.9828, -1.8033, -1.62379, -1.44429, -1.26479,
    -1.08528, -0.90578, -0.72628, -0.54678, -0.36727, -0.18777, -0.00827,
];
static FSIZE1_B_Y: [f64; 100] = [
    19.7578, 19.6369, 19.5159, 19.3949, 19.274, 19.153, 19.032, 18.9111, 18.7901, 18.6691, 18.5482,
    18.4272, 18.3063, 18.1853, 18.0643, 17.9434, 17.8224, 17.7014, 17.5805, 17.4595, 17.3386,
    17.2176, 17.0966, 16.9757, 16.8547, 16.7337, 16.6128, 16.4918, 16.3708, 16.2499, 16.1289,
    16.0079, 15.887, 15.766, 15.6451, 15.5241, 15.4031, 15.2822, 15.1612, 15.0402, 14.9193,
    14.7983, 14.6774, 14.5564, 14.4354, 14.3145, 14.1935, 14.0725, 13.9516, 13.8306, 13.7096,
    13.5887, 13.4677, 13.3468, 13.2258, 13.1048, 12.9839, 12.8629, 12.7419, 12.621, 12.5, 12.3791,
    12.2581, 12.1371, 12.0162, 11.8952, 11.7742, 11.6533, 11.5323, 11.4113, 11.2904, 11.1694,
    11.0485, 10.9275, 10.8065, 10.6856, 10.5646, 10.4436, 10.3239, 10.2092, 10.1034, 10.0105,
    9.93459, 9.87896, 9.8393, 9.80562, 9.76884, 9.71919, 9.64712, 9.54737, 9.42776, 9.29852,
    9.16992, 9.05219, 8.95525, 8.88155, 8.82669, 8.78593, 8.75459, 8.72795,
];

/// Response sizes: cache-validation body (state 0) and download tail (state 1).
pub static RSP_A: InvCdf = InvCdf {
    x: &FSIZE0_A_X,
    y: &FSIZE0_A_Y,
};
pub static RSP_B: InvCdf = InvCdf {
    x: &FSIZE0_B_X,
    y: &FSIZE0_B_Y,
};
/// Request sizes: body (A, probability 0.5) and tail (B).
pub static REQ_A: InvCdf = InvCdf {
    x: &FSIZE1_A_X,
    y: &FSIZE1_A_Y,
};
pub static REQ_B: InvCdf = InvCdf {
    x: &FSIZE1_B_X,
    y: &FSIZE1_B_Y,
};
/// ns-2 `FSIZE1_PROB_A`.
pub const REQ_PROB_A: f64 = 0.5;

/// A tail-table quantile: `p` → `2^T(log2(1 − p))`.
pub fn tail_size(t: &InvCdf, p: f64) -> f64 {
    libm::exp2(t.at(libm::log2(1.0 - p)))
}

/// Request size at probability `p` of the mixture.
pub fn request_quantile(p: f64) -> f64 {
    if p > REQ_PROB_A {
        tail_size(&REQ_B, (p - REQ_PROB_A) / (1.0 - REQ_PROB_A))
    } else {
        REQ_A.at(p / REQ_PROB_A)
    }
}

/// The Weibull inter-arrival (shape, scale in seconds) for `rate` connections/s.
pub fn arrival_weibull(rate: f64) -> (f64, f64) {
    let shape = dist::logit_inv(0.352 + 0.388 * libm::log2(rate));
    let scale = 1.0 / (rate * libm::exp(dist::ln_gamma(1.0 + 1.0 / shape)));
    (shape, scale)
}

/// 2^(μ + √s·N·√v) with (μ, s) drawn once.
#[derive(Clone, Debug)]
pub struct Log2Normal {
    loc: f64,
    sd: f64,
}

impl Log2Normal {
    /// μ ~ N(m, v_loc), s ~ Gamma(shape, 1/shape), error variance `v_err`.
    pub fn draw(rng: &mut Rng, m: f64, v_loc: f64, shape: f64, v_err: f64) -> Self {
        let loc = m + libm::sqrt(v_loc) * dist::normal(rng);
        let s = dist::gamma(rng, shape, 1.0 / shape);
        Log2Normal {
            loc,
            sd: libm::sqrt(s) * libm::sqrt(v_err),
        }
    }

    pub fn sample(&self, rng: &mut Rng) -> f64 {
        libm::exp2(self.loc + self.sd * dist::normal(rng))
    }
}

/// The PackMime generators of one client–server cloud.
#[derive(Clone, Debug)]
pub struct Model {
    pub rate: f64,
    arrive: (f64, f64),
    run_shape: [f64; 2],
    /// Response-size run state (0 cache validation, 1 download) and what is left of it.
    state: usize,
    run_left: i64,
    pub page_gap: Log2Normal,
    pub obj_gap: Log2Normal,
    pub persist_rsp: Log2Normal,
}

impl Model {
    pub fn new(rate: f64, rng: &mut Rng) -> Self {
        let l2 = libm::log2(rate);
        Model {
            rate,
            arrive: arrival_weibull(rate),
            run_shape: [
                dist::logit_inv(0.718 + 0.357 * l2),
                dist::logit_inv(1.293 + 0.316 * l2),
            ],
            state: 0,
            run_left: 0,
            page_gap: Log2Normal::draw(rng, 3.22, 0.73, 1.85, 1.21),
            obj_gap: Log2Normal::draw(rng, -4.15, 3.12, 2.35, 1.57),
            persist_rsp: Log2Normal::draw(rng, 10.62, 0.94, 3.22, 2.43),
        }
    }

    /// Seconds to the next new connection.
    pub fn arrival_gap(&self, rng: &mut Rng) -> f64 {
        dist::weibull(rng, self.arrive.0, self.arrive.1)
    }

    pub fn request_size(&self, rng: &mut Rng) -> f64 {
        request_quantile(rng.uniform())
    }

    /// The next response size (advancing the cache/download runs).
    pub fn response_size(&mut self, rng: &mut Rng) -> f64 {
        const RUN_SCALE: [f64; 2] = [0.775, 3.11];
        if self.run_left <= 0 {
            self.state = 1 - self.state;
            let s = self.state;
            self.run_left = libm::ceil(dist::weibull(rng, self.run_shape[s], RUN_SCALE[s])) as i64;
        }
        self.run_left -= 1;
        let p = rng.uniform();
        if self.state == 1 {
            tail_size(&RSP_B, p)
        } else {
            RSP_A.at(p)
        }
    }

    /// Server delay, seconds.
    pub fn server_delay(rng: &mut Rng) -> f64 {
        1.0 / dist::weibull(rng, 0.63, 305.0).max(10.0)
    }

    /// Pages on a persistent connection.
    pub fn pages(rng: &mut Rng) -> u32 {
        if rng.chance(0.82) {
            return 1;
        }
        (libm::floor(dist::weibull(rng, 1.0, 0.417) + 1.0) as u32).max(2)
    }

    /// Objects in one page of a persistent connection.
    pub fn objects(rng: &mut Rng) -> u32 {
        if rng.chance(0.69) {
            return 1;
        }
        (libm::floor(dist::weibull(rng, 1.0, 1.578) + 1.0) as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fraction of `n` draws at or below `q` is `p` within 5 standard errors.
    fn check_fraction(mut draw: impl FnMut() -> f64, q: f64, p: f64, what: &str) {
        let n = 100_000;
        let below = (0..n).filter(|_| draw() <= q).count() as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (below - p).abs() < 5.0 * se,
            "{what}: P(X ≤ {q}) = {below}, expected {p}"
        );
    }

    /// Connection gaps at 8/s (the rural study): shape logitinv(0.352 + 0.388·3) =
    /// 2^1.516/(1 + 2^1.516) = 0.74093; scale = 1/(8·Γ(1 + 1/0.74093)) = 0.10392 s;
    /// mean 1/8 s. Median scale·ln2^(1/shape) = 0.06337 s.
    #[test]
    fn arrival_gaps_match_the_fitted_weibull() {
        let (k, l) = arrival_weibull(8.0);
        assert!((k - 0.74093).abs() < 1e-4, "{k}");
        assert!((l - 0.10392).abs() < 1e-4, "{l}");
        let mut r = Rng::stream(1, "pm.arrive");
        let m = Model::new(8.0, &mut r);
        let n = 200_000;
        let mean = (0..n).map(|_| m.arrival_gap(&mut r)).sum::<f64>() / n as f64;
        // sd of Weibull(0.741): λ·√(Γ(1+2/k) − Γ(1+1/k)²) ≈ 0.1714 s.
        assert!(
            (mean - 0.125).abs() < 5.0 * 0.1714 / (n as f64).sqrt(),
            "{mean}"
        );
        check_fraction(|| m.arrival_gap(&mut r), 0.06337, 0.5, "gap median");
    }

    /// Requests: half the mass in table A (≤ 421.788 B), the other half in the tail
    /// (≥ 2^8.72795 = 424 B); P(size ≤ A(0.5) = 351.619) = 0.25 (p/0.5 = 0.50506 is
    /// the table point, so 351.619 is the A-quantile at 0.50506: P = 0.25253); the
    /// tail at x = log2(1 − p') = −1 (p' = 0.5): B(−1) by interpolation between
    /// (−1.08528, 9.05219) and (−0.90578, 8.95525) = 9.00612, so
    /// P(size ≤ 2^9.00612 = 514.2) = 0.5 + 0.5·0.5 = 0.75.
    #[test]
    fn request_sizes_match_the_fitted_quantiles() {
        let mut r = Rng::stream(2, "pm.req");
        let m = Model::new(8.0, &mut r);
        check_fraction(|| m.request_size(&mut r), 421.788, 0.5, "body/tail split");
        check_fraction(|| m.request_size(&mut r), 351.619, 0.25253, "body quantile");
        let q = libm::exp2(9.00612);
        assert!(
            (request_quantile(0.75) - q).abs() < 0.01,
            "{}",
            request_quantile(0.75)
        );
        check_fraction(|| m.request_size(&mut r), q, 0.75, "tail quantile");
    }

    /// Download responses: P(size ≤ 2^B(x)) = 1 − 2^x; at x = −1 (the median), B(−1)
    /// between (−1.10347, 11.4133) and (−0.91986, 10.9303): 11.1411, 2^11.1411 =
    /// 2258.4 B. Cache validations: the median of table A between (0.4950, 140.28) and
    /// (0.5051, 141.233): 140.75 B.
    #[test]
    fn response_sizes_match_the_fitted_quantiles() {
        let mut r = Rng::stream(3, "pm.rsp");
        let med = tail_size(&RSP_B, 0.5);
        assert!((med - 2258.4).abs() < 0.5, "{med}");
        check_fraction(
            || tail_size(&RSP_B, r.uniform()),
            med,
            0.5,
            "download median",
        );
        check_fraction(
            || tail_size(&RSP_B, r.uniform()),
            tail_size(&RSP_B, 0.9),
            0.9,
            "p90",
        );
        assert!((RSP_A.at(0.5) - 140.75).abs() < 0.01, "{}", RSP_A.at(0.5));
    }

    /// Runs alternate, starting with downloads; mean download run length at 8/s:
    /// E⌈W⌉ with W ~ Weibull(logitinv(1.293 + 0.948) = 2^2.241/(1 + 2^2.241) = 0.82540,
    /// 3.11), whose mean 3.11·Γ(1 + 1/0.82540) = 3.448 — so ⌈W⌉ averages between
    /// 3.448 and 4.448.
    #[test]
    fn response_runs_alternate_with_the_fitted_lengths() {
        let mut r = Rng::stream(4, "pm.runs");
        let mut m = Model::new(8.0, &mut r);
        let (mut runs, mut in_run, mut total) = (0u64, 0u64, 0u64);
        let mut last_state = 0;
        for _ in 0..200_000 {
            m.response_size(&mut r);
            if m.state != last_state {
                if last_state == 1 {
                    runs += 1;
                    total += in_run;
                }
                in_run = 0;
                last_state = m.state;
            }
            if m.state == 1 {
                in_run += 1;
            }
        }
        let mean = total as f64 / runs as f64;
        assert!(mean > 3.448 && mean < 4.448, "{mean}");
    }

    /// Server delay: 0.1 s exactly when W < 10: 1 − exp(−(10/305)^0.63) = 0.10963.
    #[test]
    fn server_delay_is_capped_at_100ms_with_the_fitted_odds() {
        let mut r = Rng::stream(5, "pm.delay");
        check_fraction(
            || Model::server_delay(&mut r),
            0.1 - 1e-12,
            1.0 - 0.10963,
            "cap",
        );
    }
}
