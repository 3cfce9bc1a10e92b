"""Stacking the default RJMCMCRegressor() with the default BMARSRegressor() (issue 35, stop 91): a study, run by hand.

    python bench/study_stack_bmars.py --cases boston --splits 0 1 2 3 4 5 6 7 8 9
    python bench/study_stack_bmars.py --cases robot --splits 0 1 2 3 4 --out stack_robot.jsonl

The default regressor already stacks two fits of one basis family (the inputs alone and with their products;
`12_estimators`, "The products per data set, stacked"). This study asks whether a fit of another family, Bayesian
MARS's hinge products (`10_bmars`), earns weight beside it. Per split of bench_defaults' cases (its splits, error and
GP configuration): both defaults are fitted from the split's seed (as bench_defaults' "default" and "bmars"
configurations are), and the stacked predictive is the mixture w p_rj + (1 - w) p_bmars with w maximising the
leave-one-out log score sum_i log(w exp(elpd_rj,i) + (1 - w) exp(elpd_bmars,i)) of the training rows
(`convergence.stacking_weight`, Yao, Vehtari, Simpson & Gelman 2018; each fit's pointwise PSIS-LOO from its `loo`).
Printed per split: each fit's error, the stacked mixture's and the 50/50 mixture's; the GP's on the same split; the
weight; the mean log predictive density (MLPD) of the test targets of each fit and of the stacked mixture; the 95 %
coverage of the stacked mixture's interval (quantiles of `sample_y` draws taken from the two fits in proportion to
the weight); the seconds of each fit and whether it said NotConvergedWarning. Rows are appended to --out as JSON lines.
The mixture is scored on held-out rows only; the weight sees the training rows alone.

    python bench/study_stack_bmars.py --cases boston --splits 0 1 2 3 4 --control --max-iter 64000 --save stack_npz

--control (stop 94) adds a second RJMCMCRegressor() fit from the seed split + 1000 and stacks it with the first: the
control that tells a second family's contribution from a second run's. Printed beside the two-family stack: the two
RJ runs stacked, the three fits stacked, and each stack's weights regularised by the Bayesian bootstrap (the weights
averaged over BB_DRAWS Dirichlet(1, ..., 1) reweightings of the training rows' leave-one-out terms, Yao et al. 2018,
section 3.3's "Bayesian bootstrap" applied to the stacking weights; nothing of the test rows is used). --max-iter caps
the RJ fits' automatic run length (exp8's reduced run caps Boston's at 64,000). --save writes each fit's pointwise
leave-one-out terms, test predictions and test log densities to DIR/<case>_<split>.npz, so that other weightings can
be scored later without refitting.

    python bench/study_stack_bmars.py --cases boston --paper-bmars --out stack_paper.jsonl

--paper-bmars (stop 103) adds a second BMARS fit from the same seed under the paper's prior, lambda ~ Ga(10, 10)
(`BMARSPrior()`; the estimator's default since stop 102 is Ga(1, 0.1), `10_bmars`), and stacks it with the same RJ fit:
the "_paper" columns, paired with the default's on the one RJ fit. It asks whether `StackedRegressor()`'s BMARS part
should keep the paper's prior (stacked with it, Boston's ten splits gave 10.20 in stop 92; with the default's, 10.89
in stop 103, the RBF default having changed in between).
"""
import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import bench_defaults as B  # noqa: E402

from rbf_bayes import BMARSRegressor, RJMCMCRegressor  # noqa: E402
from rbf_bayes.bmars import BMARSPrior  # noqa: E402
from rbf_bayes.convergence import NotConvergedWarning, stacking_weight, stacking_weights  # noqa: E402

N_DRAWS = 4000   # predictive draws for the stacked interval
BB_DRAWS = 200   # Bayesian-bootstrap replicates of the stacking weights (--control)
CONTROL_SEED = 1000  # the control's second RJ fit: seed split + CONTROL_SEED


def bb_stacking_weights(*lpd, rng: np.random.Generator, draws: int = BB_DRAWS) -> np.ndarray:
    """Stacking weights averaged over Bayesian-bootstrap reweightings of the rows: for each of `draws` row weights
    r ~ n Dirichlet(1, ..., 1), `stacking_weights` with those row weights; their mean."""
    n = len(lpd[0])
    return np.mean([stacking_weights(*lpd, row_weights=rng.dirichlet(np.ones(n)) * n) for _ in range(draws)], axis=0)


def fit(make, X, y, Xt, yt, seed) -> dict:
    "One default fit: its PSIS-LOO terms, test prediction, test log densities, predictive draws, seconds, warnings."
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        m = make(seed).fit(X, y)
    sec = time.perf_counter() - t0
    draws = m.sample_y(Xt, N_DRAWS, random_state=seed)          # (n, N) or (n, c, N)
    return dict(loo=m.loo(X, y).pointwise, pred=m.predict(Xt), lpd=np.asarray(m.log_predictive_density(Xt, yt)),
                draws=draws, sec=sec, unconverged=any(issubclass(h.category, NotConvergedWarning) for h in heard))


def coverage(draws, yt) -> float:
    "The share of test targets inside the 2.5 %..97.5 % quantiles of the draws (last axis)."
    lo, hi = np.quantile(draws, 0.025, axis=-1), np.quantile(draws, 0.975, axis=-1)
    return float(np.mean((yt >= lo) & (yt <= hi)))


def control(r, case, s, a, b, X, y, Xt, yt, ft, max_iter, save) -> None:
    """--control: a second RJ fit (seed s + CONTROL_SEED); the two RJ runs stacked, the three fits stacked, and each
    stack with Bayesian-bootstrap-averaged weights: error and test MLPD of each, into r."""
    c = fit(lambda seed: RJMCMCRegressor(random_state=seed, n_jobs=2, max_iter=max_iter), X, y, Xt, yt,
            s + CONTROL_SEED)
    rng = np.random.default_rng(s)
    fits = {"rj": a, "bmars": b, "rj2": c}
    r.update(err_rj2=B.error(case, c["pred"], yt, ft), sec_rj2=c["sec"], unconverged_rj2=c["unconverged"])
    for name, parts in (("rj_bmars", ("rj", "bmars")), ("rj_rj2", ("rj", "rj2")), ("all3", ("rj", "rj2", "bmars"))):
        for how, w in (("", stacking_weights(*[fits[p]["loo"] for p in parts])),
                       ("_bb", bb_stacking_weights(*[fits[p]["loo"] for p in parts], rng=rng))):
            pred = sum(wk * fits[p]["pred"] for wk, p in zip(w, parts, strict=True))
            with np.errstate(divide="ignore"):
                lpd = np.logaddexp.reduce([np.log(wk) + fits[p]["lpd"] for wk, p in zip(w, parts, strict=True)],
                                          axis=0)
            r[f"w_{name}{how}"] = [float(v) for v in w]
            r[f"err_{name}{how}"] = B.error(case, pred, yt, ft)
            r[f"mlpd_{name}{how}"] = float(np.mean(lpd))
    if save:
        Path(save).mkdir(parents=True, exist_ok=True)
        np.savez(Path(save) / f"{case}_{s}.npz", yt=yt, **{f"{k}_{q}": np.asarray(v[q]) for k, v in fits.items()
                                                            for q in ("loo", "pred", "lpd")})


def stack_scores(case, a, b, yt, ft) -> dict:
    "Two fits stacked by their leave-one-out terms: the weight of the first, the stack's error, MLPD and coverage."
    w = stacking_weight(a["loo"], b["loo"])
    n_a = int(round(w * N_DRAWS))    # the mixture's draws: n_a of the first fit's, the rest of the second's
    mixed = np.concatenate([a["draws"][..., :n_a], b["draws"][..., n_a:]], axis=-1)
    with np.errstate(divide="ignore"):
        lpd = np.logaddexp(np.log(w) + a["lpd"], np.log1p(-w) + b["lpd"])
    return dict(w=w, err=B.error(case, w * a["pred"] + (1 - w) * b["pred"], yt, ft), mlpd=float(np.mean(lpd)),
                cover=coverage(mixed, yt))


def study(case, s, X, y, Xt, yt, ft, max_iter=512_000, with_control=False, save=None, paper_bmars=False) -> dict:
    r = {"case": case, "split": s, "max_iter": max_iter}
    a = fit(lambda seed: RJMCMCRegressor(random_state=seed, n_jobs=2, max_iter=max_iter), X, y, Xt, yt, s)
    b = fit(lambda seed: BMARSRegressor(random_state=seed), X, y, Xt, yt, s)
    st = stack_scores(case, a, b, yt, ft)
    r.update(
        err_rj=B.error(case, a["pred"], yt, ft), err_bmars=B.error(case, b["pred"], yt, ft), err_stack=st["err"],
        err_avg=B.error(case, 0.5 * (a["pred"] + b["pred"]), yt, ft), w_rj=st["w"],
        elpd_loo_rj=float(np.sum(a["loo"])), elpd_loo_bmars=float(np.sum(b["loo"])),
        mlpd_rj=float(np.mean(a["lpd"])), mlpd_bmars=float(np.mean(b["lpd"])), mlpd_stack=st["mlpd"],
        cover_rj=coverage(a["draws"], yt), cover_bmars=coverage(b["draws"], yt), cover_stack=st["cover"],
        sec_rj=a["sec"], sec_bmars=b["sec"], unconverged_rj=a["unconverged"], unconverged_bmars=b["unconverged"],
    )
    if with_control:
        control(r, case, s, a, b, X, y, Xt, yt, ft, max_iter, save)
    if paper_bmars:
        p = fit(lambda seed: BMARSRegressor(prior=BMARSPrior(), random_state=seed), X, y, Xt, yt, s)
        st = stack_scores(case, a, p, yt, ft)
        r.update(err_bmars_paper=B.error(case, p["pred"], yt, ft), mlpd_bmars_paper=float(np.mean(p["lpd"])),
                 elpd_loo_bmars_paper=float(np.sum(p["loo"])), sec_bmars_paper=p["sec"],
                 unconverged_bmars_paper=p["unconverged"], w_rj_paper=st["w"], err_stack_paper=st["err"],
                 mlpd_stack_paper=st["mlpd"], cover_stack_paper=st["cover"])
    r["err_gp"] = B.error(case, B.gp(X, y, Xt, s)["pred"], yt, ft)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=["boston"], choices=B.CASES)
    ap.add_argument("--splits", nargs="+", type=int, default=None, help="the splits (seeds) to run; default: all")
    ap.add_argument("--out", default="study_stack_bmars.jsonl")
    ap.add_argument("--control", action="store_true", help="a second RJ fit from another seed, stacked (see above)")
    ap.add_argument("--max-iter", type=int, default=512_000, help="the RJ fits' cap (the default's: 512,000)")
    ap.add_argument("--save", default=None, help="a folder for each split's pointwise terms (with --control)")
    ap.add_argument("--paper-bmars", action="store_true", help="a BMARS fit under the paper's prior, stacked too")
    args = ap.parse_args()
    with open(args.out, "a") as out:
        for case, s, X, y, Xt, yt, ft in B.cases(False):
            if case not in args.cases or (args.splits is not None and s not in args.splits):
                continue
            r = study(case, s, X, y, Xt, yt, ft, args.max_iter, args.control, args.save, args.paper_bmars)
            print(json.dumps(r), flush=True)
            out.write(json.dumps(r) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
