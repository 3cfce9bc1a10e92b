"""Every kept draw's output at new inputs in C (`_kernel.draw_values`, nbs/05_rjmcmc.ipynb "Predicting with every kept
draw") against its specification, the design matrices D_s(x) times the draw's coefficients: on trace-like draws of
every basis, with and without learned scales (inputs left out) and a learned basis type, several outputs, draws with
no centres and runs of any length; and through the fitted estimators' predictions (regressor mean and sd, the
probit's and the discriminant's draws), which were computed from the designs until stop 69. Tolerances: the same sums
in another order, so agreement to rounding (1e-12 of the largest value)."""
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import special

from rbf_bayes import RJMCMCClassifier, RJMCMCRegressor
from rbf_bayes._kernel import draw_values
from rbf_bayes.basis import BASES
from rbf_bayes.rjmcmc import _DrawValues

RTOL = 1e-12


def _draws(basis, c, learned, seed, d=3, P=9, empty=(2,)):
    r = np.random.default_rng(seed)
    ks = r.integers(0, 6, P)
    ks[list(empty)] = 0
    co = np.concatenate([[0], np.cumsum(ks)])
    cf = np.concatenate([[0], np.cumsum(1 + d + ks)])
    t = SimpleNamespace(meta=SimpleNamespace(d=d, basis=basis, width=0.7), n_samples=P,
                        centres=r.normal(size=(co[-1], d)), centre_offsets=co, coef_draw=r.normal(size=(cf[-1], c)),
                        coef_offsets=cf, kinds=r.integers(0, len(BASES), P) if learned else None,
                        scales=r.uniform(0, 2, (P, d)) * (r.random((P, d)) > 0.3) if learned else None)
    t.sample_centres = lambda s: t.centres[co[s]:co[s + 1]]
    t._checked_inputs = lambda x: _DrawValues._checked_inputs(t, x)
    return t, r.normal(size=(25, d)) * 2


def _by_designs(t, x, coef):
    return np.stack([D @ coef[t.coef_offsets[s]:t.coef_offsets[s + 1]] for s, D in _DrawValues._designs(t, x)])


@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("c", [1, 2])
@pytest.mark.parametrize("learned", [False, True])
@pytest.mark.parametrize("budget", [1, 50, 1 << 22])   # one draw a run, two, all at once
def test_c_outputs_equal_the_designs(basis, c, learned, budget):
    for seed in range(3):
        t, x = _draws(basis, c, learned, seed)
        runs = list(_DrawValues._draw_values(t, x, t.coef_draw, budget=budget))
        assert runs[0][0] == 0 and runs[-1][1] == t.n_samples
        assert all(a[1] == b[0] for a, b in zip(runs, runs[1:], strict=False))   # consecutive, covering every draw
        got = np.concatenate([F for *_, F in runs])
        want = _by_designs(t, x, t.coef_draw)
        assert got.shape == want.shape == (t.n_samples, len(x), c)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def test_draw_with_no_centres_is_its_linear_part():
    t, x = _draws("cubic", 1, False, 5, empty=(0, 1, 2, 3, 4, 5, 6, 7, 8))
    F = np.concatenate([F for *_, F in _DrawValues._draw_values(t, x, t.coef_draw)])
    lin = np.stack([np.hstack([np.ones((len(x), 1)), x]) @ t.coef_draw[t.coef_offsets[s]:t.coef_offsets[s + 1]]
                    for s in range(t.n_samples)])
    np.testing.assert_allclose(F, lin, rtol=RTOL, atol=1e-14)


def test_no_rows_and_bad_calls():
    t, x = _draws("gaussian", 2, True, 1)
    F = draw_values(np.zeros((0, 3)), t.centres, t.centre_offsets, t.coef_draw, t.coef_offsets,
                    np.zeros(t.n_samples, np.int64), np.ones((t.n_samples, 3)), 0.7, 0, t.n_samples)
    assert F.shape == (t.n_samples, 0, 2)
    with pytest.raises(ValueError, match="x has 2 columns but the model was fitted with d=3"):
        next(_DrawValues._draw_values(t, x[:, :2], t.coef_draw))
    args = [x, t.centres, t.centre_offsets, t.coef_draw, t.coef_offsets, np.zeros(t.n_samples, np.int64),
            np.ones((t.n_samples, 3)), 0.7]
    with pytest.raises(ValueError, match="draws 0:10 of a trace with 9 kept draws"):
        draw_values(*args, 0, 10)
    bad = list(args)
    bad[5] = np.full(t.n_samples, len(BASES), np.int64)
    with pytest.raises(ValueError, match="basis code"):
        draw_values(*bad, 0, 3)
    bad = list(args)
    bad[4] = t.coef_offsets.copy()
    bad[4][1:] += 1
    with pytest.raises(ValueError, match="coefficient rows for"):
        draw_values(*bad, 0, 3)


@pytest.fixture(scope="module")
def fitted():
    r = np.random.default_rng(0)
    x = r.uniform(-2, 2, (120, 3))
    y = np.sin(x[:, 0]) + 0.5 * x[:, 1] ** 2 + 0.1 * r.normal(size=120)
    reg = RJMCMCRegressor(basis="auto", n_iter=3000, burn_in=1000, n_chains=1, random_state=1).fit(x, y)
    lab = (x[:, 0] + np.sin(2 * x[:, 1]) > 0).astype(int)
    pro = RJMCMCClassifier(n_iter=2000, burn_in=500, n_chains=1, random_state=2).fit(x, lab)
    dis = RJMCMCClassifier(link="discriminant", n_iter=2000, burn_in=500, n_chains=1, random_state=3).fit(x, lab)
    return x, reg, pro, dis


def test_regressor_predictions_equal_the_designs(fitted):
    x, reg, _, _ = fitted
    t = reg.trace_
    assert t.kinds is not None and t.scales is not None   # a learned basis type and learned scales
    xs = reg._scale_x(np.random.default_rng(9).uniform(-2, 2, (60, 3)))
    P = t.n_samples
    G = _by_designs(t, xs, t.coef_draw)
    mean = _by_designs(t, xs, t.coef_mean).mean(0)
    sd = np.sqrt(np.maximum((G * G).mean(0) - G.mean(0) ** 2, 0) + t.sigma2[t.kept].mean(0))
    m, s = t.predict(xs, return_std=True)
    np.testing.assert_allclose(m, mean, rtol=1e-10, atol=1e-12 * np.abs(mean).max())
    np.testing.assert_allclose(s, sd, rtol=1e-8)     # a difference of two sums of squares: rounding grows
    np.testing.assert_allclose(t.predict(xs), m, rtol=1e-13, atol=0)
    w, means, sds = t.predictive_mixture(xs)
    assert means.shape == (P, 60, 1) and np.allclose(w, 1 / P)
    np.testing.assert_allclose(means, G, rtol=RTOL, atol=RTOL * np.abs(G).max())


def test_classifier_draws_equal_the_designs(fitted):
    x, _, pro, dis = fitted
    xs = np.random.default_rng(8).uniform(-2, 2, (40, 3))
    t = pro.trace_
    F = _by_designs(t, pro._scale_x(xs), t.coef_draw)[:, :, 0]      # (P, n): the probit's latent draws
    np.testing.assert_allclose(pro.member_scores(xs), F, rtol=RTOL, atol=RTOL * np.abs(F).max())
    np.testing.assert_allclose(pro.predict_proba(xs)[:, 1], special.ndtr(F).mean(0), rtol=1e-12, atol=1e-15)
    t = dis.trace_
    f = _by_designs(t, dis._scale_x(xs), t.coef_draw)[:, :, 0] * dis.y_scale_[0] + dis.y_shift_[0]
    np.testing.assert_allclose(dis.member_scores(xs), f - 0.5, rtol=RTOL, atol=RTOL * np.abs(f).max())
    z = (f - 0.5) / (np.sqrt(t.sigma2[t.kept, 0]) * dis.y_scale_[0])[:, None]
    np.testing.assert_allclose(dis._discriminant_z(dis._scale_x(xs)), z.T, rtol=1e-11, atol=1e-12)
