"""The classifier's defaults: `RJMCMCClassifier()` (four chains, n_iter="auto") against a fixed n_iter=5000 and
against the other coefficient prior, per data set and link: seconds, split-R-hat of k and of the log posterior, bulk
ESS of k (on the kept draws, as the summary), test error, Brier score (the mean over test points of the squared
distance between the probability vector and the class's indicator, halved for two classes, so that it is
(p1 - y)^2) and iterations per chain (512,000 = the cap; 128,000 until stop 70).

    python bench/bench_classifier_defaults.py                      # probit and discriminant, the default prior
    python bench/bench_classifier_defaults.py --links probit --tremor ../shared/data
    python bench/bench_classifier_defaults.py --priors g ridge_nb --n-iter auto    # the probit's prior, chosen here
    python bench/bench_classifier_defaults.py --quick              # Pima, probit only (smoke run)
    python bench/bench_classifier_defaults.py --links probit --n-iter auto --priors default probit_b1 probit_per_basis
    python bench/bench_classifier_defaults.py --links probit --n-iter auto --bases thin_plate gaussian

Priors: "default" (what the estimator uses without prior=), "g" (`RBFPrior()`, the 1999 paper's g-prior) and
"ridge_nb" (`priors.REGRESSOR_PRIOR`: the ridge prior with k ~ NB(10, 1/2), the regressor's default).

Data: tremor (if its directory is given or found at ../shared/data), Ripley, Pima, a three-class problem in two inputs
(300 training points, the one `exp5_classification` uses) and the first stratified CV fold of iris (scikit-learn's
copy). One run: read the seconds as ratios within it.
"""
import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from rbf_bayes import ExtrapolationWarning, NotConvergedWarning, RJMCMCClassifier
from rbf_bayes.datasets import load_pima, load_ripley, load_tremor
from rbf_bayes.plot import brier_score
from rbf_bayes.priors import PROBIT_PRIOR, REGRESSOR_PRIOR, RBFPrior

PRIORS = {"default": None, "g": RBFPrior(), "ridge_nb": REGRESSOR_PRIOR,
          # the ridge prior with the centre space reaching further beyond the data (iota: a fraction of the spread)
          "ridge_nb_iota025": REGRESSOR_PRIOR.replace(iota=0.25, iota_far=None),
          # ... on the paper's Omega: REGRESSOR_PRIOR until stop 56 (its centres now reach beyond the data, 00_basis),
          # and the probit's default with its thin-plate basis (priors.default_prior)
          "ridge_nb_paper_box": REGRESSOR_PRIOR.replace(iota_far=None),
          # the probit's default with delta^2's prior scale beta_delta2 smaller than its 10 (IG(2, 3) and IG(2, 1)), or
          # divided by the number of bases (delta^2 | k ~ IG(2, 10 / max(k, 1)), priors.delta2_scale)
          "probit_b3": PROBIT_PRIOR.replace(beta_delta2=3.0), "probit_b1": PROBIT_PRIOR.replace(beta_delta2=1.0),
          "probit_b03": PROBIT_PRIOR.replace(beta_delta2=0.3),
          "probit_per_basis": PROBIT_PRIOR.replace(delta2_per_basis=True)}


def data_sets(tremor):
    from sklearn.datasets import load_iris
    from sklearn.model_selection import StratifiedKFold
    if tremor is not None: yield "tremor", load_tremor(tremor)
    yield "ripley", load_ripley()
    yield "pima", load_pima()[:4]
    rng = np.random.default_rng(0)
    def three(n):
        x = rng.uniform(-1, 1, (n, 2))
        U = np.column_stack([np.zeros(n), 3 * (x[:, 0] ** 2 - x[:, 1]), 3 * (x[:, 1] - 0.5 * x[:, 0] - 0.3)])
        return x, (U + rng.normal(size=U.shape)).argmax(1)
    (x, y), (xt, yt) = three(300), three(3000)
    yield "three", (x, y, xt, yt)
    Xi, yi = load_iris(return_X_y=True)
    tr, te = next(StratifiedKFold(5, shuffle=True, random_state=0).split(Xi, yi))
    yield "iris0", (Xi[tr], yi[tr], Xi[te], yi[te])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--links", nargs="*", default=["probit", "discriminant"])
    ap.add_argument(
        "--tremor", default=None, help="directory of tremor_{train,test}.csv (default: ../shared/data if there)"
    )
    ap.add_argument("--priors", nargs="*", default=["default"], choices=list(PRIORS))
    ap.add_argument(
        "--n-iter", nargs="*", default=["auto", "5000"], help="run lengths: auto and/or iterations per chain"
    )
    ap.add_argument("--quick", action="store_true", help="Pima with the probit only (a smoke run)")
    ap.add_argument("--data", nargs="*", default=None, help="only these data sets (tremor ripley pima three iris0)")
    ap.add_argument("--seed", type=int, default=0, help="the estimator's random_state")
    ap.add_argument("--bases", nargs="*", default=[None], help="basis names (default: the estimator's)")
    a = ap.parse_args()
    runs = [v if v == "auto" else int(v) for v in a.n_iter]
    if a.quick: a.links = ["probit"]
    tremor = a.tremor or next((p for p in [Path("../shared/data")] if (p / "tremor_train.csv").exists()), None)
    print(f"{'data':<7} {'link':<12} {'prior':<8} {'n_iter':>6} {'sec':>6} {'R(k)':>6} {'R(lp)':>6} {'ESS(k)':>6} "
          f"{'error':>6} {'Brier':>6} {'it/chain':>8} conv")
    for name, (x, y, xt, yt) in data_sets(tremor):
        if a.quick and name != "pima" or a.data and name not in a.data: continue
        for link in a.links:
            if link == "discriminant" and len(np.unique(y)) > 2: continue
            for prior, basis in ((p, b) for p in a.priors for b in a.bases):
                for n_iter in runs:
                    t = time.perf_counter()
                    with warnings.catch_warnings(record=True) as heard:
                        warnings.simplefilter("always", NotConvergedWarning)
                        kw = {} if basis is None else {"basis": basis}
                        m = RJMCMCClassifier(link=link, n_iter=n_iter, prior=PRIORS[prior], random_state=a.seed,
                                             **kw).fit(x, y)
                    conv = not any(issubclass(w.category, NotConvergedWarning) for w in heard)
                    sec = time.perf_counter() - t
                    cd = m.trace_.chain_diagnostics()
                    with (
                        warnings.catch_warnings()
                    ):  # Pima's test set has rows past the training range: held, as by default
                        warnings.simplefilter("ignore", ExtrapolationWarning)
                        P = m.predict_proba(xt)
                    err = float(np.mean(m.classes_[P.argmax(1)] != yt))
                    brier = brier_score(yt, P, m.classes_)
                    label = prior if basis is None else f"{prior}/{basis}"
                    print(f"{name:<7} {link:<12} {label:<8} {n_iter!s:>6} {sec:6.1f} {cd['k'][0]:6.3f} "
                          f"{cd['log posterior'][0]:6.3f} {cd['k'][1]:6.0f} {err:6.4f} {brier:6.4f} "
                          f"{len(m.trace_.k) // m.trace_.n_chains:8d} {'yes' if conv else 'no'}", flush=True)


if __name__ == "__main__":
    main()
