"""Many rows (issue 36 item 5): the annealer, RJMCMC and TD-SMC on a two-input surface of N rows.

    python bench/bench_many_rows.py            # N = 200,000 (the issue's size)
    # N = 40,000 (the CI smoke run: above the descent's 20,000 rows and TD-SMC's limit)
    python bench/bench_many_rows.py --quick

Prints seconds per fit for RJMCMC (200 iterations, one chain: the peer), the annealer with one restart and no final
descent, the annealer at n_iter=200 with its other defaults (4 restarts, polish "auto": off above 20,000 rows), and
the time TD-SMC's `fit` takes to refuse a pass above SMC_MAX_WORK (it refuses before any work). One run on a shared
machine: read the ratios to RJMCMC, not the seconds.
"""
import argparse
import time
import warnings

import numpy as np

from rbf_bayes import AnnealedRBFRegressor, RJMCMCRegressor, SMCRegressor


def timed(make, X, y):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = make().fit(X, y)
    return time.perf_counter() - t0, m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    N = 40_000 if args.quick else 200_000
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (N, 2)); y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(N)
    print(f"{N:,} rows, 2 inputs")
    t_rj, _ = timed(lambda: RJMCMCRegressor(n_iter=200, burn_in=100, n_chains=1, random_state=0,
                                                   quadratic=False), X, y)
    print(f"{'RJMCMCRegressor(n_iter=200, burn_in=100, n_chains=1)':62s} {t_rj:7.2f} s   1.0 x", flush=True)
    for name, make in (("AnnealedRBFRegressor(n_iter=200, n_restarts=1, polish=False)",
                        lambda: AnnealedRBFRegressor(n_iter=200, n_restarts=1, polish=False, random_state=0)),
                       ("AnnealedRBFRegressor(n_iter=200)", lambda: AnnealedRBFRegressor(n_iter=200, random_state=0))):
        t, m = timed(make, X, y)
        print(f"{name:62s} {t:7.2f} s {t / t_rj:5.1f} x   k = {m.k_}, polish {m.trace_.meta.polish}", flush=True)
    t0 = time.perf_counter()
    try:
        SMCRegressor(random_state=0).fit(X, y)
        print("SMCRegressor() ran")
    except ValueError as e:
        print(f"{'SMCRegressor() refuses (before any work)':62s} {time.perf_counter() - t0:7.2f} s   {str(e)[:90]} ...")


if __name__ == "__main__":
    main()
