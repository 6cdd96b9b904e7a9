"""The emulator process: ``python -m aqmlab.emulate.pump CONFIG.json``.

Runs the Rust data path (`_core.emulate`) with stdin as its control channel (``g``
starts the clock, ``q`` or end-of-file stops it) and stdout for ``ready`` and, at the
end, one JSON line with the report. A separate process so that the emulator thread
has no GIL to share and the parent can always end it (closing stdin, then killing it).
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    from aqmlab import _core
    from aqmlab.errors import ScenarioError

    doc = json.load(open(sys.argv[1]))
    try:
        report = _core.emulate(json.dumps(doc["scenario"]), json.dumps(doc["config"]))
    except ScenarioError as e:
        print(f"scenario error: {e}", file=sys.stderr, flush=True)
        return 2
    except Exception as e:  # any failure is reported to the parent, which raises
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 1
    sys.stdout.write(report + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
