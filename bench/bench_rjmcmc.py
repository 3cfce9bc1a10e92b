"""Speed of the reversible-jump sampler: the C loop vs the pure-NumPy reference, and the cost in N.

    python bench/bench_rjmcmc.py            # full (about a minute)
    python bench/bench_rjmcmc.py --quick    # smoke test

1. Robot arm (N = 200, d = 2, c = 2, cubic, ridge prior with the papers' hyperparameters, all moves):
   iterations per second of `sample_rjmcmc` over a 50,000-iteration run (k_max = 20, Experiment 1's value,
   and the largest default k_max, min(N - (d + 2), 100) = 100), and of `sample_rjmcmc_reference` over a short run
   started from the
   C chain's final state (so both work at the same k), and their ratio. One run, one machine.
   Then the estimator with every argument at its default (g-prior, joint hierarchy, standardised data, k_max =
   min(N - (d + 2), 100)): seconds for 50,000 iterations with 30,000 burn-in, p(k | y), warnings, and the ratio to
   the paper's model at k_max = 20.
2. Time per iteration at N = 1e3, 1e4, 1e5 (robot-arm inputs, k_max = 20, after a burn-in that brings k to
   k_max); per-iteration cost divided by N should be about constant (linear in N).

    python bench/bench_rjmcmc.py --profile  # where an iteration's time goes (the paper's model, k_max = 20)

3. `--profile`: from the k_max = 20 chain's final state (k about 20), short runs that isolate one block each: the
   update sweep (moves = update only, delta^2 held: no refactorisation), the same with the delta^2 Gibbs step (the
   ridge prior refactorises the factor of G + I/delta^2 for each output: O(c m^3)), birth/death only and split/merge
   only (fixed move probabilities 1/2, 1/2). Each block's time per call is printed beside its multiply-add count and
   the rate that implies, and the blocks are combined with the full chain's move frequencies into a predicted time
   per iteration, beside the measured one. The floor: the same multiply-adds at the rate of a BLAS matrix product
   on this machine (measured here, one call on the design's shape), which no scalar loop beats.
"""
import argparse
import time
import warnings

import numpy as np

from rbf_bayes import RJMCMCRegressor
from rbf_bayes.datasets import robot_arm
from rbf_bayes.priors import RBFPrior
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc, sample_rjmcmc_reference

# the 1999 paper's model (ridge prior, conditional k prior, k_max = 20), as in the robot-arm experiment
PAPER_PRIOR = RBFPrior(k_max=20, coef_prior="ridge", k_prior="conditional")


def robot(n_iter, k_max, seed=1, n_train=200):
    d = robot_arm(np.random.default_rng(0), n_train=n_train, n_test=10)
    cfg = RJConfig(n_iter=n_iter, burn_in=n_iter - 1, chunk_size=min(n_iter, 10_000))
    t0 = time.perf_counter()
    tr = sample_rjmcmc(
        d.x,
        d.y,
        prior=RBFPrior(k_max=k_max, coef_prior="ridge", k_prior="conditional"),
        config=cfg,
        rng=np.random.default_rng(seed),
        basis="cubic",
    )
    return tr, time.perf_counter() - t0, d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    if args.profile:
        return profile(args.quick)
    n_c = 5_000 if args.quick else 50_000
    n_r = 20 if args.quick else 200
    print(f"robot arm, N = 200, d = 2, c = 2, cubic, ridge prior; C loop {n_c} iterations, reference {n_r}")
    print(f"{'k_max':>6} {'E[k] (2nd half)':>16} {'C it/s':>10} {'C seconds':>10} {'ref it/s':>9} {'ratio':>7}")
    for k_max in (20, None):
        tr, secs, d = robot(n_c, k_max)
        k_mean = tr.k[n_c // 2:].mean()
        cen = tr.sample_centres(tr.n_samples - 1)
        cfg = RJConfig(n_iter=n_r, burn_in=n_r - 1)
        t0 = time.perf_counter()
        sample_rjmcmc_reference(
            d.x,
            d.y,
            prior=RBFPrior(k_max=k_max, coef_prior="ridge", k_prior="conditional"),
            config=cfg,
            rng=np.random.default_rng(2),
            basis="cubic",
            init={"centres": cen, "Lambda": float(tr.Lambda[-1]), "delta2": tr.delta2[-1]},
        )
        r_secs = time.perf_counter() - t0
        c_rate, r_rate = n_c / secs, n_r / r_secs
        print(
            f"{str(k_max if k_max else 100):>6} {k_mean:>16.1f} {c_rate:>10.0f} "
            f"{secs:>10.2f} {r_rate:>9.1f} {c_rate / r_rate:>7.0f}"
        )
        if k_max == 20: paper_secs = secs
    n_d, b_d = (5_000, 3_000) if args.quick else (50_000, 30_000)
    d = robot_arm(np.random.default_rng(0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        m = RJMCMCRegressor(basis="cubic", n_iter=n_d, burn_in=b_d, random_state=0, quadratic=False).fit(d.x, d.y)
        secs = time.perf_counter() - t0
    pk = m.k_posterior_; lo, hi = np.searchsorted(np.cumsum(pk), [0.05, 0.95])
    print(
        f"\nRJMCMCRegressor(basis='cubic', n_iter={n_d}, burn_in={b_d}, random_state=0), every other argument at its "
        f"default: {secs:.2f} s ({secs / paper_secs:.2f} x the paper's "
        f"model at k_max = 20), k_max {m.trace_.meta.k_max}, "
        f"p(k|y) mode {pk.argmax()}, mean {np.arange(len(pk)) @ pk:.1f}, 90% [{lo}, {hi}], {len(caught)} warnings"
    )
    print("\ncost in N (k_max = 20, after burn-in):")
    print(f"{'N':>8} {'k':>4} {'ms/iteration':>13} {'ns/(iteration*N)':>17}")
    for N in ((1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)):
        burn = 3_000 if N <= 10_000 else 1_500
        meas = 2_000 if N <= 10_000 else 300
        d = robot_arm(np.random.default_rng(0), n_train=N, n_test=10)
        cfg = RJConfig(n_iter=burn + meas, burn_in=burn + meas - 1, chunk_size=100)
        tr = None
        # time only the measured iterations: run burn-in and measurement as one chain, timing the tail
        cfg_b = RJConfig(n_iter=burn, burn_in=burn - 1)
        trb = sample_rjmcmc(
            d.x,
            d.y,
            prior=PAPER_PRIOR,
            config=cfg_b,
            rng=np.random.default_rng(3),
            basis="cubic",
        )
        init = {
            "centres": trb.sample_centres(trb.n_samples - 1),
            "Lambda": float(trb.Lambda[-1]),
            "delta2": trb.delta2[-1],
        }
        cfg_m = RJConfig(n_iter=meas, burn_in=meas - 1)
        t0 = time.perf_counter()
        trm = sample_rjmcmc(
            d.x,
            d.y,
            prior=PAPER_PRIOR,
            config=cfg_m,
            rng=np.random.default_rng(4),
            basis="cubic",
            init=init,
        )
        dt = (time.perf_counter() - t0) / meas
        print(f"{N:>8} {trm.k.mean():>4.0f} {dt * 1e3:>13.3f} {dt / N * 1e9:>17.2f}")


def profile(quick):
    "Time per block of an iteration (see the module docstring, 3.) against its multiply-add count."
    n_c = 5_000 if quick else 50_000
    tr, secs, d = robot(n_c, 20)
    N, dim, c = d.x.shape[0], d.x.shape[1], d.y.shape[1]
    prior = PAPER_PRIOR
    init = {"centres": tr.sample_centres(tr.n_samples - 1), "Lambda": float(tr.Lambda[-1]), "delta2": tr.delta2[-1]}
    k = len(init["centres"]); m = k + dim + 1
    n = 500 if quick else 5_000

    def run(**kw):
        "Seconds per iteration of a short run from the chain's final state with these settings."
        cfg = RJConfig(n_iter=n, burn_in=n - 1, **kw)
        t0 = time.perf_counter()
        sample_rjmcmc(d.x, d.y, prior=prior, config=cfg, rng=np.random.default_rng(5), basis="cubic", init=init)
        return (time.perf_counter() - t0) / n

    d2 = float(np.mean(init["delta2"]))
    t_sweep = run(moves=("update",), fix_delta2=d2)
    t_sweep_h = run(moves=("update",))
    t_bd = run(moves=("birth", "death", "update"), fixed_probs=(0.5, 0.5, 0.0, 0.0), fix_delta2=d2)
    t_sm = run(moves=("split", "merge", "update"), fixed_probs=(0.0, 0.0, 0.5, 0.5), fix_delta2=d2)
    # multiply-adds: a new column N (d + 2) (distances, cubic), its inner products with the m columns and the c
    # targets N (m + c), the factor's row update m^2 / 2 per factor (c factors under the ridge prior)
    col = N * (dim + 2) + N * (m + c) + c * m * m / 2
    sweep = k * col
    hyper = c * m ** 3 / 6 + c * m * m          # refactor G + I/delta^2 per output; z, alpha draws
    # the floor's rate: a BLAS product of the design's shape (N x m)' (N x m), many times
    A = np.random.default_rng(0).normal(size=(N, m)); reps = 2000
    t0 = time.perf_counter()
    for _ in range(reps): A.T @ A
    blas = reps * N * m * m / (time.perf_counter() - t0)
    full = secs / n_c
    mv = np.bincount(tr.move[n_c // 2:], minlength=6)[:5] / (n_c - n_c // 2)   # birth, death, split, merge, update
    pred = mv[4] * (t_sweep_h) + (mv[0] + mv[1]) * t_bd + (mv[2] + mv[3]) * t_sm + (1 - mv[4]) * (t_sweep_h - t_sweep)
    print(f"robot arm, paper's model, k_max = 20, k = {k}, m = {m}, N = {N}, c = {c}; {n} iterations per block")
    print(f"{'block':<34} {'us/call':>9} {'multiply-adds':>14} {'G madd/s':>9}")
    rows = [("update sweep (k centres, delta^2 held)", t_sweep, sweep),
            ("delta^2 step + refactorisation", t_sweep_h - t_sweep, hyper),
            ("birth or death (one proposal)", t_bd, col), ("split or merge (one proposal)", t_sm, 2 * col)]
    for name, t, f in rows:
        print(f"{name:<34} {t * 1e6:>9.1f} {f:>14,.0f} {f / t / 1e9 if t > 0 else float('nan'):>9.2f}")
    flo = (mv[4] * sweep + (mv[0] + mv[1]) * col + (mv[2] + mv[3]) * 2 * col + hyper)
    print(f"move frequencies (birth, death, split, merge, update): {np.round(mv, 3).tolist()}")
    print(f"measured {full * 1e6:.1f} us/iteration ({secs:.2f} s for {n_c:,}); blocks combined {pred * 1e6:.1f} us; "
          f"{flo:,.0f} multiply-adds per iteration = {flo / full / 1e9:.2f} G madd/s in the loop")
    print(f"floor at this machine's BLAS rate for (N x m)'(N x m) ({blas / 1e9:.2f} G madd/s): {flo / blas * 1e6:.1f} "
          f"us/iteration, {flo / blas * 5e4:.2f} s for 50,000 iterations")


if __name__ == "__main__":
    main()
