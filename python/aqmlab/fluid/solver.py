"""A fixed-step solver for the fluid model's delay-differential equations.

Method: Heun's scheme (explicit trapezoid, order 2) on a uniform grid t_n = n·h, with
the delayed values W(t − R(t)), R(t − R(t)), p(t − R(t)) read from history buffers of
the grid by linear interpolation (order 2, matching the scheme). Why not scipy: scipy
has no delay-differential solver, and the delay here depends on the state (R grows
with the queue); a method-of-steps restart of `solve_ivp` at every breakpoint would
cost far more than this loop. The scheme is explicit because R ≥ Tp > h: the delayed
point of the corrector stage, t_{n+1} − R, lies in the already computed history.

Before t = 0 the history is the initial state (the usual constant initial function).

Step: the fastest pole of the linearised loop (Hollot et al. 2001) is max(1/R0,
2N/(R0²C), K); the default h = min(R0/200, 1/(20·pole)) resolves all of them and the
delay. Error: the scheme is second order on smooth stretches; the projections (q ≥ 0)
and RED's kinks make it first order locally. `step_error` halves the step and reports
the largest difference, which the tests and docs state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .model import Avq, Red, Setting, clip_state, derivatives, mark_rate


@dataclass
class Trajectory:
    """The solution on the grid: ``t`` (s), ``w`` (packets), ``q`` (packets), ``x``
    (RED: the average queue; AVQ: the virtual capacity C̃, packets/s), ``b`` (AVQ's
    virtual queue, packets; zeros for RED), ``p`` (marking rate), ``r`` (RTT, s)."""

    t: np.ndarray
    w: np.ndarray
    q: np.ndarray
    x: np.ndarray
    b: np.ndarray
    p: np.ndarray
    r: np.ndarray
    h: float

    def after(self, t0: float) -> slice:
        return slice(math.ceil(t0 / self.h - 1e-9), None)

    def mean_queue(self, t0: float) -> float:
        return float(self.q[self.after(t0)].mean())

    def std_queue(self, t0: float) -> float:
        return float(self.q[self.after(t0)].std())

    def mean_window(self, t0: float) -> float:
        return float(self.w[self.after(t0)].mean())


def default_step(s: Setting) -> float:
    """h = min(R0/200, 1/(20·fastest pole)) with R0 at an empty queue (the smallest)."""
    r0 = s.rtt(0.0)
    poles = [1.0 / r0]
    if isinstance(s.aqm, Red):
        poles.append(s.aqm.k(s.c))
    return min(r0 / 200.0, 1.0 / (20.0 * max(poles)))


def initial_state(s: Setting, w0: float = 1.0, q0: float = 0.0) -> list[float]:
    """Window ``w0``, queue ``q0``; RED's average equal to q0; AVQ's C̃ = ecnlim·C and
    an empty virtual queue."""
    if isinstance(s.aqm, Red):
        return [w0, q0, q0, 0.0]
    a: Avq = s.aqm
    return [w0, q0, a.ecnlim * s.c, 0.0]


def solve(s: Setting, t_end: float, h: float | None = None, y0: list[float] | None = None) -> Trajectory:
    """Integrate from ``y0`` (default `initial_state`: W = 1, empty queue) to ``t_end``."""
    h = default_step(s) if h is None else h
    if not 0 < h < s.tp:
        raise ValueError(f"solve: step h must be in (0, Tp) = (0, {s.tp}), got {h}")
    n = round(t_end / h)
    y = clip_state(s, list(initial_state(s) if y0 is None else y0))
    cols = np.empty((n + 1, 6))  # w, q, x, b, p, r
    w_hist = cols[:, 0]
    p_hist = cols[:, 4]
    r_hist = cols[:, 5]

    def record(i: int, y: list[float]) -> None:
        cols[i, 0:4] = y
        cols[i, 4] = mark_rate(s, y)
        cols[i, 5] = s.rtt(y[1])

    def delayed(t: float, r: float) -> tuple[float, float, float]:
        u = (t - r) / h
        if u <= 0:
            return w_hist[0], r_hist[0], p_hist[0]
        i = int(u)
        f = u - i
        return (
            w_hist[i] + f * (w_hist[i + 1] - w_hist[i]),
            r_hist[i] + f * (r_hist[i + 1] - r_hist[i]),
            p_hist[i] + f * (p_hist[i + 1] - p_hist[i]),
        )

    record(0, y)
    for i in range(n):
        t = i * h
        k1 = derivatives(s, y, *delayed(t, r_hist[i]))
        ye = clip_state(s, [y[j] + h * k1[j] for j in range(4)])
        k2 = derivatives(s, ye, *delayed(t + h, s.rtt(ye[1])))
        y = clip_state(s, [y[j] + 0.5 * h * (k1[j] + k2[j]) for j in range(4)])
        record(i + 1, y)
    times = np.arange(n + 1) * h
    return Trajectory(times, cols[:, 0].copy(), cols[:, 1].copy(), cols[:, 2].copy(), cols[:, 3].copy(),
                      cols[:, 4].copy(), cols[:, 5].copy(), h)


def step_error(s: Setting, t_end: float, h: float | None = None, y0: list[float] | None = None) -> dict[str, float]:
    """Solve with h and h/2 and compare on the common grid: the largest absolute
    differences of W and q, and the largest difference of the queue's mean after
    t_end/2 (what the comparison with the packet simulator uses)."""
    h = default_step(s) if h is None else h
    a = solve(s, t_end, h, y0)
    b = solve(s, t_end, h / 2, y0)
    bq, bw = b.q[::2], b.w[::2]
    m = min(len(bq), len(a.q))
    half = a.after(t_end / 2)
    return {
        "h": h,
        "max_dw": float(np.abs(a.w[:m] - bw[:m]).max()),
        "max_dq": float(np.abs(a.q[:m] - bq[:m]).max()),
        "d_mean_q": abs(a.mean_queue(t_end / 2) - float(bq[:m][half].mean())),
    }
