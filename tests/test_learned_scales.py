"""Learned per-input scales (nbs/05d_learned_basis, issue 15): the kernel's rebuild path, prior recovery (and that a
wrong ratio is caught), the C loop against the reference, the estimator's attributes, save/load and chains."""
import math
import warnings

import numpy as np
import numpy.testing as npt
import pytest
from scipy import stats

from rbf_bayes.basis import design_matrix
from rbf_bayes.estimators import RJMCMCRegressor
from rbf_bayes.kernel import rbf_state
from rbf_bayes.priors import RBFPrior
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc, sample_rjmcmc_reference

P_MIN = 1e-3


@pytest.mark.parametrize("coef_prior", ["g", "ridge"])
def test_rebuild_equals_direct_and_reject_keeps_state(coef_prior):
    rng = np.random.default_rng(0)
    x, Y, C = rng.uniform(size=(40, 3)), rng.normal(size=(40, 2)), rng.uniform(size=(5, 3))
    pr = RBFPrior(coef_prior=coef_prior)
    st = rbf_state(x, Y, C, "multiquadric", 0.7, np.array([2.0, 9.0]), pr, m_max=15)
    with pytest.raises(RuntimeError, match="enable_rebuild"):
        st.propose_rebuild(4, np.zeros((5, 40)))
    st.enable_rebuild()
    before = (st.explained.copy(), st.logdet.copy(), st.gram().copy())
    D = design_matrix(x, C, "multiquadric", 0.7, [0.2, 1.0, 3.0])
    assert st.propose_rebuild(4, D[:, 4:].T)
    st.reject()
    npt.assert_array_equal(st.explained, before[0]); npt.assert_array_equal(st.gram(), before[2])
    assert st.rebuild(4, D[:, 4:].T)
    ref = rbf_state(x, Y, np.empty((0, 3)), "multiquadric", 0.7, np.array([2.0, 9.0]), pr, m_max=15)
    for j in range(4, 9): ref.append(D[:, j])
    npt.assert_allclose(st.explained, ref.explained, rtol=1e-10)
    npt.assert_allclose(st.logdet, ref.logdet, rtol=1e-10)
    # the state keeps working incrementally after a rebuild
    v = design_matrix(x, rng.uniform(size=(1, 3)), "multiquadric", 0.7, [0.2, 1.0, 3.0])[:, -1]
    st.append(v); ref.append(v)
    npt.assert_allclose(st.explained, ref.explained, rtol=1e-10)
    with pytest.raises(ValueError, match="cols"):
        st.propose_rebuild(4, np.zeros((12, 40)))          # more than m_max columns
    # a rebuild may change the number of columns (input selection drops or adds a linear column): = direct
    assert st.rebuild(0, np.delete(D, 2, axis=1)[:, :6].T) and st.m == 6
    ref = rbf_state(x, Y, np.empty((0, 3)), "multiquadric", 0.7, np.array([2.0, 9.0]), pr, m_max=15)
    ref.delete(2)
    for j in range(4, 7): ref.append(D[:, j])
    npt.assert_allclose(st.explained, ref.explained, rtol=1e-10)
    npt.assert_allclose(st.logdet, ref.logdet, rtol=1e-10)


def test_rebuild_of_a_singular_design_is_refused():
    rng = np.random.default_rng(1)
    x, y, C = rng.uniform(size=(30, 2)), rng.normal(size=30), rng.uniform(size=(2, 2))
    st = rbf_state(x, y, C, "gaussian", 0.3, 1.0, RBFPrior(), m_max=8); st.enable_rebuild()
    ex = st.explained.copy()
    cols = design_matrix(x, C, "gaussian", 0.3)[:, 3:].T.copy(); cols[1] = cols[0]   # two equal columns
    assert not st.propose_rebuild(3, cols)
    npt.assert_array_equal(st.explained, ex)


def _prior_theta(walk_in_s=False, tau=1.0, seed=3):
    x = np.random.default_rng(0).uniform(size=(30, 2)); y = np.random.default_rng(1).normal(size=30)
    cfg = RJConfig(
        n_iter=80_000, burn_in=1000, thin=40, prior_only=True, fix_Lambda=2.0, learn_scales=True, scale_step=0.8
    )
    tr = sample_rjmcmc(x, y, prior=RBFPrior(k_max=6, log_scale_sd=tau), config=cfg, rng=np.random.default_rng(seed),
                       basis="gaussian", width=0.3)
    return np.log(tr.scales)


def test_prior_recovery_of_the_scales():
    for tau in (1.0, 0.4):
        th = _prior_theta(tau=tau)
        for i in range(2):
            assert stats.kstest(th[:, i], stats.norm(0, tau).cdf).pvalue > P_MIN


def test_a_wrong_prior_would_be_caught():
    """The check can fail: the draws of a chain with log_scale_sd = 1 are not N(0, 0.7^2) (the KS test rejects)."""
    th = _prior_theta(tau=1.0)
    assert stats.kstest(th[:, 0], stats.norm(0, 0.7).cdf).pvalue < P_MIN


def test_c_and_reference_agree_in_distribution():
    rng = np.random.default_rng(11)
    x = rng.uniform(size=(25, 2)); y = np.sin(6 * x[:, 0]) + 0.3 * rng.normal(size=25)
    cfg = RJConfig(n_iter=2500, burn_in=500, thin=10, rw_var=0.01, learn_scales=True)
    out = {}
    for name, fn in (("c", sample_rjmcmc), ("r", sample_rjmcmc_reference)):
        rows = []
        for seed in range(6):
            t = fn(
                x,
                y,
                prior=RBFPrior(k_max=5),
                config=cfg,
                rng=np.random.default_rng(3000 + seed),
                basis="gaussian",
                width=1.0,
            )
            pa = t.meta["scale_acceptance"]
            rows.append(np.concatenate([[t.k[500:].mean()], np.log(t.scales).mean(0), [pa[1] / pa[0]]]))
        out[name] = np.array(rows)
    a, b = out["c"], out["r"]
    se = np.sqrt(a.var(0, ddof=1) / 6 + b.var(0, ddof=1) / 6)
    assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4.5 * se), (a.mean(0), b.mean(0), se)
    assert a.mean(0)[1] > a.mean(0)[2] + 0.5     # the relevant input's scale is clearly the larger


def test_same_seed_same_chain_and_chunking():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(40, 2)); y = np.cos(4 * x[:, 1]) + 0.1 * rng.normal(size=40)
    run = lambda cs: sample_rjmcmc(
        x,
        y,
        config=RJConfig(n_iter=1500, burn_in=100, thin=7, chunk_size=cs, learn_scales=True),  # noqa: E731
        rng=np.random.default_rng(4),
        basis="gaussian",
        width=0.5,
    )
    a, b = run(200), run(1500)
    npt.assert_array_equal(a.log_posterior, b.log_posterior); npt.assert_array_equal(a.scales, b.scales)


def test_scales_off_is_the_old_chain():
    """learn_scales=False leaves the chain exactly as before: same draws as a run that never heard of scales."""
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(40, 2)); y = np.cos(4 * x[:, 1]) + 0.1 * rng.normal(size=40)
    a = sample_rjmcmc(
        x, y, config=RJConfig(n_iter=800, burn_in=100), rng=np.random.default_rng(6), basis="gaussian", width=0.5
    )
    b = sample_rjmcmc(x, y, config=RJConfig(n_iter=800, burn_in=100, learn_scales=False), rng=np.random.default_rng(6),
                      basis="gaussian", width=0.5, init={})
    npt.assert_array_equal(a.log_posterior, b.log_posterior)
    assert a.scales is None and "scale_acceptance" not in a.meta


def test_bad_scale_arguments_name_themselves():
    x = np.random.default_rng(0).uniform(size=(20, 2))
    y = np.sin(5 * x[:, 0]) + np.random.default_rng(1).normal(size=20)
    with pytest.raises(ValueError, match="scale_step"):
        RJConfig(learn_scales=True, scale_step=0.0)
    with pytest.raises(ValueError, match="log_scale_sd"):
        RBFPrior(log_scale_sd=-1.0)
    with pytest.raises(ValueError, match=r"init\['scales'\]"):
        sample_rjmcmc(x, y, config=RJConfig(n_iter=10, burn_in=1, learn_scales=True), rng=np.random.default_rng(0),
                      init={"scales": [1.0, -2.0]})
    with pytest.raises(ValueError, match="learn_scales"):
        sample_rjmcmc(
            x, y, config=RJConfig(n_iter=10, burn_in=1), rng=np.random.default_rng(0), init={"scales": [1.0, 2.0]}
        )
    with pytest.raises(TypeError, match="learn_scales"):
        RJMCMCRegressor(learn_scales="yes").fit(x, y)


def test_estimator_attributes_save_load_and_chains(tmp_path):
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(120, 3)); y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=120)
    m = RJMCMCRegressor(basis="gaussian", n_iter=3000, burn_in=1500, learn_scales=True, select_inputs=False,
                        random_state=0).fit(X, y)          # the scales alone (the default also selects inputs)
    assert m.input_scales_.shape == (3,) and m.input_scales_[0] > 2 * max(m.input_scales_[1:])
    assert "input scales" in str(m.summary())
    p = tmp_path / "m.npz"; m.save(p)
    m2 = RJMCMCRegressor.load(p)
    npt.assert_array_equal(m2.input_scales_, m.input_scales_)
    npt.assert_allclose(m2.predict(X[:10]), m.predict(X[:10]), rtol=1e-12)
    # prediction uses each sample's own scales: the same samples with scales set to 1 predict differently
    tr1 = m.trace_.__class__(
        **{**{f: getattr(m.trace_, f) for f in m.trace_.__dataclass_fields__}, "scales": np.ones_like(m.trace_.scales)}
    )
    assert not np.allclose(tr1.predict(m._scale_x(X[:10])), m.trace_.predict(m._scale_x(X[:10])))
    # chains pool the scales
    mc = RJMCMCRegressor(basis="gaussian", n_iter=1000, burn_in=500, learn_scales=True, select_inputs=False, n_chains=2,
                         n_jobs=2, random_state=0).fit(X, y)
    assert mc.trace_.scales.shape == (mc.trace_.n_samples, 3)
    assert not hasattr(RJMCMCRegressor(n_iter=200, burn_in=100, learn_scales=False).fit(X, y), "input_scales_")
    assert math.isfinite(float(mc.predict(X[:3])[0]))


def test_default_selects_inputs_with_learned_scales():
    """select_inputs=None (the default): input selection with the learned scales (the default model) on three inputs or
    more, none on one or two, none without learned scales (the paper's model); a bool says it explicitly; anything else
    is a TypeError naming the argument. Of the model on the inputs alone (quadratic=False): since stop 79 the stacked
    default's own fit on these data is the products' (nine model inputs, `test_quadratic`)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(60, 3)); y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=60)
    fit = lambda **kw: RJMCMCRegressor(n_iter=400, burn_in=200, n_chains=1, random_state=0, quadratic=False,  # noqa: E731
                                       **kw).fit(X, y)
    m = fit()
    assert m.select_inputs is None and m.input_relevance_.shape == (3,) and "input_acceptance" in m.trace_.meta
    for kw in (dict(learn_scales=False), dict(select_inputs=False)):
        assert not hasattr(fit(**kw), "input_relevance_"), kw
    assert fit(learn_scales=False, select_inputs=True).input_relevance_.shape == (3,)
    two = RJMCMCRegressor(n_iter=400, burn_in=200, n_chains=1, random_state=0, quadratic=False).fit(X[:, :2], y)
    assert not hasattr(two, "input_relevance_") and "input_acceptance" not in two.trace_.meta
    assert RJMCMCRegressor(n_iter=400, burn_in=200, n_chains=1, select_inputs=True, random_state=0,
                           quadratic=False).fit(X[:, :2], y).input_relevance_.shape == (2,)
    with pytest.raises(TypeError, match="select_inputs"):
        fit(select_inputs="yes")


def _two_piece_cdf(lo, up):
    "The CDF of the two-piece normal prior on theta = log s (mass 1/2 on each side of 0): Phi(t / sd(t))."
    return lambda t: stats.norm.cdf(t / np.where(t > 0, up, lo))


@pytest.mark.parametrize("fn", [sample_rjmcmc, sample_rjmcmc_reference])
def test_two_piece_scale_prior_recovered(fn):
    """log_scale_sd_up (05d, "A prior that narrows less"): with the likelihood off, the scale step (the walk crosses 0,
    where the sd changes: the ratio's log-sd term) and input selection's draw from the prior both give the two-piece
    normal, in the C loop and the reference; and the KS test tells it from the symmetric normal."""
    x = np.random.default_rng(0).uniform(size=(30, 2)); y = np.random.default_rng(1).normal(size=30)
    n = 80_000 if fn is sample_rjmcmc else 12_000
    pr = RBFPrior(k_max=6, log_scale_sd=1.0, log_scale_sd_up=0.4)
    for sel in (False, True):
        cfg = RJConfig(n_iter=n, burn_in=1000, thin=40 if fn is sample_rjmcmc else 10, prior_only=True, fix_Lambda=2.0,
                       learn_scales=True, scale_step=0.8, select_inputs=sel)
        tr = fn(x, y, prior=pr, config=cfg, rng=np.random.default_rng(7), basis="gaussian", width=0.3)
        for i in range(2):
            th = np.log(tr.scales[tr.scales[:, i] > 0, i])
            assert stats.kstest(th, _two_piece_cdf(1.0, 0.4)).pvalue > P_MIN, (sel, i)
    assert stats.kstest(th, stats.norm(0, 1.0).cdf).pvalue < P_MIN        # the check can fail


def test_two_piece_prior_density_and_the_symmetric_case():
    "log_scales_prior: the two-piece density integrates to 1; "
    "log_scale_sd_up = log_scale_sd is the normal, bit for bit."
    from scipy import integrate

    from rbf_bayes.priors import log_scales_prior
    pr = RBFPrior(log_scale_sd=1.0, log_scale_sd_up=0.4)
    total = integrate.quad(lambda t: math.exp(log_scales_prior([math.exp(t)], pr)), -12, 12, points=[0.0])[0]
    assert abs(total - 1.0) < 1e-8
    s = np.array([0.3, 1.0, 2.5])
    assert log_scales_prior(s, RBFPrior(log_scale_sd=0.7, log_scale_sd_up=0.7)) == pytest.approx(
        log_scales_prior(s, RBFPrior(log_scale_sd=0.7)), rel=1e-15)
    with pytest.raises(ValueError, match="log_scale_sd_up"):
        RBFPrior(log_scale_sd_up=0.0)


def test_the_summary_says_which_inputs_the_chains_disagree_on():
    """Stop 88: Boston's chains disagree on which inputs are in and at what scale (12_estimators, "What holds Boston's
    chains apart"), and until now only a scratch script said which. The summary gives each input's split-R-hat of its
    scale draws (0 while it is out) across the chains, and a note naming the inputs above RHAT_ALARM with each chain's
    share of draws holding them in. Checked on a short fit whose chains agree (no note), then on the same trace with
    one input held out by the first chain only and another at a scale 20 times larger in it (both named; the
    agreeing input not)."""
    rng = np.random.default_rng(0)
    z = rng.uniform(-2, 2, 120)
    X = np.column_stack([z + 0.01 * rng.normal(size=120), z + 0.01 * rng.normal(size=120), rng.normal(size=120)])
    y = np.sin(2 * z) + 0.1 * rng.normal(size=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = RJMCMCRegressor(quadratic=False, n_iter=4000, random_state=1, n_temps=1).fit(X, y)
    tr = m.trace_
    s = m.summary()
    row = dict(s.rows)["scales' split R-hat"]
    assert row.startswith("x0 ") and "x2 " in row
    assert not any("disagree on the inputs" in n for n in s.notes)
    by = tr.kept_by_chain(tr.meta.burn_in)
    sc = tr.scales.copy()
    sc[by[0], 2] = 0.0                    # x2: out in chain 0 only
    sc[np.concatenate(by[1:]), 2] = 0.5   # in elsewhere
    sc[by[0], 1] *= 20.0                  # x1: in everywhere, 20 times sharper in chain 0
    tr.scales = sc
    notes = [n for n in tr.summary().notes if "disagree on the inputs" in n]
    assert len(notes) == 1, tr.summary().notes
    said = notes[0]
    assert "x2 (R-hat" in said and "in 0.00, 1.00, 1.00, 1.00 of each chain's draws" in said
    assert "x1 (R-hat" in said and "x0 (R-hat" not in said
