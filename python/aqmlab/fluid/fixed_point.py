"""The fluid model's operating point, analytically (Hollot et al., INFOCOM 2001, §III).

Setting dW/dt = dq/dt = 0 with q > 0: W0 = R0·C/N, p0 = 2/W0², R0 = q0/C + Tp (+ D_pep).
RED: x0 = q0 and p0 = p_RED(q0), one equation in q0 (p_RED rises with q0 and 2/W0² falls,
so the root is unique); solved by Brent's method on RED's continuous stretch.
AVQ: dC̃/dt = 0 gives λ0 = γC. With γ < 1 the real queue is empty (q0 = 0, R0 = Tp +
D_pep), W0 = γ·C·R0/N, p0 = 2/W0², the virtual buffer full and C̃0 = λ0(1 − p0). With
γ = 1 every q0 ≥ 0 balances; we report q0 = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy.optimize import brentq

from .model import Red, Setting


@dataclass(frozen=True)
class FixedPoint:
    w: float
    q: float
    p: float
    r: float
    #: RED: the average (= q); AVQ: the virtual capacity C̃ (packets/s).
    x: float


def fixed_point(s: Setting) -> FixedPoint:
    a = s.aqm
    if isinstance(a, Red):
        def gap(q: float) -> float:
            w = s.rtt(q) * s.c / s.n
            return a.p(q) - 2.0 / (w * w)

        top = 2 * a.max_th if a.gentle else a.max_th
        top -= 1e-9 * top  # the curve jumps to 1 at `top` without gentle
        if gap(top) < 0:
            raise ValueError("fixed_point: no operating point on RED's curve (the flows need more than its top probability)")
        q = brentq(gap, a.min_th, top, xtol=1e-12, rtol=1e-14)
        r = s.rtt(q)
        w = r * s.c / s.n
        return _checked(s, FixedPoint(w=w, q=q, p=2.0 / (w * w), r=r, x=q))
    lam = a.gamma * s.c
    r = s.rtt(0.0)
    w = lam * r / s.n
    p = 2.0 / (w * w)
    return _checked(s, FixedPoint(w=w, q=0.0, p=p, r=r, x=lam * (1 - p)))


def _checked(s: Setting, fp: FixedPoint) -> FixedPoint:
    if fp.w > s.w_max:
        raise ValueError(f"fixed_point: W0 = {fp.w:.3g} exceeds w_max = {s.w_max}: the flows are window-limited")
    return fp
