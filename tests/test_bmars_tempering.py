"""Bayesian MARS with replica exchange (nbs/10_bmars, "Tempering (replica exchange)"): the tempered moves and the
ladder's cold chain against exact enumeration, prior recovery through the ladder, reproducibility, bad input."""
import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from rbf_bayes.bmars import BMARSPrior, BMARSRegressor, bmars_run, hinge_column, log_valid_fraction, sample_bmars
from rbf_bayes.posterior import log_marginal_likelihood
from rbf_bayes.priors import log_poisson_normaliser

X6 = np.array([[0.1], [0.25], [0.4], [0.55], [0.7], [0.9]])
Y6 = np.array([0.2, 0.1, 0.3, 0.9, 1.4, 2.1])
PR6 = BMARSPrior(max_interaction=1, k_max=2, n_min=1)


def _exact_pk(beta):
    """p_beta(k | y) on the 6-point problem by listing every labelled model with k <= 2: prior (lambda integrated over
    its Gamma(10, 10) hyperprior by quadrature) times the marginal likelihood to the power beta."""
    kn = np.sort(X6[:, 0]); lzv = log_valid_fraction(X6, 1, 1)
    cands = [((0,), (s,), (t,)) for s in (1, -1) for t in range(6)]
    cands = [b for b in cands if np.sum(hinge_column(X6, b[0], b[1], [kn[b[2][0]]]) > 0) >= 1]
    pk = np.array([integrate.quad(lambda L, k=k: np.exp(k * np.log(L) - special.gammaln(k + 1)
                                                        - log_poisson_normaliser(L, 2)
                                                        + stats.gamma.logpdf(L, 10, scale=0.1)), 0, np.inf,
                                  limit=200)[0] for k in range(3)])
    pk /= pk.sum()
    logw, ks = [], []
    for k in range(3):
        for tup in itertools.product(cands, repeat=k):
            D = np.column_stack([np.ones(6)] + [hinge_column(X6, b[0], b[1], [kn[b[2][0]]]) for b in tup])
            lml = log_marginal_likelihood(D, Y6, PR6.coef_var, PR6.rbf_prior())
            logw.append(math.log(pk[k]) + k * (-math.log(12) - lzv) + beta * lml); ks.append(k)
    w = np.exp(np.array(logw) - special.logsumexp(logw)); ks = np.array(ks)
    return np.array([w[ks == k].sum() for k in range(3)])


def _pk_of(traces, burn):
    pks = np.array([np.bincount(t.k[burn:], minlength=3) / len(t.k[burn:]) for t in traces])
    return pks.mean(0), pks.std(0, ddof=1) / np.sqrt(len(pks))


def test_a_core_at_half_power_samples_the_tempered_posterior():
    "The C moves multiply the log-likelihood change by beta: one core at beta = 1/2 against p_{1/2}(k | y)."
    runs = []
    for s in range(8):
        r = bmars_run(X6, Y6, prior=PR6, n_iter=25_000, burn_in=1_000, thin=10, rng=np.random.default_rng(s))
        r.core.beta = 0.5
        runs.append(r.run())
    m, se = _pk_of(runs, 1_000)
    exact, untempered = _exact_pk(0.5), _exact_pk(1.0)
    assert np.all(np.abs(m - exact) < 4 * se + 1e-3), (m, exact, se)
    assert np.abs(m - untempered).max() > 10 * se.max()   # the check can tell the two targets apart


def test_the_ladders_cold_chain_samples_the_posterior():
    "Three adapted rungs: the recorded chain (power 1) gives the exact p(k | y); the ladder did swap."
    runs = [sample_bmars(X6, Y6, prior=PR6, n_iter=25_000, burn_in=1_000, thin=10, rng=np.random.default_rng(s),
                         n_temps=3) for s in range(8)]
    m, se = _pk_of(runs, 1_000)
    assert np.all(np.abs(m - _exact_pk(1.0)) < 4 * se + 1e-3), (m, se)
    t = runs[0].meta.tempering
    assert len(t["betas"]) == 3 and t["betas"][0] == 1.0 and t["betas"][1] < 1.0
    assert all(0.05 < r < 0.95 for r in t["swap_rate"]), t
    assert runs[0].meta.counts[0][0] > 0 and sum(runs[0].meta.counts[1]) == int(runs[0].accepted.sum())


def test_the_ladder_recovers_the_prior():
    "Likelihood off: every swap is accepted, and the recorded chain's k still follows its prior."
    rng = np.random.default_rng(11)
    x = rng.uniform(size=(10, 3))
    pr = BMARSPrior(max_interaction=2, k_max=5, n_min=2)
    tr = sample_bmars(x, rng.normal(size=10), prior=pr, n_iter=100_000, burn_in=1000, thin=25,
                      rng=np.random.default_rng(12), prior_only=True, n_temps=3)
    pk = np.array([integrate.quad(lambda L, k=k: np.exp(k * np.log(L) - special.gammaln(k + 1)
                                                        - log_poisson_normaliser(L, 5)
                                                        + stats.gamma.logpdf(L, 10, scale=0.1)), 0, np.inf)[0]
                   for k in range(6)])
    pk /= pk.sum()
    ks = tr.k[tr.kept]
    assert stats.chisquare(np.bincount(ks, minlength=6), pk * len(ks)).pvalue > 1e-3
    assert tr.meta.tempering["swap_rate"] == [1.0, 1.0]
    assert len(tr.bases) == len(tr.kept) and all(len(b) == k for b, k in zip(tr.bases, ks, strict=True))


def test_a_tempered_fit_is_reproducible_and_bad_n_temps_is_refused():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(40, 2)); y = np.sin(3 * x[:, 0]) + 0.1 * rng.normal(size=40)
    fit = lambda: BMARSRegressor(n_iter=3000, n_chains=2, n_temps=3, random_state=4).fit(x, y)  # noqa: E731
    a, b = fit(), fit()
    np.testing.assert_array_equal(a.trace_.k, b.trace_.k)
    np.testing.assert_array_equal(a.predict(x), b.predict(x))
    assert a.trace_.meta.tempering is not None or a.trace_.chains[0].meta.tempering is not None
    for bad in (0, -1, 2.5):
        with pytest.raises((ValueError, TypeError), match="n_temps"):
            BMARSRegressor(n_iter=1000, n_temps=bad).fit(x, y)
