"""Regenerate docs/access/fluid-*.png and print the numbers quoted in fluid.md.

    .venv/bin/python docs/access/fluid_figures.py
"""

from pathlib import Path

from aqmlab.fluid import Avq, Red, Setting, compare, fixed_point, step_error

HERE = Path(__file__).parent
CASES = {
    "stable": Setting(n=60, c=3750, tp=0.1, aqm=Red(min_th=50, max_th=2050, max_p=0.1, wq=1e-3)),
    "unstable": Setting(n=60, c=3750, tp=0.2, aqm=Red(min_th=150, max_th=550, max_p=0.1, wq=1e-3)),
    "avq-pep": Setting(n=60, c=3750, tp=0.1, pep_delay=0.3, aqm=Avq(buffer=88, gamma=0.95)),
}
TITLES = {
    "stable": "RED 50/2050/0.1, w_q 1e-3; N 60, C 3750 pkt/s, Tp 0.1 s",
    "unstable": "RED 150/550/0.1, w_q 1e-3; N 60, C 3750 pkt/s, Tp 0.2 s (Hollot et al.)",
    "avq-pep": "AVQ γ 0.95, α 0.15, B_v 88 pkt; N 60, Tp 0.1 s + PEP 0.3 s",
}


def main(duration: float = 60.0, after: float = 30.0) -> None:
    for name, s in CASES.items():
        fl, pk = compare(s, duration, HERE / f"fluid-{name}.png", title=TITLES[name])
        fp = fixed_point(s)
        err = step_error(s, duration)
        print(f"{name}: fixed point W0 {fp.w:.3f} q0 {fp.q:.2f} p0 {fp.p:.5f} R0 {fp.r:.4f}")
        print(f"  fluid  q {fl.mean_queue(after):8.2f} ± {fl.std_queue(after):7.2f}  W {fl.mean_window(after):6.2f}")
        print(f"  packet q {pk.mean_queue(after):8.2f} ± {pk.std_queue(after):7.2f}  W {pk.mean_window(after):6.2f}")
        print(f"  step h {err['h']:.2e}: h vs h/2 max |dq| {err['max_dq']:.2e}, max |dW| {err['max_dw']:.2e},"
              f" mean q (2nd half) {err['d_mean_q']:.2e}")


if __name__ == "__main__":
    main()
