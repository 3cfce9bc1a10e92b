"""Mixing per second: what a reversible-jump chain delivers, not how fast it iterates (issue: chains that mix).

    python bench/bench_mixing.py            # robot arm (issue's draw, 200/200), 4 chains, each configuration once
    python bench/bench_mixing.py --quick    # short runs (CI smoke run)
    python bench/bench_mixing.py --boston   # also Boston split 0 (learned scales) and Friedman #1 (input selection)
    python bench/bench_mixing.py --seeds 3  # each robot-arm configuration with random_state 0, 1, 2
    python bench/bench_mixing.py --tremor ../shared/data   # also the probit classifier on the tremor data (§7.3)
    python bench/bench_mixing.py --bmars    # also BMARSRegressor's default on five robot-arm draws (datasets.robot_arm)
    python bench/bench_mixing.py --bmars --no-robot         # BMARS only

For each configuration of `RJMCMCRegressor` (n_chains=4 on 2 threads, every other argument as listed): rank-normalised
split-R-hat (Vehtari et al. 2021, `rbf_bayes.convergence`) of k and of the log posterior over the 4 chains; bulk ESS of
k, of the log posterior and of the posterior-mean prediction at five test points (the smallest of the five; from the
kept snapshots); each ESS per second of wall time; the function error on the test inputs; the dimension moves'
acceptance; for a tempered ladder its swap acceptance. One run per configuration: the machine is shared and noisy,
so read ratios within one run.
"""
import argparse
import time

import numpy as np

from rbf_bayes import RJMCMCRegressor
from rbf_bayes.convergence import ess, rhat
from rbf_bayes.datasets import robot_arm


def _pred_series(model, X5):
    """Per chain, the posterior-mean prediction of each kept snapshot at X5 (n_kept_chain, 5 * c)."""
    tr = model.trace_
    Xs = model._scale_x(np.asarray(X5, float))
    if hasattr(tr, "design"):   # BMARS: each kept model's design times its posterior-mean coefficients
        f = np.stack([np.ravel(tr.design(Xs, s) @ tr.coef_mean[s]) for s in range(len(tr.kept))])
    else:
        f = np.stack([np.ravel(tr._subset([s]).predict(Xs)) for s in range(tr.n_samples)])
    n = tr.meta.get("chain_lengths") or [len(tr.k)]
    chain = np.searchsorted(np.cumsum(n), tr.kept, side="right")
    parts = [f[chain == j] for j in range(len(n))]
    m = min(len(p) for p in parts)
    return np.stack([p[:m] for p in parts])


def measure(name, X, y, Xt, ft, random_state=0, estimator=RJMCMCRegressor, **kw):
    m = estimator(n_chains=4, n_jobs=2, random_state=random_state, **kw)
    t0 = time.perf_counter(); m.fit(X, y); sec = time.perf_counter() - t0
    tr = m.trace_; b = tr.meta.auto["burn_in"] if "auto" in tr.meta else m.burn_in
    # the log posterior, or for BMARS (whose parameters are the bases) the log marginal likelihood it moves on
    lps = tr.log_posterior if hasattr(tr, "log_posterior") else tr.log_marginal_likelihood
    ks = np.stack(tr.chain_series(tr.k, b)); lp = np.stack(tr.chain_series(lps, b))
    fs = _pred_series(m, Xt[:5])
    e_f = min(ess(fs[:, :, j]) for j in range(fs.shape[2]))
    pred = m.predict(Xt)
    err = float(np.mean(np.sum((np.reshape(pred, (len(Xt), -1)) - np.reshape(ft, (len(Xt), -1))) ** 2, 1)))
    acc = tr.acceptance_rates()
    tm = tr.meta.get("tempering")
    swaps = "" if not tm else " swaps " + " ".join(f"{r:.2f}" for r in tm["swap_rate"])
    if "change" in acc:
        swaps += f" c {acc['change']:.3f}"
    print(
        f"{name:<34} {sec:7.2f} {rhat(ks):6.3f} {rhat(lp):6.3f} "
        f"{ess(ks):7.0f} {ess(ks) / sec:7.1f} {ess(lp) / sec:7.1f} "
        f"{e_f / sec:7.1f} {err:9.5f}  b {acc['birth']:.3f} d {acc['death']:.3f}{swaps}",
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--boston", action="store_true")
    ap.add_argument(
        "--tremor", default=None, help="directory with tremor_train.csv / tremor_test.csv (skipped if absent)"
    )
    ap.add_argument(
        "--seeds", type=int, default=1, help="run each robot-arm configuration with random_state 0 .. seeds - 1"
    )
    ap.add_argument("--bmars", action="store_true")
    ap.add_argument("--no-robot", action="store_true", help="skip the reversible-jump configurations on the robot arm")
    a = ap.parse_args()
    d = robot_arm(np.random.default_rng(12345))
    n = lambda it: max(it // 50, 200) if a.quick else it  # noqa: E731   (the smoke run: 1/50 of the lengths)
    configs = [("5k iterations (the old default)", dict(n_iter=5000, burn_in=2500)),
               ("auto, 128k cap (until stop 70)", dict(max_iter=n(128_000))),
               ("default, 60k iterations", dict(n_iter=n(60_000), burn_in=n(20_000))),
               ("n_tries=4, 60k", dict(n_iter=n(60_000), burn_in=n(20_000), n_tries=4)),
               ("n_temps=8, 60k", dict(n_iter=n(60_000), burn_in=n(20_000), n_temps=8)),
               ("n_temps=4, n_tries=4, 60k", dict(n_iter=n(60_000), burn_in=n(20_000), n_temps=4, n_tries=4)),
               ("n_temps=8, n_tries=4, 60k", dict(n_iter=n(60_000), burn_in=n(20_000), n_temps=8, n_tries=4)),
               ("n_temps=8, n_tries=4, auto", dict(n_iter="auto", max_iter=n(128_000), n_temps=8, n_tries=4))]
    print("robot arm (default_rng(12345), 200/200), cubic, 4 chains on 2 threads; function error = mean squared error "
          "against the noise-free outputs summed over both")
    print(f"{'configuration':<34} {'sec':>7} {'R(k)':>6} {'R(lp)':>6} {'ESS(k)':>7} {'k/s':>7} {'lp/s':>7} {'f/s':>7} "
          f"{'f error':>9}  acceptance")
    for name, kw in [] if a.no_robot else configs:
        for s in range(a.seeds):
            measure(name if a.seeds == 1 else f"{name} (seed {s})", d.x, d.y, d.x_test, d.f_test, basis="cubic",
                    random_state=s, **kw)
    if a.boston:
        from rbf_bayes.datasets import friedman, load_boston
        bx, by, _ = load_boston()
        idx = np.random.default_rng(0).permutation(len(by)); tr_, te = idx[:300], idx[300:]
        mu, sd = bx[tr_].mean(0), bx[tr_].std(0)
        X, Xt = (bx[tr_] - mu) / sd, (bx[te] - mu) / sd
        print("\nBoston split 0 (300/206), learn_scales=True; 'f error' = test MSE against the noisy targets")
        for name, kw in [("learn_scales, 5k", dict(n_iter=5000, burn_in=2500, n_temps=1)),
                         ("auto, n_temps=1 (until stop 59)", dict(max_iter=n(128_000), n_temps=1)),
                         ("learn_scales, auto, 128k cap", dict(max_iter=n(128_000))),
                         ("learn_scales, 20k", dict(n_iter=n(20_000), burn_in=n(5_000), n_temps=1)),
                         ("learn_scales, n_temps=4, n_tries=4, 20k",
                          dict(n_iter=n(20_000), burn_in=n(5_000), n_temps=4, n_tries=4))]:
            measure(name, X, by[tr_], Xt, by[te], learn_scales=True, **kw)
        fd = friedman(np.random.default_rng(0), 1, n=240, p=10, noise_sd=1.0, n_test=1000)
        print(
            "\nFriedman #1 (240 points, 10 inputs, noise 1), "
            "select_inputs=True; 'f error' = MSE against the noise-free f"
        )
        for name, kw in [("select_inputs, 5k", dict(n_iter=5000, burn_in=2500, n_temps=1)),
                         ("auto, n_temps=1 (until stop 59)", dict(max_iter=n(128_000), n_temps=1)),
                         ("select_inputs, auto, 128k cap", dict(max_iter=n(128_000))),
                         ("select_inputs, 20k", dict(n_iter=n(20_000), burn_in=n(5_000), n_temps=1)),
                         ("select_inputs, n_temps=4, n_tries=4, 20k",
                          dict(n_iter=n(20_000), burn_in=n(5_000), n_temps=4, n_tries=4))]:
            measure(name, fd.x, fd.y, fd.x_test, fd.f_test, select_inputs=True, **kw)
    if a.bmars:
        from rbf_bayes import BMARSRegressor
        print("\nBMARSRegressor's default (n_iter='auto', 4 chains on 2 threads) on datasets.robot_arm(default_rng(s)) "
              "(200/200); 'lp' = the log marginal likelihood")
        for s in range(5):
            ds = robot_arm(np.random.default_rng(s))
            measure(f"BMARS default, draw {s}", ds.x, ds.y, ds.x_test, ds.f_test, estimator=BMARSRegressor,
                    max_iter=n(128_000))
    if a.tremor:
        import os
        if not os.path.exists(os.path.join(a.tremor, "tremor_train.csv")):
            print(f"\ntremor: no data at {a.tremor}, skipped")
            return
        from rbf_bayes import RJMCMCClassifier
        from rbf_bayes.datasets import load_tremor
        x, y, xt, yt = load_tremor(a.tremor)
        print("\ntremor (179/178), probit, thin-plate, 4 chains on 2 threads; 'error' = test misclassification")
        print(
            f"{'configuration':<34} {'sec':>7} {'R(k)':>6} {'R(lp)':>6} "
            f"{'ESS(k)':>7} {'k/s':>7} {'lp/s':>7} {'it/s':>9} {'error':>7}"
        )
        for name, kw in [("probit, 5k", dict()), ("probit, n_tries=4, 5k", dict(n_tries=4)),
                         ("probit, auto", dict(n_iter="auto", max_iter=n(128_000))),
                         ("probit, 20k", dict(n_iter=n(20_000), burn_in=n(5_000))),
                         ("probit, n_tries=4, 20k", dict(n_iter=n(20_000), burn_in=n(5_000), n_tries=4))]:
            m = RJMCMCClassifier(n_chains=4, n_jobs=2, random_state=0, **kw)
            t0 = time.perf_counter(); m.fit(x, y); sec = time.perf_counter() - t0
            tr = m.trace_; b = tr.meta.auto["burn_in"] if "auto" in tr.meta else m.burn_in
            ks = np.stack(tr.chain_series(tr.k, b)); lp = np.stack(tr.chain_series(tr.log_posterior, b))
            print(f"{name:<34} {sec:7.2f} {rhat(ks):6.3f} {rhat(lp):6.3f} {ess(ks):7.0f} {ess(ks) / sec:7.1f} "
                  f"{ess(lp) / sec:7.1f} {4 * m.n_iter_ / sec:9,.0f} {np.mean(m.predict(xt) != yt):7.3f}", flush=True)


if __name__ == "__main__":
    main()
