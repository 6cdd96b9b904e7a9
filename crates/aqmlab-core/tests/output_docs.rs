//! docs/output.md lists every column of every table: checked against the tables a run
//! with every opt-in output produces (the schemas are declared once, in `results.rs`).

mod common;

#[test]
fn every_column_of_every_table_is_documented() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/output.md"),
    )
    .unwrap();
    let r = common::run(
        r#"
duration = "2s"
output = { timeseries = "100ms", tcp_timeseries = "100ms", sojourn_hist = true, drops = true, owd_hist = true }
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "2Mbit"
delay = "10ms"
qdisc = { kind = "fq_codel", child_stats = true }
[[topology.hosts]]
name = "a"
[[traffic]]
kind = "tcp-bulk"
hosts = "a"
[[traffic]]
kind = "udp-cbr"
hosts = "a"
rate = "3Mbit"
[[traffic]]
kind = "voip"
hosts = "a"
[[traffic]]
kind = "rtp"
hosts = "a"
rate = "100kbit"
[[traffic]]
kind = "video"
hosts = "a"
frame_rows = true
[[traffic]]
kind = "web-packmime"
hosts = "a"
rate = 5.0
page_rows = true
"#,
        1,
    );
    let names: Vec<&str> = r.tables.iter().map(|t| t.name.as_str()).collect();
    for t in [
        "summary",
        "queues",
        "flows",
        "apps",
        "child_queues",
        "timeseries",
        "tcp",
        "sojourn_hist",
        "drops",
        "app_flows",
        "owd_hist",
        "frames",
        "pages",
    ] {
        assert!(names.contains(&t), "no table {t}: {names:?}");
    }
    for t in &r.tables {
        let head = format!("\n## {}", t.name);
        let start = doc
            .find(&format!("{head} "))
            .or_else(|| doc.find(&format!("{head}\n")))
            .unwrap_or_else(|| panic!("docs/output.md has no section for table `{}`", t.name));
        let body = &doc[start + head.len()..];
        let section = &body[..body.find("\n## ").unwrap_or(body.len())];
        for name in t.names() {
            assert!(
                section.contains(&format!("`{name}`")),
                "docs/output.md, section `{}`: column `{name}` is not documented",
                t.name
            );
        }
    }
}
