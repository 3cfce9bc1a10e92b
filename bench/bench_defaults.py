"""Every estimator of the package against scikit-learn's ARD GP, `stochtree` BART and pyBASS on the same splits
(issue: accurate by default); `nbs/experiments/exp8_benchmarks.ipynb` runs it and shows the tables and a plot.

    python bench/bench_defaults.py                         # every case, every configuration (an hour or more)
    python bench/bench_defaults.py --cases robot friedman1 --configs default gp bart
    python bench/bench_defaults.py --cases boston --configs default --splits 3   # the first three splits only
    python bench/bench_defaults.py --quick                 # smoke run: the first split of each case, run length capped,
                                                           # each configuration on one of the cases

Cases (the issues' protocols): Boston 300/206 (permutation by default_rng(s), s = 0..9, inputs standardised with the
training statistics; error = test MSE against the noisy targets); Friedman #1 (240 noisy points, 10 inputs, noise 1),
#2 (240 points, 4 inputs, noise 125) and #3 (noise 0.1), 1,000 noise-free test points, seeds 0..4, error = MSE / var(f)
against the noise-free f; the robot arm (`datasets.robot_arm(default_rng(s))`, s = 0..4, 200/200), error = squared
error against the noise-free f summed over both outputs, averaged over the test points; sinc (the TD-SMC paper's 50
points, noise 0.1, 1,000 test points; s = 0..9), error = MSE / var(f). Per fit: the error, the coverage of the 95 %
predictive interval and the mean log predictive density (MLPD) of noisy test targets (Boston's own; for the others
the noise-free f plus fresh noise of the data's sd, seeded), seconds, and for several chains split-R-hat of k and of
the log posterior (BMARS: the log marginal likelihood) and bulk ESS of k (every iteration after the burn-in). Then
per case and configuration: the mean error, the mean and worst ratio to the GP's error on the same split, the paired
difference from the GP with its standard error, mean coverage, MLPD and seconds. `stochtree` (BART), pyBASS
(`pybass-emu`) and scikit-learn's GP are dev dependencies. One run: the machine is shared and noisy, so read the
seconds as ratios within one run.
"""
import argparse
import contextlib
import dataclasses
import io
import time
import warnings

import numpy as np

from rbf_bayes import (
    AnnealedRBFRegressor,
    BMARSRegressor,
    ExtrapolationWarning,
    RJMCMCRegressor,
    SMCRegressor,
    StackedRegressor,
)
from rbf_bayes.bmars import BMARSPrior
from rbf_bayes.convergence import NotConvergedWarning
from rbf_bayes.datasets import friedman, load_boston, robot_arm, sinc_data
from rbf_bayes.estimators import run_converged
from rbf_bayes.priors import REGRESSOR_PRIOR, RBFPrior

CASES = ("boston", "friedman1", "friedman2", "friedman3", "robot", "sinc")
NOISE = {1: 1.0, 2: 125.0, 3: 0.1}   # Friedman's noise sds (Tipping 2001), also the sd of the fresh test targets


def cases(quick, n_splits=None):
    """(case, split, X, y, X_test, y_test, f_test) of every protocol; f_test is None where the error is against the
    noisy targets (Boston). quick: the first split of each; n_splits: the first n_splits of each."""
    n = 1 if quick else n_splits
    bx, by, _ = load_boston()
    for s in range(n or 10):
        idx = np.random.default_rng(s).permutation(len(by)); tr, te = idx[:300], idx[300:]
        mu, sd = bx[tr].mean(0), bx[tr].std(0)
        yield "boston", s, (bx[tr] - mu) / sd, by[tr], (bx[te] - mu) / sd, by[te], None
    for which in (1, 2, 3):
        for s in range(n or 5):
            d = friedman(np.random.default_rng(s), which, n=240, p=10 if which == 1 else 4, n_test=1000)
            rng = np.random.default_rng(1000 + s)
            yt = d.f_test + NOISE[which] * rng.standard_normal(len(d.f_test))
            yield f"friedman{which}", s, d.x, d.y, d.x_test, yt, d.f_test
    for s in range(n or 5):
        d = robot_arm(np.random.default_rng(s))
        yield "robot", s, d.x, d.y, d.x_test, d.y_test, d.f_test
    for s in range(n or 10):
        d = sinc_data(np.random.default_rng(s))
        yt = d.f_test + 0.1 * np.random.default_rng(1000 + s).standard_normal(len(d.f_test))
        yield "sinc", s, d.x, d.y, d.x_test, yt, d.f_test


def error(case, pred, yt, ft):
    "Boston: test MSE; robot arm: squared error summed over both outputs against f; the others: MSE / var(f)."
    if case == "boston": return float(np.mean((pred - yt) ** 2))
    if case == "robot": return float(np.mean(np.sum((pred - ft) ** 2, axis=1)))
    return float(np.mean((pred - ft) ** 2) / np.var(ft))


# A configuration is called as fit(X, y, Xt, seed, **opts): `run` passes max_iter (a cap on our estimators' automatic
# run lengths; None: none) and smoke (--quick: a peer with a fixed run length, pyBASS, runs a short one) only when set,
# so a study's own configuration that takes neither still runs uncapped.
def _cap(max_iter):
    return {} if max_iter is None else {"max_iter": max_iter}


def _fit_ours(m, X, y, Xt):
    "One of our estimators: prediction, 95 % interval and the log predictive density of test targets."
    m.fit(X, y)
    lo, hi = m.predict_interval(Xt, level=0.95)
    return dict(pred=m.predict(Xt), lo=lo, hi=hi, model=m, lpd=lambda yt: m.log_predictive_density(Xt, yt))


def rj(**kw):
    """RJMCMCRegressor with these arguments; without quadratic, the plain model (quadratic=False): every configuration
    below but "default" (and the two that name quadratic) is the plain default with one thing changed, as measured
    before stop 77, when the default became quadratic="auto"."""
    kw = {"quadratic": False, **kw}

    def fit(X, y, Xt, seed, max_iter=None, smoke=False):
        return _fit_ours(RJMCMCRegressor(random_state=seed, n_jobs=2, **{**kw, **_cap(max_iter)}), X, y, Xt)
    return fit


def bmars(**kw):
    def fit(X, y, Xt, seed, max_iter=None, smoke=False):
        k = {**kw, **(_cap(max_iter) if kw.get("n_iter", "auto") == "auto" else {})}
        return _fit_ours(BMARSRegressor(random_state=seed, **k), X, y, Xt)
    return fit


def stacked(paper_bmars: bool = True):
    """StackedRegressor(): its default parts, RJMCMCRegressor() and BMARSRegressor(prior=BMARSPrior()) (the paper's
    prior, since stop 104; paper_bmars=False: BMARSRegressor()'s own default, the stack's parts in stops 102-103), each
    with the run's cap, if any, both seeded by the split's seed, as "default" and "bmars" are, and stacked by their
    PSIS-LOO (12_estimators)."""
    def fit(X, y, Xt, seed, max_iter=None, smoke=False):
        pr = BMARSPrior() if paper_bmars else None
        parts = [("rbf", RJMCMCRegressor(n_jobs=2, **_cap(max_iter))),
                 ("mars", BMARSRegressor(prior=pr, **_cap(max_iter)))]
        return _fit_ours(StackedRegressor(estimators=parts, random_state=seed), X, y, Xt)
    return fit


def other(cls, **kw):
    "An estimator without a run length to cap (SMC, the annealer)."
    return lambda X, y, Xt, seed, max_iter=None, smoke=False: _fit_ours(cls(random_state=seed, **kw), X, y, Xt)


def _mixture_lpd(F, sig, yt):
    "log mean_s N(yt; F[s], sig[s]) per row: F (S, n), sig (S,)."
    from scipy.special import logsumexp
    z = (yt[None, :] - F) / sig[:, None]
    return logsumexp(-0.5 * z ** 2 - np.log(sig)[:, None], axis=0) - np.log(len(sig)) - 0.5 * np.log(2 * np.pi)


def per_output(fit1):
    "A single-output peer applied to each output of y, its log densities summed."
    def fit(X, y, Xt, seed, **opts):
        if np.ndim(y) == 1: return fit1(X, y, Xt, seed, **opts)
        outs = [fit1(X, y[:, j], Xt, seed, **opts) for j in range(y.shape[1])]
        res = {k: np.stack([o[k] for o in outs], 1) for k in ("pred", "lo", "hi")}
        return dict(res, model=None, lpd=lambda yt: sum(o["lpd"](yt[:, j]) for j, o in enumerate(outs)))
    return fit


def gp_fit(X, y, seed):
    """scikit-learn's ARD GP (constant x ARD RBF + white noise, ML-II with 2 restarts) fitted on X standardised by its
    own statistics: (the fitted GaussianProcessRegressor, the inputs' mean, their sd)."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    # on standardised inputs, as ours (Friedman #3's raw ranges 0..100 and 40 pi..560 pi left ML-II at a noise-only
    # optimum in 3 of 5 seeds)
    mu_x, sd_x = X.mean(0), X.std(0)
    k = ConstantKernel() * RBF(np.ones(X.shape[1])) + WhiteKernel()
    m = GaussianProcessRegressor(k, normalize_y=True, n_restarts_optimizer=2, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit((X - mu_x) / sd_x, y)
    return m, mu_x, sd_x


@per_output
def gp(X, y, Xt, seed, max_iter=None, smoke=False):
    from scipy.stats import norm
    m, mu_x, sd_x = gp_fit(X, y, seed)
    mu, s = m.predict((Xt - mu_x) / sd_x, return_std=True)  # the kernel's WhiteKernel puts the noise in the sd
    z = norm.ppf(0.975)
    return dict(pred=mu, lo=mu - z * s, hi=mu + z * s, model=None, lpd=lambda yt: norm.logpdf(yt, mu, s))


def _draws_result(F, sig, seed):
    "Prediction, interval and log density from posterior draws of f (S, n) and of the noise sd (S,)."
    draws = F + sig[:, None] * np.random.default_rng(seed).standard_normal(F.shape)
    return dict(pred=F.mean(0), lo=np.quantile(draws, 0.025, 0), hi=np.quantile(draws, 0.975, 0), model=None,
                lpd=lambda yt: _mixture_lpd(F, sig, yt))


@per_output
def bart(X, y, Xt, seed, max_iter=None, smoke=False):
    try:
        from stochtree import BARTModel
    except ImportError:
        raise SystemExit("the bart configuration needs stochtree (pip install stochtree, or the dev extra)") from None
    m = BARTModel()
    m.sample(X_train=X, y_train=y, X_test=Xt, general_params={"random_seed": seed})
    return _draws_result(m.y_hat_test.T, np.sqrt(m.global_var_samples), seed)     # y_hat_test: (n_test, n_draws)


@per_output
def bass(X, y, Xt, seed, max_iter=None, smoke=False):
    "pyBASS (Francom's BASS, pybass-emu) at its defaults: 10,000 iterations, the last 1,000 kept."
    try:
        import pyBASS
    except ImportError:
        raise SystemExit("the bass configuration needs pybass-emu (pip install pybass-emu, or the dev extra)") from None
    np.random.seed(seed)                       # pyBASS draws from NumPy's global generator
    nmcmc = 2_000 if smoke else 10_000
    with contextlib.redirect_stdout(io.StringIO()):     # its 'BASS MCMC Complete' line, printed even when not verbose
        m = pyBASS.bass(X, y, nmcmc=nmcmc, nburn=nmcmc - 1000, verbose=False)
    F = np.empty((m.nstore, len(Xt))); models = m.model_lookup[np.arange(m.nstore)]
    for j in np.unique(models):                # predict() orders its rows by model: one call per model keeps the order
        idx = np.flatnonzero(models == j); F[idx] = m.predict(Xt, mcmc_use=idx)
    return _draws_result(F, np.sqrt(m.samples.s2[:m.nstore]), seed)


OLD = dict(basis="cubic", learn_scales=False)   # the default model before stop 47, with its g-prior below
# priors.REGRESSOR_PRIOR on the paper's Omega: the default's prior until stop 56 (its centres now reach beyond the data)
RIDGE_NB = RBFPrior(coef_prior="ridge", eps1=9.5, eps2=1.0)
# the default's prior until stop 67: the symmetric normal on the learned log scales (now the two-piece, 05d)
SYMMETRIC = REGRESSOR_PRIOR.replace(log_scale_sd_up=None)
TWO_PIECE = dataclasses.replace(RIDGE_NB, log_scale_sd_up=0.5)  # log scales: sd 1 below 0, 0.5 above (05d)

CONFIGS = {
    # RJMCMCRegressor(): Gaussian, width sqrt(d), learned scales (+ selection and 4 tempered replicas if d >= 3),
    # REGRESSOR_PRIOR, and (since stop 77) quadratic="auto": the plain model and the products' both fitted, the
    # products kept where their PSIS-LOO is ahead by more than one se
    "default": rj(quadratic="auto"),
    "plain": rj(),  # the default until stop 76: the model without the products (quadratic=False)
    "paper_box": rj(prior=RIDGE_NB),  # the default until stop 56: the centres on the paper's Omega (iota 0.1)
    "default_extrapolate": rj(extrapolate=True),
    "select": rj(select_inputs=True),  # input selection on any d (the default from d = 3 since stop 50)
    "no_select": rj(select_inputs=False),  # the default until stop 50: learned scales without selection
    "select_tp": rj(select_inputs=True, prior=TWO_PIECE),  # ... and the two-piece prior on the log scales
    "symmetric_scales": rj(prior=SYMMETRIC),  # the default until stop 67: log s ~ N(0, 1) on both sides
    # the default with a tighter upper side of the log scales' prior (sd 0.3 above 0, not 0.5; stop 88)
    "scales_up03": rj(quadratic="auto", prior=REGRESSOR_PRIOR.replace(log_scale_sd_up=0.3)),
    "old_default": rj(prior=RBFPrior(), **OLD),  # cubic, g-prior (the default until stop 46)
    "ridge20": rj(prior=RBFPrior(coef_prior="ridge", k_max=20), **OLD),  # the paper's coefficient prior, cubic
    "ridge_nb": rj(prior=RIDGE_NB, **OLD),  # the default's prior until stop 56, on the old basis
    "tempered": rj(n_temps=4, n_tries=4),
    "temps4": rj(n_temps=4),  # four tempered replicas per chain (the default with input selection since stop 59)
    "one_replica": rj(n_temps=1),  # no tempered ladder: the default until stop 59
    # the centre space Omega: the data range extended by iota times its spread on each side (the default's 0.1)
    "iota025": rj(prior=dataclasses.replace(RIDGE_NB, iota=0.25)),
    "iota05": rj(prior=dataclasses.replace(RIDGE_NB, iota=0.5)),
    "iota1": rj(prior=dataclasses.replace(RIDGE_NB, iota=1.0)),
    "iota2": rj(prior=dataclasses.replace(RIDGE_NB, iota=2.0)),
    # centres beyond the data: each coordinate from the far box (iota_far) with probability far_prob, else the near one
    # (iota_far 1, far_prob 1/2: the default since stop 56)
    "far1p2": rj(prior=dataclasses.replace(RIDGE_NB, iota_far=1.0, far_prob=0.2)),
    # delta^2 | k ~ IG(2, 300 / max(k, 1)) and k ~ NB with mean 30: the coefficient prior's GP limit (01_priors),
    # sized so that a coefficient's prior variance at k = 30 is the default's
    "gp_limit": rj(prior=REGRESSOR_PRIOR.replace(eps1=29.5, beta_delta2=300.0, delta2_per_basis=True)),
    # the inputs' pairwise products and squares join them as inputs (RJMCMCRegressor(quadratic=True), stop 73)
    "quadratic": rj(quadratic=True),
    # both, the products kept where their PSIS-LOO is ahead by more than one se (quadratic="auto", stop 76; the default
    # since stop 77): its two fits are bit for bit "plain"'s and "quadratic"'s on the same split
    "quadratic_auto": rj(quadratic="auto"),
    "bmars": bmars(),
    # StackedRegressor(): "default" and BMARS under the paper's prior, fitted alike and stacked by PSIS-LOO (stop 92;
    # its BMARS part the paper's prior since stop 104); "stacked_bmars_default": with "bmars" (stops 102-103's stack)
    "stacked": stacked(),
    "stacked_bmars_default": stacked(paper_bmars=False),
    # the default before stop 89 (no replica exchange; the default runs four rungs per chain, 10_bmars, "Tempering")
    "bmars_untempered": bmars(n_temps=1),
    "bmars_auto": bmars(n_chains=4, n_jobs=2, n_iter="auto"),
    # SMCRegressor(): learned input scales since stop 105 (09_smc, "The default model"); "smc_grid" the default before
    # (one isotropic width chosen by evidence from the grid)
    "smc": other(SMCRegressor),
    "smc_grid": other(SMCRegressor, learn_scales=False),
    # AnnealedRBFRegressor(): with the scale phase since stop 107 (07_annealing, "Learning the input scales");
    # "annealer_plain" the default before (the restarts' network only)
    "annealer": other(AnnealedRBFRegressor),
    "annealer_plain": other(AnnealedRBFRegressor, learn_scales=False),
    "gp": gp,
    "bart": bart,
    "bass": bass,
}


def run(case_names=CASES, config_names=("default", "gp", "bart"), quick=False, log=print, n_splits=None, splits=None,
        keep_models=False, max_iter=None):
    """Every configuration on every split of the named cases: a list of rows (case, split, config, error, coverage of
    the 95 % interval, mean log predictive density of the test targets, seconds, split-R-hat of k and of the log
    posterior and bulk ESS of k, or NaN). splits: only these splits (seeds) of every case; keep_models: each row also
    holds the fitted model ("model", None for a peer) and its predictions ("pred"); max_iter: a cap on our estimators'
    automatic run lengths (quick: 1,000, one short round, the automatic run's first being 4,000: a smoke run, which
    also shortens pyBASS)."""
    if quick and max_iter is None: max_iter = 1000
    opts = {**_cap(max_iter), **({"smoke": True} if quick else {})}
    rows = []
    log(f"{'case':<10} {'split':>5} {'config':<20} {'error':>10} {'cover':>6} {'MLPD':>8} {'sec':>7} {'R(k)':>6} "
        f"{'R(lp)':>6} {'ESS(k)':>6} {'conv':>4}")
    for i, (case, s, X, y, Xt, yt, ft) in enumerate(cases(quick, n_splits)):
        if case not in case_names or (splits is not None and s not in splits): continue
        for j, name in enumerate(config_names):
            if quick and len(config_names) > 3 and j % 4 != i % 4:
                continue  # smoke run: each configuration on one case
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter(
                    "ignore", ExtrapolationWarning
                )  # far-out test rows: held in the range, as documented
                # chains stopped at the cap unconverged: the row says so (conv "no"), once per fit, in the table
                warnings.simplefilter("ignore", NotConvergedWarning)
                res = CONFIGS[name](X, y, Xt, s, **opts)
                sec = time.perf_counter() - t0
                mlpd = float(np.mean(res["lpd"](yt)))
            pred, lo, hi = (np.reshape(res[v], np.shape(yt)) for v in ("pred", "lo", "hi"))
            cover = float(np.mean((yt >= lo) & (yt <= hi)))
            r = r_lp = e_k = float("nan"); m = res["model"]
            if m is not None and hasattr(m, "trace_") and getattr(m.trace_, "n_chains", 1) > 1:
                from rbf_bayes.convergence import ess, rhat
                tr = m.trace_; b = tr.meta.auto["burn_in"] if "auto" in tr.meta else m.burn_in
                r = float(rhat(np.stack(tr.chain_series(tr.k, b))))
                e_k = float(ess(np.stack(tr.chain_series(tr.k, b))))
                lps = tr.log_posterior if hasattr(tr, "log_posterior") else tr.log_marginal_likelihood   # BMARS's
                r_lp = float(rhat(np.stack(tr.chain_series(lps, b))))
            conv = None if m is None else run_converged(m)
            rows.append(dict(case=case, split=s, config=name, error=error(case, pred, yt, ft), cover=cover, mlpd=mlpd,
                             sec=sec, rhat=r, rhat_lp=r_lp, ess_k=e_k, converged=conv))
            if keep_models: rows[-1].update(model=m, pred=pred)
            log(f"{case:<10} {s:>5} {name:<20} {rows[-1]['error']:10.5f} {cover:6.3f} {mlpd:8.3f} {sec:7.2f} {r:6.3f} "
                f"{r_lp:6.3f} {e_k:6.0f} {'-' if conv is None else 'yes' if conv else 'no':>4}")
    return rows


def summarise(rows, peer="gp"):
    """Per case and configuration: the mean error, the mean and worst ratio to the peer's error on the same split, the
    paired difference from the peer (mean over splits of error - peer's error, and its standard error), the mean
    coverage, MLPD and seconds, and how many fits' chains converged before the cap ("3/10"; "-" without an automatic
    run length)."""
    out = []
    for case in dict.fromkeys(r["case"] for r in rows):
        ref = {r["split"]: r for r in rows if r["case"] == case and r["config"] == peer}
        for name in dict.fromkeys(r["config"] for r in rows):
            sel = [r for r in rows if r["case"] == case and r["config"] == name]
            if not sel: continue
            paired = [(r["error"], ref[r["split"]]["error"]) for r in sel if r["split"] in ref]
            ratio = [e / g for e, g in paired]; diff = np.array([e - g for e, g in paired])
            se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")
            out.append(
                dict(
                    case=case,
                    config=name,
                    n=len(sel),
                    error=float(np.mean([r["error"] for r in sel])),
                    ratio=float(np.mean(ratio)) if ratio else float("nan"),
                    worst=float(max(ratio)) if ratio else float("nan"),
                    diff=float(diff.mean()) if len(diff) else float("nan"),
                    diff_se=se,
                    cover=float(np.mean([r["cover"] for r in sel])),
                    mlpd=float(np.mean([r["mlpd"] for r in sel])),
                    sec=float(np.mean([r["sec"] for r in sel])),
                    converged=_converged_count(sel),
                )
            )
    return out


def _converged_count(sel) -> str:
    "'c/n': of the n fits with an automatic run length, c converged before the cap; '-' if none has one."
    auto = [r["converged"] for r in sel if r.get("converged") is not None]
    return f"{sum(auto)}/{len(auto)}" if auto else "-"


def print_summary(summary, peer="gp", log=print):
    log(f"\n{'case':<10} {'config':<20} {'mean error':>10} {'/' + peer + ' mean':>8} {'/' + peer + ' worst':>9} "
        f"{'- ' + peer + ' (se)':>20} {'cover':>6} {'MLPD':>8} {'sec':>7} {'conv':>6}")
    for r in summary:
        log(f"{r['case']:<10} {r['config']:<20} {r['error']:10.5f} {r['ratio']:8.2f} {r['worst']:9.2f} "
            f"{r['diff']:10.5f} ({r['diff_se']:7.5f}) {r['cover']:6.3f} {r['mlpd']:8.3f} {r['sec']:7.2f} "
            f"{r.get('converged', '-'):>6}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--splits", type=int, default=None, help="only the first SPLITS splits (seeds) of each case")
    a = ap.parse_args()
    unknown = [c for c in a.configs if c not in CONFIGS] + [c for c in a.cases if c not in CASES]
    if unknown:
        raise SystemExit(
            f"unknown configuration(s) or case(s) {unknown}; configurations {list(CONFIGS)}, cases {list(CASES)}"
        )
    print_summary(summarise(run(a.cases, a.configs, a.quick, log=lambda s: print(s, flush=True), n_splits=a.splits)))


if __name__ == "__main__":
    main()
