"""Video quality for aqmlab's ``video`` traffic: a real test clip, its encoding and frame
trace, PSNR of received streams (real decoding, or the fast freeze model), MOS, plots.

The clip is generated, not shipped: a deterministic synthetic CIF sequence (a seeded
random texture scrolling under a moving disc and a moving gradient, see
:func:`synthetic_frames`), encoded with FFmpeg's MPEG-4 Part 2 encoder through PyAV (the
``av`` wheel bundles FFmpeg). From the encoding come the Evalvid-format frame trace the
simulator sends (``video`` traffic with ``trace = ...``) and the PSNR model table it
reads (``psnr_model = ...``); after a run, :meth:`Clip.decode_psnr` rebuilds the
received bitstream from the ``frames`` table and decodes it.

Sources: Evalvid (J. Klaue, B. Rathke, A. Wolisz, "EvalVid — A Framework for Video
Transmission and Quality Evaluation", TOOLS 2003) for the trace format, the freeze
rule and the PSNR → MOS table; frame decodability as in docs/traffic/video.md (Chung &
Claypool's Rb-RIO paper, Section 2; myEvalvid).
"""

from .clip import Clip, synthetic_frames
from .quality import PSNR_CAP_DB, mos, psnr

__all__ = ["PSNR_CAP_DB", "Clip", "mos", "psnr", "synthetic_frames"]
