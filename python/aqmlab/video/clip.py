"""A test clip: generated frames, their MPEG-4 encoding, the frame trace and PSNR.

Encoding: FFmpeg's ``mpeg4`` (MPEG-4 Part 2, Simple Profile) through PyAV, one thread,
a fixed GOP (an I frame every ``gop`` frames, the rest P, no B frames so the bitstream
order is the display order the simulator's PSNR model assumes), constant bit rate
target. The encoder reports its own PSNR per frame (FFmpeg's ``AV_CODEC_FLAG_PSNR``
quality statistics, the squared luma error of its reconstruction); decoding the
lossless stream must reproduce it exactly, which the tests check.

Lost frames: a frame is removed from the bitstream unless it is *decodable* (every
packet arrived, and its reference chain is intact — the simulator's ``decodable``
column). The decoder therefore always predicts from the right reference, and each
missing frame is shown as the last decoded one (freeze), as Evalvid's ``fixyuv`` does.
Under that rule PSNR depends only on (frame, gap to the last decoded frame), which is
the table the fast model mode precomputes (:meth:`Clip.model_table`).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .quality import PSNR_CAP_DB, psnr

if TYPE_CHECKING:
    from av.packet import Packet
    from av.video.codeccontext import VideoCodecContext

CIF = (352, 288)


def synthetic_frames(n: int = 48, size: tuple[int, int] = CIF, seed: int = 1) -> np.ndarray:
    """``n`` RGB frames (n, H, W, 3) of a deterministic moving scene: a seeded random
    texture (8 × 8 blocks of noise) scrolling 3 px per frame, a disc moving across it, and a
    slowly shifting colour gradient. Detailed enough that encoding loses a few dB and a
    frozen frame loses many."""
    w, h = size
    rng = np.random.default_rng(seed)
    tex_w = w + 3 * n + 8
    noise = rng.integers(0, 256, size=(h // 8 + 2, tex_w // 8 + 2), dtype=np.uint8)
    texture = np.kron(noise, np.ones((8, 8), np.uint8))[:h, :tex_w].astype(np.float32)
    y, x = np.mgrid[0:h, 0:w]
    out = np.empty((n, h, w, 3), np.uint8)
    for i in range(n):
        base = texture[:, 3 * i:3 * i + w]
        cx, cy = 40 + 5 * i, h / 2 + 60 * math.sin(i / 8)
        disc = ((x - cx) ** 2 + (y - cy) ** 2) < 40**2
        g = (x + y + 4 * i) % 256
        r = 0.6 * base + 0.4 * g
        out[i, ..., 0] = np.where(disc, 230, r)
        out[i, ..., 1] = np.where(disc, 40, 0.5 * base + 0.5 * ((y * 2 + 3 * i) % 256))
        out[i, ..., 2] = np.where(disc, 60, 0.7 * base + 0.3 * ((x - 2 * i) % 256))
    return out


@dataclass
class Clip:
    """An encoded clip: originals, coded frames, reconstruction, encoder PSNR."""

    #: Original luminance planes (n, H, W) — what PSNR compares against.
    original_y: np.ndarray
    #: Coded frames in order (bytes), their types ("I"/"P").
    packets: list[bytes]
    types: list[str]
    #: Encoder's own per-frame luma PSNR (dB), from its quality statistics.
    encoder_psnr: np.ndarray
    fps: int
    gop: int
    codec: str = "mpeg4"
    _decoded: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def synthetic(cls, n: int = 48, fps: int = 25, gop: int = 12, bit_rate: int = 600_000,
                  size: tuple[int, int] = CIF, seed: int = 1) -> Clip:
        """Generate :func:`synthetic_frames` and encode them."""
        return cls.encode(synthetic_frames(n, size, seed), fps=fps, gop=gop, bit_rate=bit_rate)

    @classmethod
    def encode(cls, rgb: np.ndarray, fps: int = 25, gop: int = 12, bit_rate: int = 600_000) -> Clip:
        """Encode RGB frames (n, H, W, 3) with MPEG-4 Part 2 at a fixed GOP, no B frames."""
        import av

        n, h, w, _ = rgb.shape
        ctx = av.CodecContext.create("mpeg4", "w")
        ctx.width, ctx.height = w, h
        ctx.pix_fmt = "yuv420p"
        ctx.time_base = Fraction(1, fps)
        ctx.framerate = Fraction(fps)
        ctx.gop_size = gop
        ctx.max_b_frames = 0
        ctx.bit_rate = bit_rate
        ctx.thread_count = 1
        ctx.flags |= av.codec.context.Flags.psnr
        # Scene-change I frames would break the fixed GOP the trace promises.
        ctx.options = {"sc_threshold": "1000000000"}
        originals, coded = [], []
        for i in range(n):
            f = av.VideoFrame.from_ndarray(rgb[i], format="rgb24").reformat(format="yuv420p")
            originals.append(f.to_ndarray()[:h].copy())
            f.pts = i
            coded.extend(ctx.encode(f))
        coded.extend(ctx.encode(None))
        if len(coded) != n:
            raise RuntimeError(f"encoder gave {len(coded)} packets for {n} frames")
        enc_psnr = np.array([_stats_psnr(p, w, h) for p in coded])
        types = ["I" if p.is_keyframe else "P" for p in coded]
        return cls(np.stack(originals), [bytes(p) for p in coded], types, enc_psnr, fps, gop)

    def __len__(self) -> int:
        return len(self.packets)

    @property
    def sizes(self) -> list[int]:
        return [len(p) for p in self.packets]

    # -- the simulator's inputs ------------------------------------------------------

    def write_trace(self, path: str | Path, packet_payload: int = 960) -> Path:
        """The Evalvid sender trace (``mp4trace`` layout): frame number (from 1), type,
        size, packets of ``packet_payload`` bytes, send time."""
        lines = [
            f"{i + 1}\t{t}\t{s}\t{max(1, -(-s // packet_payload))}\tsegm at {round(1000 * i / self.fps)} ms"
            for i, (t, s) in enumerate(zip(self.types, self.sizes))
        ]
        p = Path(path)
        p.write_text("\n".join(lines) + "\n")
        return p

    def model_table(self, max_gap: int | None = None, block: int = 128) -> np.ndarray:
        """PSNR[i, g + 1] of original frame i shown as decoded frame (i − g) mod n, for
        gaps g = 0..max_gap; column 0 (g = −1) is original i against mid-grey (nothing
        decoded yet). Default max_gap: two GOPs (capped at n − 1).

        The squared errors come from dot products, ``|o − d|² = |o|² + |d|² − 2 o·d``,
        computed a block of frames at a time as one float64 matrix product (BLAS) over
        the band of gaps. Exact: pixel products are integers ≤ 255², a CIF plane's sum
        stays below 2⁵³, so every float64 partial sum is an exact integer, and the PSNR
        equals :func:`~aqmlab.video.quality.psnr` of the two planes bit for bit.
        ``block`` (frames per product) trades memory for speed; the table is the same."""
        n = len(self)
        d = min(n - 1, 2 * self.gop) if max_gap is None else max_gap
        if not 0 <= d < n:
            raise ValueError(f"max_gap {d}: expected 0..{n - 1} (the clip has {n} frames)")
        dec = self.decoded_y().reshape(n, -1)
        org = self.original_y.reshape(n, -1)
        pixels = org.shape[1]
        sse = np.empty((n, d + 2), np.int64)  # column 0: against mid-grey
        for a in range(0, n, block):
            b = min(n, a + block)
            o = org[a:b].astype(np.float64)
            refs = np.arange(a - d, b) % n  # the decoded frames rows a..b can show
            r = dec[refs].astype(np.float64)
            o2 = np.einsum("ij,ij->i", o, o)
            r2 = np.einsum("ij,ij->i", r, r)
            cross = o @ r.T
            # |o − 128|² = |o|² − 256·Σo + 128²·pixels
            sse[a:b, 0] = np.rint(o2 - 256.0 * o.sum(axis=1) + 128.0**2 * pixels).astype(np.int64)
            for k in range(b - a):
                cols = k + d - np.arange(d + 1)  # refs[cols[g]] = (a + k − g) mod n
                sse[a + k, 1:] = np.rint(o2[k] + r2[cols] - 2.0 * cross[k, cols]).astype(np.int64)
        with np.errstate(divide="ignore"):
            t = np.minimum(PSNR_CAP_DB, 10.0 * np.log10(255.0**2 / (sse / pixels)))
        return t

    def write_model(self, path: str | Path, max_gap: int | None = None, digits: int | None = None) -> Path:
        """The model table as the CSV ``video`` traffic reads (``frame,gap,psnr_db``):
        exact values (shortest round-trip form), or rounded to ``digits`` decimals — a
        smaller file the simulator parses faster, for tables of many frames and gaps."""
        t = self.model_table(max_gap)
        rows = ["frame,gap,psnr_db"]
        fmt = repr if digits is None else (lambda v: f"{v:.{digits}f}")
        for i in range(t.shape[0]):
            for g in range(t.shape[1]):
                rows.append(f"{i},{g - 1},{fmt(float(t[i, g]))}")
        p = Path(path)
        p.write_text("\n".join(rows) + "\n")
        return p

    # -- quality of a received stream ------------------------------------------------

    def decoded_y(self) -> np.ndarray:
        """Luma of the lossless decode (computed once)."""
        if self._decoded is None:
            self._decoded = self._decode(list(range(len(self))))
        return self._decoded

    def _decode(self, frames: list[int]) -> np.ndarray:
        """Decode the coded frames ``frames`` (clip indices, in order) as one bitstream;
        luma planes, one per frame fed."""
        import av

        h, w = self.original_y.shape[1:]
        ctx = cast("VideoCodecContext", av.CodecContext.create(self.codec, "r"))
        ctx.width, ctx.height = w, h
        ctx.thread_count = 1
        out: list[np.ndarray] = []
        for k in frames:
            out.extend(f.to_ndarray()[:h].copy() for f in ctx.decode(_padded_packet(av, self.packets[k])))
        out.extend(f.to_ndarray()[:h].copy() for f in ctx.decode(None))
        if len(out) != len(frames):
            raise RuntimeError(f"decoder gave {len(out)} pictures for {len(frames)} coded frames")
        return np.stack(out) if out else np.empty((0, h, w), np.uint8)

    def decode_psnr(self, decodable: Sequence[bool] | np.ndarray) -> np.ndarray:
        """Real decoding: stream frame n (clip frame n mod len) is fed to the decoder iff
        ``decodable[n]``; missing frames freeze the last decoded picture (mid-grey before
        the first). Per-frame PSNR against the originals."""
        dec = np.asarray(decodable, bool)
        n = len(self)
        fed = [int(k) for k in np.flatnonzero(dec)]
        pics = self._decode([k % n for k in fed])
        grey = np.full_like(self.original_y[0], 128)
        out = np.empty(len(dec))
        j = -1
        for k in range(len(dec)):
            if dec[k]:
                j += 1
            shown = pics[j] if j >= 0 else grey
            out[k] = psnr(self.original_y[k % n], shown)
        return out

    def model_psnr(self, decodable: Sequence[bool] | np.ndarray, table: np.ndarray | None = None) -> np.ndarray:
        """The fast model: PSNR from the (frame, gap) table, no decoding. Gaps beyond the
        table's last column use that column (as the simulator does)."""
        t = self.model_table() if table is None else table
        d = t.shape[1] - 2
        n = len(self)
        out = np.empty(len(decodable))
        last = None
        for k, ok in enumerate(decodable):
            if ok:
                last = k
            out[k] = t[k % n, 0] if last is None else t[k % n, min(k - last, d) + 1]
        return out


def _padded_packet(av: ModuleType, data: bytes) -> Packet[Any]:
    """A packet owning a copy of ``data`` in FFmpeg's own allocation, which has the zeroed
    input padding decoders may read past the end (``av.Packet(bytes)`` wraps the Python
    buffer without it, and the MPEG-4 decoder then reads whatever follows: garbage
    pictures, differently from run to run)."""
    pkt: Packet[Any] = av.Packet(len(data))
    memoryview(pkt)[:] = data
    return pkt


def _stats_psnr(packet: Packet[Any], w: int, h: int) -> float:
    """Luma PSNR from a packet's encoder quality statistics (AV_PKT_DATA_QUALITY_STATS:
    u32 quality, u8 picture type, u8 error count, 2 reserved bytes, then u64 squared
    errors per plane)."""
    sd = packet.get_sidedata("quality_stats")
    raw = bytes(memoryview(sd))
    _, _, count = struct.unpack_from("<IBB", raw)
    if count < 1:
        raise RuntimeError("the encoder reported no error sums (PSNR flag not honoured)")
    err = struct.unpack_from("<Q", raw, 8)[0]
    if err == 0:
        return PSNR_CAP_DB
    return min(PSNR_CAP_DB, 10.0 * math.log10(255.0**2 * w * h / err))
