"""SMCRegressor with learned per-input scales (learn_scales=True, 09_smc "Learning the input scales") against the
isotropic width chosen by evidence from a grid (stop 104's default) and the ARD GP, on bench_defaults' protocols.

    python bench/study_smc_scales.py [--cases ...] [--configs ...] [--splits N]

Configurations: `smc_grid` SMCRegressor(learn_scales=False) (the default until stop 105; bench_defaults' `smc` until
then); `smc_scales` SMCRegressor(learn_scales=True) (the default since); `smc_scales_ms3` the same with three
resample-move sweeps per observation (move_steps=3); `smc_scales_lam3` and `smc_scales_lam10` the learned scales
under k ~ Poisson(3) (k_max 50) and Poisson(10) (k_max 100) instead of the paper's Poisson(1); `smc_scales_lam10k50`
Poisson(10) with k_max 50; `smc_grid_lam10` the width grid under Poisson(10); `gp` the ARD GP.
Prints bench_defaults' rows and summary.
"""
import argparse

from bench_defaults import CASES, CONFIGS, other, print_summary, run, summarise

from rbf_bayes import SMCRegressor
from rbf_bayes.priors import SMCPrior

CONFIGS.update(
    smc_grid=other(SMCRegressor, learn_scales=False),
    smc_scales=other(SMCRegressor, learn_scales=True),
    smc_scales_ms3=other(SMCRegressor, learn_scales=True, move_steps=3),
    smc_scales_lam3=other(SMCRegressor, learn_scales=True, prior=SMCPrior(lam=3.0)),
    smc_scales_lam10=other(SMCRegressor, learn_scales=True, prior=SMCPrior(lam=10.0, k_max=100)),
    smc_scales_lam10k50=other(SMCRegressor, learn_scales=True, prior=SMCPrior(lam=10.0)),
    smc_grid_lam10=other(SMCRegressor, learn_scales=False, prior=SMCPrior(lam=10.0)),
)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--configs", nargs="*", default=["smc_grid", "smc_scales", "smc_scales_ms3", "gp"])
    ap.add_argument("--splits", type=int, default=None)
    a = ap.parse_args()
    print_summary(summarise(run(a.cases, a.configs, log=lambda s: print(s, flush=True), n_splits=a.splits)))
