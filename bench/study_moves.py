"""Is the default's mixing in k limited by its moves? (issue 35: the time to a converged fit on Boston.)

    python bench/study_moves.py --splits 0 1 2 --n-iter 32000

On Boston splits (bench_defaults' protocol), the default regressor (four chains of four tempered replicas on 2
threads) for a fixed number of iterations per chain (half burn-in), once per arm, with `bench_mixing.measure`'s
columns: seconds, split-R-hat of k and of the log posterior, bulk ESS of k, ESS of k, of the log posterior and of the
predictions at five test points per second, test MSE, and the birth and death acceptance. Arms:
- `default`: every move of the paper (birth, death, split, merge, update), c* = 0.25;
- `no_split_merge`: split and merge off, their share going to the update of the centres. In 13 inputs a split is
  never accepted: its ratio carries the volume of the split's proposal region, V_13 (2 varsigma*)^13 (log -21 with
  varsigma* = 0.1), times the new centre's prior density (log -22 to -33 on Boston split 0's standardised inputs,
  between the near box and the far one), so it starts 43-54 nats down (03_moves' log_ratio_split);
- `scale_step_0.7`, `scale_step_1.5`: the learned log scales' random-walk sd (the default's 0.3).
The arms change only the default's run settings (`RJConfig`), through the estimator's config function for the one
fit. `--symmetric`: the default's prior with the symmetric normal on the log scales, the default when stop 67 measured
this (`bench_defaults`' `symmetric_scales`). One run per arm and split: read the seconds as ratios within a run.
"""
import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_defaults as bd  # noqa: E402
import bench_mixing as bm  # noqa: E402

from rbf_bayes import estimators  # noqa: E402

ARMS = {
    "default": {},
    "no_split_merge": dict(moves=("birth", "death", "update")),
    "scale_step_0.7": dict(scale_step=0.7),
    "scale_step_1.5": dict(scale_step=1.5),
}


def with_settings(settings):
    "The estimators' run-settings function with these RJConfig fields replaced."
    base = estimators._rj_config
    return lambda est, auto, progress, **extra: dataclasses.replace(base(est, auto, progress, **extra), **settings)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--splits", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--n-iter", type=int, default=32_000)
    ap.add_argument("--arms", nargs="*", default=list(ARMS), choices=list(ARMS))
    ap.add_argument("--symmetric", action="store_true", help="the symmetric scale prior (the default until stop 67)")
    a = ap.parse_args()
    base = estimators._rj_config
    print(f"{'split / arm':<34} {'sec':>7} {'R(k)':>6} {'R(lp)':>6} {'ESS(k)':>7} {'k/s':>7} {'lp/s':>7} {'f/s':>7} "
          f"{'MSE':>9}  acceptance", flush=True)
    for case, s, X, y, Xt, yt, _ in bd.cases(False, max(a.splits) + 1):
        if case != "boston" or s not in a.splits: continue
        for arm in a.arms:
            estimators._rj_config = with_settings(ARMS[arm])
            try:
                bm.measure(f"{s} {arm}", X, y, Xt, yt, random_state=s, n_iter=a.n_iter, burn_in=a.n_iter // 2,
                           **(dict(prior=bd.SYMMETRIC) if a.symmetric else {}))
            finally:
                estimators._rj_config = base
        if s == max(a.splits): break


if __name__ == "__main__":
    main()
