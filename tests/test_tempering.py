"""Multiple-try birth/death and replica exchange (nbs/03_moves, nbs/05_rjmcmc "Tempering"): exact checks.

1. Prior recovery: with the likelihood off, the multiple-try moves and a tempered ladder keep k ~ truncated Poisson and
   the centres uniform on Omega (chi-square / KS at fixed seeds).
2. Exact enumeration with the likelihood on: a 1-d problem with k_max = 2 and Lambda fixed, where
   p_beta(k | y) ∝ p(k | Lambda) E_{mu ~ U(Omega^k)}[p(y | k, mu, delta^2)^beta] (integrated over delta^2's prior when
   it
   is sampled) is computed by quadrature with the reference marginal likelihood. The multiple-try chain, a single core
   at beta = 1/2 (the tempered target, delta^2 by its random walk) and the cold chain of a tempered ladder must each
   give it within 0.015 (about 5 Monte Carlo standard errors at 150,000 iterations). Each check fails by far more
   than that if the mean weight lost its 1/K, if beta were not applied to a ratio, or if the swaps were not exact.
"""
import math

import numpy as np
import pytest
from scipy import special
from test_rjmcmc import KMAX, LAM, P_MIN, X, Y, _chi2_k, _ks_uniform, _prior_pk, _random_centres

from rbf_bayes._rjmcmc import Records
from rbf_bayes.basis import CentreSpace, design_matrix
from rbf_bayes.posterior import log_marginal_likelihood
from rbf_bayes.priors import RBFPrior, log_delta2_prior, log_k_prior
from rbf_bayes.rjmcmc import RJConfig, _prepare, rbf_state, rj_core, sample_rjmcmc

X1 = np.linspace(0, 1, 7)[:, None]
Y1 = np.sin(4 * X1[:, 0]) + 0.3 * np.random.default_rng(3).standard_normal(7)
PRIOR1, LAM1, BASIS1, WIDTH1 = RBFPrior(k_max=2), 1.0, "gaussian", 0.3
TOL = 0.015


def _exact_pk(beta, delta2=None, n1=200, n2=40):
    """p_beta(k | y), k = 0, 1, 2, by the midpoint rule over Omega^k (the two grids of k = 2 are offset: no equal
    centres) and, when delta2 is None, the trapezoid rule in log delta^2 over its inverse-gamma prior."""
    om = CentreSpace.from_data(X1, PRIOR1.iota); lo, hi = om.lo[0], om.hi[0]
    g1 = lo + (hi - lo) * (np.arange(n1) + 0.5) / n1
    g2 = lo + (hi - lo) * (np.arange(n2) + 0.5) / n2
    dg = np.exp(np.linspace(math.log(1e-2), math.log(1e4), 60)) if delta2 is None else np.array([delta2])
    sets = [[np.empty((0, 1))], [np.array([[a]]) for a in g1],
            [np.array([[a], [b]]) for a in g2 for b in g2 - 0.25 * (hi - lo) / n2]]
    out = []
    for k, S in enumerate(sets):
        Ds = [design_matrix(X1, s, BASIS1, WIDTH1) for s in S]
        v = np.array(
            [
                special.logsumexp([beta * log_marginal_likelihood(D, Y1, dd, PRIOR1) for D in Ds]) - math.log(len(Ds))
                for dd in dg
            ]
        )
        if delta2 is None:
            v = special.logsumexp(v + log_delta2_prior(dg, PRIOR1) + np.log(dg)) + math.log(np.diff(np.log(dg))[0])
        out.append(float(log_k_prior(k, LAM1, 2)) + float(np.squeeze(v)))
    out = np.array(out)
    return np.exp(out - special.logsumexp(out))


def _pk(ks):
    return np.bincount(ks, minlength=3)[:3] / len(ks)


@pytest.mark.parametrize("kw", [dict(n_tries=5), dict(n_tries=3, n_temps=3)])
def test_prior_recovery(kw):
    cfg = RJConfig(n_iter=150_000, burn_in=1000, thin=20, prior_only=True, fix_Lambda=LAM, split_scale=0.15, **kw)
    tr = sample_rjmcmc(X, Y, prior=RBFPrior(k_max=KMAX), config=cfg, rng=np.random.default_rng(7), basis="gaussian",
                       width=0.3)
    ks = tr.k[tr.kept]
    assert _chi2_k(ks, _prior_pk()) > P_MIN, (kw, ks.mean())
    c = _random_centres(tr)
    for i in range(2):
        assert _ks_uniform(c[:, i], i) > P_MIN


def test_multiple_try_matches_enumeration():
    exact = _exact_pk(1.0, 5.0, 400, 60)
    for K in (1, 4):
        cfg = RJConfig(n_iter=150_000, burn_in=1000, fix_Lambda=LAM1, fix_delta2=5.0, sample_nuisance=False, n_tries=K)
        tr = sample_rjmcmc(X1, Y1, prior=PRIOR1, config=cfg, rng=np.random.default_rng(1), basis=BASIS1, width=WIDTH1)
        np.testing.assert_allclose(_pk(tr.k[1000:]), exact, atol=TOL, err_msg=f"n_tries={K}")


def run_core_at(beta, prior, seed=4, n=150_000):
    """One C core at likelihood power beta on (X1, Y1), delta^2 sampled, Lambda fixed, two tries: (the core, the k of
    every iteration)."""
    rng = np.random.default_rng(seed); cfg = RJConfig(n_iter=n, burn_in=1000, fix_Lambda=LAM1, n_tries=2)
    x, Yt, k_max, space, basis, width, centres, Lam, d2 = _prepare(X1, Y1, prior, cfg, BASIS1, WIDTH1, None, rng)
    st = rbf_state(x, Yt, centres, basis, width, d2, prior, m_max=2 + k_max)
    core = rj_core(st, x, space, basis, width, k_max, prior, cfg, rng.bit_generator)
    core.set_state(centres, Lam, d2)
    core.beta = beta
    buf = (np.zeros(n, np.int64), np.zeros(n), np.zeros(n), np.zeros((n, 1)), np.zeros((n, 1)), np.zeros(n, np.int8),
           np.zeros(n, np.int8))
    core.run(n, Records(*buf), 0)
    return core, buf[0]


def test_tempered_core_matches_enumeration():
    """One core at beta = 1/2 with delta^2 sampled: its random walk on log delta^2 and every move's beta-scaled
    ratio."""
    exact = _exact_pk(0.5)
    core, k = run_core_at(0.5, PRIOR1)
    np.testing.assert_allclose(_pk(k[1000:]), exact, atol=TOL)
    assert 0.2 < core.n_d2_acc / core.n_d2_prop < 0.95
    assert abs(_exact_pk(1.0)[0] - exact[0]) > 5 * TOL     # beta matters here: the check can tell


@pytest.mark.parametrize("kw", [dict(beta_min=0.3), dict()])
def test_replica_exchange_cold_chain_matches_enumeration(kw):
    exact = _exact_pk(1.0, 5.0, 400, 60)
    cfg = RJConfig(n_iter=150_000, burn_in=5000, fix_Lambda=LAM1, fix_delta2=5.0, sample_nuisance=False, n_tries=2,
                   n_temps=3, **kw)
    tr = sample_rjmcmc(X1, Y1, prior=PRIOR1, config=cfg, rng=np.random.default_rng(2), basis=BASIS1, width=WIDTH1)
    np.testing.assert_allclose(_pk(tr.k[5000:]), exact, atol=TOL)
    tm = tr.meta["tempering"]
    assert tm["betas"][0] == 1.0 and np.all(np.diff(tm["betas"]) < 0) and len(tm["swap_rate"]) == 2
    assert all(0.05 < r <= 1 for r in tm["swap_rate"])


def test_tempered_run_is_reproducible_and_resumes():
    d_x = np.random.default_rng(0).uniform(size=(40, 2)); d_y = np.sin(3 * d_x).sum(1)
    cfg = RJConfig(n_iter=3000, burn_in=1000, n_tries=3, n_temps=3, chunk_size=500)
    a = sample_rjmcmc(d_x, d_y, config=cfg, rng=np.random.default_rng(5))
    b = sample_rjmcmc(d_x, d_y, config=cfg, rng=np.random.default_rng(5))
    for f in ("k", "log_posterior", "delta2", "centres", "coef_mean"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert a.meta["tempering"] == b.meta["tempering"]


def _ladder(in_python, n_iter, scheme, extend=0):
    """A tempered run of sample_rjmcmc's settings on a small 2-d problem, its rounds in C or in Python, optionally run
    to n_iter and then extended by `extend` iterations (as the automatic run length does)."""
    import rbf_bayes.rjmcmc as rj
    d_x = np.random.default_rng(0).uniform(size=(40, 2)); d_y = np.sin(3 * d_x).sum(1)
    cfg = RJConfig(n_iter=n_iter, burn_in=1000, n_tries=2, n_temps=3, chunk_size=500, adapt_ladder=scheme)
    orig = rj._PTRun.__init__
    rj._PTRun.__init__ = lambda self, *a, **k: orig(self, *a, **k, in_python=in_python)
    try:
        run = rj.rjmcmc_run(d_x, d_y, config=cfg, rng=np.random.default_rng(5))
        tr = run.run()
        if extend:
            run.extend(extend); tr = run.run()
        return tr
    finally:
        rj._PTRun.__init__ = orig


@pytest.mark.parametrize("scheme", ["run", "burn_in"])
def test_ladder_adaptation_in_c_is_python_and_extends(scheme):
    """Both adaptation schemes: the C loop is the Python rounds bit for bit, and a run extended from 2,000 to 3,000
    iterations is the 3,000-iteration run (the whole-run scheme adapts to the extended end)."""
    a, b, c = _ladder(False, 3000, scheme), _ladder(True, 3000, scheme), _ladder(False, 2000, scheme, extend=1000)
    for f in ("k", "log_posterior", "delta2", "centres"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
        np.testing.assert_array_equal(getattr(a, f), getattr(c, f))
    assert a.meta["tempering"] == b.meta["tempering"] == c.meta["tempering"]
    assert a.meta["tempering"]["adapted_until"] == (3000 if scheme == "run" else 1000)


def test_learned_step_counts_are_the_rungs_in_c_and_in_python():
    """Learned scales with zooms and input selection on three replicas: the learned basis's step counts per rung
    (`meta.tempering["step_acceptance"]`) are the Python rounds' bit for bit; every rung makes one scale step or zoom
    and one input step per iteration, whichever replicas held it; and the run's own counts are the cold rung's, as its
    moves' are (`n_proposed`), not those of the replica that ends cold."""
    import rbf_bayes.rjmcmc as rj
    x = np.random.default_rng(0).uniform(size=(40, 3)); y = np.sin(3 * x[:, :2]).sum(1)
    cfg = RJConfig(n_iter=2000, burn_in=500, n_temps=3, chunk_size=500, learn_scales=True, select_inputs=True,
                   scale_zoom=0.3, swap_every=5)
    orig, out = rj._PTRun.__init__, []
    for in_python in (False, True):
        rj._PTRun.__init__ = lambda self, *a, _p=in_python, **k: orig(self, *a, **k, in_python=_p)
        try:
            out.append(rj.sample_rjmcmc(x, y, config=cfg, rng=np.random.default_rng(5), basis="gaussian", width=1.0))
        finally:
            rj._PTRun.__init__ = orig
    a, b = out
    np.testing.assert_array_equal(a.k, b.k)
    assert a.meta["tempering"] == b.meta["tempering"]
    steps = a.meta["tempering"]["step_acceptance"]
    assert min(a.meta["tempering"]["swap_rate"]) > 0.05
    for r in steps:
        assert r["scale_acceptance"][0] + r["zoom_acceptance"][0] == 2000 and r["input_acceptance"][0] == 2000
        assert r["zoom_acceptance"][0] > 400 and r["zoom_acceptance"][1] > 0
    for name in ("scale_acceptance", "zoom_acceptance", "input_acceptance", "pair_acceptance"):
        assert a.meta[name] == steps[0][name] == b.meta[name]


def test_the_ladder_adapts_after_burn_in_only_under_the_whole_run_scheme():
    """The ladder after 1,001 iterations (burn-in 1,000) against after 3,000: moved under "run", fixed under
    "burn_in" (the check can fail both ways: a scheme that stopped early or never stopped)."""
    betas = {(s, n): _ladder(False, n, s).meta["tempering"]["betas"] for s in ("run", "burn_in") for n in (1001, 3000)}
    assert betas[("burn_in", 1001)] == betas[("burn_in", 3000)]
    assert max(abs(u - v) for u, v in zip(betas[("run", 1001)], betas[("run", 3000)], strict=True)) > 1e-3


def test_config_checks():
    with pytest.raises(ValueError, match="adapt_ladder"):
        RJConfig(adapt_ladder="never")
    for bad in (dict(n_tries=0), dict(n_temps=0), dict(swap_every=0), dict(beta_min=1.0), dict(beta_min=0.0)):
        with pytest.raises(ValueError):
            RJConfig(**bad)


def test_reference_multiple_try_matches_enumeration():
    """The NumPy reference sampler makes the same multiple-try moves (03_moves' functions): same exact p(k | y)."""
    from rbf_bayes.rjmcmc import sample_rjmcmc_reference
    exact = _exact_pk(1.0, 5.0, 400, 60)
    cfg = RJConfig(n_iter=12_000, burn_in=500, fix_Lambda=LAM1, fix_delta2=5.0, sample_nuisance=False, n_tries=3)
    tr = sample_rjmcmc_reference(X1, Y1, prior=PRIOR1, config=cfg, rng=np.random.default_rng(8), basis=BASIS1,
                                 width=WIDTH1)
    np.testing.assert_allclose(
        _pk(tr.k[500:]), exact, atol=0.03
    )  # 12,000 iterations: seeds 8 and 9 were 0.014 and 0.005 off


def test_auto_run_length_converges_and_says_so():
    """n_iter='auto' on an easy problem (sinc, Gaussian bases): the chains stop once split-R-hat <= 1.01 and bulk ESS >=
    400 for k and the log posterior on their second halves, and the result's own diagnostics agree."""
    from rbf_bayes import RJMCMCRegressor
    from rbf_bayes.datasets import sinc_data
    d = sinc_data(np.random.default_rng(0))
    m = RJMCMCRegressor(basis="gaussian", width=11.8, n_iter="auto", n_chains=4, n_jobs=2, random_state=0).fit(d.x, d.y)
    au = m.trace_.meta["auto"]
    assert au["converged"] and au["n_iter"] <= 64_000, au
    diag = m.trace_.chain_diagnostics()
    assert diag["k"][0] <= 1.01 and diag["k"][1] >= 400 and diag["log posterior"][0] <= 1.01, diag
    s = str(m.summary())
    assert "chosen by the chains" in s and "converged" in s and "did not move" not in s


def test_auto_run_length_checks():
    from rbf_bayes import RJMCMCRegressor
    x = np.random.default_rng(0).uniform(size=(30, 1)); y = np.sin(5 * x[:, 0])
    with pytest.raises(ValueError, match="n_iter"):
        RJMCMCRegressor(n_iter="long").fit(x, y)
    with pytest.raises(ValueError, match="executor"):
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(1) as ex:
            RJMCMCRegressor(n_iter="auto", n_chains=2, executor=ex).fit(x, y)
    m = RJMCMCRegressor(n_iter="auto", max_iter=16, n_chains=2, random_state=0).fit(x, y)     # the cap is reported
    assert not m.trace_.meta["auto"]["converged"] and "stopped at max_iter" in str(m.summary())


def test_the_regressor_tempers_by_default_when_it_selects_inputs():
    """n_temps=None (the default): four replicas when the fit selects inputs (learned scales and three inputs or more,
    12_estimators "Defaults that converge"), none otherwise; a number given is kept."""
    from rbf_bayes import RJMCMCRegressor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)); y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=40)
    kw = dict(n_iter=400, burn_in=200, n_chains=1, random_state=0)

    def temps(m):
        meta = m.trace_.meta
        assert meta["config"]["n_temps"] == (len(meta["tempering"]["betas"]) if meta.get("tempering") else 1)
        return meta["config"]["n_temps"], meta["config"]["select_inputs"]
    assert temps(RJMCMCRegressor(**kw).fit(X, y)) == (4, True)
    assert temps(RJMCMCRegressor(**kw).fit(X[:, :2], y)) == (1, False)
    assert temps(RJMCMCRegressor(select_inputs=False, **kw).fit(X, y)) == (1, False)
    assert temps(RJMCMCRegressor(learn_scales=False, **kw).fit(X, y)) == (1, False)
    assert temps(RJMCMCRegressor(n_temps=1, **kw).fit(X, y)) == (1, True)
    assert temps(RJMCMCRegressor(n_temps=2, select_inputs=False, **kw).fit(X, y)) == (2, False)


def test_the_default_ladder_gives_way_to_one_replica_on_data_too_large_for_four_designs():
    """Each replica holds its own N x (2 + d + k_max) design: the default tempers while four of them take at most
    DESIGN_STORED_MAX bytes (1 GiB: 8 inputs and k_max = 100, up to 305,000 rows), one replica beyond; a number given is
    kept whatever the size."""
    from rbf_bayes import RJMCMCRegressor
    from rbf_bayes.priors import REGRESSOR_PRIOR
    from rbf_bayes.rjmcmc import DESIGN_STORED_MAX
    n_max = DESIGN_STORED_MAX // (4 * 8 * (2 + 8 + 100))
    assert n_max == 305_040
    m = RJMCMCRegressor()
    assert m._n_temps(True, n_max, 8) == 4 and m._n_temps(True, n_max + 1, 8) == 1
    assert m._n_temps(False, 300, 13) == 1 and m._n_temps(True, 300, 13) == 4
    small = RJMCMCRegressor(prior=REGRESSOR_PRIOR.replace(k_max=10))     # a smaller k_max: a smaller design
    assert small._n_temps(True, n_max + 1, 8) == 4
    assert RJMCMCRegressor(n_temps=4)._n_temps(True, 10 * n_max, 8) == 4


@pytest.mark.parametrize("coef_prior", ["g", "ridge"])
def test_the_ladder_with_input_selection_matches_enumeration(coef_prior):
    """The default runs a tempered ladder whenever it selects inputs, so the ladder's cold chain must sample
    p(gamma | y) with the in/out switch at every rung's power. With no bases (k = 0, the update move only) and
    delta^2, Lambda fixed, p(gamma | y) over the 7 non-empty subsets of 3 inputs is exact (05d_learned_basis, check
    6): the cold chain of 3 replicas matches it (chi^2, reject at 0.1 %), and the same draws reject the target with
    the Occam factor (1 + delta^2)^(-m/2) left out of the g-prior's likelihood, so the check can fail."""
    import itertools

    from scipy import stats

    from rbf_bayes.posterior import log_marginal_likelihood
    from rbf_bayes.priors import RBFPrior, log_inputs_prior
    from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc
    rng = np.random.default_rng(4)
    xe = rng.normal(size=(40, 3)); ye = 0.8 * xe[:, 0] + 0.25 * xe[:, 1] + rng.normal(size=40)
    subsets = sorted((g for g in itertools.product([False, True], repeat=3) if any(g)),
                     key=lambda g: int(np.dot(g, [1, 2, 4])))
    pre = RBFPrior(k_max=5, coef_prior=coef_prior, inclusion_prob=0.4)
    cfg = RJConfig(n_iter=60_000, burn_in=0, moves=("update",), select_inputs=True, fix_delta2=4.0, fix_Lambda=1.0,
                   n_temps=3)
    te = sample_rjmcmc(xe, ye, prior=pre, config=cfg, rng=np.random.default_rng(2), init={"centres": np.empty((0, 3))})
    assert len(te.meta["tempering"]["betas"]) == 3 and min(te.meta["tempering"]["swap_rate"]) > 0.05
    seen = np.bincount([int(np.dot(g, [1, 2, 4])) for g in te.scales[::30] > 0], minlength=8)[1:]

    def exact(occam=True):
        lp = []
        for g in subsets:
            D = np.column_stack([np.ones(40), xe[:, list(np.flatnonzero(g))]])
            v = log_marginal_likelihood(D, ye, 4.0, pre) + log_inputs_prior(g, pre)
            lp.append(v if occam else v + 0.5 * D.shape[1] * math.log1p(4.0))
        p = np.exp(np.array(lp) - max(lp))
        return p / p.sum()
    assert stats.chisquare(seen, exact() * seen.sum()).pvalue > 1e-3
    if coef_prior == "g":
        assert stats.chisquare(seen, exact(occam=False) * seen.sum()).pvalue < 1e-3
