//! The controller registry: the trait's defaults on a toy controller, reading `cc` as a
//! name with flat aliases or as a table, the errors, and the capabilities.

use super::cubic::CubicParams;
use super::ledbat::LedbatParams;
use super::vegas::VegasParams;
use super::*;
use crate::scenario::error::ScenarioError;
use crate::sim::time::NS_PER_MS;
use serde_json::json;

/// A toy controller that keeps cwnd constant: it writes one hook and takes every other
/// default (adding it to `KINDS` would be this file plus one `registry!` line).
struct ConstantWindow;

impl Controller for ConstantWindow {
    fn on_congestion(&mut self, w: &Window, _: &CongestionEvent) -> u64 {
        w.cwnd
    }
}

/// A controller that overrides nothing.
struct Defaults;

impl Controller for Defaults {}

fn window() -> Window {
    Window {
        cwnd: 10_000,
        ssthresh: u64::MAX,
        mss: 1000,
    }
}

fn loss(flight: u64) -> CongestionEvent {
    CongestionEvent {
        now: 0,
        flight,
        cause: Cause::Loss,
    }
}

#[test]
fn a_toy_controller_writes_only_its_own_hooks() {
    let mut c = ConstantWindow;
    let mut w = window();
    let a = AckSample {
        acked: 2000,
        ..AckSample::default()
    };
    c.observe(&a);
    c.pkts_acked(&mut w, &a);
    c.on_ack(&mut w, &a);
    assert_eq!((w.cwnd, w.ssthresh), (10_000, u64::MAX));
    assert_eq!(c.on_congestion(&w, &loss(8000)), 10_000);
    assert_eq!(c.send_window(&w), 10_000);
    assert!(!c.on_rate_sample(&mut w, &RateSample::default()));
    assert_eq!(c.pacing_rate(), 0);
    assert_eq!(c.min_tso_segs(1_000_000), 2);
    assert!(c.extra().is_nan());
}

/// `min_tso_segs` replaces the sender's BBR type test: Linux `bbr_min_tso_segs` gives 1
/// below `bbr_min_tso_rate` = 1.2 Mbit/s = 150 000 B/s of pacing rate, else 2; every
/// other controller has `sysctl_tcp_min_tso_segs` = 2.
#[test]
fn min_tso_segs_is_bbrs_below_1_2_mbit() {
    let build = |n: &str| CcSpec::named(n).unwrap().build(&TcpConfig::default());
    let bbr = build("bbr");
    assert_eq!(bbr.min_tso_segs(149_999), 1);
    assert_eq!(bbr.min_tso_segs(150_000), 2);
    assert_eq!(build("prague").min_tso_segs(100_000), 2);
    assert_eq!(build("cubic").min_tso_segs(100_000), 2);
}

/// The default ssthresh is RFC 5681 eq. (4), max(FlightSize/2, 2·SMSS): 8000 B in
/// flight → 4000 B; 3000 B → 2 SMSS = 2000 B.
#[test]
fn the_default_congestion_response_halves_the_flight() {
    let mut c = Defaults;
    let w = window();
    assert_eq!(c.on_congestion(&w, &loss(8000)), 4000);
    assert_eq!(c.on_congestion(&w, &loss(3000)), 2000);
}

fn read_cc(v: serde_json::Value) -> crate::scenario::error::Result<CcSpec> {
    let map = v.as_object().unwrap().clone();
    let mut p = Params::new("traffic[0]", &map, &[]);
    let spec = read(&mut p)?;
    p.finish("tcp-bulk")?;
    Ok(spec)
}

fn err(v: serde_json::Value) -> ScenarioError {
    read_cc(v).unwrap_err()
}

#[test]
fn cc_as_a_name_a_table_or_flat_aliases() {
    assert_eq!(read_cc(json!({})).unwrap(), CcSpec::NEWRENO);
    let vegas = CcSpec {
        kind: "vegas",
        params: CcParams::Vegas(VegasParams {
            alpha: 1,
            beta: 3,
            gamma: 1,
        }),
    };
    let table = json!({"cc": {"kind": "vegas", "alpha": 1, "beta": 3}});
    assert_eq!(read_cc(table).unwrap(), vegas);
    let flat = json!({"cc": "vegas", "vegas_alpha": 1, "vegas_beta": 3});
    assert_eq!(read_cc(flat).unwrap(), vegas);
    let ledbat = read_cc(json!({"cc": {"kind": "ledbat", "target": "50ms"}})).unwrap();
    assert_eq!(
        ledbat.params,
        CcParams::Ledbat(LedbatParams {
            target: 50 * NS_PER_MS,
            gain: 1.0
        })
    );
    let cubic = read_cc(json!({"cc": "cubic", "hystart": false})).unwrap();
    assert_eq!(
        cubic.params,
        CcParams::Cubic(CubicParams { hystart: false })
    );
    assert_eq!(
        read_cc(json!({"cc": {"kind": "cubic"}})).unwrap(),
        CcSpec::named("cubic").unwrap()
    );
}

#[test]
fn bad_cc_input_names_the_field_the_value_and_what_was_expected() {
    let e = err(json!({"cc": "vegass"}));
    assert_eq!(e.path, "traffic[0].cc");
    assert!(
        e.message.contains("\"vegass\"") && e.message.contains("did you mean \"vegas\""),
        "{e}"
    );
    let e = err(json!({"cc": {"kind": "cubik"}}));
    assert_eq!(e.path, "traffic[0].cc.kind");
    assert!(e.message.contains("did you mean \"cubic\""), "{e}");
    let e = err(json!({"cc": {"alpha": 1}}));
    assert_eq!(e.path, "traffic[0].cc.kind");
    let e = err(json!({"cc": 3}));
    assert_eq!(e.path, "traffic[0].cc");
    assert!(
        e.message.contains("3: expected a congestion control name"),
        "{e}"
    );
    // An unknown parameter in the table, with the closest known one.
    let e = err(json!({"cc": {"kind": "vegas", "alpah": 1}}));
    assert_eq!(e.path, "traffic[0].cc.alpah");
    assert!(e.message.contains("did you mean \"alpha\""), "{e}");
    // A bad value, under the name it was given as.
    let e = err(json!({"cc": {"kind": "vegas", "alpha": 5}}));
    assert_eq!(e.path, "traffic[0].cc.beta");
    assert!(e.message.contains("4: must be at least alpha (5)"), "{e}");
    let e = err(json!({"cc": "vegas", "vegas_beta": 1}));
    assert_eq!(e.path, "traffic[0].vegas_beta");
    let e = err(json!({"cc": "ledbat", "ledbat_target": "200ms"}));
    assert_eq!(e.path, "traffic[0].ledbat_target");
    assert!(e.message.contains("at most 100ms"), "{e}");
    let e = err(json!({"cc": {"kind": "dctcp", "g": 2.0}}));
    assert_eq!(e.path, "traffic[0].cc.g");
    // Both spellings at once; another controller's alias.
    let e = err(json!({"cc": {"kind": "vegas", "alpha": 1}, "vegas_alpha": 1}));
    assert_eq!(e.path, "traffic[0].vegas_alpha");
    assert!(e.message.contains("traffic[0].cc.alpha"), "{e}");
    let e = err(json!({"cc": "cubic", "vegas_alpha": 1}));
    assert_eq!(e.path, "traffic[0].vegas_alpha");
    // A table's parameter is not read from the entry without the alias prefix.
    let e = err(json!({"cc": "vegas", "alpha": 1}));
    assert_eq!(e.path, "traffic[0].alpha");
}

#[test]
fn capabilities_replace_type_tests() {
    let caps = |n: &str| CcSpec::named(n).unwrap().caps();
    assert!(caps("reno").reno_recovery && !caps("newreno").reno_recovery);
    assert_eq!(caps("cubic"), Caps::WINDOW);
    assert_eq!(caps("dctcp").ecn, EcnMode::Accurate);
    let prague = caps("prague");
    assert_eq!(
        (prague.ecn, prague.pacing, prague.pacing_ca_percent),
        (EcnMode::L4s, Pacing::Default, 100)
    );
    let bbr = caps("bbr");
    assert!(bbr.rate_samples && bbr.controls_cwnd && bbr.pacing == Pacing::Own);
    assert!(caps("dctcp").accurate_ecn() && caps("prague").accurate_ecn());
    assert!(!caps("vegas").accurate_ecn() && !caps("bbr").accurate_ecn());
    // Every registered kind builds with its defaults, and names it back.
    for name in names() {
        let spec = CcSpec::named(name).unwrap();
        assert_eq!(spec.name(), name);
        spec.build(&TcpConfig::default());
    }
}
