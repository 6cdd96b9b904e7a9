"""aqmlab.fluid: the MGT fluid model against hand-worked operating points, its own step
halving, and the packet simulator (docs/access/fluid.md)."""

import math

import aqmlab
import numpy as np
import polars as pl
import pytest
from aqmlab.fluid import (
    Avq,
    Red,
    Setting,
    compare,
    default_step,
    fixed_point,
    packet_scenario,
    run_packet,
    solve,
    step_error,
)

#: The stable RED setting of docs/access/fluid.md: Hollot et al.'s N and C, half their
#: Tp and a shallow RED curve (loop gain 1.6), so it settles within seconds.
STABLE = Setting(n=60, c=3750, tp=0.1, aqm=Red(min_th=50, max_th=2050, max_p=0.1, wq=1e-3))
#: Hollot et al.'s example (N = 60, C = 3750 pkt/s, Tp = 0.2 s, RED 150/550/0.1) with a
#: fast average (w_q = 1e-3, K = 3.75/s instead of their 0.005/s): unstable.
UNSTABLE = Setting(n=60, c=3750, tp=0.2, aqm=Red(min_th=150, max_th=550, max_p=0.1, wq=1e-3))


def test_red_curve_count_spacing_and_filter_pole():
    r = Red(min_th=50, max_th=250, max_p=0.01, wq=0.002)
    assert r.pb(49.9) == 0 and r.pb(150) == pytest.approx(0.005) and r.pb(250) == 1
    assert r.p(150) == pytest.approx(0.01)  # marks spaced by count: rate 2·pb
    assert Red(50, 250, 0.01, 0.002, count_spacing=False).p(150) == pytest.approx(0.005)
    g = Red(50, 250, 0.01, 0.002, gentle=True)
    assert g.pb(375) == pytest.approx(0.01 + 0.99 * 0.5) and g.pb(500) == 1
    assert r.k(1000) == pytest.approx(-1000 * math.log(0.998))  # Hollot: −ln(1−α)/δ, δ = 1/C


def test_red_fixed_point_worked_by_hand():
    # C = 1000, N = 10, Tp = 0.1: q0 = 100 gives R0 = 0.2, W0 = 20, p0 = 2/400 = 0.005,
    # and RED 50/250/0.01 gives pb(100) = 0.0025, p = 2·pb = 0.005: the operating point.
    fp = fixed_point(Setting(n=10, c=1000, tp=0.1, aqm=Red(50, 250, 0.01, 0.002)))
    assert (fp.q, fp.w, fp.p, fp.r) == pytest.approx((100, 20, 0.005, 0.2), rel=1e-9)
    # the PEP's delay is part of R0: Tp = 0.05 plus D = 0.05 gives the same point.
    fp = fixed_point(Setting(n=10, c=1000, tp=0.05, pep_delay=0.05, aqm=Red(50, 250, 0.01, 0.002)))
    assert (fp.q, fp.w) == pytest.approx((100, 20), rel=1e-9)


def test_avq_fixed_point_worked_by_hand_and_held_by_the_solver():
    # λ0 = γC = 3562.5 pkt/s, empty real queue, R0 = Tp + D: W0 = λ0·R0/N.
    for pep, w0 in ((0.0, 5.9375), (0.3, 23.75)):
        s = Setting(n=60, c=3750, tp=0.1, pep_delay=pep, aqm=Avq(buffer=88, gamma=0.95))
        fp = fixed_point(s)
        assert (fp.w, fp.q, fp.r) == pytest.approx((w0, 0, 0.1 + pep), rel=1e-12, abs=1e-12)
        assert fp.p == pytest.approx(2 / w0**2) and fp.x == pytest.approx(3562.5 * (1 - 2 / w0**2))
        tr = solve(s, 2.0, y0=[fp.w, 0.0, fp.x, 88.0])
        assert np.abs(tr.w - fp.w).max() < 1e-9 and np.abs(tr.p - fp.p).max() < 1e-9
        assert tr.q.max() == 0 and tr.b.min() == 88


def test_equilibrium_is_reached_and_held_exactly():
    # Heun's step maps an equilibrium onto itself (f(y*) = 0, and the interpolated
    # history of a constant is exact), so the discrete equilibrium is the analytic one
    # with no O(h²) offset: only rounding (1e-9) and the undecayed transient remain.
    fp = fixed_point(STABLE)
    held = solve(STABLE, 5.0, y0=[fp.w, fp.q, fp.q, 0.0])
    assert np.abs(held.q - fp.q).max() < 1e-9 and np.abs(held.w - fp.w).max() < 1e-9
    tr = solve(STABLE, 30.0)  # from W = 1, empty queue
    assert abs(tr.q[-1] - fp.q) < 1e-6 * fp.q and abs(tr.w[-1] - fp.w) < 1e-6 * fp.w
    assert abs(tr.p[-1] - fp.p) < 1e-6 * fp.p


def test_solver_is_second_order_in_the_transient():
    # At t = 4 s (queue still rising): differences between h, h/2, h/4 shrink by ~4.
    h = default_step(STABLE)
    q = [solve(STABLE, 4.0, h=h / k).q[-1] for k in (1, 2, 4)]
    ratio = (q[1] - q[0]) / (q[2] - q[1])
    assert 3.2 < ratio < 4.8, ratio
    err = step_error(STABLE, 4.0)
    assert err["max_dq"] < 1e-3 and err["max_dw"] < 1e-4


def test_stable_red_packet_mean_queue_near_the_fluid_mean():
    # 40 s, statistics over the last 20 s. The fluid queue sits still (std < 1 % of the
    # mean); the packet queue fluctuates ~11 % around a mean 22 % below the fluid's
    # (measured: 187.6 vs 240.2 packets): the MGT model is a mean-field ODE and uses
    # E[W]² where the decrease needs E[W²]; with random marks the windows spread
    # (the packet run has p·E[W]² = 1.31 instead of 2). Tolerance: 30 %.
    fl = solve(STABLE, 40.0)
    pk = run_packet(STABLE, 40.0)
    assert fl.std_queue(20) < 0.01 * fl.mean_queue(20)
    assert pk.std_queue(20) < 0.25 * pk.mean_queue(20)
    assert abs(pk.mean_queue(20) - fl.mean_queue(20)) < 0.30 * fl.mean_queue(20)
    assert pk.mean_window(20) == pytest.approx(fl.mean_window(20), rel=0.10)


def test_packet_red_marks_at_twice_its_base_probability():
    # Why the fluid model's `count_spacing` doubles pb: marks/arrivals in the packet run
    # against the mean pb (`drop_prob`) over the same window.
    sc = packet_scenario(STABLE, 40.0)
    sc["warmup"] = "20s"
    res = aqmlab.run(sc)
    q = res.queues.filter(pl.col("link") == "L->R").row(0, named=True)
    pb = res.timeseries.filter((pl.col("link") == "L->R") & (pl.col("time_ns") >= 20e9))["drop_prob"].mean()
    assert q["drops"] == 0 and q["marks"] / q["enqueued"] == pytest.approx(2 * pb, rel=0.10)


def test_unstable_red_oscillates_in_both():
    fl = solve(UNSTABLE, 40.0)
    pk = run_packet(UNSTABLE, 40.0)
    assert fl.std_queue(20) > 0.5 * fl.mean_queue(20)
    assert pk.std_queue(20) > 0.5 * pk.mean_queue(20)


def test_avq_with_a_pep_delay_oscillates_in_both():
    # Overflow-fraction marking is a relay in a 0.4 s loop: both models cycle with the
    # real queue empty most of the time (queue std ≈ 2× its mean in both; measured
    # fluid 1.98, packet 2.00–2.16 over seeds 1–3) and similar windows (22.1 vs 19.9).
    s = Setting(n=60, c=3750, tp=0.1, pep_delay=0.3, aqm=Avq(buffer=88, gamma=0.95))
    fl = solve(s, 60.0)
    pk = run_packet(s, 60.0)
    assert fl.std_queue(30) > fl.mean_queue(30) and pk.std_queue(30) > pk.mean_queue(30)
    assert pk.mean_window(30) == pytest.approx(fl.mean_window(30), rel=0.15)


def test_receive_window_caps_both():
    # w_max = 8 < W0 = 20: window-limited, no queue builds (N·w_max/Tp = 800 < C = 1000).
    s = Setting(n=10, c=1000, tp=0.1, w_max=8, aqm=Red(50, 250, 0.01, 0.002))
    fl = solve(s, 10.0)
    pk = run_packet(s, 10.0)
    assert fl.w.max() == pytest.approx(8) and pk.w.max() == pytest.approx(8)
    assert fl.q.max() == 0 and pk.q.max() <= s.n  # at most a packet per flow in passing
    with pytest.raises(ValueError, match="window-limited"):
        fixed_point(s)


def test_compare_writes_the_figure(tmp_path):
    png = tmp_path / "c.png"
    s = Setting(n=10, c=1000, tp=0.1, aqm=Red(50, 250, 0.01, 0.002))
    fl, pk = compare(s, 5.0, png)
    assert png.stat().st_size > 10_000
    assert fl.t[-1] == pytest.approx(5.0) and pk.t_q[-1] <= 5.0 and len(pk.w) > 10


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: Red(10, 5, 0.1, 0.002), "min_th < max_th"),
        (lambda: Red(5, 10, 0.1, 1.0), "wq"),
        (lambda: Avq(buffer=0), "buffer"),
        (lambda: Setting(n=0, c=1, tp=0.1, aqm=Avq(buffer=5)), "Setting.n"),
        (lambda: Setting(n=1, c=1, tp=0.0, aqm=Avq(buffer=5)), "Setting.tp"),
        (lambda: solve(Setting(n=1, c=1, tp=0.1, aqm=Avq(buffer=5)), 1.0, h=0.2), "step h"),
    ],
)
def test_bad_input_names_the_field(make, needle):
    with pytest.raises(ValueError, match=needle):
        make()
