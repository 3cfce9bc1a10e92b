"""Convergence diagnostics (nbs/08_convergence) equal ArviZ's on the same draws, and a quantity that never moves is said
to have not moved (undefined R-hat, zero ESS), never reported as perfectly mixed."""
import math
import warnings

import numpy as np
import pytest

from rbf_bayes.convergence import ess, ess_tail, mcse_mean, rhat
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
