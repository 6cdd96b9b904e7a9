"""Generated inputs of the rural-broadband study: the video's Evalvid trace and PSNR model.

The paper (Section III, Table I) streams a 1065-frame CIF sample (PARIS) at 24 frames/s
and about 450 kbit/s and scores it by PSNR; aqmlab loops it over the run. We generate
that sequence (assumed content, see
``aqmlab.video.scenes``: six scenes of different motion and texture with camera grain),
encode it with FFmpeg's MPEG-4 Part 2 encoder (GOP 12, no B frames, one-pass rate
control; the 413 kbit/s target gives about 452 kbit/s of frames over the clip, the
encoder overshooting as it converges) and write

* the Evalvid trace the ``video`` traffic sends (``trace``),
* the PSNR model table it scores the received stream with (``psnr_model``): PSNR of
  each frame shown frozen for gaps 0..``MAX_GAP`` frames (longer freezes use the
  ``MAX_GAP`` column).

Both go to the study's cache folder under a name that hashes the recipe, the generating
code and the PyAV/FFmpeg versions, so a changed recipe or encoder never reuses stale
files, and the sweeps' run ids change with them. Building takes 10–45 s (frames 3 s,
encoding 5 s, decoding 1 s, table 3–4 s on one idle core; more when the cores are
busy); later runs reuse the files.
The trace is 31 KB, the table 1.4 MB (1065 frames × 98 gaps).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

#: The clip (the paper's Table I: 1065 frames, CIF, 24 frames/s, about 450 kbit/s).
CLIP = {"n": 1065, "fps": 24, "gop": 12, "bit_rate": 413_000, "seed": 7, "grain": 4.0}
#: Longest freeze the PSNR table resolves exactly: 4 s (8 GOPs); a frame deeper in a
#: freeze is scored against the picture 96 frames back, within a scene nearly as unlike
#: it as any older one. Under DropTail and CoDel freezes stay shorter (99th percentile
#: 45 and 95 frames); under ARED 18 % of the frames lie deeper, which makes its mean PSNR
#: 0.16 dB too high (README.md, "PSNR"), against 12 dB between ARED and DropTail.
MAX_GAP = 96
#: Decimals of the table's PSNR values (0.001 dB): 1.4 MB instead of 2.7 MB, and each
#: run's simulator reads it in about 11 ms instead of 58 ms (shorter numbers parse faster).
DIGITS = 3
#: The video entry in scenario.toml.
VIDEO = "traffic[4]"


def recipe_key() -> str:
    """A short hash of everything the files depend on."""
    import av

    from aqmlab.video import clip, scenes

    h = hashlib.sha256()
    h.update(json.dumps([CLIP, MAX_GAP, DIGITS, av.__version__, str(av.library_versions)], sort_keys=True).encode())
    for mod in (clip, scenes):
        h.update(inspect.getsource(mod).encode())
    return h.hexdigest()[:12]


def paths(cache: Path) -> tuple[Path, Path]:
    """Where the current recipe's trace and model table live in ``cache``."""
    key = recipe_key()
    return cache / f"rural-cif-{key}.trace", cache / f"rural-cif-{key}-psnr.csv"


def build(cache: Path) -> tuple[Path, Path]:
    """Encode the clip and write its trace and model table into ``cache``."""
    from aqmlab.video.clip import Clip
    from aqmlab.video.scenes import scene_frames

    trace, model = paths(cache)
    cache.mkdir(parents=True, exist_ok=True)
    c = CLIP
    clip = Clip.encode(scene_frames(c["n"], seed=c["seed"], grain=c["grain"]), fps=c["fps"], gop=c["gop"],
                       bit_rate=c["bit_rate"])
    # Write beside, then rename: a concurrent or interrupted build never leaves half a file.
    for path, write in ((trace, clip.write_trace), (model, lambda p: clip.write_model(p, MAX_GAP, DIGITS))):
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        write(tmp)
        os.replace(tmp, path)
    return trace, model


def prepare(cache: Path) -> dict:
    """The overrides pointing the scenario's video at the cached files, built first if
    missing. The build runs in a child interpreter with one BLAS thread: the table's
    matrix products with OpenBLAS's default threads were five times slower (86 s against
    16 s) on a machine whose cores other jobs keep busy, and the thread count can only
    be set before numpy loads."""
    trace, model = paths(Path(cache))
    if not (trace.exists() and model.exists()):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        subprocess.run([sys.executable, __file__, str(cache)], env=env, check=True)
    return {f"{VIDEO}.trace": str(trace), f"{VIDEO}.psnr_model": str(model)}


if __name__ == "__main__":
    build(Path(sys.argv[1]))
