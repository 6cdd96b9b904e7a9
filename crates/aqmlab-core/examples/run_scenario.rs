//! Run a scenario file and print its summary (for profiling):
//! `cargo run --release -p aqmlab-core --example run_scenario -- FILE [--dump]`;
//! `--dump` also prints every other table (to check that an optimisation
//! leaves results unchanged).
fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario FILE");
    let text = std::fs::read_to_string(&path).expect("read scenario");
    let spec = aqmlab_core::ScenarioSpec::from_toml_str(&text).expect("scenario");
    let r = aqmlab_core::run_scenario(&spec, None, &Default::default()).expect("run");
    let s = r.table("summary");
    for name in [
        "wall_time_s",
        "events",
        "packets",
        "packet_hops",
        "events_per_s",
    ] {
        println!("{name} = {}", s.f64s(name)[0]);
    }
    if std::env::args().nth(2).as_deref() == Some("--dump") {
        for t in r.tables.iter().filter(|t| t.name != "summary") {
            println!("{t:?}");
        }
    }
}
