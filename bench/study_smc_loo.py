"""Is TD-SMC's PSIS-LOO what leave-one-out says? Exact LOO (one refit per left-out row) against `loo` (PSIS) for
`SMCRegressor()` (learned scales, k ~ Poisson(10)) and the paper's TD-SMC (`learn_scales=False, prior=SMCPrior()`) on
the sinc data of `16_workflow` (50 rows, noise sd 0.1; 1,000 fresh noisy targets at new inputs, as that chapter draws
them), and the held-out mean log predictive density over several seeds of each fit (one pass of particles is random).

    python bench/study_smc_loo.py [--draws 0 1 ...] [--seeds S]

Stop 106: lead 0 of stop 105 ("TD-SMC's PSIS-LOO over-optimistic") measured. The exact LOO uses the model's own
`log_predictive_density` at the left-out row, each refit with random_state 0 (as the full fit).
"""
import argparse
import time
import warnings

import numpy as np

from rbf_bayes import SMCRegressor
from rbf_bayes.datasets import sinc_data
from rbf_bayes.priors import SMCPrior

MODELS = {"default": lambda s: SMCRegressor(random_state=s),
          "paper": lambda s: SMCRegressor(learn_scales=False, prior=SMCPrior(), random_state=s)}


def held_out():
    "16_workflow's fresh targets: 1,000 inputs uniform on [-10, 10] and noisy sinc values (rng 1)."
    rng = np.random.default_rng(1)
    x = np.sort(rng.uniform(-10, 10, 1000))[:, None]
    return x, np.sinc(x[:, 0] / np.pi) + 0.1 * rng.standard_normal(1000)


def exact_loo(make, x, y):
    "sum_i log p(y_i | y_-i), one refit per row."
    n, out = len(x), []
    for i in range(n):
        keep = np.arange(n) != i
        m = make(0).fit(x[keep], y[keep])
        out.append(float(np.ravel(m.log_predictive_density(x[i:i + 1], y[i:i + 1]))[0]))
    return np.array(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--seeds", type=int, default=8)
    a = ap.parse_args()
    xn, yn = held_out()
    print(f"{'draw':>4} {'model':8} {'PSIS elpd':>10} {'k>0.7':>5} {'exact':>8} {'PSIS-exact':>10} "
          f"{'held-out MLPD x n (seed 0)':>26} {'over seeds: mean (min, max)':>30} {'s':>5}")
    for dr in a.draws:
        d = sinc_data(np.random.default_rng(dr))
        n = len(d.x)
        for name, make in MODELS.items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = make(0).fit(d.x, d.y)
                lo = m.loo(d.x, d.y)
                ex = exact_loo(make, d.x, d.y)
                ho = [float(np.mean(make(s).fit(d.x, d.y).log_predictive_density(xn, yn))) for s in range(a.seeds)]
            print(f"{dr:4d} {name:8} {lo.elpd:10.2f} {int(np.sum(lo.pareto_k > 0.7)):5d} {ex.sum():8.2f} "
                  f"{lo.elpd - ex.sum():10.2f} {n * ho[0]:26.2f} "
                  f"{n * np.mean(ho):12.2f} ({n * min(ho):6.2f}, {n * max(ho):6.2f}) {time.perf_counter() - t0:5.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
