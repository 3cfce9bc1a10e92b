"""The learned scales' zoom about a data point (nbs/05d_learned_basis, "A zoom about a data point"): prior recovery in
the C loop and the reference (and that the check catches a zoom without its Jacobian), the share 0 is the chain
without zooms, same seed same chain, zooms only in the tempered ladder's hot replicas (zoom_hot), bad arguments."""
import math

import numpy as np
import numpy.testing as npt
import pytest
from scipy import stats

import rbf_bayes.rjmcmc as rj
from rbf_bayes.priors import RBFPrior
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc, sample_rjmcmc_reference

P_MIN = 1e-3
X = np.random.default_rng(0).uniform(size=(30, 2))
Y = np.random.default_rng(1).normal(size=30)


def _prior_run(fn, n, select=False, prior=None):
    cfg = RJConfig(n_iter=n, burn_in=1000, thin=40, prior_only=True, fix_Lambda=2.0, learn_scales=True,
                   scale_step=0.8, select_inputs=select, scale_zoom=0.5, zoom_step=1.0)
    return fn(X, Y, prior=prior or RBFPrior(k_max=6), config=cfg, rng=np.random.default_rng(7), basis="gaussian",
              width=0.3)


def test_prior_recovered_with_zooms_and_input_selection():
    """Likelihood off, half the scale steps zooms, in the C loop: each log scale ~ N(0, 1), each centre coordinate
    uniform on Omega, without and with input selection (the zoom's input among those in). The reference and the
    near/far centre prior: 05d's check 4b."""
    pr = RBFPrior(k_max=6)
    om = pr.centre_space(X)
    for sel in (False, True):
        tr = _prior_run(sample_rjmcmc, 120_000, sel, pr)
        assert tr.meta.zoom_acceptance[0] > 0.4 * len(tr.k) and tr.meta.zoom_acceptance[1] > 0
        for i in range(2):
            on = tr.scales[:, i] > 0
            assert stats.kstest(np.log(tr.scales[on, i]), stats.norm(0, 1).cdf).pvalue > P_MIN, (sel, i)
            u = stats.uniform(om.lo[i], om.hi[i] - om.lo[i])
            assert stats.kstest(tr.centres[:, i], u.cdf).pvalue > P_MIN, (sel, i)


def _zoom_without_jacobian(m, st, rng):
    "The reference's zoom with the factor exp(-k eps) left out (everything else as `_ref_zoom`)."
    j = rng.integers(m.d)
    c = m.x[rng.integers(m.N), j]
    eps = m.config.zoom_step * rng.standard_normal()
    S1 = st.S.copy()
    S1[:, j] = c + (S1[:, j] - c) * math.exp(-eps)
    lcr = float(m.om.log_density(S1).sum() - m.om.log_density(st.S).sum())
    if not np.isfinite(lcr):
        return
    t0, t1 = st.th[j], st.th[j] + eps
    if math.log(rng.random()) < lcr + 0.5 * (t0**2 - t1**2):
        st.th[j], st.S = t1, S1
        st.sc = st.sc.copy()
        st.sc[j] = math.exp(t1)


def test_a_zoom_without_its_jacobian_is_caught(monkeypatch):
    """The check can fail: without exp(-k eps) the log scales drift off their prior and the KS test rejects."""
    monkeypatch.setattr(rj, "_ref_zoom", _zoom_without_jacobian)
    tr = _prior_run(sample_rjmcmc_reference, 20_000)
    assert max(stats.kstest(np.log(tr.scales[:, i]), stats.norm(0, 1).cdf).pvalue for i in range(2)) < 1e-6


def test_share_zero_is_the_chain_without_zooms():
    """scale_zoom=0 draws nothing for the zoom: the chain is the plain scale step's, draw for draw (any zoom_step)."""
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(40, 2)); y = np.cos(4 * x[:, 1]) + 0.1 * rng.normal(size=40)
    run = lambda **kw: sample_rjmcmc(x, y, config=RJConfig(n_iter=800, burn_in=100, learn_scales=True, **kw),  # noqa: E731
                                     rng=np.random.default_rng(6), basis="gaussian", width=0.5)
    a, b = run(), run(scale_zoom=0.0, zoom_step=3.0)
    npt.assert_array_equal(a.log_posterior, b.log_posterior)
    npt.assert_array_equal(a.scales, b.scales)
    assert "zoom_acceptance" not in a.meta
    c = run(scale_zoom=0.3)
    assert not np.array_equal(a.log_posterior, c.log_posterior) and c.meta.zoom_acceptance[0] > 0


def test_same_seed_same_chain_and_chunking_with_zooms():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(40, 2)); y = np.cos(4 * x[:, 1]) + 0.1 * rng.normal(size=40)
    run = lambda cs: sample_rjmcmc(  # noqa: E731
        x, y, config=RJConfig(n_iter=1500, burn_in=100, thin=7, chunk_size=cs, learn_scales=True, scale_zoom=0.4),
        rng=np.random.default_rng(4), basis="gaussian", width=0.5)
    a, b = run(200), run(1500)
    npt.assert_array_equal(a.log_posterior, b.log_posterior)
    npt.assert_array_equal(a.scales, b.scales)
    npt.assert_array_equal(a.centres, b.centres)
    assert a.meta.zoom_acceptance == b.meta.zoom_acceptance


def test_zooms_run_on_the_tempered_ladder_with_input_selection():
    """Four replicas and input selection: the cold chain proposes and accepts zooms (not all) and its log posterior
    stays finite."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (60, 3)); y = np.sin(2 * x[:, 0]) + 0.2 * rng.standard_normal(60)
    cfg = RJConfig(n_iter=1200, burn_in=200, learn_scales=True, select_inputs=True, n_temps=4, scale_zoom=0.5)
    tr = sample_rjmcmc(x, y, config=cfg, rng=np.random.default_rng(9), basis="gaussian", width=1.0)
    za = tr.meta.zoom_acceptance
    assert za[0] > 300 and 0 < za[1] < za[0]
    assert np.isfinite(tr.log_posterior).all()


def test_bad_zoom_arguments_name_themselves():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="scale_zoom"):
            RJConfig(learn_scales=True, scale_zoom=bad)
    with pytest.raises(TypeError, match="scale_zoom"):
        RJConfig(learn_scales=True, scale_zoom="0.3")
    with pytest.raises(ValueError, match="zoom_step"):
        RJConfig(learn_scales=True, scale_zoom=0.3, zoom_step=0.0)


def test_zoom_hot_zooms_only_at_beta_below_one():
    """zoom_hot: the replica at beta = 1 takes the plain walk alone. The run's learned-step counts are its cold rung's
    (`meta.tempering["step_acceptance"]`: each rung's, whichever replica held it). With swaps every second iteration
    (accepted) the cold rung proposes no zoom, every one of its 1,200 scale steps is the plain walk, and the hot rungs
    zoom; without zoom_hot the cold rung zooms too. (Its correctness: 05d's check 4e.)"""
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (60, 3)); y = np.sin(2 * x[:, 0]) + 0.2 * rng.standard_normal(60)
    def run(hot):
        cfg = RJConfig(n_iter=1200, burn_in=200, learn_scales=True, select_inputs=True, n_temps=3, scale_zoom=0.5,
                       zoom_hot=hot, swap_every=2)
        return sample_rjmcmc(x, y, config=cfg, rng=np.random.default_rng(9), basis="gaussian", width=1.0)
    hot, plain = run(True), run(False)
    assert min(hot.meta.tempering["swap_rate"]) > 0.1
    steps = hot.meta.tempering["step_acceptance"]
    assert hot.meta.zoom_acceptance == steps[0]["zoom_acceptance"] == (0, 0)
    assert hot.meta.scale_acceptance == steps[0]["scale_acceptance"] and hot.meta.scale_acceptance[0] == 1200
    for r in (1, 2):
        assert steps[r]["zoom_acceptance"][0] > 400 and steps[r]["zoom_acceptance"][1] > 0
        assert steps[r]["zoom_acceptance"][0] + steps[r]["scale_acceptance"][0] == 1200
    assert plain.meta.zoom_acceptance[0] > 400
    assert plain.meta.zoom_acceptance[0] + plain.meta.scale_acceptance[0] == 1200
    assert np.isfinite(hot.log_posterior).all()


def test_prior_recovered_with_zooms_in_the_hot_replicas():
    """Likelihood off, three replicas, half the hot replicas' scale steps zooms, with input selection: the cold
    chain's log scales and centre coordinates follow their prior."""
    pr = RBFPrior(k_max=6)
    om = pr.centre_space(X)
    cfg = RJConfig(n_iter=100_000, burn_in=1000, thin=40, prior_only=True, fix_Lambda=2.0, learn_scales=True,
                   scale_step=0.8, select_inputs=True, scale_zoom=0.5, zoom_hot=True, n_temps=3)
    tr = sample_rjmcmc(X, Y, prior=pr, config=cfg, rng=np.random.default_rng(7), basis="gaussian", width=0.3)
    for i in range(2):
        on = tr.scales[:, i] > 0
        assert stats.kstest(np.log(tr.scales[on, i]), stats.norm(0, 1).cdf).pvalue > P_MIN, i
        u = stats.uniform(om.lo[i], om.hi[i] - om.lo[i])
        assert stats.kstest(tr.centres[:, i], u.cdf).pvalue > P_MIN, i


def test_bad_zoom_hot_arguments_name_themselves():
    with pytest.raises(ValueError, match="zoom_hot"):
        RJConfig(learn_scales=True, scale_zoom=0.3, zoom_hot=True)             # one replica: nothing is hot
    with pytest.raises(ValueError, match="zoom_hot"):
        RJConfig(learn_scales=True, n_temps=3, zoom_hot=True)                  # no zooms to place
    with pytest.raises(TypeError, match="zoom_hot"):
        RJConfig(learn_scales=True, scale_zoom=0.3, n_temps=3, zoom_hot="yes")


def test_the_regressor_zooms_by_default_and_only_with_learned_scales():
    """RJMCMCRegressor's default (learned scales) zooms: estimators.SCALE_ZOOM of its scale steps, of sd ZOOM_STEP, in
    its run's settings and counted in its meta; learn_scales=False (the paper's model) has no scale step to zoom, and
    its settings say 0; RJConfig's own default stays 0 (rjmcmc_run, the paper's sampler)."""
    from rbf_bayes import RJMCMCRegressor
    from rbf_bayes.estimators import SCALE_ZOOM, ZOOM_STEP
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (60, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    kw = dict(n_iter=600, burn_in=200, n_chains=1, quadratic=False, random_state=0)
    m = RJMCMCRegressor(**kw).fit(X, y)
    cfg = m.trace_.meta["config"]
    assert (SCALE_ZOOM, ZOOM_STEP) == (0.3, 1.0) and (cfg["scale_zoom"], cfg["zoom_step"]) == (SCALE_ZOOM, ZOOM_STEP)
    proposed, accepted = m.trace_.meta["zoom_acceptance"]
    assert 0.2 * 600 < proposed < 0.4 * 600 and 0 <= accepted <= proposed   # one scale step per iteration, 30 % zooms
    p = RJMCMCRegressor(learn_scales=False, **kw).fit(X, y)
    assert p.trace_.meta["config"]["scale_zoom"] == 0 and "zoom_acceptance" not in p.trace_.meta
    assert RJConfig().scale_zoom == 0


def test_the_regressors_scale_zoom_argument_sets_the_share_and_is_checked_by_name(tmp_path, monkeypatch):
    """RJMCMCRegressor(scale_zoom=...): 0 is the plain walk (the default until stop 101: no zoom proposed, the same
    chain, draw for draw, as the config without zooms), a share in (0, 1] is that share of the scale steps; it is a
    parameter (get_params, clone, the saved file's parameters); a share outside [0, 1], not a number, or above 0
    without learned scales (nothing to zoom) is an error naming it."""
    from sklearn.base import clone

    from rbf_bayes import RJMCMCRegressor, estimators
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (60, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    kw = dict(n_iter=600, burn_in=200, n_chains=1, quadratic=False, random_state=0)
    off = RJMCMCRegressor(scale_zoom=0, **kw).fit(X, y)
    assert off.trace_.meta["config"]["scale_zoom"] == 0 and "zoom_acceptance" not in off.trace_.meta
    monkeypatch.setattr(estimators, "SCALE_ZOOM", 0.0)   # the default of stop 100: no zooms
    old = RJMCMCRegressor(**kw).fit(X, y)
    monkeypatch.undo()
    npt.assert_array_equal(off.trace_.k, old.trace_.k)   # the chain without zooms, draw for draw
    npt.assert_array_equal(off.predict(X), old.predict(X))
    half = RJMCMCRegressor(scale_zoom=0.5, **kw).fit(X, y)
    proposed, _ = half.trace_.meta["zoom_acceptance"]
    assert half.trace_.meta["config"]["scale_zoom"] == 0.5 and 0.4 * 600 < proposed < 0.6 * 600
    assert clone(half).get_params()["scale_zoom"] == 0.5 and RJMCMCRegressor().scale_zoom is None
    back = RJMCMCRegressor.load(half.save(tmp_path / "h.npz"))
    assert back.scale_zoom == 0.5
    npt.assert_array_equal(back.predict(X[:5]), half.predict(X[:5]))
    for bad, err, msg in ((1.5, ValueError, r"scale_zoom must be in \[0, 1\]"), (-0.1, ValueError, "scale_zoom"),
                          ("0.3", TypeError, "scale_zoom"), (float("nan"), ValueError, "scale_zoom")):
        with pytest.raises(err, match=msg):
            RJMCMCRegressor(scale_zoom=bad, **kw).fit(X, y)
    with pytest.raises(ValueError, match="scale_zoom=0.3 zooms the learned scales, and learn_scales=False"):
        RJMCMCRegressor(scale_zoom=0.3, learn_scales=False, **kw).fit(X, y)
    assert RJMCMCRegressor(scale_zoom=0, learn_scales=False, **kw).fit(X, y).trace_.meta["config"]["scale_zoom"] == 0
