"""Convergence diagnostics (nbs/08_convergence) equal ArviZ's on the same draws, and a quantity that never moves is said
to have not moved (undefined R-hat, zero ESS), never reported as perfectly mixed."""
import math
import warnings

import numpy as np
import pytest

from rbf_bayes.convergence import ess, ess_tail, mcse_mean, psis, psis_loo, rhat
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc

with warnings.catch_warnings():
    warnings.simplefilter("ignore")      # ArviZ 0.2x announces its refactor with a FutureWarning at import
    az = pytest.importorskip("arviz")


def _draws():
    rng = np.random.default_rng(0)
    ar = np.zeros((4, 1001)); e = rng.standard_normal((4, 1001))
    for t in range(1, 1001): ar[:, t] = 0.9 * ar[:, t - 1] + e[:, t]
    return {
        "AR(1) 0.9, odd length": ar,
        "iid": rng.standard_normal((4, 500)),
        "k-like integers": rng.poisson(3, (4, 600)).astype(float),
        "shifted chain": rng.standard_normal((4, 400)) + np.array([0, 0, 0, 0.5])[:, None],
        "random walk": np.cumsum(rng.standard_normal((3, 800)), axis=1),
        "two chains": rng.exponential(size=(2, 333)),
    }


@pytest.mark.parametrize("name", list(_draws()))
def test_equal_to_arviz(name):
    c = _draws()[name]
    for ours, theirs in ((rhat(c), az.rhat(c, method="rank")), (ess(c), az.ess(c, method="bulk")),
                         (ess_tail(c), az.ess(c, method="tail")), (mcse_mean(c), az.mcse(c, method="mean"))):
        np.testing.assert_allclose(ours, float(theirs), rtol=1e-6, err_msg=name)


def test_never_moving_quantity_is_undefined_not_perfect():
    c = np.full((4, 500), 12.0)
    assert math.isnan(rhat(c)) and ess(c) == 0 and ess_tail(c) == 0 and math.isnan(mcse_mean(c))


def test_stuck_chain_is_said_in_words():
    x = np.random.default_rng(0).uniform(size=(40, 1)); y = np.sin(6 * x[:, 0])
    cfg = RJConfig(n_iter=600, burn_in=100, moves=("update",))
    tr = sample_rjmcmc(x, y, config=cfg, rng=np.random.default_rng(1), init={"centres": [[0.3], [0.7]]})
    s = str(tr.summary())
    assert "did not move" in s and "k constant" not in s


@pytest.mark.parametrize("shape", [(4000, 30), (800, 12), (60, 7)])
def test_psis_equals_arviz(shape):
    """Pareto-smoothed log weights and k-hat equal ArviZ's psislw (r_eff 1) on the same log ratios, for tails light
    and heavy (t with 3-5 degrees of freedom, scaled) and for few draws (60: a tail of 12)."""
    rng = np.random.default_rng(shape[0])
    for t in range(3):
        ll = rng.standard_t(3 + t, size=shape) * (0.5 + t) - 2
        lw_az, k_az = az.psislw(-ll.T)
        for i in range(shape[1]):
            lw, k = psis(-ll[:, i])
            np.testing.assert_allclose(lw, np.asarray(lw_az)[i], rtol=0, atol=1e-10)
            assert k == pytest.approx(float(np.asarray(k_az)[i]), abs=1e-10)


def test_psis_loo_equals_arviz_on_a_fit():
    """psis_loo of a fitted model's pointwise log-likelihood equals az.loo (reff=1) of to_arviz's: the sum, p_loo,
    each term and each k-hat; the standard error is sqrt(n var(elpd_i)) with the unbiased variance (as the authors' R
    package loo computes it), ArviZ's with ddof 0: ours is its times sqrt(n / (n - 1))."""
    from rbf_bayes import RJMCMCRegressor
    from rbf_bayes.datasets import sinc_data
    D = sinc_data(np.random.default_rng(0))
    m = RJMCMCRegressor(n_iter=2000, burn_in=1000, n_chains=2, random_state=0).fit(D.x, D.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # ArviZ's own k-hat warning
        idata = m.to_arviz(D.x, D.y)
        ref = az.loo(idata, pointwise=True, reff=1.0)
    ll = np.asarray(idata.log_likelihood["y"]).reshape(-1, len(D.y))
    ours = psis_loo(ll)
    assert ours.elpd == pytest.approx(float(ref.elpd_loo), abs=1e-8)
    n = len(D.y)
    assert ours.se == pytest.approx(float(ref.se) * np.sqrt(n / (n - 1)), abs=1e-8)
    assert ours.p_loo == pytest.approx(float(ref.p_loo), abs=1e-8)
    np.testing.assert_allclose(ours.pareto_k, np.asarray(ref.pareto_k), atol=1e-8)
    np.testing.assert_allclose(ours.pointwise, np.asarray(ref.loo_i), atol=1e-8)
