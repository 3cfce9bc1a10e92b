"""TD-SMC: consistency against exact enumeration, resampling unbiasedness, sequential = batch, errors."""
import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from rbf_bayes.smc import RESAMPLING, SMCRegressor, TDSMC, kernel_matrix, resample


def _exact_pk(x, y, s2y, s2b, lam, kmax, width):
    t = len(x)
    lw, ks = [], []
    for k in range(min(kmax, t) + 1):
        for S in itertools.combinations(range(t), k):
            K = kernel_matrix(x, x[list(S)], "gaussian", width)
            ll = stats.multivariate_normal(np.zeros(t), s2y * np.eye(t) + s2b * K @ K.T).logpdf(y)
            lw.append(ll + k * math.log(lam) - special.gammaln(k + 1) - math.log(math.comb(t, k)))
            ks.append(k)
    w = np.exp(np.array(lw) - special.logsumexp(lw))
    return np.array([w[np.array(ks) == k].sum() for k in range(kmax + 1)])


def test_particles_converge_to_the_exact_posterior():
    x = np.linspace(-2, 2, 6)[:, None]
    y = np.array([0.3, -0.2, 0.9, 1.1, 0.1, -0.4])
    exact = _exact_pk(x, y, 0.1, 1.0, 1.5, 3, 1.0)
    runs = []
    for s in range(6):
        smc = TDSMC(3000, "gaussian", 1.0, lam=1.5, k_max=3, fix_variances=(0.1, 1.0), capacity=6,
                    rng=np.random.default_rng(s)).partial_fit(x, y)
        pk = np.zeros(4)
        pk[:len(smc.p_k())] = smc.p_k()
        runs.append(pk)
    runs = np.array(runs)
    se = runs.std(0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(0) - exact) < 4 * se + 0.01), (runs.mean(0), exact)


@pytest.mark.parametrize("scheme", RESAMPLING)
def test_resampling_is_unbiased(scheme):
    w = np.array([0.5, 0.01, 0.19, 0.3])
    r = np.random.default_rng(1)
    counts = np.mean([np.bincount(resample(w, scheme, r), minlength=4) for _ in range(20_000)], axis=0)
    np.testing.assert_allclose(counts, 4 * w, atol=0.03)


def test_partial_fit_equals_fit_and_reproducible():
    x = np.linspace(-5, 5, 30)[:, None]
    y = np.sinc(x[:, 0] / np.pi) + 0.1 * np.random.default_rng(0).normal(size=30)
    a = SMCRegressor(60, width=1.6, shuffle=False, capacity=30, random_state=5).partial_fit(x[:10], y[:10])
    a.partial_fit(x[10:], y[10:])
    b = SMCRegressor(60, width=1.6, shuffle=False, capacity=30, random_state=5).fit(x, y)
    np.testing.assert_allclose(a.predict(x), b.predict(x))
    c = SMCRegressor(60, width=1.6, random_state=9).fit(x, y)
    d = SMCRegressor(60, width=1.6, random_state=9).fit(x, y)
    np.testing.assert_array_equal(c.predict(x), d.predict(x))


def test_errors():
    with pytest.raises(ValueError, match="n_particles must be an integer >= 1"):
        TDSMC(0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        TDSMC(10, rng=3)
    with pytest.raises(ValueError, match="capacity of 3 observations reached"):
        TDSMC(5, capacity=3, rng=np.random.default_rng(0)).partial_fit(np.zeros((4, 1)) + np.arange(4)[:, None], np.zeros(4))
    with pytest.raises(ValueError, match="ess_threshold must be in"):
        TDSMC(5, ess_threshold=2.0, rng=np.random.default_rng(0))
