"""The Misra–Gong–Towsley TCP/AQM fluid model: parameters and right-hand side.

Sources:
- V. Misra, W.-B. Gong, D. Towsley, *Fluid-based Analysis of a Network of AQM Routers
  Supporting TCP Flows with an Application to RED*, ACM SIGCOMM 2000 — the window and
  queue equations (their eqs. for dW/dt and dq/dt, here for one bottleneck and N
  identical flows, as in the next paper).
- C. V. Hollot, V. Misra, D. Towsley, W.-B. Gong, *A Control Theoretic Analysis of
  RED*, IEEE INFOCOM 2001 — the single-bottleneck form used here, RED's average as the
  low-pass filter dx/dt = (ln(1 − α)/δ)(x − q) with δ = 1/C (one sample per packet
  transmission time), and the operating point W0 = R0·C/N, p0 = 2/W0².
- S. Kunniyur, R. Srikant, *Analysis and Design of an Adaptive Virtual Queue (AVQ)
  Algorithm for Active Queue Management*, ACM SIGCOMM 2001 — the virtual capacity
  dC̃/dt = α(γC − λ), projected on [0, C].

Units: windows and queues in packets, rates in packets/s, times in seconds.

The model, with λ(t) = N·W(t)/R(t) the arrival rate at the bottleneck:

    dW/dt = 1/R(t) − W(t)·W(t − R)/(2·R(t − R)) · p(t − R)
    dq/dt = λ(t) − C                        (projected: q stays in [0, buffer])
    R(t)  = q(t)/C + Tp + D_pep

RED: dx/dt = −K·(x − q), K = −ln(1 − w_q)·C; p = the RED curve at x (below).
AVQ: a virtual queue b served at C̃: db/dt = λ − C̃ on [0, B_v]; dC̃/dt = α(γC − λ) on
[0, C]; while the virtual buffer is full the excess λ − C̃ is marked: p = (λ − C̃)⁺/λ.

The PEP (satellite study: Byun, PhD dissertation, University of Maryland, 2007, §1,
§3.1; docs/access/satellite-pep.md): its buffering delay D_pep is a constant added
to the round trip (assumption, docs/access/fluid.md): a congestion signal raised at the
gateway reaches the queue's input one buffering delay later, and the window's clock
runs at the full loop delay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Red:
    """RED's curve and averaging weight (Floyd & Jacobson 1993, §4; gentle region: Floyd
    2000; docs/qdiscs/red.md), queue in packets.

    ``count_spacing``: aqmlab's RED (like the 1993 paper) spaces marks with
    pa = pb/(1 − count·pb), which makes the gap between marks uniform on 1..1/pb − 1
    (docs/qdiscs/red.md): one mark per 1/(2pb) packets, so the marking rate the
    senders see is 2·pb, not pb. MGT and Hollot et al. use p = pb; set it False for
    their form.
    """

    min_th: float
    max_th: float
    max_p: float
    wq: float
    gentle: bool = False
    count_spacing: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.min_th < self.max_th:
            raise ValueError(f"Red: need 0 <= min_th < max_th, got {self.min_th}, {self.max_th}")
        if not 0 < self.max_p <= 1:
            raise ValueError(f"Red: max_p must be in (0, 1], got {self.max_p}")
        if not 0 < self.wq < 1:
            raise ValueError(f"Red: wq must be in (0, 1), got {self.wq}")

    def pb(self, x: float) -> float:
        """The RED curve: base probability at average queue ``x``."""
        if x < self.min_th:
            return 0.0
        if x < self.max_th:
            return self.max_p * (x - self.min_th) / (self.max_th - self.min_th)
        if self.gentle and x < 2 * self.max_th:
            return self.max_p + (1 - self.max_p) * (x - self.max_th) / self.max_th
        return 1.0

    def p(self, x: float) -> float:
        """Marking rate per packet seen by the senders."""
        pb = self.pb(x)
        return min(1.0, 2 * pb) if self.count_spacing else pb

    def k(self, c: float) -> float:
        """Hollot et al.'s filter pole K = −ln(1 − w_q)/δ, δ = 1/C (rad/s)."""
        return -math.log1p(-self.wq) * c


@dataclass(frozen=True)
class Avq:
    """AVQ (Kunniyur & Srikant, SIGCOMM 2001; docs/qdiscs/avq.md): target utilisation
    ``gamma``, gain ``alpha``, virtual buffer ``buffer`` (packets), initial C̃ =
    ``ecnlim``·C. Defaults are ns-2.35's: ``gamma_`` 0.98 and ``ecnlim_`` 0.8
    (tcl/lib/ns-default.tcl lines 229, 232), α = 0.15 (queue/vq.cc line 129). The
    satellite study's setting (γ = 1, virtual buffer 123 750 B) is Byun's §3.3."""

    buffer: float
    gamma: float = 0.98
    alpha: float = 0.15
    ecnlim: float = 0.8

    def __post_init__(self) -> None:
        if not self.buffer > 0:
            raise ValueError(f"Avq: buffer must be > 0 packets, got {self.buffer}")
        if not 0 < self.gamma <= 1:
            raise ValueError(f"Avq: gamma must be in (0, 1], got {self.gamma}")
        if not 0 < self.alpha <= 1:
            raise ValueError(f"Avq: alpha must be in (0, 1], got {self.alpha}")


@dataclass(frozen=True)
class Setting:
    """One bottleneck shared by ``n`` identical long-lived TCP flows.

    ``c`` capacity (packets/s), ``tp`` round-trip propagation delay (s), ``aqm`` a
    `Red` or `Avq`, ``pep_delay`` the PEP's buffering delay added to every round trip
    (s), ``buffer`` the real buffer (packets), ``w_max`` the receive-window cap
    (packets; the PEP's advertised window, 16 000 B in the satellite study).
    """

    n: int
    c: float
    tp: float
    aqm: Red | Avq
    pep_delay: float = 0.0
    buffer: float = math.inf
    w_max: float = math.inf

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"Setting.n: need at least one flow, got {self.n}")
        if not self.c > 0:
            raise ValueError(f"Setting.c: capacity must be > 0 packets/s, got {self.c}")
        if not self.tp > 0:
            raise ValueError(f"Setting.tp: propagation delay must be > 0 s, got {self.tp}")
        if self.pep_delay < 0:
            raise ValueError(f"Setting.pep_delay: must be >= 0 s, got {self.pep_delay}")

    def rtt(self, q: float) -> float:
        """R = q/C + Tp + D_pep."""
        return q / self.c + self.tp + self.pep_delay


def mark_rate(s: Setting, y: list[float]) -> float:
    """p(t) from the state y = [W, q, z1, z2] (RED: z1 = average; AVQ: z1 = C̃, z2 = b)."""
    a = s.aqm
    if isinstance(a, Red):
        return a.p(y[2])
    lam = s.n * y[0] / s.rtt(y[1])
    if y[3] >= a.buffer and lam > y[2]:
        return (lam - y[2]) / lam
    return 0.0


def derivatives(s: Setting, y: list[float], w_d: float, r_d: float, p_d: float) -> list[float]:
    """dy/dt given the state and the delayed W(t − R), R(t − R), p(t − R).

    The projections (q, b ≥ 0, q ≤ buffer, b ≤ B_v, C̃ in [0, C], W ≤ w_max) zero a
    derivative that would leave the box, as MGT's indicator 1[q > 0] does."""
    w, q = y[0], y[1]
    r = s.rtt(q)
    dw = 1.0 / r - w * w_d / (2.0 * r_d) * p_d
    if w >= s.w_max and dw > 0:
        dw = 0.0
    lam = s.n * w / r
    dq = clip_rate(q, lam - s.c, 0.0, s.buffer)
    a = s.aqm
    if isinstance(a, Red):
        return [dw, dq, a.k(s.c) * (q - y[2]), 0.0]
    dct = clip_rate(y[2], a.alpha * (a.gamma * s.c - lam), 0.0, s.c)
    db = clip_rate(y[3], lam - y[2], 0.0, a.buffer)
    return [dw, dq, dct, db]


def clip_rate(v: float, dv: float, lo: float, hi: float) -> float:
    """The projection of a rate at a box edge: no motion outward."""
    if (v <= lo and dv < 0) or (v >= hi and dv > 0):
        return 0.0
    return dv


def clip_state(s: Setting, y: list[float]) -> list[float]:
    """Put a state back into the box after a step overshot an edge."""
    w = min(max(y[0], 0.0), s.w_max)
    q = min(max(y[1], 0.0), s.buffer)
    a = s.aqm
    if isinstance(a, Red):
        return [w, q, max(y[2], 0.0), 0.0]
    return [w, q, min(max(y[2], 0.0), s.c), min(max(y[3], 0.0), a.buffer)]
