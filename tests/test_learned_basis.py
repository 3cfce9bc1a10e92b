"""Input selection and the basis type as parameters (nbs/05d_learned_basis, issue 15): the exact posterior of the input
subsets by enumeration, prior recovery (and that a wrong prior is caught), chunking, the estimator's attributes,
save/load and pooled chains, and argument errors."""
import itertools
import math

import numpy as np
import numpy.testing as npt
import pytest
from scipy import stats

from rbf_bayes.basis import BASES
from rbf_bayes.estimators import RJMCMCRegressor
from rbf_bayes.posterior import log_marginal_likelihood
from rbf_bayes.priors import RBFPrior, log_inputs_prior
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc, sample_rjmcmc_reference

P_MIN = 1e-3


def _code(g):
    return int(np.dot(g, 1 << np.arange(len(g))))


def _subsets_match_enumeration(x, y, pr, delta2, n_iter, seed, fn=sample_rjmcmc, **config):
    """k = 0, delta^2 fixed: the chain's visits to the non-empty input subsets (thinned) against p(gamma | y) by
    enumeration (chi-square); returns the trace. `fn`: the C sampler or the reference; `config`: more of RJConfig."""
    N, d = x.shape
    cfg = RJConfig(n_iter=n_iter, burn_in=0, moves=("update",), select_inputs=True, fix_delta2=delta2, fix_Lambda=1.0,
                   **config)
    t = fn(x, y, prior=pr, config=cfg, rng=np.random.default_rng(seed), init={"centres": np.empty((0, d))})
    subsets = sorted((g for g in itertools.product([False, True], repeat=d) if any(g)), key=_code)
    lp = np.array([log_marginal_likelihood(np.column_stack([np.ones(N), x[:, list(np.flatnonzero(g))]]), y, delta2,
                                           pr) + log_inputs_prior(g, pr) for g in subsets])
    p = np.exp(lp - lp.max()); p /= p.sum()
    seen = np.bincount([_code(g) for g in t.scales[::25] > 0], minlength=2 ** d)[1:]
    assert stats.chisquare(seen, p * seen.sum()).pvalue > P_MIN, (seen / seen.sum(), p)
    return t


@pytest.mark.parametrize("coef_prior,pi", [("g", 0.5), ("ridge", 0.7)])
def test_input_subsets_match_enumeration(coef_prior, pi):
    "k = 0, delta^2 fixed: p(gamma | y) over the 3 non-empty subsets of 2 inputs is exact; the chain must match it."
    rng = np.random.default_rng(8)
    x = rng.normal(size=(30, 2)); y = 0.35 * x[:, 0] + rng.normal(size=30)
    t = _subsets_match_enumeration(x, y, RBFPrior(k_max=4, coef_prior=coef_prior, inclusion_prob=pi), 3.0, 40_000, 1)
    # the coefficients of an input that is out are stored as 0 in the full layout
    out = t.scales[:, 1] == 0
    assert out.any() and np.all(t.coef_mean.reshape(len(t.kept), 3)[out, 2] == 0)


def test_prior_recovery_of_indicators_and_types_and_a_wrong_prior_is_caught():
    x = np.random.default_rng(0).uniform(size=(25, 3)); y = np.random.default_rng(1).normal(size=25)
    cfg = RJConfig(n_iter=90_000, burn_in=1000, thin=40, prior_only=True, fix_Lambda=2.0, select_inputs=True,
                   learn_scales=True, scale_step=0.8, basis_types=("cubic", "gaussian", "thin_plate"))
    t = sample_rjmcmc(x, y, prior=RBFPrior(k_max=6, inclusion_prob=0.25), config=cfg, rng=np.random.default_rng(3))
    g = t.scales > 0
    seen = np.bincount([_code(r) for r in g], minlength=8)[1:]

    def law(pi):
        p = np.array([pi ** bin(c).count("1") * (1 - pi) ** (3 - bin(c).count("1")) for c in range(1, 8)])
        return p / p.sum()
    assert stats.chisquare(seen, law(0.25) * seen.sum()).pvalue > P_MIN
    assert stats.chisquare(seen, law(0.35) * seen.sum()).pvalue < P_MIN       # a wrong pi is seen
    kinds = np.bincount(t.kinds, minlength=len(BASES))[[BASES.index(b) for b in cfg.basis_types]]
    assert stats.chisquare(kinds).pvalue > P_MIN
    for i in range(3):
        assert stats.kstest(np.log(t.scales[g[:, i], i]), "norm").pvalue > P_MIN


def test_same_seed_same_chain_across_chunks_and_off_is_the_old_chain():
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(40, 3)); y = np.sin(5 * x[:, 0]) + 0.2 * rng.normal(size=40)

    def run(cs, **kw):
        cfg = RJConfig(n_iter=1200, burn_in=100, thin=7, chunk_size=cs, **kw)
        return sample_rjmcmc(x, y, config=cfg, rng=np.random.default_rng(2), basis="gaussian")
    kw = dict(select_inputs=True, learn_scales=True, basis_types=("gaussian", "multiquadric"))
    a, b = run(5000, **kw), run(97, **kw)
    for f in ("k", "log_posterior", "centres", "coef_mean", "scales", "kinds"):
        npt.assert_array_equal(getattr(a, f), getattr(b, f))
    old, off = run(500), run(500, select_inputs=False, basis_types=None)
    npt.assert_array_equal(old.log_posterior, off.log_posterior)
    assert off.kinds is None and off.scales is None


def test_estimator_relevance_types_save_load_and_chains(tmp_path):
    from rbf_bayes.datasets import friedman
    d = friedman(np.random.default_rng(0))            # x0 .. x4 enter, x5 does not
    m = RJMCMCRegressor(n_iter=6000, burn_in=2000, select_inputs=True, learn_scales=True, random_state=0).fit(d.x, d.y)
    r = m.input_relevance_   # per model input: the six columns, then their products where the default kept them
    assert r.shape == (len(m.model_inputs_),) and m.model_inputs_[:6] == [f"x{j}" for j in range(6)]
    assert np.all(r[:5] > 0.9) and r[5] < 0.1, r
    assert np.isfinite(m.input_scales_[:5]).all()
    rows = dict(m.summary().rows)
    assert "inclusion probability" in rows and "input in/out step" in rows
    m.save(tmp_path / "m.npz")
    npt.assert_array_equal(RJMCMCRegressor.load(tmp_path / "m.npz").predict(d.x[:20]), m.predict(d.x[:20]))
    a = RJMCMCRegressor(basis="auto", n_iter=3000, burn_in=1000, n_chains=2, n_jobs=2, random_state=1).fit(d.x, d.y)
    bp = a.basis_probabilities_
    assert set(bp) == {"cubic", "thin_plate", "multiquadric", "gaussian"} and math.isclose(sum(bp.values()), 1.0)
    assert a.trace_.kinds is not None and len(a.trace_.kinds) == a.trace_.n_samples
    assert "basis type" in dict(a.summary().rows)
    # prediction uses each sample's own type: forcing every sample to one type changes it
    p0 = a.predict(d.x[:10])
    a.trace_.kinds = np.full_like(a.trace_.kinds, BASES.index("gaussian" if bp["gaussian"] < 0.5 else "cubic"))
    assert not np.allclose(a.predict(d.x[:10]), p0)
    a.save(tmp_path / "a.npz")
    npt.assert_array_equal(RJMCMCRegressor.load(tmp_path / "a.npz").predict(d.x[:10]), a.predict(d.x[:10]))


@pytest.mark.parametrize("kw,exc,word", [
    (dict(config=dict(basis_types=("cubic",))), ValueError, "basis_types"),
    (dict(config=dict(basis_types=("cubic", "spline"))), ValueError, "basis_types"),
    (dict(config=dict(basis_types=("cubic", "cubic"))), ValueError, "basis_types"),
    (dict(config=dict(select_inputs="yes")), TypeError, "select_inputs"),
    (dict(prior=dict(inclusion_prob=1.0)), ValueError, "inclusion_prob"),
    (dict(prior=dict(inclusion_prob=0)), ValueError, "inclusion_prob"),
    (dict(config=dict(basis_types=("gaussian", "multiquadric"))), ValueError, "basis"),     # cubic is not among them
    (dict(config=dict(select_inputs=True), init=dict(inputs=[False, False])), ValueError, "inputs"),
    (dict(init=dict(inputs=[True, False])), ValueError, "select_inputs"),
])
def test_bad_arguments_name_themselves(kw, exc, word):
    x = np.random.default_rng(0).uniform(size=(20, 2)); y = x[:, 0] + np.random.default_rng(1).normal(size=20)
    with pytest.raises(exc, match=word):
        sample_rjmcmc(
            x,
            y,
            prior=RBFPrior(**kw.get("prior", {})),
            config=RJConfig(n_iter=50, burn_in=0, **kw.get("config", {})),
            rng=np.random.default_rng(0),
            basis="cubic",
            init=kw.get("init"),
        )


def test_estimator_select_inputs_must_be_bool():
    x = np.random.default_rng(0).uniform(size=(20, 2)); y = x[:, 0] + np.random.default_rng(1).normal(size=20)
    with pytest.raises(TypeError, match="select_inputs"):
        RJMCMCRegressor(select_inputs="yes", n_iter=50, burn_in=0).fit(x, y)


def test_sinc_seed6_learned_scale_stays_finite():
    """Regression: on this sinc data set the learned-scale Gaussian chain reached a cluster of nearly dependent bumps
    whose e the Cholesky of G got wrong by more than the residual; sigma^2 went negative and every prediction was
    NaN. The kernel's accuracy rule (nb 04) refuses such states."""
    from rbf_bayes.datasets import sinc_data
    d = sinc_data(np.random.default_rng(6))
    m = RJMCMCRegressor(n_iter=10_000, burn_in=4000, random_state=6, basis="gaussian", learn_scales=True).fit(d.x, d.y)
    tr = m.trace_
    assert np.all(tr.sigma2 > 0) and np.all(np.isfinite(tr.log_posterior))
    assert np.sqrt(np.mean((m.predict(d.x_test) - d.f_test) ** 2)) < 0.1


def test_pair_table_is_the_references_and_handles_constant_and_single_inputs():
    "The C loop's pair weights (r_ab^2, cumulative) equal the reference's; a constant input's pairs weigh 0."
    from rbf_bayes._rjmcmc import _pair_table
    from rbf_bayes.rjmcmc import _ref_pairs
    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 4)); x[:, 1] += 2 * x[:, 0]; x[:, 3] = 1.5
    cdf, a, b = _pair_table(x)
    pairs, w = _ref_pairs(x)
    npt.assert_array_equal(np.column_stack([a, b]), pairs)
    npt.assert_allclose(np.diff(np.r_[0.0, cdf]) / cdf[-1], w, rtol=1e-12)
    assert np.all(w[pairs[:, 1] == 3] == 0) and w[0] == w.max()
    assert len(_pair_table(x[:, :1])[0]) == 0 and len(_ref_pairs(x[:, :1])[0]) == 0
    npt.assert_allclose(_ref_pairs(np.ones((5, 3)))[1], 1 / 3)      # no correlation anywhere: uniform


def test_pair_jumps_keep_the_exact_subset_posterior_of_correlated_inputs():
    """k = 0, delta^2 fixed, four inputs in two correlated pairs (r about 0.95) that explain y alike: p(gamma | y) over
    the 15 non-empty subsets by enumeration; the chain (single and pair jumps) must match it, and pair jumps happen."""
    rng = np.random.default_rng(11)
    z = rng.normal(size=(60, 2))
    x = np.column_stack([z[:, 0], z[:, 0] + 0.3 * rng.normal(size=60), z[:, 1], z[:, 1] + 0.3 * rng.normal(size=60)])
    y = 0.5 * z[:, 0] + 0.3 * z[:, 1] + rng.normal(size=60)
    t = _subsets_match_enumeration(x, y, RBFPrior(k_max=4, inclusion_prob=0.4), 5.0, 60_000, 2)
    prop, acc = t.meta.pair_acceptance
    assert prop > 0.4 * t.meta.input_acceptance[0] and acc > 100


def _triple_data():
    "Five inputs: a correlated triple (r about 0.9 to 0.95) and a correlated pair; y depends on both groups."
    rng = np.random.default_rng(12)
    z = rng.normal(size=(60, 2))
    x = np.column_stack([z[:, 0], z[:, 0] + 0.3 * rng.normal(size=60), z[:, 0] - 0.4 * rng.normal(size=60),
                         z[:, 1], z[:, 1] + 0.3 * rng.normal(size=60)])
    return x, 0.5 * z[:, 0] + 0.3 * z[:, 1] + rng.normal(size=60)


@pytest.mark.parametrize("fn,n_iter", [(sample_rjmcmc, 80_000), (sample_rjmcmc_reference, 20_000)])
def test_triple_jumps_keep_the_exact_subset_posterior(fn, n_iter):
    """k = 0, delta^2 fixed, five inputs (a correlated triple and a pair): p(gamma | y) over the 31 non-empty subsets
    by enumeration; the chain with single, pair and triple jumps (half of the pair jumps take a third input) must match
    it, in C and in the reference, and triple jumps are proposed and accepted."""
    x, y = _triple_data()
    t = _subsets_match_enumeration(x, y, RBFPrior(k_max=4, inclusion_prob=0.4), 5.0, n_iter, 3, fn=fn,
                                   pair_jumps=0.6, triple_jumps=0.5)
    (sel, _), (pair, _), (tri, tri_acc) = t.meta.input_acceptance, t.meta.pair_acceptance, t.meta.triple_acceptance
    assert 0.25 * sel < tri < 0.35 * sel and 0.45 * pair < tri < 0.55 * pair and tri_acc > 0.01 * tri


def test_triple_jumps_recover_the_prior_of_indicators_and_scales():
    """prior_only, learned scales, four correlated inputs, nine of ten input steps pair jumps and nine of ten of those
    triples (about four in five input steps switch three inputs): the indicators follow Bernoulli(pi) given a non-empty
    set (a wrong pi is seen) and theta_j of the included inputs N(0, tau^2) (the prior draw of the inputs switched in
    cancels their prior density)."""
    rng = np.random.default_rng(4)
    z = rng.normal(size=25)
    x = np.column_stack([z + s * rng.normal(size=25) for s in (0.2, 0.4, 0.6, 1.5)])
    cfg = RJConfig(n_iter=90_000, burn_in=1000, thin=40, prior_only=True, fix_Lambda=2.0, select_inputs=True,
                   learn_scales=True, scale_step=0.8, pair_jumps=0.9, triple_jumps=0.9)
    pr = RBFPrior(k_max=6, inclusion_prob=0.3)
    t = sample_rjmcmc(x, rng.normal(size=25), prior=pr, config=cfg, rng=np.random.default_rng(5))
    g = t.scales > 0
    seen = np.bincount([_code(r) for r in g], minlength=16)[1:]

    def law(pi):
        n = np.array([bin(c).count("1") for c in range(1, 16)])
        p = pi ** n * (1 - pi) ** (4 - n)
        return p / p.sum()
    assert stats.chisquare(seen, law(0.3) * seen.sum()).pvalue > P_MIN
    assert stats.chisquare(seen, law(0.4) * seen.sum()).pvalue < P_MIN       # a wrong pi is seen
    th = np.log(t.scales[g])
    assert stats.kstest(th / pr.log_scale_sd, "norm").pvalue > P_MIN
    assert t.meta.triple_acceptance[0] > 0.7 * t.meta.input_acceptance[0]


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_triple_jumps_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match="triple_jumps"):
        RJConfig(triple_jumps=bad)


def test_no_pair_table_without_selection_or_beyond_the_cap():
    """The table is empty for None, what the core passes without input selection or above PAIR_INPUTS_MAX inputs; a
    run with selection proposes pair jumps, one without records none."""
    from rbf_bayes._rjmcmc import PAIR_INPUTS_MAX, _pair_table
    assert PAIR_INPUTS_MAX == 1000 and len(_pair_table(None)[0]) == 0
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(30, 3)); y = np.sin(4 * x[:, 0]) + 0.1 * rng.normal(size=30)
    cfg = RJConfig(n_iter=300, burn_in=100, select_inputs=True, learn_scales=True)
    t = sample_rjmcmc(x, y, config=cfg, rng=np.random.default_rng(0), basis="gaussian")
    assert t.meta.pair_acceptance[0] > 0
    off = sample_rjmcmc(x, y, config=RJConfig(n_iter=300, burn_in=100), rng=np.random.default_rng(0), basis="gaussian")
    assert off.meta.pair_acceptance is None
