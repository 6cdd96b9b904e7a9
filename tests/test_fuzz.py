"""The scenario fuzzer's short mode (tests/fuzz/fuzz.py --short): a fixed set of mutated
example scenarios, each in its own process with a time and a memory limit. No case may
panic, crash, hang, run out of memory, fail uncleanly or break an invariant."""

import sys
from pathlib import Path

# importable by name: the case processes unpickle `fuzz._child`
sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
import fuzz


def test_fuzz_short_set_finds_no_new_failure():
    bases, docs = fuzz.base_scenarios(), fuzz.component_docs()
    cases = [fuzz.make_case(fuzz.SHORT_SEED, i, bases, docs) for i in range(fuzz.SHORT_CASES)]
    results = fuzz.run_cases(cases, jobs=2, timeout_s=60, mem_mb=2048)
    failing = {int(r["id"].split(":")[1]): r for r in results if r["status"] in fuzz.FAILURES}
    new = {i: f"[{r['status']}] {'; '.join(r['mutations'])}: {r.get('detail')}" for i, r in failing.items()}
    assert not new, f"fuzz cases failing (replay: tests/fuzz/fuzz.py --seed {fuzz.SHORT_SEED} --only I --show): {new}"
