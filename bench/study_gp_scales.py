"""Where the ARD GP's lead comes from (issue 35): three levers measured on bench_defaults' splits, next to the GP.

    python bench/study_gp_scales.py --cases boston --splits 5 --arms gp_scales gp_scales_held --widths 1.5 2
    python bench/study_gp_scales.py --cases friedman1 --splits 3 --arms gp_scales gp_scales_held --widths 1.5 2
    python bench/study_gp_scales.py --cases robot --arms per_output default
    python bench/study_gp_scales.py --cases boston --splits 5 --arms gp_limit_k60
    python bench/study_gp_scales.py --cases boston robot --splits 5 --loo     # PSIS-LOO between default and gp_scales
    python bench/study_gp_scales.py --cases boston friedman1 friedman3 robot --splits 5 --arms symmetric_scales default
    python bench/study_gp_scales.py --cases boston --splits 10 --arms warp_yj gp_yj
    python bench/study_gp_scales.py --cases boston friedman1 robot --splits 10 --arms delta2_x10

Arms (every one on bench_defaults' splits and error; the GP is its `gp` configuration, fitted in the same run):
- `gp_scales`: the GP's ML-II length scales l (ARD, shared by the outputs; capped at 100 standardised units) divide the
  standardised inputs, and the default regressor runs on X / l without learned scales or input selection
  (`learn_scales=False, select_inputs=False, standardize=False`, y standardised here), with Gaussian bases of width w
  on X / l. The linear columns are then X / l too.
- `gp_scales_held`: the same scales, the linear columns left standardised: the learned-scale model started at
  s = 1 / l with a log-scale step of 1e-9 (so the scales stay where they start), no selection, no tempering, width w;
  4 chains of 128,000 iterations (half burn-in) by `sample_rjmcmc` and `sample_chains`. New inputs are held in the
  training range, as the regressor holds them.
- `per_output`: the default regressor fitted to each output on its own (the robot arm; the GP is fitted so too).
- `gp_limit_k60`: the default with delta^2's prior per basis and k ~ NB with mean 60 (`delta2_per_basis=True,
  eps1=59.5, beta_delta2=600`: a coefficient's prior variance at k = 60 equal to the default's), max_iter 16,000;
  `gp_limit_k120`: the same with mean 120 (`eps1=119.5, beta_delta2=1200, k_max=250`).
- `gp_start`: the default regressor with every chain (and replica) started at the GP's scales, in the default's
  parametrisation s0 = sqrt(d) / (1.5 l) (bases as wide as the `gp_scales` arm's with w = 1.5): the chains' start set
  through `sample_rjmcmc`'s init, by wrapping the regressor's chain function for the one fit. The posterior is the
  default's; only where the chains start changes.
- `warp_normal`, `warp_uniform`: the default regressor on inputs warped by their training marginal: u = the empirical
  CDF (midranks, linear between the sorted training values, new inputs clamped to the training range), then the
  normal score Phi^-1(u), or u itself.
- `warp_yj`: the default regressor on inputs of which the skewed ones (|training sample skewness| > 1) go through
  Yeo-Johnson's power transform with its maximum-likelihood lambda (`scipy.stats.yeojohnson`, fitted on the training
  inputs; new inputs clamped to the training range first, as the regressor holds them); the other inputs as they are.
  `gp_yj`: the GP on the same inputs (is a gain the network's, or the warp's?).
- `delta2_x10`: the default with ten times the scale of delta^2's inverse-gamma prior (`beta_delta2=100`, prior mean
  100 against 10): the coefficients' prior variance sigma^2 delta^2 let ten times as large (stop 69; the same fit as
  `bench_defaults.run` with that configuration, so the same errors).
- `symmetric_scales`: the default until stop 67, with the symmetric normal on the log scales; the default's two-piece
  (`log_scale_sd_up=0.5`, 05d: sd 1 below 0, 0.5 above) makes bases narrower than the default width cost more.
  Stop 66's arms ran before that change, on the symmetric prior.
- `default`: bench_defaults' default.
--loo: on each split fit the default and `gp_scales` (w = 1.5), estimate each one's expected log predictive density
by PSIS-LOO (`to_arviz(X, y)` and ArviZ's `loo`, on the scale of y: `gp_scales`' standardised y is put back), and
print both errors, both elpd_loo (with the largest Pareto k) and the error of the one LOO picks.
Needs scikit-learn (a dev dependency); --loo needs ArviZ. One run per arm and split: read the seconds as ratios
within a run.
"""
import argparse
import functools
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_defaults as bd  # noqa: E402

from rbf_bayes import ExtrapolationWarning, RJMCMCRegressor  # noqa: E402
from rbf_bayes.chains import chain_generators, sample_chains  # noqa: E402
from rbf_bayes.priors import REGRESSOR_PRIOR  # noqa: E402
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc  # noqa: E402

L_MAX = 100.0     # the GP's length scales are capped here (standardised units): beyond, an input is flat anyway


def gp_length_scales(X, y, seed):
    "The ARD GP's ML-II length scales (standardised units), shared by the outputs: bench_defaults' GP, capped."
    return np.minimum(bd.gp_fit(X, y, seed)[0].kernel_.k1.k2.length_scale, L_MAX)


def _standardised(X, Xt):
    mx, sx = X.mean(0), X.std(0)
    return (X - mx) / sx, (Xt - mx) / sx


def gp_scales(X, y, Xt, seed, w):
    X, Xt = _standardised(X, Xt)
    l = gp_length_scales(X, y, seed); ym, ys = y.mean(0), y.std(0)
    m = RJMCMCRegressor(random_state=seed, n_jobs=2, quadratic=False, standardize=False, width=w, learn_scales=False,
                        select_inputs=False).fit(X / l, (y - ym) / ys)
    return m.predict(Xt / l) * ys + ym, float(np.mean(m.trace_.k)), m


def gp_scales_held(X, y, Xt, seed, w):
    X, Xt = _standardised(X, Xt)
    l = gp_length_scales(X, y, seed); ym, ys = y.mean(0), y.std(0)
    cfg = RJConfig(n_iter=128_000, burn_in=64_000, thin=64, learn_scales=True, scale_step=1e-9)
    one = functools.partial(sample_rjmcmc, X, (y - ym) / ys, prior=REGRESSOR_PRIOR, config=cfg, basis="gaussian",
                            width=w, init={"scales": 1.0 / l})
    tr = sample_chains(lambda rng: one(rng=rng), chain_generators(np.random.default_rng(seed), 4), n_jobs=2)
    drift = float(np.max(np.abs(np.log(tr.scales[-1] * l))))
    assert drift < 1e-5, f"the held scales moved by {drift}"
    pred = tr.predict(np.clip(Xt, X.min(0), X.max(0)))     # (n, c)
    return (pred[:, 0] if np.ndim(y) == 1 else pred) * ys + ym, float(np.mean(tr.k)), tr


def gp_start(X, y, Xt, seed, w):
    import rbf_bayes.estimators as est
    Xs, _ = _standardised(X, Xt)
    s0 = np.sqrt(X.shape[1]) / (1.5 * gp_length_scales(Xs, y, seed))
    run0, one0 = est.rjmcmc_run, est._one_chain
    est.rjmcmc_run = functools.partial(run0, init={"scales": s0})
    est._one_chain = lambda X_, Y_, prior, cfg, basis, width, rng: sample_rjmcmc(
        X_, Y_, prior=prior, config=cfg, basis=basis, width=width, rng=rng, init={"scales": s0})
    try:
        m = RJMCMCRegressor(random_state=seed, n_jobs=2, quadratic=False).fit(X, y)
    finally:
        est.rjmcmc_run, est._one_chain = run0, one0
    return m.predict(Xt), float(np.mean(m.trace_.k)), m


def marginal_warp(X, Xt, normal: bool):
    "Each input through its training empirical CDF (midranks; new values interpolated and clamped), then Phi^-1."
    from scipy.stats import norm
    N = len(X); W, Wt = np.empty(X.shape), np.empty(Xt.shape)
    for j in range(X.shape[1]):
        v, inv, cnt = np.unique(X[:, j], return_inverse=True, return_counts=True)
        mid = (np.cumsum(cnt) - (cnt - 1) / 2 - 0.5) / N
        W[:, j], Wt[:, j] = mid[inv], (np.interp(Xt[:, j], v, mid) if len(v) > 1 else 0.5)
    return (norm.ppf(W), norm.ppf(Wt)) if normal else (W, Wt)


def warped(normal: bool):
    def fit(X, y, Xt, seed, w):
        W, Wt = marginal_warp(X, Xt, normal)
        m = RJMCMCRegressor(random_state=seed, n_jobs=2, quadratic=False).fit(W, y)
        return m.predict(Wt), float(np.mean(m.trace_.k)), m
    return fit


def yj_warp(X, Xt, skew_max=1.0):
    "Yeo-Johnson (ML lambda on the training inputs) on every input with |skewness| > skew_max; the rest unchanged."
    from scipy import stats
    W, Wt = np.array(X, float), np.clip(np.array(Xt, float), np.min(X, 0), np.max(X, 0))
    warped_cols = []
    for j in range(W.shape[1]):
        if len(np.unique(W[:, j])) > 2 and abs(stats.skew(W[:, j])) > skew_max:
            W[:, j], lam = stats.yeojohnson(W[:, j])
            Wt[:, j] = stats.yeojohnson(Wt[:, j], lam)
            warped_cols.append(j)
    return W, Wt, warped_cols


def warp_yj(X, y, Xt, seed, w):
    W, Wt, cols = yj_warp(X, Xt)
    print(f"    warp_yj: inputs {cols} warped", flush=True)
    m = RJMCMCRegressor(random_state=seed, n_jobs=2, quadratic=False).fit(W, y)
    return m.predict(Wt), float(np.mean(m.trace_.k)), m


def gp_yj(X, y, Xt, seed, w):
    W, Wt, _ = yj_warp(X, Xt)
    return np.reshape(bd.gp(W, y, Wt, seed)["pred"], (len(Xt), -1)), float("nan"), None


def loo_choice(case, s, X, y, Xt, yt, ft, eg):
    "The default and gp_scales (w = 1.5) on one split, and which one PSIS-LOO prefers."
    import arviz as az
    out = {}
    m = RJMCMCRegressor(random_state=s, n_jobs=2, quadratic=False).fit(X, y)
    out["default"] = (m.predict(Xt), m.to_arviz(X, y), 0.0)
    Xs, Xts = _standardised(X, Xt)
    l = gp_length_scales(Xs, y, s); ym, ys = y.mean(0), y.std(0)
    g = RJMCMCRegressor(random_state=s, n_jobs=2, quadratic=False, standardize=False, width=1.5, learn_scales=False,
                        select_inputs=False).fit(Xs / l, (y - ym) / ys)
    out["gp_scales"] = (g.predict(Xts / l) * ys + ym, g.to_arviz(Xs / l, (y - ym) / ys), float(np.sum(np.log(ys))))
    res = {}
    for name, (pred, idata, shift) in out.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lo = az.loo(idata, pointwise=True)
        res[name] = (bd.error(case, np.reshape(pred, np.shape(yt)), yt, ft), float(lo.elpd_loo) - len(X) * shift,
                     float(np.max(lo.pareto_k)))
    pick = max(res, key=lambda n: res[n][1])
    print(f"{case:<10} {s:>5} " + " ".join(f"{n} err {e:.5f} ({e / eg:.2f}) elpd {v:9.2f} k^ {kk:.2f}"
                                           for n, (e, v, kk) in res.items())
          + f"  LOO picks {pick}: {res[pick][0] / eg:.2f}", flush=True)


def bench_arm(cfg):
    def fit(X, y, Xt, seed, w):
        res = cfg(X, y, Xt, seed)
        m = res["model"]
        return res["pred"], float(np.mean(m.trace_.k)) if m is not None else float("nan"), m
    return fit


ARMS = {
    "gp_scales": gp_scales,
    "gp_scales_held": gp_scales_held,
    "per_output": bench_arm(bd.per_output(bd.rj())),
    "gp_limit_k60": bench_arm(bd.rj(prior=REGRESSOR_PRIOR.replace(eps1=59.5, beta_delta2=600.0,
                                                                  delta2_per_basis=True), max_iter=16_000)),
    "gp_limit_k120": bench_arm(bd.rj(prior=REGRESSOR_PRIOR.replace(eps1=119.5, beta_delta2=1200.0, k_max=250,
                                                                   delta2_per_basis=True), max_iter=16_000)),
    "gp_start": gp_start,
    "warp_normal": warped(True),
    "warp_uniform": warped(False),
    "delta2_x10": bench_arm(bd.rj(prior=REGRESSOR_PRIOR.replace(beta_delta2=100.0))),
    "warp_yj": warp_yj,
    "gp_yj": gp_yj,
    "symmetric_scales": bench_arm(bd.CONFIGS["symmetric_scales"]),
    "default": bench_arm(bd.rj()),
}
WIDTHED = ("gp_scales", "gp_scales_held")


def _rhat_k(m):
    tr = getattr(m, "trace_", m)
    if tr is None or getattr(tr, "n_chains", 1) < 2: return float("nan")
    from rbf_bayes.convergence import rhat
    b = tr.meta.auto["burn_in"] if "auto" in tr.meta else 0
    return float(rhat(np.stack(tr.chain_series(tr.k, b))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=["boston"])
    ap.add_argument("--splits", type=int, default=2, help="the first SPLITS splits of each case")
    ap.add_argument("--only", type=int, nargs="*", default=None, help="only these splits")
    ap.add_argument("--arms", nargs="*", default=["gp_scales"], choices=list(ARMS))
    ap.add_argument("--widths", type=float, nargs="*", default=[2.0], help="w of the gp_scales arms")
    ap.add_argument("--loo", action="store_true", help="PSIS-LOO between the default and gp_scales (w = 1.5)")
    a = ap.parse_args()
    warnings.simplefilter("ignore", ExtrapolationWarning)
    print(f"{'case':<10} {'split':>5} {'arm':<22} {'error':>9} {'/GP':>6} {'k':>6} {'R(k)':>6} {'sec':>7}", flush=True)
    for case, s, X, y, Xt, yt, ft in bd.cases(False, a.splits):
        if case not in a.cases or (a.only is not None and s not in a.only): continue
        t0 = time.perf_counter(); g = bd.gp(X, y, Xt, s); tg = time.perf_counter() - t0
        eg = bd.error(case, np.reshape(g["pred"], np.shape(yt)), yt, ft)
        print(f"{case:<10} {s:>5} {'gp':<22} {eg:9.5f} {1.0:6.2f} {'':>6} {'':>6} {tg:7.1f}", flush=True)
        if a.loo:
            loo_choice(case, s, X, y, Xt, yt, ft, eg)
            continue
        for arm in a.arms:
            for w in (a.widths if arm in WIDTHED else [None]):
                t0 = time.perf_counter()
                pred, k, m = ARMS[arm](X, y, Xt, s, w)
                e = bd.error(case, np.reshape(pred, np.shape(yt)), yt, ft)
                name = arm + (f" w={w:g}" if w is not None else "")
                print(f"{case:<10} {s:>5} {name:<22} {e:9.5f} {e / eg:6.2f} {k:6.1f} {_rhat_k(m):6.3f} "
                      f"{time.perf_counter() - t0:7.1f}", flush=True)


if __name__ == "__main__":
    main()
