"""delta^2's prior per basis (nbs/01_priors, "The coefficient prior's GP limit"): delta^2 | k ~ IG(a, b / max(k, 1)).
Checked as every prior of the sampler is (ARCHITECTURE.md):

1. Prior recovery with the likelihood off, C and reference: k ~ truncated Poisson(Lambda) (chi-square) and
   max(k, 1) delta^2 ~ IG(a, b) (KS) for every output; power: the same KS rejects delta^2 itself.
2. Exact enumeration with the likelihood on: a 1-d problem with k_max = 2 and Lambda fixed, where
   p_beta(k | y) ∝ p(k | Lambda) ∫ p(delta^2 | k) E_{mu ~ U(Omega^k)}[p(y | k, mu, delta^2)^beta] d delta^2 by
   quadrature with the reference marginal likelihood. The C chain (Gibbs delta^2 at beta = 1, its random walk at
   beta = 1/2) must give it within 0.015 (seeds 1-4 at beta = 1: at most 0.0055 off); the per-basis prior's p(k | y)
   differs from the plain prior's by 0.086, so the check can tell the two apart. The reference chain is not run
   against it here: at 5,000 iterations (28 s) seeds 8-11 were up to 0.036 off, too rough a check for the CI time;
   its moves' prior ratio is checked by its prior recovery, its delta^2 draw given k in nbs/02_posterior.
3. The C loop's log posterior equals the dense one (posterior.log_posterior, given k).
"""
import functools
import math

import numpy as np
import pytest
from scipy import special, stats
from test_tempering import run_core_at

from rbf_bayes.basis import CentreSpace, design_matrix
from rbf_bayes.posterior import log_marginal_likelihood, log_posterior
from rbf_bayes.priors import RBFPrior, log_delta2_prior, log_k_prior
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc, sample_rjmcmc_reference

P_MIN = 1e-3
LAM, KMAX = 2.5, 8
X = np.random.default_rng(0).uniform(size=(30, 2))
Y = np.random.default_rng(1).normal(size=(30, 2))
PRIOR = RBFPrior(k_max=KMAX, coef_prior="ridge", beta_delta2=30.0, delta2_per_basis=True)

X1 = np.linspace(0, 1, 7)[:, None]
Y1 = np.sin(4 * X1[:, 0]) + 0.3 * np.random.default_rng(3).standard_normal(7)
LAM1, BASIS1, WIDTH1 = 1.0, "gaussian", 0.3
PRIOR1 = RBFPrior(k_max=2, coef_prior="ridge", beta_delta2=40.0, delta2_per_basis=True)
TOL = 0.015


def _check_prior(tr):
    ks, d2 = tr.k[tr.kept], tr.delta2[tr.kept]
    pk = np.exp(log_k_prior(np.arange(KMAX + 1), LAM, KMAX))
    obs = np.bincount(ks, minlength=KMAX + 1)
    assert stats.chisquare(obs, pk / pk.sum() * len(ks)).pvalue > P_MIN, ks.mean()
    ig = stats.invgamma(PRIOR.alpha_delta2, scale=PRIOR.beta_delta2).cdf
    for o in range(2):
        assert stats.kstest(d2[:, o] * np.maximum(ks, 1), ig).pvalue > P_MIN, o
        assert stats.kstest(d2[:, o], ig).pvalue < 1e-6, o       # power: delta^2 itself is not IG(a, b)


def test_prior_recovery_c():
    cfg = RJConfig(n_iter=300_000, burn_in=1000, thin=30, prior_only=True, fix_Lambda=LAM)
    _check_prior(sample_rjmcmc(X, Y, prior=PRIOR, config=cfg, rng=np.random.default_rng(0), basis="gaussian",
                               width=0.3))


def test_prior_recovery_multiple_try_and_tempered():
    cfg = RJConfig(n_iter=150_000, burn_in=1000, thin=20, prior_only=True, fix_Lambda=LAM, n_tries=3, n_temps=3)
    _check_prior(sample_rjmcmc(X, Y, prior=PRIOR, config=cfg, rng=np.random.default_rng(7), basis="gaussian",
                               width=0.3))


def test_prior_recovery_reference():
    cfg = RJConfig(n_iter=60_000, burn_in=1000, thin=20, prior_only=True, fix_Lambda=LAM)
    _check_prior(sample_rjmcmc_reference(X, Y, prior=PRIOR, config=cfg, rng=np.random.default_rng(0),
                                         basis="gaussian", width=0.3))


DG = np.exp(np.linspace(math.log(1e-3), math.log(1e4), 70))   # the log delta^2 grid of the quadrature


def _lml_rows(D, y):
    """log p(y | D, delta^2) over DG for the ridge prior with Jeffreys' sigma^2, from the eigenvalues of D'D (one
    decomposition for the whole grid), up to a constant that depends on N alone."""
    lam, V = np.linalg.eigh(D.T @ D)
    b2 = (V.T @ (D.T @ y)) ** 2
    r = 1.0 / DG[:, None]
    e = np.sum(b2 / (lam + r), axis=1)
    return (-0.5 * D.shape[1] * np.log(DG) - 0.5 * np.sum(np.log(lam + r), axis=1)
            - 0.5 * len(y) * np.log(y @ y - e))


@functools.lru_cache(maxsize=None)
def _lml_grid(n1=200, n2=40):
    """log p(y | k, mu, delta^2) on the grids: the midpoint rule over Omega^k (the two grids of k = 2 offset: no equal
    centres), DG in delta^2; checked against posterior.log_marginal_likelihood at a few of its points."""
    om = CentreSpace.from_data(X1, PRIOR1.iota); lo, hi = om.lo[0], om.hi[0]
    g1 = lo + (hi - lo) * (np.arange(n1) + 0.5) / n1
    g2 = lo + (hi - lo) * (np.arange(n2) + 0.5) / n2
    sets = [[np.empty((0, 1))], [np.array([[a]]) for a in g1],
            [np.array([[a], [b]]) for a in g2 for b in g2 - 0.25 * (hi - lo) / n2]]
    grids = [np.array([_lml_rows(design_matrix(X1, s, BASIS1, WIDTH1), Y1) for s in S]) for S in sets]
    D0 = design_matrix(X1, sets[2][7], BASIS1, WIDTH1)
    const = log_marginal_likelihood(D0, Y1, DG[30], PRIOR1) - grids[2][7, 30]
    for k, i, j in ((0, 0, 5), (1, 11, 40), (2, 300, 66), (2, 1599, 0)):
        ref = log_marginal_likelihood(design_matrix(X1, sets[k][i], BASIS1, WIDTH1), Y1, DG[j], PRIOR1)
        np.testing.assert_allclose(grids[k][i, j] + const, ref, rtol=1e-10)
    return [g + const for g in grids]


def _exact_pk(beta, prior=PRIOR1):
    "p_beta(k | y), k = 0, 1, 2, with the trapezoid rule in log delta^2 over its prior given k."
    out = []
    for k, g in enumerate(_lml_grid()):
        v = special.logsumexp(beta * g, axis=0) - math.log(len(g))
        v = special.logsumexp(v + log_delta2_prior(DG, prior, k) + np.log(DG)) + math.log(np.diff(np.log(DG))[0])
        out.append(float(log_k_prior(k, LAM1, 2)) + float(v))
    out = np.array(out)
    return np.exp(out - special.logsumexp(out))


def _pk(ks):
    return np.bincount(ks, minlength=3)[:3] / len(ks)


def test_c_chain_matches_enumeration():
    exact = _exact_pk(1.0)
    # the check can tell the per-basis prior from the plain one on this problem
    assert np.max(np.abs(exact - _exact_pk(1.0, PRIOR1.replace(delta2_per_basis=False)))) > 5 * TOL
    cfg = RJConfig(n_iter=150_000, burn_in=1000, fix_Lambda=LAM1)
    tr = sample_rjmcmc(X1, Y1, prior=PRIOR1, config=cfg, rng=np.random.default_rng(1), basis=BASIS1, width=WIDTH1)
    np.testing.assert_allclose(_pk(tr.k[1000:]), exact, atol=TOL)


def test_tempered_core_matches_enumeration():
    """One core at beta = 1/2: delta^2 by its random walk under the prior given k, and every move's prior ratio
    left untempered."""
    exact = _exact_pk(0.5)
    _, k = run_core_at(0.5, PRIOR1)
    np.testing.assert_allclose(_pk(k[1000:]), exact, atol=TOL)


def test_log_posterior_matches_dense():
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(0, 1, 25))[:, None]
    y = np.sin(6 * x[:, 0]) + 0.3 * rng.normal(size=25)
    prior = RBFPrior(k_max=6, coef_prior="ridge", beta_delta2=30.0, delta2_per_basis=True)
    tr = sample_rjmcmc(x, y, prior=prior, config=RJConfig(n_iter=400, burn_in=200, thin=5),
                       rng=np.random.default_rng(0), basis="gaussian", width=0.2)
    assert len(set(tr.k[tr.kept])) > 1       # several k: the prior's scale given k is exercised
    for s, it in enumerate(tr.kept):
        dense = log_posterior(x, y, tr.sample_centres(s), tr.Lambda[it], tr.delta2[it], prior, "gaussian", 0.2)
        np.testing.assert_allclose(tr.log_posterior[it], dense, rtol=1e-9)


def test_bad_flag_is_named():
    with pytest.raises(TypeError, match="delta2_per_basis must be True or False"):
        RBFPrior(delta2_per_basis="yes")
