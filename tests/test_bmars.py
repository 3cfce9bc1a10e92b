"""Bayesian MARS: exact counting of valid bases, prior recovery, enumeration, protocol and errors."""
import itertools

import numpy as np
import pytest
from scipy import integrate, special, stats

from rbf_bayes.bmars import (
    BMARSPrior,
    BMARSRegressor,
    bmars_types,
    count_valid,
    hinge_column,
    log_valid_fraction,
    sample_bmars,
)
from rbf_bayes.priors import log_poisson_normaliser


def test_count_valid_matches_brute_force():
    x = np.round(np.random.default_rng(5).uniform(size=(8, 3)), 1)
    for t in bmars_types(3, 3):
        for n_min in (1, 2, 4):
            brute = sum(int(np.sum(hinge_column(x, t, s, kn) > 0) >= n_min)
                        for s in itertools.product((1, -1), repeat=len(t))
                        for kn in itertools.product(*[np.sort(x[:, v]) for v in t]))
            assert count_valid(x, t, n_min) == brute


def test_prior_recovery_k_and_types():
    rng = np.random.default_rng(11)
    x = rng.uniform(size=(10, 3))
    pr = BMARSPrior(max_interaction=2, k_max=5, n_min=2)
    tr = sample_bmars(x, rng.normal(size=10), prior=pr, n_iter=150_000, burn_in=1000, thin=25,
                      rng=np.random.default_rng(12), prior_only=True)
    pk = np.array(
        [
            integrate.quad(
                lambda L, k=k: np.exp(
                    k * np.log(L)
                    - special.gammaln(k + 1)
                    - log_poisson_normaliser(L, 5)
                    + stats.gamma.logpdf(L, 10, scale=0.1)
                ),
                0,
                np.inf,
            )[0]
            for k in range(6)
        ]
    )
    pk /= pk.sum()
    ks = tr.k[tr.kept]
    assert stats.chisquare(np.bincount(ks, minlength=6), pk * len(ks)).pvalue > 1e-3


def test_fixed_lambda_prior_is_truncated_poisson():
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(10, 2))
    tr = sample_bmars(x, rng.normal(size=10), prior=BMARSPrior(k_max=6), n_iter=100_000, burn_in=1000, thin=25,
                      rng=np.random.default_rng(4), prior_only=True, fix_lambda=2.0)
    pk = stats.poisson.pmf(np.arange(7), 2.0)
    pk /= pk.sum()
    ks = tr.k[tr.kept]
    assert stats.chisquare(np.bincount(ks, minlength=7), pk * len(ks)).pvalue > 1e-3


def test_errors_and_protocol():
    x = np.random.default_rng(0).uniform(size=(30, 2))
    y = x[:, 0] ** 2 + 0.1 * np.random.default_rng(1).normal(size=30)
    with pytest.raises(ValueError, match="max_interaction must be an integer >= 1"):
        BMARSPrior(max_interaction=0)
    with pytest.raises(ValueError, match="coef_var must be a finite number > 0"):
        BMARSPrior(coef_var=-1)
    with pytest.raises(ValueError, match="burn_in must be in"):
        sample_bmars(x, y, n_iter=10, burn_in=10, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="no basis is non-zero"):
        log_valid_fraction(x, 1, 31)
    m = BMARSRegressor(n_iter=600, burn_in=300, random_state=0).fit(x, y)
    assert m.predict(x).shape == (30,)
    assert m.get_params()["n_iter"] == 600
    with pytest.raises(ValueError, match="X has 5 features, but BMARSRegressor is expecting 2 features"):
        m.predict(np.zeros((3, 5)))


def test_automatic_run_length_grows_the_fixed_chains():
    """BMARSRegressor(n_iter="auto"): the chains grown in rounds are the fixed-length chains of the length they
    stopped at, draw for draw (extending a run does not perturb it); the summary says how long they ran and why."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(80, 3)); y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(80)
    auto = BMARSRegressor(n_iter="auto", max_iter=8000, n_chains=2, n_jobs=2, random_state=0).fit(X, y)
    a = auto.trace_.meta["auto"]
    assert [r["n_iter"] for r in a["rounds"]][:2] == [4000, 8000][:len(a["rounds"])] and auto.n_iter_ == a["n_iter"]
    fixed = BMARSRegressor(n_iter=a["n_iter"], burn_in=2000, n_chains=2, n_jobs=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.trace_.k, fixed.trace_.k)
    np.testing.assert_array_equal(auto.trace_.log_marginal_likelihood, fixed.trace_.log_marginal_likelihood)
    assert dict(auto.summary().rows)["run length"].startswith("chosen by the chains")
    with pytest.raises(ValueError, match="n_iter must be a positive integer or 'auto'"):
        BMARSRegressor(n_iter="long").fit(X, y)
