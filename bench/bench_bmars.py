"""Bayesian MARS against pyBASS (PyPI `pybass-emu`, a dev-only dependency) on Friedman #1.

    python bench/bench_bmars.py            # n = 500, p = 10, 10,000 iterations, 9,000 burn-in
    python bench/bench_bmars.py --quick
    python bench/bench_bmars.py --ladder   # only the tempered ladder's rounds: in C against in Python

Both samplers get the same data (seeded), the same number of iterations and burn-in, and keep every iteration
after burn-in for prediction. Prints iterations per second (the whole fit call, including set-up such as the
exact count of valid bases, and the post-burn-in bookkeeping), their ratio, and the test RMSE against the
noise-free function on 1,000 points, per seed. Ours runs as BMARSRegressor does (standardised response, the
paper's priors, interaction order 2); pyBASS with its defaults (maxInt=3) and with maxInt=2.
Then the tempered ladder (BMARSRegressor's default, four replicas): the same chain with its rounds of swaps run in C
(`_bmars.ladder_run`, the default) and driven from Python (`_BMARSRoundsInPython`, the reference), against one
untempered replica: seconds and microseconds per replica-iteration, interleaved repeats, best of each; and the
default BMARSRegressor's whole fit both ways (four chains on two threads).
One run, one shared machine: ratios, not absolute claims.
"""
import argparse
import time

import numpy as np

from rbf_bayes.bmars import BMARSPrior, sample_bmars
from rbf_bayes.datasets import friedman


def ladder_rounds(d, n_iter: int, repeats: int = 3):
    "The ladder's cost per replica-iteration with its rounds in C and in Python, and one untempered replica's."
    from rbf_bayes.bmars import bmars_run

    y = (d.y - d.y.mean()) / d.y.std()
    best = {}
    for _ in range(repeats):
        for name, R, in_python in (("untempered (1 replica)", 1, False), ("ladder, rounds in C", 4, False),
                                   ("ladder, rounds in Python", 4, True)):
            run = bmars_run(d.x, y, prior=BMARSPrior(max_interaction=2, k_max=50), n_iter=n_iter,
                            burn_in=n_iter // 2, thin=10, rng=np.random.default_rng(1), n_temps=R)
            run.in_python = in_python
            t0 = time.perf_counter()
            run.run(False)
            secs = time.perf_counter() - t0
            best[name] = min(best.get(name, (np.inf, R))[0], secs), R
    print(f"\nthe tempered ladder, {n_iter} iterations, swaps every 10; best of {repeats} interleaved repeats")
    for name, (secs, R) in best.items():
        print(f"{name:>32} {secs:>8.2f} s {1e6 * secs / n_iter / R:>8.2f} us per replica-iteration")
    ratio = best["ladder, rounds in Python"][0] / best["ladder, rounds in C"][0]
    print(f"rounds in Python / rounds in C: {ratio:.2f}x")
    # the default BMARSRegressor (four chains on two threads, run until converged or the cap): Python-driven rounds
    # hold the GIL between their calls into C, so the chains also waited for each other
    import warnings

    from rbf_bayes import BMARSRegressor
    from rbf_bayes.bmars import _BMARSLadder

    d2 = friedman(np.random.default_rng(0), 1, n=240, p=10, noise_sd=1.0, n_test=10)
    init, fits = _BMARSLadder.__init__, {}
    try:
        for _ in range(min(repeats, 2)):
            for name, in_python in (("BMARSRegressor(), rounds in C", False),
                                    ("BMARSRegressor(), rounds in Python", True)):
                _BMARSLadder.__init__ = lambda self, *a, ip=in_python, **k: init(self, *a, **k, in_python=ip)
                m = BMARSRegressor(random_state=0, **({"max_iter": 16_000} if n_iter < 10_000 else {}))
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m.fit(d2.x, d2.y)
                fits[name] = min(fits.get(name, (np.inf,))[0], time.perf_counter() - t0), len(m.trace_.k)
    finally:
        _BMARSLadder.__init__ = init
    print(f"\nthe default BMARSRegressor on Friedman #1 (n = 240, p = 10, seed 0), best of {min(repeats, 2)}")
    for name, (secs, n_it) in fits.items():
        print(f"{name:>42} {secs:>8.2f} s  ({n_it:,} iterations over the chains)")
    (c_s, _), (py_s, _) = fits.values()
    print(f"the fit, rounds in Python / rounds in C: {py_s / c_s:.2f}x (the same chains: the same iterations)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=3, help="chains per sampler (default 3)")
    ap.add_argument("--ladder", action="store_true", help="only the tempered ladder's rounds, in C against in Python")
    args = ap.parse_args()
    n_iter, burn = (2000, 1800) if args.quick else (10_000, 9_000)
    d = friedman(np.random.default_rng(0), 1, n=500, p=10, noise_sd=1.0, n_test=1000)
    if args.ladder:
        return ladder_rounds(d, 4000 if args.quick else 40_000)
    ym, ys = d.y.mean(), d.y.std()
    rmse = lambda pred: float(np.sqrt(np.mean((pred - d.f_test) ** 2)))
    rows = {}
    for s in range(1, args.seeds + 1):
        # our default path (as BMARSRegressor): standardised response, the paper's vague priors
        t0 = time.perf_counter()
        tr = sample_bmars(d.x, (d.y - ym) / ys, prior=BMARSPrior(max_interaction=2, k_max=50), n_iter=n_iter,
                          burn_in=burn, thin=1, rng=np.random.default_rng(s))
        secs = time.perf_counter() - t0
        rows.setdefault("rbf_bayes BMARS (C loop), I=2", []).append(
            (n_iter / secs, rmse(tr.predict(d.x_test)[:, 0] * ys + ym))
        )
    try:
        import pyBASS as pb
    except ImportError:
        pb = None
        print("pyBASS not installed (pip install pybass-emu): only our sampler was run")
    if pb is not None:
        for max_int in (3, 2):
            for s in range(1, args.seeds + 1):
                np.random.seed(s)     # pyBASS draws from numpy's global generator
                t0 = time.perf_counter()
                mod = pb.bass(d.x, d.y, nmcmc=n_iter, nburn=burn, thin=1, maxInt=max_int, verbose=False)
                secs = time.perf_counter() - t0
                rows.setdefault(f"pyBASS (maxInt={max_int})", []).append(
                    (n_iter / secs, rmse(mod.predict(d.x_test).mean(axis=0)))
                )
    print(f"Friedman #1, n = 500, p = 10, unit noise, {n_iter} iterations ({burn} burn-in), {args.seeds} seeds; "
          f"RMSE against the noise-free function on 1,000 points")
    print(f"{'sampler':>32} {'it/s (mean)':>12} {'RMSE per seed':>24} {'RMSE mean':>10}")
    for name, r in rows.items():
        rates, rm = zip(*r, strict=False)
        print(f"{name:>32} {np.mean(rates):>12.0f} {str(np.round(rm, 3)):>24} {np.mean(rm):>10.3f}")
    names = list(rows)
    for other in names[1:]:
        print(
            f"speed ratio rbf_bayes / {other}: "
            f"{np.mean([a for a, _ in rows[names[0]]]) / np.mean([a for a, _ in rows[other]]):.1f}x"
        )
    ladder_rounds(d, 4000 if args.quick else 40_000, 1 if args.quick else 3)


if __name__ == "__main__":
    main()
