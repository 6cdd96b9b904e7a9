"""A longer synthetic test sequence made of scenes with different motion and texture.

The rural-broadband study (Grigorescu, Kulatunga & Fairhurst 2013, §III and Table I)
scores a 1065-frame CIF sequence by PSNR.
No video can be downloaded here, so :func:`scene_frames` generates one (assumed
content): six scenes of 1065 / 6 frames, cut hard from one to the next, chosen so a
frozen picture costs little in a calm scene and much in a busy one — the PSNR of a
freeze then depends on *where* the loss falls, as with natural video:

====  ======================================  ==========================================
 #    scene                                   motion, texture
====  ======================================  ==========================================
 0    "talking head": an ellipse nodding      little motion, smooth background
      slowly in front of a still gradient
 1    slow pan (1 px/frame) over a landscape   slow, medium detail (smoothed noise)
 2    fast scroll (6 px/frame) of fine blocks  fast, high detail
 3    zoom into a textured picture             all pixels move, medium detail
 4    still sharp pattern, a disc crossing     local motion on a static background
      it and the light dimming
 5    diagonal pan (2, 1 px/frame) with two    medium motion and detail
      objects crossing
====  ======================================  ==========================================

Everything is a deterministic function of ``seed`` (numpy's PCG64 generator).
"""

from __future__ import annotations

import math

import numpy as np

from .clip import CIF


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    """Value noise: random values on a ``cell``-pixel grid, bilinearly interpolated
    (float32 in [0, 255])."""
    gh, gw = h // cell + 2, w // cell + 2
    g = rng.uniform(0, 255, size=(gh, gw)).astype(np.float32)
    y = np.arange(h, dtype=np.float32) / cell
    x = np.arange(w, dtype=np.float32) / cell
    y0, x0 = y.astype(int), x.astype(int)
    fy, fx = (y - y0)[:, None], (x - x0)[None, :]
    a = g[y0][:, x0] * (1 - fx) + g[y0][:, x0 + 1] * fx
    b = g[y0 + 1][:, x0] * (1 - fx) + g[y0 + 1][:, x0 + 1] * fx
    out: np.ndarray = a * (1 - fy) + b * fy
    return out


def _blocks(rng: np.random.Generator, h: int, w: int, block: int) -> np.ndarray:
    """Random grey ``block`` × ``block`` squares (float32)."""
    noise = rng.integers(0, 256, size=(h // block + 1, w // block + 1)).astype(np.float32)
    return np.kron(noise, np.ones((block, block), np.float32))[:h, :w]


def scene_frames(n: int = 1065, size: tuple[int, int] = CIF, seed: int = 7, scenes: int = 6,
                 grain: float = 2.0) -> np.ndarray:
    """``n`` RGB frames (n, H, W, 3), uint8: ``scenes`` scenes of equal length (the
    last takes the rest) cycling through the six kinds in the module doc."""
    w, h = size
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    per = max(1, n // scenes)
    # Each scene's material, drawn up front so the content does not depend on n.
    still_bg = 0.5 * _smooth_noise(rng, h, w, 96) + 0.5 * (x / w * 160 + 40)
    land = _smooth_noise(rng, h, w + per + 8, 24) * 0.7 + _smooth_noise(rng, h, w + per + 8, 6) * 0.3
    fine = _blocks(rng, h, w + 4 * per + 8, 8) * 0.5 + _smooth_noise(rng, h, w + 4 * per + 8, 32) * 0.5
    zoom_pic = _smooth_noise(rng, h, w, 8) * 0.5 + _blocks(rng, h, w, 16) * 0.5
    pattern = ((np.floor(x / 22) + np.floor(y / 22)) % 2) * 150 + 50 + 40 * np.sin(x / 9.0)
    diag = _smooth_noise(rng, h + per + 8, w + 2 * per + 8, 12)
    out = np.empty((n, h, w, 3), np.uint8)
    for k in range(n):
        s = min(k // per, scenes - 1)  # scene number; the last one takes the rest
        i = k - s * per  # frame within the scene
        kind = s % 6
        if kind == 0:
            cx, cy = w / 2 + 20 * math.sin(i / 20), h / 2 + 8 * math.sin(i / 7)
            head = ((x - cx) / 60) ** 2 + ((y - cy) / 80) ** 2 < 1
            luma = np.where(head, 180 - 0.3 * (y - cy), still_bg)
        elif kind == 1:
            luma = land[:, i:i + w]
        elif kind == 2:
            luma = fine[:, 4 * i:4 * i + w]
        elif kind == 3:
            z = 1.0 + 0.004 * i
            yy = np.clip(((y - h / 2) / z + h / 2), 0, h - 1).astype(int)
            xx = np.clip(((x - w / 2) / z + w / 2), 0, w - 1).astype(int)
            luma = zoom_pic[yy, xx]
        elif kind == 4:
            cx, cy = -40 + 2.5 * i, h / 2 + 70 * math.sin(i / 15)
            disc = (x - cx) ** 2 + (y - cy) ** 2 < 35**2
            luma = np.where(disc, 235, pattern * (1 - 0.3 * (i / per)))
        else:
            luma = diag[i:i + h, 2 * i:2 * i + w].copy()
            for ox, oy, r in ((30 + 3 * i, 80, 30), (w - 30 - 3 * i, 200, 25)):
                luma = np.where((x - ox) ** 2 + (y - oy) ** 2 < r * r, 20 + (r * 5), luma)
        luma = np.clip(luma + grain * rng.standard_normal((h, w), np.float32), 0, 255)
        out[k, ..., 0] = np.clip(luma * 1.05 + 10 * s, 0, 255)
        out[k, ..., 1] = luma
        out[k, ..., 2] = np.clip(luma * 0.85 + 20, 0, 255)
    return out
