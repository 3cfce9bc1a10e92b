"""TD-SMC: the C particle loop (`TDSMC`, `_smc.pyx`) against the Python reference (`TDSMCReference`), same draws.

    python bench/bench_smc.py            # sinc (50 points) and Boston (300 points), 250 particles
    python bench/bench_smc.py --quick    # 100 particles
    # C engine only: a 2,000-point stream (Friedman #1, d = 10), time per 500 points
    python bench/bench_smc.py --stream

Both engines get the same data, settings and seed and (tested in tests/test_smc.py) make the same random draws, so
they do the same arithmetic: the ratio is the cost of running the particle loop in Python. Prints seconds per pass
over the data, with and without resample-move (RJ steps per observation), and the ratio.
One run, one shared machine: ratios, not absolute claims.
"""
import argparse
import time

import numpy as np

from rbf_bayes.datasets import load_boston, random_split, sinc_data
from rbf_bayes.priors import SMCPrior
from rbf_bayes.smc import TDSMC, TDSMCReference


def run(cls, x, y, n, **kw):
    t0 = time.perf_counter()
    s = cls(n, rng=np.random.default_rng(1), capacity=len(x), **kw).partial_fit(x, y)
    return time.perf_counter() - t0, s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--stream", action="store_true")
    args = ap.parse_args()
    if args.stream:
        return stream()
    n = 100 if args.quick else 250
    d = sinc_data(np.random.default_rng(0))
    order = np.random.default_rng(0).permutation(len(d.x))
    xb, yb, _ = load_boston()
    tr, _ = random_split(np.random.default_rng(0), len(yb), 300)
    xs = (xb[tr] - xb[tr].mean(0)) / xb[tr].std(0)
    cases = [("sinc", d.x[order], d.y[order], dict(width=1.6, prior=SMCPrior(lam=1.0, k_max=50))),
             ("Boston", xs, yb[tr], dict(width=5.0, prior=SMCPrior(lam=5.0, k_max=100)))]
    print(f"{'data':>7} {'move_steps':>10} {'C (s)':>8} {'Python (s)':>10} {'ratio':>6}  mean k")
    for name, x, y, kw in cases:
        for ms in (0, 1):
            tc, sc = run(TDSMC, x, y, n, move_steps=ms, **kw)
            tp, sp = run(TDSMCReference, x, y, n, move_steps=ms, **kw)
            assert np.allclose(sc.logw, sp.logw)            # the same computation
            print(f"{name:>7} {ms:>10} {tc:8.3f} {tp:10.2f} {tp / tc:6.1f}  {sc.weights @ sc.ks:.1f}", flush=True)


def stream():
    """Per-observation cost as t grows: add_row and the variance refresh are O(m^2) and O(m^3) per particle, a birth
    and a
    resampling copy O(t m); resampling every step (ess_threshold=1, the paper) or when the ESS falls below N/2."""
    from rbf_bayes.datasets import friedman
    d = friedman(np.random.default_rng(0), 1, n=2000, p=10, noise_sd=1.0, n_test=500)
    for thr in (1.0, 0.5):
        s = TDSMC(250, "gaussian", 2.0, prior=SMCPrior(lam=5.0, k_max=60), capacity=2000, ess_threshold=thr,
                  rng=np.random.default_rng(0))
        marks, t0 = [], time.perf_counter()
        for i in range(0, 2000, 500):
            s.partial_fit(d.x[i:i + 500], d.y[i:i + 500])
            marks.append(time.perf_counter() - t0)
        per = np.diff([0.0] + marks) / 500 * 1e3
        rmse = np.sqrt(np.mean((s.predict(d.x_test)[:, 0] - d.f_test) ** 2))
        print(f"ess_threshold={thr}: ms per observation for t in 0-500 / -1000 / -1500 / -2000: "
              f"{' / '.join(f'{v:.1f}' for v in per)}; total {marks[-1]:.1f} s; E[k] {s.weights @ s.ks:.1f}; "
              f"test RMSE {rmse:.3f}; resampled at {s.n_resampled} steps")


if __name__ == "__main__":
    main()
