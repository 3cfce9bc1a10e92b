"""TD-SMC: the C particle loop (`TDSMC`, `_smc.pyx`) against the Python reference (`TDSMCReference`), same draws.

    python bench/bench_smc.py            # sinc (50 points) and Boston (300 points), 250 particles
    python bench/bench_smc.py --quick    # 100 particles

Both engines get the same data, settings and seed and (tested in tests/test_smc.py) make the same random draws, so
they do the same arithmetic: the ratio is the cost of running the particle loop in Python. Prints seconds per pass
over the data, with and without resample-move (RJ steps per observation), and the ratio.
One run, one shared machine: ratios, not absolute claims.
"""
import argparse
import time

import numpy as np

from rbf_bayes.datasets import load_boston, random_split, sinc_data
from rbf_bayes.smc import TDSMC, TDSMCReference


def run(cls, x, y, n, **kw):
    t0 = time.perf_counter()
    s = cls(n, rng=np.random.default_rng(1), capacity=len(x), **kw).partial_fit(x, y)
    return time.perf_counter() - t0, s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 100 if args.quick else 250
    d = sinc_data(np.random.default_rng(0))
    order = np.random.default_rng(0).permutation(len(d.x))
    xb, yb, _ = load_boston()
    tr, _ = random_split(np.random.default_rng(0), len(yb), 300)
    xs = (xb[tr] - xb[tr].mean(0)) / xb[tr].std(0)
    cases = [("sinc", d.x[order], d.y[order], dict(width=1.6, lam=1.0, k_max=50)),
             ("Boston", xs, yb[tr], dict(width=5.0, lam=5.0, k_max=100))]
    print(f"{'data':>7} {'move_steps':>10} {'C (s)':>8} {'Python (s)':>10} {'ratio':>6}  mean k")
    for name, x, y, kw in cases:
        for ms in (0, 1):
            tc, sc = run(TDSMC, x, y, n, move_steps=ms, **kw)
            tp, sp = run(TDSMCReference, x, y, n, move_steps=ms, **kw)
            assert np.allclose(sc.logw, sp.logw)            # the same computation
            print(f"{name:>7} {ms:>10} {tc:8.3f} {tp:10.2f} {tp / tc:6.1f}  {sc.weights @ sc.ks:.1f}", flush=True)


if __name__ == "__main__":
    main()
