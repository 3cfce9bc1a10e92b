"""Stacking the two fits of quadratic="auto" instead of keeping one (issue 35): measured in stop 78, built in stop 79.

    python bench/study_stacking.py --cases boston robot friedman2 --splits 0 1 2 3 4
    python bench/study_stacking.py --cases boston --splits 0 1 2 --control     # two plain fits averaged, as a control

The default (`RJMCMCRegressor()`, quadratic="auto") fits the plain model and the model with the inputs' products and
squares, and keeps one: the products where their PSIS-LOO is ahead by more than one paired se. Stacking (Yao, Vehtari,
Simpson & Gelman 2018, "Using stacking to average Bayesian predictive distributions") keeps both, as the mixture
w p_plain + (1 - w) p_products of the two posterior predictive distributions, with w maximising the leave-one-out
log score sum_i log(w exp(elpd_plain,i) + (1 - w) exp(elpd_products,i)) of the training rows; the pointwise PSIS-LOO
terms each fit's `loo` already computes. The mixture's mean is w mean_plain + (1 - w) mean_products.

Per split of bench_defaults' cases (its splits, error and GP configuration): each fit's error, the rule's choice's,
the 50/50 mixture's and the stacked mixture's, the GP's; the stacked weight; the mean log predictive density of the
test targets of each fit and of the stacked mixture; the seconds of each fit. --control also fits the plain model from
a second seed (random_state = split + 1000) and scores the two plain fits' 50/50 mixture: if that gained as much, the
gain would be the chains' (two converged runs of one posterior), not the two models'. Rows are appended to --out as
JSON lines and printed.
"""
import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import minimize_scalar

sys.path.insert(0, str(Path(__file__).parent))
import bench_defaults as B  # noqa: E402

from rbf_bayes import RJMCMCRegressor  # noqa: E402


def stacking_weight(a, b) -> float:
    "w in (0, 1) maximising sum_i log(w exp(a_i) + (1 - w) exp(b_i)): the first model's stacking weight."
    def loss(w):
        return -np.sum(np.logaddexp(np.log(w) + a, np.log1p(-w) + b))
    return float(minimize_scalar(loss, bounds=(1e-9, 1 - 1e-9), method="bounded").x)


def fit(X, y, Xt, yt, seed, q):
    "One fit of the default regressor with quadratic=q: its LOO, test prediction and test log densities, seconds."
    t0 = time.perf_counter()
    m = RJMCMCRegressor(random_state=seed, n_jobs=2, quadratic=q).fit(X, y)
    sec = time.perf_counter() - t0
    return m.loo(X, y), m.predict(Xt), np.asarray(m.log_predictive_density(Xt, yt)), sec


def study(case, s, X, y, Xt, yt, ft, control=False) -> dict:
    r = {"case": case, "split": s}
    (l0, p0, d0, r["sec_plain"]), (l1, p1, d1, r["sec_products"]) = (fit(X, y, Xt, yt, s, q) for q in (False, True))
    diff, se = l1.difference(l0)
    w = stacking_weight(l0.pointwise, l1.pointwise)
    r.update(
        err_plain=B.error(case, p0, yt, ft), err_products=B.error(case, p1, yt, ft), diff=diff, se=se,
        err_choice=B.error(case, p1 if diff > se else p0, yt, ft), w_plain=w,
        err_avg=B.error(case, 0.5 * (p0 + p1), yt, ft), err_stack=B.error(case, w * p0 + (1 - w) * p1, yt, ft),
        mlpd_plain=float(np.mean(d0)), mlpd_products=float(np.mean(d1)),
        mlpd_stack=float(np.mean(np.logaddexp(np.log(w) + d0, np.log1p(-w) + d1))),
    )
    if control:
        _, p2, _, r["sec_plain2"] = fit(X, y, Xt, yt, s + 1000, False)
        r.update(err_plain2=B.error(case, p2, yt, ft), err_plain_avg=B.error(case, 0.5 * (p0 + p2), yt, ft))
    t0 = time.perf_counter()
    g = B.CONFIGS["gp"](X, y, Xt, s)
    r.update(sec_gp=time.perf_counter() - t0, err_gp=B.error(case, np.reshape(g["pred"], np.shape(yt)), yt, ft))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=["boston", "robot", "friedman2"])
    ap.add_argument("--splits", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--control", action="store_true")
    ap.add_argument("--out", default="study_stacking.jsonl")
    a = ap.parse_args()
    warnings.simplefilter("ignore")  # far-out test rows held (ExtrapolationWarning) and the like: not what is measured
    with open(a.out, "a") as out:
        for case, s, X, y, Xt, yt, ft in B.cases(False):
            if case in a.cases and s in a.splits:
                r = study(case, s, X, y, Xt, yt, ft, a.control)
                print(json.dumps(r), file=out, flush=True)
                print(case, s, {k: round(v, 6) for k, v in r.items() if k.startswith(("err", "w_", "diff"))},
                      flush=True)


if __name__ == "__main__":
    main()
