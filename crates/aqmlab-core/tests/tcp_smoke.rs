mod common;

#[test]
fn smoke() {
    for f in ["single-tcp.toml", "five-tcp.toml"] {
        let r = common::run(&common::example(f), 1);
        for t in ["summary", "queues", "flows"] {
            let t = r.table(t);
            eprintln!(
                "{}: {:?}",
                t.name,
                t.columns
                    .iter()
                    .map(|(n, c)| format!("{n}={c:?}"))
                    .collect::<Vec<_>>()
            );
        }
    }
}
