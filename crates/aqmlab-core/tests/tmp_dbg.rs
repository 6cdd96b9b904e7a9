mod common;
#[test]
fn dbg() {
    let s = std::fs::read_to_string("/tmp/s.toml").unwrap();
    let r = common::run(&s, 1);
    let t = r.table("timeseries");
    let time = t.f64s("time_ns");
    let q = t.f64s("sojourn_ms");
    let links = t.strs("link");
    for i in 0..time.len() {
        if links[i] == "L->R" && (time[i] as u64) % 1_000_000_000 == 0 {
            eprint!("{:.0}:{:.0} ", time[i] / 1e9, q[i]);
        }
    }
    if let Some(tt) = r.tables.iter().find(|t| t.name == "tcp") {
        let c = tt.f64s("cwnd_bytes");
        let ti = tt.f64s("time_ns");
        let fl = tt.f64s("flow");
        for i in 0..c.len() {
            if (ti[i] as u64) % 2_000_000_000 == 0 {
                eprint!("[{:.0} f{} {:.0}] ", ti[i] / 1e9, fl[i], c[i] / 1448.0);
            }
        }
    }
    eprintln!();
}
