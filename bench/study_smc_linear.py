"""Would a linear part [1, x] help TD-SMC? A proxy, before the engine carries one: `SMCRegressor()` fitted to the
residuals of a least-squares linear fit (the prediction: the linear fit plus TD-SMC's; its interval TD-SMC's, shifted),
against `SMCRegressor()` on the targets, paired on bench_defaults' protocols. The reversible-jump model has the linear
part (D = [1, x, phi]); the TD-SMC paper's has the constant only. A proxy, not the joint model: the linear
coefficients are fixed at their least-squares values, not integrated over with the kernels'.

    python bench/study_smc_linear.py [--cases ...] [--splits N]

Stop 106, every split (two processes at once on 2 cores): mean error smc -> smc_linear_proxy, paired difference:
Boston 13.109 -> 13.107 (-0.00 +- 0.87), Friedman #1 0.0306 -> 0.0266 (-0.0040 +- 0.0058), #2 0.00698 -> 0.00806
(+0.0011 +- 0.0009), #3 0.1081 -> 0.1050 (-0.0031 +- 0.0072), robot arm 0.00112 -> 0.00133 (+0.0002 +- 0.0002),
sinc 0.0180 -> 0.0189 (+0.0009 +- 0.0012): level everywhere (the first two splits, 0.033 / 0.039 -> 0.024 / 0.024 on
Friedman #1, were the lucky ones).
"""
import argparse

import numpy as np
from bench_defaults import CASES, CONFIGS, other, print_summary, run, summarise

from rbf_bayes import SMCRegressor


def _linear_then_smc(X, y, Xt, seed, max_iter=None, smoke=False):
    A, At = np.c_[np.ones(len(X)), X], np.c_[np.ones(len(Xt)), Xt]
    B = np.linalg.lstsq(A, y, rcond=None)[0]
    m = SMCRegressor(random_state=seed).fit(X, y - A @ B)
    lin = At @ B
    lo, hi = m.predict_interval(Xt, level=0.95)
    return dict(pred=lin + m.predict(Xt), lo=lin + lo, hi=lin + hi, model=m,
                lpd=lambda yt: m.log_predictive_density(Xt, yt - lin))


CONFIGS.update(smc=other(SMCRegressor), smc_linear_proxy=_linear_then_smc)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--configs", nargs="*", default=["smc", "smc_linear_proxy", "gp"])
    ap.add_argument("--splits", type=int, default=None)
    a = ap.parse_args()
    print_summary(summarise(run(a.cases, a.configs, log=lambda s: print(s, flush=True), n_splits=a.splits)))
