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


def _ladder_run(in_python: bool, R: int, w: int, thin: int, target, extend: int = 0):
    "A ladder run on Friedman #1 with its rounds in C (the default) or in Python (the reference)."
    import rbf_bayes.bmars as bm
    X = np.random.default_rng(3).uniform(size=(120, 5))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    y = y + np.random.default_rng(4).normal(size=120)
    run = bmars_run(X, y, n_iter=3000, burn_in=1000, thin=thin, rng=np.random.default_rng(5), n_temps=R,
                    swap_every=w, snapshot_target=target, chunk_size=333)
    assert isinstance(run, bm._BMARSLadder)
    run.in_python = in_python
    if extend:
        run.run(False)
        run.extend(extend)
    return run.run(False)


@pytest.mark.parametrize("R, w, thin, target, extend",
                         [(4, 10, 10, None, 0), (3, 7, 13, None, 0), (2, 1, 1, None, 0), (4, 10, 1, 40, 1234)])
def test_the_ladders_c_loop_equals_its_python_rounds_bit_for_bit(R, w, thin, target, extend):
    """`_bmars.ladder_run` (C) against `_BMARSRoundsInPython`: the same per-iteration records, snapshots (bases,
    coefficient draws, sigma^2: they draw from the shared generator, so a swap out of place would change them) and
    ladder, bit for bit, with rounds that straddle chunks and kept iterations, one-iteration rounds and an extended
    run."""
    a, b = (_ladder_run(ip, R, w, thin, target, extend) for ip in (False, True))
    for f in ("k", "log_marginal_likelihood", "lam", "move", "accepted", "kept", "sigma2"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert a.bases == b.bases
    assert all(np.array_equal(u, v) for u, v in zip(a.coef_draw, b.coef_draw, strict=True))
    assert a.meta.tempering == b.meta.tempering
    assert sum(a.meta.tempering["swap_proposed"]) > 0 and len(a.kept) > 10


def test_the_ladders_c_loop_refuses_mismatched_arrays():
    "ladder_run checks its arrays before it touches a core: a rung list of the wrong length is a ValueError."
    from rbf_bayes._bmars import ladder_run
    run = bmars_run(X6, Y6, prior=PR6, n_iter=100, burn_in=10, thin=1, rng=np.random.default_rng(0), n_temps=3)
    args = (run.betas, run.log_gap, run.n_swap, run.n_swap_acc, run.p_swap, 0, 10, 5, 0.3, *run.buf, 0)
    with pytest.raises(ValueError, match="ladder arrays"):
        ladder_run(run.cores, run.rung[:2].copy(), *args)
    with pytest.raises(ValueError, match="too short"):
        ladder_run(run.cores, run.rung, *args[:6], 10**6, *args[7:])
