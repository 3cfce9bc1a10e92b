"""Issue 18, first measurements: is the exhaustive reference trustworthy, and how often does RJ simulated annealing
reach it? Robot arm (200 points, cubic bases, k_max = 60), AIC and MDL.

1. The exhaustive search (`exhaustive_search`: a fixed-k annealed chain of centre updates per k = 0..40) with 2,000
   and 10,000 iterations per k, three seeds each; the envelope (best per k over all six runs) is the reference.
2. RJSA, linear and geometric schedules (T 1 -> 1e-5), 2e4 / 1e5 / 5e5 iterations, eight seeds each: the fraction of
   runs within 1 nat of the reference, the best and median criterion, the k reached, seconds per run.

    python bench/study_annealing.py            # the full study (about 9 minutes on one core)
    python bench/study_annealing.py --quick    # one seed, short runs (smoke test)
"""
import argparse
import time
import warnings

import numpy as np

from rbf_bayes.annealing import anneal_rbf, exhaustive_search
from rbf_bayes.calibration import CalibratedPrior
from rbf_bayes.datasets import robot_arm


def main(quick: bool):
    warnings.simplefilter("ignore")
    d = robot_arm(np.random.default_rng(0))
    ex_iters, ex_seeds = ((200,), 1) if quick else ((2000, 10_000), 3)
    lengths, sa_seeds, k_hi = ((2000,), 2, 20) if quick else ((20_000, 100_000, 500_000), 8, 40)
    for crit in ("aic", "mdl"):
        cal = CalibratedPrior(crit, k_max=60)
        env = {}
        for n_it in ex_iters:
            for seed in range(ex_seeds):
                ex = exhaustive_search(d.x, d.y, range(0, k_hi + 1), calibration=cal, n_iter=n_it,
                                       rng=np.random.default_rng(100 + seed), basis="cubic")
                for k, v in ex["per_k"].items(): env[k] = min(env.get(k, np.inf), v)
                print(f"{crit} exhaustive n_iter={n_it} seed={seed}: best {ex['best_criterion']:.2f} at k={ex['best_k']} "
                      f"({ex['seconds']:.1f} s)", flush=True)
        kb = min(env, key=env.get); ref = env[kb]
        print(f"{crit} envelope: best {ref:.2f} at k={kb}", flush=True)
        for sched in ("linear", "geometric"):
            for n in lengths:
                res, t0 = [], time.perf_counter()
                for s in range(sa_seeds):
                    r = anneal_rbf(d.x, d.y, calibration=cal, n_iter=n, schedule=sched, rng=np.random.default_rng(s),
                                   basis="cubic", record_every=n)
                    res.append((r.k_best, r.criterion))
                c = np.array([v for _, v in res])
                print(f"{crit} RJSA {sched:9s} {n:7d}: within 1 nat {np.mean(c <= ref + 1):.2f}, best {c.min():.2f}, "
                      f"median {np.median(c):.2f}, k {sorted(k for k, _ in res)}, "
                      f"{(time.perf_counter() - t0) / sa_seeds:.2f} s/run", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    main(ap.parse_args().quick)
