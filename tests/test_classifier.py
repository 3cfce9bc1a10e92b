"""RJMCMCClassifier (issue 14, part): the scikit-learn classifier protocol for both links, any label type, save/load,
and the tremor experiment (Andrieu, de Freitas & Doucet 1999, §7.3) in a reduced configuration."""
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rbf_bayes import RJMCMCClassifier
from rbf_bayes.convergence import ConvergenceWarning
from rbf_bayes.datasets import load_tremor


@parametrize_with_checks([RJMCMCClassifier(n_iter=200, burn_in=100),
                          RJMCMCClassifier(link="discriminant", n_iter=200, burn_in=100)])
def test_sklearn_compatible_classifier(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


def _circle(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2))
    return x, np.where(np.hypot(x[:, 0], x[:, 1]) + 0.15 * rng.normal(size=n) < 0.6, "in", "out")


@pytest.mark.parametrize("link", ["probit", "discriminant"])
def test_labels_probabilities_and_save_load(link, tmp_path):
    x, y = _circle(150, 0)
    m = RJMCMCClassifier(link=link, n_iter=2000, burn_in=1000, random_state=0).fit(x, y)
    assert list(m.classes_) == ["in", "out"]
    xt, yt = _circle(500, 1)
    P, sd = m.predict_proba(xt, return_std=True)
    np.testing.assert_allclose(P.sum(1), 1.0)
    assert ((P >= 0) & (P <= 1)).all() and (sd >= 0).all() and sd.shape == (500,)
    f = m.decision_function(xt)
    np.testing.assert_array_equal(m.predict(xt), m.classes_[(f > 0).astype(int)])
    assert np.mean(m.predict(xt) == yt) > 0.8                       # a circle a linear rule cannot draw
    m.save(tmp_path / "c.npz")
    q = RJMCMCClassifier.load(tmp_path / "c.npz")
    np.testing.assert_array_equal(q.predict_proba(xt), P)
    np.testing.assert_array_equal(q.classes_, m.classes_)


def test_bad_labels_are_named():
    x = np.random.default_rng(0).uniform(size=(30, 2))
    with pytest.raises(
        ValueError,
        match=r"Only binary classification is supported. link='discriminant' handles two classes; y has 3 classes",
    ):
        RJMCMCClassifier(link="discriminant", n_iter=50, burn_in=10).fit(x, np.arange(30) % 3)
    with pytest.raises(ValueError, match=r"y has 1 class .*at least two"):
        RJMCMCClassifier(n_iter=50, burn_in=10).fit(x, np.zeros(30))
    with pytest.raises(ValueError, match="link"):
        RJMCMCClassifier(link="logit", n_iter=50, burn_in=10).fit(x, np.arange(30) % 2)
    with pytest.raises(ValueError, match="continuous|Unknown label type"):
        RJMCMCClassifier(n_iter=50, burn_in=10).fit(x, np.linspace(0, 1, 30))


def _three(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2))
    U = np.column_stack([np.zeros(n), 3 * (x[:, 0] ** 2 - x[:, 1]), 3 * (x[:, 1] - 0.5 * x[:, 0] - 0.3)])
    return x, np.array(["setosa", "versicolor", "virginica"])[(U + rng.normal(size=U.shape)).argmax(1)]


def test_three_classes_probit(tmp_path):
    """The multinomial probit through the estimator: string labels, (n, 3) probabilities that sum to one with their
    sds, predict = argmax of predict_proba = argmax of decision_function, log probabilities finite, save/load; a
    curved three-class problem whose Bayes error is about 0.21 (05c_probit check 6) is learned to within 0.05."""
    x, y = _three(300, 0)
    m = RJMCMCClassifier(n_iter=3000, burn_in=1500, random_state=1).fit(x, y)
    assert list(m.classes_) == ["setosa", "versicolor", "virginica"] and m.trace_.n_classes == 3
    xt, yt = _three(2000, 1)
    P, sd = m.predict_proba(xt, return_std=True)
    assert P.shape == sd.shape == (2000, 3) and (sd >= 0).all()
    np.testing.assert_allclose(P.sum(1), 1.0, rtol=1e-10)
    D, L = m.decision_function(xt), m.predict_log_proba(xt)
    np.testing.assert_allclose(np.exp(L), P, rtol=1e-10)
    assert np.isfinite(L).all()
    pred = m.predict(xt)        # each prediction is a quadrature per draw and point: computed once, checked twice
    np.testing.assert_array_equal(pred, m.classes_[P.argmax(1)])
    np.testing.assert_array_equal(D.argmax(1), P.argmax(1))
    assert np.mean(pred != yt) < 0.26
    m.save(tmp_path / "c3.npz")
    q = RJMCMCClassifier.load(tmp_path / "c3.npz")
    # every draw enters every point's probability; compared on the same 200 rows: BLAS may round a 200-row product
    # differently from the first 200 rows of a 2,000-row one (seen on an AVX2 machine: 1 ulp, 2e-19, in 1 of 600)
    np.testing.assert_array_equal(q.predict_proba(xt[:200]), m.predict_proba(xt[:200]))


def _tremor_dir():
    for p in (os.environ.get("RBF_BAYES_TREMOR_DIR"), Path(__file__).resolve().parents[2] / "shared" / "data"):
        if p and (Path(p) / "tremor_train.csv").is_file():
            return p
    return None


@pytest.mark.skipif(
    _tremor_dir() is None, reason="the tremor data is not shipped (../shared/data or RBF_BAYES_TREMOR_DIR)"
)
@pytest.mark.parametrize("link", ["probit", "discriminant"])
def test_tremor_reduced(link):
    """§7.3: the paper reports 14.60% test error (26 of 178). Measured with 20,000 iterations, 4 seeds, both links and
    both bases: 16.29% (29 of 178) every time, as scikit-learn's GP classifier; an SVC with CV gets 14.61%. Reduced
    configuration here (5,000 iterations): within 2 points of the paper (at most 30 errors)."""
    x, y, xt, yt = load_tremor(_tremor_dir())
    m = RJMCMCClassifier(link=link, n_iter=5000, random_state=0).fit(x, y)
    n_err = int(np.sum(m.predict(xt) != yt))
    assert n_err <= 30, n_err


@pytest.mark.skipif(
    _tremor_dir() is None, reason="the tremor data is not shipped (../shared/data or RBF_BAYES_TREMOR_DIR)"
)
def test_tremor_narrow_gaussian_probit_stays_finite():
    """Regression: Gaussian bases of width 0.25 (standardised inputs; 0.107 in units of x) on tremor let nearly
    vanishing columns into the factor; the probit's
    Gibbs loop then amplified the rounding noise of D (L L')^{-1} D' until the latent values overflowed (|f| grew by
    1e5 per iteration from iteration ~260, 'Y contains NaN or inf' at ~440). The pivot floor (04_kernel) rejects
    such columns: the chain runs to the end, every draw is finite and a typical draw's |f| on the training inputs is
    of the order of the data's separation (median over draws of max |f|: 16; single draws reach 1e4 where the data
    are locally separable and delta^2's inverse-gamma prior has a heavy tail — the model, not rounding)."""
    x, y, xt, yt = load_tremor(_tremor_dir())
    m = RJMCMCClassifier(basis="gaussian", width=0.107, n_iter=20_000, burn_in=10_000, random_state=0).fit(
        x, y
    )  # 0.25 on standardised x
    F = m.member_scores(x)
    assert np.isfinite(F).all() and np.isfinite(m.member_scores(xt)).all()
    assert np.median(np.abs(F).max(1)) < 100, np.median(np.abs(F).max(1))
    assert int(np.sum(m.predict(xt) != yt)) <= 30


@pytest.mark.parametrize("link", ["probit", "discriminant"])
def test_automatic_run_length_grows_the_fixed_chains(link):
    """RJMCMCClassifier(n_iter="auto") (on request; 4 chains by default): the chains grown in rounds are the
    fixed-length
    chains of the length they stopped at, draw for draw, for the probit (latent step in C) and the discriminant."""
    x, y = _circle(120, 3)
    auto = RJMCMCClassifier(link=link, n_iter="auto", max_iter=8000, n_chains=2, n_jobs=2, random_state=0).fit(x, y)
    n = auto.trace_.meta["auto"]["n_iter"]
    fixed = RJMCMCClassifier(link=link, n_iter=n, burn_in=2000, n_chains=2, n_jobs=2, random_state=0).fit(x, y)
    np.testing.assert_array_equal(auto.trace_.k, fixed.trace_.k)
    np.testing.assert_array_equal(auto.trace_.log_posterior, fixed.trace_.log_posterior)
    assert auto.n_iter_ == n and RJMCMCClassifier().n_chains == 4


@pytest.mark.parametrize("link", ["probit", "discriminant"])
def test_sample_proba_draws_the_class_probabilities(link):
    """sample_proba: draws of the class probabilities (n, C, n_samples), each a posterior draw of the model; they sum to
    one over classes, repeat with the seed, and their mean over many draws is predict_proba (within Monte Carlo
    error)."""
    x, y = _circle(120, 4)
    m = RJMCMCClassifier(link=link, n_iter=1500, burn_in=500, n_chains=2, n_jobs=2, random_state=0).fit(x, y)
    D = m.sample_proba(x[:9], n_samples=20_000, random_state=1)
    assert D.shape == (9, 2, 20_000) and np.all((D >= 0) & (D <= 1))
    np.testing.assert_allclose(D.sum(1), 1, atol=1e-12)
    np.testing.assert_array_equal(m.sample_proba(x[:9], 50, random_state=1), m.sample_proba(x[:9], 50, random_state=1))
    # 20,000 draws with replacement from the kept draws: the mean's Monte Carlo sd is below 0.004 (probabilities in
    # [0, 1]). Probit: predict_proba is exactly the mean over the kept draws. Discriminant: predict_proba is the
    # predictive Phi((mean - 1/2) / sd), which the draws' mean only approximates (a looser tolerance, stated)
    np.testing.assert_allclose(D.mean(-1), m.predict_proba(x[:9]), atol=0.02 if link == "probit" else 0.05)
    with pytest.raises(ValueError, match="n_samples"):
        m.sample_proba(x[:3], n_samples=0)


def test_three_rows_are_enough_for_the_probit():
    """Issue 36: three labelled rows were refused by the regression check that y is an exact linear function of x
    (an improper posterior under Jeffreys' prior on sigma^2); the probit's latent regression has sigma^2 = 1 known, so
    its posterior is proper and the fit goes on."""
    X3 = np.array([[0.0, 0.0], [1.0, 0.5], [0.2, 1.0]])
    with warnings.catch_warnings():
        # nor a warning about Corollary 2's bound on y'Py (it read "use k_max <= -1"): sigma^2 known, nothing divides by
        # it
        warnings.simplefilter("error", ConvergenceWarning)
        m = RJMCMCClassifier(n_iter=300, burn_in=100, n_chains=1, random_state=0).fit(X3, [0, 1, 0])
    assert m.predict_proba(X3).shape == (3, 2)


def test_default_priors_per_link():
    """The probit's default prior is the regressor's (ridge, k ~ NB(10, 1/2): measured in 12_estimators, "Defaults that
    converge", to converge where the g-prior did not) on the paper's Omega (PROBIT_PRIOR: since stop 56 the regressor's
    centres reach beyond the data, the probit's do not, and since stop 67 the regressor's learned log scales have the
    two-piece prior, which the probit, learning no scales, does not carry; 01_priors, "The reach follows the basis"),
    whatever the basis; the discriminant keeps the 1999 paper's g-prior; prior= wins."""
    import dataclasses

    from rbf_bayes.priors import PROBIT_PRIOR, REGRESSOR_PRIOR, RBFPrior
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2)); y = (x[:, 0] > 0).astype(int)
    fit = lambda **kw: RJMCMCClassifier(n_iter=200, burn_in=100, n_chains=1, random_state=0, **kw).fit(x, y)  # noqa: E731
    assert PROBIT_PRIOR == REGRESSOR_PRIOR.replace(iota_far=None, log_scale_sd_up=None)
    assert REGRESSOR_PRIOR.iota_far is not None and REGRESSOR_PRIOR.log_scale_sd_up is not None
    assert fit().trace_.meta["prior"] == dataclasses.asdict(PROBIT_PRIOR)
    assert fit(basis="gaussian").trace_.meta["prior"] == dataclasses.asdict(PROBIT_PRIOR)
    assert fit(link="discriminant").trace_.meta["prior"] == dataclasses.asdict(RBFPrior())
    assert fit(prior=RBFPrior()).trace_.meta["prior"] == dataclasses.asdict(RBFPrior())


@pytest.mark.parametrize("link", ["probit", "discriminant"])
def test_every_trace_records_its_link(link, tmp_path):
    """The trace says which classifier made it, whatever the run length (until stop 73 a fixed-length discriminant
    fit's trace had no link: only its automatic run marked one), and the mark survives a file."""
    x, y = _circle(60, 5)
    for kw in (dict(n_iter=300, burn_in=100), dict(n_iter="auto", max_iter=400)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # a capped automatic run warns; not what this test is about
            m = RJMCMCClassifier(link=link, n_chains=2, n_jobs=1, random_state=0, **kw).fit(x, y)
        assert m.trace_.meta["link"] == link, kw
        assert RJMCMCClassifier.load(m.save(tmp_path / f"{link}.npz")).trace_.meta["link"] == link
