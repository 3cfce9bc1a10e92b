"""Evidence for the default prior on k (the default model must stay parsimonious).

For each data set, coefficient prior (ridge / g), hierarchy (conditional / joint truncation of the Poisson-Gamma
prior on k, see nbs/01_priors) and k_max, fit independent `RJMCMCRegressor` chains with every other argument at its
default (standardised inputs and outputs) and report p(k | y): mode, mean, 90% interval, the rank-normalised split
R-hat of k across chains, the test error (MSE summed over outputs; tremor: error rate of the 0.5 threshold), seconds
per chain, and whether the package warned.

    python bench/study_k_prior.py            # robot arm 50k/30k, signal detection and tremor 20k/10k, 4 chains
    python bench/study_k_prior.py --quick    # shorter chains (smoke test)
"""
import argparse
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from rbf_bayes import RJMCMCRegressor
from rbf_bayes.convergence import rhat
from rbf_bayes.datasets import load_tremor, robot_arm, signal_detection
from rbf_bayes.priors import RBFPrior

TREMOR = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")


def data_sets():
    out = {}
    d = robot_arm(np.random.default_rng(0))
    out["robot arm"] = (d.x, d.y, d.x_test, d.y_test, "cubic", 1.0)
    s = signal_detection(np.random.default_rng(0), 50, 1.0)
    out["signal s2=1"] = (
        s.x,
        s.y,
        s.x_test,
        s.y_test,
        "gaussian",
        0.2 * float(s.x.std()),
    )  # 0.2 on the standardised input, in units of x
    if os.path.isdir(TREMOR):
        x, y, xt, yt = load_tremor(TREMOR)
        out["tremor (0/1)"] = (x, y.astype(float), xt, yt.astype(float), "thin_plate", 1.0)
    return out


def one_chain(args):
    name, x, y, xt, yt, basis, width, coef_prior, k_prior, k_max, n_iter, burn_in, seed = args
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        m = RJMCMCRegressor(basis=basis, width=width, n_iter=n_iter, burn_in=burn_in, random_state=seed,
                            quadratic=False,
                            prior=RBFPrior(k_max=k_max, k_prior=k_prior, coef_prior=coef_prior)).fit(x, y)
        secs = time.perf_counter() - t0
    p = m.predict(xt)
    err = (
        np.mean((p > 0.5) != (yt > 0.5))
        if name.startswith("tremor")
        else np.mean(np.sum((np.reshape(p, (len(xt), -1)) - np.reshape(yt, (len(xt), -1))) ** 2, 1))
    )
    return m.trace_.k[burn_in:], secs, sorted({type(x).__name__ for x in (q.message for q in w)}), err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--data", default="", help="only the data sets whose name starts with this")
    ap.add_argument("--coef", default="ridge,g")
    args = ap.parse_args()
    print(f"{'data':14s} {'coef':5s} {'k_prior':11s} {'k_max':>5s} {'mode':>4s} {'mean':>6s} {'90% interval':>13s} "
          f"{'R-hat':>6s} {'test err':>8s} {'s/chain':>7s}  warnings")
    with ProcessPoolExecutor(2) as ex:
        for name, (x, y, xt, yt, basis, width) in data_sets().items():
            if not name.startswith(args.data): continue
            N, d = x.shape
            n_iter, burn = (50_000, 30_000) if name == "robot arm" else (20_000, 10_000)
            if args.quick: n_iter, burn = n_iter // 10, burn // 10
            for coef_prior in args.coef.split(","):
                for k_prior in ("conditional", "joint"):
                    for k_max in sorted({20, min(50, N - d - 2), N - d - 2}):
                        jobs = [(name, x, y, xt, yt, basis, width, coef_prior, k_prior, k_max, n_iter, burn, 10 + s)
                                for s in range(args.chains)]
                        res = list(ex.map(one_chain, jobs))
                        ks = np.array([r[0] for r in res])
                        pk = np.bincount(ks.ravel(), minlength=k_max + 1) / ks.size
                        lo, hi = np.searchsorted(np.cumsum(pk), [0.05, 0.95])
                        warn = sorted({w for r in res for w in r[2]})
                        print(f"{name:14s} {coef_prior:5s} {k_prior:11s} {k_max:5d} {pk.argmax():4d} "
                              f"{np.arange(len(pk)) @ pk:6.1f} {f'[{lo}, {hi}]':>13s} {rhat(ks.astype(float)):6.3f} "
                              f"{np.mean([r[3] for r in res]):8.5f} {np.mean([r[1] for r in res]):7.2f}  "
                              f"{', '.join(warn) or '-'}", flush=True)


if __name__ == "__main__":
    main()
