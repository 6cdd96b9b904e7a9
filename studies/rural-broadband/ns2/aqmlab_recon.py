# aqmlab in the set-up of the ns-2 reconstruction (lib/cell.tcl: CBR stand-ins for the video
# and the calls, 100 s, 20 s warm-up, seeds 1-2), the cell-by-cell counterpart of
# aqm/e2.tcl and e2.tcl (results-ns2-aqm.md). Run from the repository root:
#   .venv/bin/python studies/rural-broadband/ns2/aqmlab_recon.py [--no-web]
# --no-web leaves out the two PackMime loads (lib/cell.tcl's WEB = 0) and runs the 2 ms
# cells only.
import sys
import tomllib

import aqmlab
import polars as pl

doc = tomllib.loads(open("studies/rural-broadband/scenario.toml").read())
web = "--no-web" not in sys.argv[1:]
tr = [t for t in doc["traffic"] if t["kind"] == "tcp-bulk" or (web and t["kind"] == "web-packmime")]
tr.append({"kind": "udp-cbr", "name": "video", "hosts": "m", "rate": "468kbit", "size": "1040B", "start_jitter": "2s"})
tr.append({"kind": "udp-cbr", "name": "voice", "hosts": "m", "count": 3, "rate": "24kbit", "size": "60B", "start_jitter": "2s"})
tr.append({"kind": "udp-cbr", "name": "voice-r", "hosts": "m", "count": 3, "rate": "24kbit", "size": "60B", "direction": "reverse", "start_jitter": "2s"})
Q = {"pie": {"kind": "pie", "variant": "ns2", "bytemode": False, "limit": "100pkt", "tupdate": "30ms", "dq_threshold": "10KB"},
     "codel": {"kind": "codel", "variant": "ns2", "limit": "100pkt", "interval": "100ms"},
     "ared": {"kind": "ared", "limit": "100pkt", "defaults": "ns2", "bytemode": False, "queue_in_bytes": False}}
cells = [("codel", "2ms"), ("codel", "50ms"), ("pie", "2ms"), ("pie", "10ms"), ("pie", "50ms"), ("ared", "2ms"),
         ("ared", "50ms")]
for kind, t in cells if web else [c for c in cells if c[1] == "2ms"]:
    d, p = [], []
    for seed in (1, 2):
        r = aqmlab.run("studies/rural-broadband/scenario.toml", seed=seed,
                       set={"traffic": tr, "duration": "100s", "topology.bottleneck.qdisc": {**Q[kind], "target": t}})
        q = r.queues.filter(pl.col("link") == "r4->r5").row(0, named=True)
        d.append(q["sojourn_ms_mean"]); p.append(100 * q["drop_rate"])
    print(f"{kind} {t}: delay {sum(d)/2:.2f} ms, drops {sum(p)/2:.2f} %", flush=True)
