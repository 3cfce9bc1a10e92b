"""Which model should `RJMCMCRegressor()` fit by default? Candidates against the peers on the same splits (issue: accurate by default).

    python bench/bench_defaults.py                         # every case, every candidate, the GP and BART
    python bench/bench_defaults.py --cases robot friedman1 --configs default ridge20 gp
    python bench/bench_defaults.py --quick                 # smoke run: the first split of each case, run length capped,
                                                           # each configuration on one of the four cases

Cases (the issues' protocols): Boston 300/206 (permutation by default_rng(s), s = 0..9, inputs standardised with the
training statistics; error = test MSE against the noisy targets); Friedman #1 (240 noisy points, 10 inputs, noise 1,
1,000 noise-free test points) and #3 (240 points, 4 inputs, noise 0.1), seeds 0..4, error = MSE / var(f_test) against
the noise-free f; the robot arm (`datasets.robot_arm(default_rng(s))`, s = 0..4, 200/200), error = squared error
against the noise-free f summed over both outputs, averaged over the test points. Per fit: the error, the coverage of
the 95 % predictive interval on noisy test targets (Boston's targets; for the others the noise-free test f plus fresh
noise of the training sd, seeded), seconds, and for several chains split-R-hat of k. Then per case and configuration:
the mean error, the mean ratio to the GP's error on the same split and the worst, mean coverage and seconds. `stochtree`
(BART) and scikit-learn's GP are dev dependencies. One run: the machine is shared and noisy, so read the seconds as
ratios within one run.
"""
import argparse
import time
import warnings

import numpy as np

from rbf_bayes import BMARSRegressor, ExtrapolationWarning, RJMCMCRegressor
from rbf_bayes.datasets import friedman, load_boston, robot_arm
from rbf_bayes.priors import RBFPrior


def cases(quick):
    n = 1 if quick else None
    bx, by, _ = load_boston()
    for s in range(n or 10):
        idx = np.random.default_rng(s).permutation(len(by)); tr, te = idx[:300], idx[300:]
        mu, sd = bx[tr].mean(0), bx[tr].std(0)
        yield "boston", s, (bx[tr] - mu) / sd, by[tr], (bx[te] - mu) / sd, by[te], None
    for which in (1, 3):
        for s in range(n or 5):
            d = friedman(np.random.default_rng(s), which, n=240, p=10 if which == 1 else 4, n_test=1000)
            rng = np.random.default_rng(1000 + s)
            yt = d.f_test + {1: 1.0, 3: 0.1}[which] * rng.standard_normal(len(d.f_test))
            yield f"friedman{which}", s, d.x, d.y, d.x_test, yt, d.f_test
    for s in range(n or 5):
        d = robot_arm(np.random.default_rng(s))
        yield "robot", s, d.x, d.y, d.x_test, d.y_test, d.f_test


def error(case, pred, yt, ft):
    if case == "boston": return float(np.mean((pred - yt) ** 2))
    if case == "robot": return float(np.mean(np.sum((pred - ft) ** 2, axis=1)))
    return float(np.mean((pred - ft) ** 2) / np.var(ft))


QUICK = {}     # --quick: a cap on the automatic run length (max_iter), so the smoke run only checks that it runs


def rj(**kw):
    def fit(X, y, Xt, seed):
        k = {**kw, **QUICK}
        if k.get("width") == "sqrt_d":   # sqrt(d) on standardised inputs (r^2 / w^2 ~ 2 between points): a number is a
            mu, sd = X.mean(0), X.std(0)  # length in units of X, the same in every direction, so standardise X first
            X, Xt, k["width"] = (X - mu) / sd, (Xt - mu) / sd, np.sqrt(X.shape[1])
        m = RJMCMCRegressor(random_state=seed, n_jobs=2, **k).fit(X, y)
        lo, hi = m.predict_interval(Xt, level=0.95)
        return m.predict(Xt), lo, hi, m
    return fit


def bmars(**kw):
    def fit(X, y, Xt, seed):
        m = BMARSRegressor(random_state=seed, **{**kw, **(QUICK if kw.get("n_iter", "auto") == "auto" else {})}).fit(X, y)
        lo, hi = m.predict_interval(Xt, level=0.95)
        return m.predict(Xt), lo, hi, m
    return fit


def gp(X, y, Xt, seed):
    from scipy.stats import norm
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    mu_x, sd_x = X.mean(0), X.std(0)            # on standardised inputs, as ours (Friedman #3's raw ranges 0..100 and
    X, Xt = (X - mu_x) / sd_x, (Xt - mu_x) / sd_x  # 40 pi..560 pi left ML-II at a noise-only optimum in 3 of 5 seeds)
    k = ConstantKernel() * RBF(np.ones(X.shape[1])) + WhiteKernel()
    m = GaussianProcessRegressor(k, normalize_y=True, n_restarts_optimizer=2, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(X, y)
    mu, sd = m.predict(Xt, return_std=True)
    s = np.reshape(sd, np.shape(mu))            # the kernel's WhiteKernel puts the noise in the predictive sd
    z = norm.ppf(0.975)
    return mu, mu - z * s, mu + z * s, None


def bart(X, y, Xt, seed):
    try:
        from stochtree import BARTModel
    except ImportError:
        raise SystemExit("the bart configuration needs stochtree (pip install stochtree, or the dev extra)") from None
    if np.ndim(y) > 1:
        outs = [bart(X, y[:, j], Xt, seed) for j in range(y.shape[1])]
        return tuple(np.stack([o[i] for o in outs], 1) for i in range(3)) + (None,)
    m = BARTModel()
    m.sample(X_train=X, y_train=y, X_test=Xt, general_params={"random_seed": seed})
    yh = m.y_hat_test                                   # (n_test, n_draws)
    sig = np.sqrt(m.global_var_samples)                 # (n_draws,)
    rng = np.random.default_rng(seed)
    draws = yh + sig[None, :] * rng.standard_normal(yh.shape)
    return yh.mean(1), np.quantile(draws, 0.025, 1), np.quantile(draws, 0.975, 1), None


GAUSS_LS_WD = dict(basis="gaussian", learn_scales=True, width="sqrt_d")   # the Gaussian candidate's basis
RIDGE_NB = RBFPrior(coef_prior="ridge", eps1=9.5, eps2=1.0)   # k ~ NB(10, 1/2): p(k+1)/p(k) -> 1/2, so no pile at k_max

CONFIGS = {
    "default": rj(),
    "default_extrapolate": rj(extrapolate=True),
    "ridge20": rj(prior=RBFPrior(coef_prior="ridge", k_max=20)),
    "ridge40": rj(prior=RBFPrior(coef_prior="ridge", k_max=40)),
    "ridge20_ls": rj(prior=RBFPrior(coef_prior="ridge", k_max=20), learn_scales=True),
    "g_ls": rj(learn_scales=True),
    "ridge20_gauss": rj(prior=RBFPrior(coef_prior="ridge", k_max=20), basis="gaussian"),
    "ridge40_gauss": rj(prior=RBFPrior(coef_prior="ridge", k_max=40), basis="gaussian"),
    "ridge20_gauss_ls": rj(prior=RBFPrior(coef_prior="ridge", k_max=20), basis="gaussian", learn_scales=True),
    "ridge20_gauss_ls_wd": rj(prior=RBFPrior(coef_prior="ridge", k_max=20), **GAUSS_LS_WD),
    "g_gauss_ls_wd": rj(**GAUSS_LS_WD),
    "ridge20_gauss_ls_wd_d2": rj(prior=RBFPrior(coef_prior="ridge", k_max=20, alpha_delta2=10, beta_delta2=5000),
                                 **GAUSS_LS_WD),   # delta^2 ~ IG(10, 5000): mean 556
    "ridge_nb_gauss_ls_wd": rj(prior=RIDGE_NB, **GAUSS_LS_WD),
    "ridge_nb": rj(prior=RIDGE_NB),
    "ridge_nb_ls": rj(prior=RIDGE_NB, learn_scales=True),
    "tempered": rj(n_temps=4, n_tries=4),
    "tempered_ls": rj(n_temps=4, n_tries=4, learn_scales=True),
    "bmars": bmars(),
    "bmars_auto": bmars(n_chains=4, n_jobs=2, n_iter="auto"),
    "gp": gp,
    "bart": bart,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=["boston", "friedman1", "friedman3", "robot"])
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick: QUICK.update(max_iter=4000)   # one round of the automatic run length
    rows = []
    print(f"{'case':<10} {'split':>5} {'config':<20} {'error':>10} {'cover':>6} {'sec':>7} {'R(k)':>6}", flush=True)
    for i, (case, s, X, y, Xt, yt, ft) in enumerate(cases(a.quick)):
        if case not in a.cases: continue
        for j, name in enumerate(a.configs):
            if a.quick and len(a.configs) > 3 and j % 4 != i % 4: continue   # smoke run: each configuration on one case
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ExtrapolationWarning)   # counted below instead
                pred, lo, hi, m = CONFIGS[name](X, y, Xt, s)
            sec = time.perf_counter() - t0
            pred, lo, hi = (np.reshape(v, np.shape(yt)) for v in (pred, lo, hi))
            cover = float(np.mean((yt >= lo) & (yt <= hi)))
            r = ""
            if m is not None and hasattr(m, "trace_") and getattr(m.trace_, "n_chains", 1) > 1:
                from rbf_bayes.convergence import rhat
                tr = m.trace_; b = tr.meta["auto"]["burn_in"] if "auto" in tr.meta else m.burn_in
                r = f"{rhat(np.stack(tr.chain_series(tr.k, b))):6.3f}"
            e = error(case, pred, yt, ft); rows.append((case, s, name, e, cover, sec))
            print(f"{case:<10} {s:>5} {name:<20} {e:10.5f} {cover:6.3f} {sec:7.2f} {r:>6}", flush=True)
    print(f"\n{'case':<10} {'config':<20} {'mean error':>10} {'/GP mean':>8} {'/GP worst':>9} {'cover':>6} {'sec':>7}")
    for case in dict.fromkeys(r[0] for r in rows):
        gpe = {r[1]: r[3] for r in rows if r[0] == case and r[2] == "gp"}
        for name in a.configs:
            sel = [r for r in rows if r[0] == case and r[2] == name]
            if not sel: continue
            ratio = [r[3] / gpe[r[1]] for r in sel if r[1] in gpe]
            rs = f"{np.mean(ratio):8.2f} {max(ratio):9.2f}" if ratio else f"{'':>8} {'':>9}"
            print(f"{case:<10} {name:<20} {np.mean([r[3] for r in sel]):10.5f} {rs} {np.mean([r[4] for r in sel]):6.3f} "
                  f"{np.mean([r[5] for r in sel]):7.2f}")


if __name__ == "__main__":
    main()
