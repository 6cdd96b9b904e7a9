"""Per-frame PSNR on luminance and Evalvid's PSNR → MOS table (Klaue, Rathke, Wolisz,
"EvalVid — A Framework for Video Transmission and Quality Evaluation", TOOLS 2003;
docs/traffic/video.md).

``PSNR = 20·log10(255/√MSE)`` over the Y plane; identical pictures (MSE = 0) get the
cap of 100 dB. MOS: > 37 dB → 5, > 31 → 4, > 25 → 3, > 20 → 2, else 1 (Evalvid's
``mos`` tool; the boundaries go to the lower grade)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

#: PSNR of identical pictures.
PSNR_CAP_DB = 100.0


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR (dB) of two 8-bit luminance planes of the same shape."""
    if a.shape != b.shape:
        raise ValueError(f"planes differ in shape: {a.shape} vs {b.shape}")
    # Exact integer sum of squares (int64: a CIF plane can exceed 2³¹), ~9× faster
    # than a float64 mean.
    d = (a.astype(np.int64) - b).ravel()
    mse = int(np.dot(d, d)) / d.size
    if mse == 0.0:
        return PSNR_CAP_DB
    return min(PSNR_CAP_DB, float(10.0 * np.log10(255.0**2 / mse)))


def mos(psnr_db: ArrayLike) -> np.ndarray | int:
    """Evalvid MOS (1-5) of a PSNR value or array."""
    p = np.asarray(psnr_db, dtype=float)
    m = np.select([p > 37, p > 31, p > 25, p > 20], [5, 4, 3, 2], 1)
    return int(m) if m.ndim == 0 else m
