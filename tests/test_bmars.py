"""Bayesian MARS: exact counting of valid bases, prior recovery, enumeration, protocol and errors."""
import dataclasses
import itertools

import numpy as np
import pytest
from scipy import integrate, special, stats

from rbf_bayes.bmars import (
    BMARSPrior,
    BMARSRegressor,
    bmars_run,
    bmars_types,
    count_valid,
    hinge_column,
    log_valid_fraction,
    sample_bmars,
)
from rbf_bayes.chains import AUTO_KEEP, _second_halves, pool_traces
from rbf_bayes.priors import log_poisson_normaliser


def test_count_valid_matches_brute_force():
    x = np.round(np.random.default_rng(5).uniform(size=(8, 3)), 1)
    for t in bmars_types(3, 3):
        for n_min in (1, 2, 4):
            brute = sum(int(np.sum(hinge_column(x, t, s, kn) > 0) >= n_min)
                        for s in itertools.product((1, -1), repeat=len(t))
                        for kn in itertools.product(*[np.sort(x[:, v]) for v in t]))
            assert count_valid(x, t, n_min) == brute


def test_prior_recovery_k_and_types():
    rng = np.random.default_rng(11)
    x = rng.uniform(size=(10, 3))
    pr = BMARSPrior(max_interaction=2, k_max=5, n_min=2)
    tr = sample_bmars(x, rng.normal(size=10), prior=pr, n_iter=150_000, burn_in=1000, thin=25,
                      rng=np.random.default_rng(12), prior_only=True)
    pk = np.array(
        [
            integrate.quad(
                lambda L, k=k: np.exp(
                    k * np.log(L)
                    - special.gammaln(k + 1)
                    - log_poisson_normaliser(L, 5)
                    + stats.gamma.logpdf(L, 10, scale=0.1)
                ),
                0,
                np.inf,
            )[0]
            for k in range(6)
        ]
    )
    pk /= pk.sum()
    ks = tr.k[tr.kept]
    assert stats.chisquare(np.bincount(ks, minlength=6), pk * len(ks)).pvalue > 1e-3


def test_prior_recovery_under_the_regressors_lambda_prior():
    """With the likelihood off, the sampler under the regressor's lambda ~ Ga(1, 0.1) (`bmars_regressor_prior`, stop
    102) recovers k's prior, the Gamma mixture of truncated Poissons, and lambda's, Ga(1, 0.1) itself (the truncated
    Poisson is normalised for every lambda, so lambda's marginal is its prior). The paper's Ga(10, 10) has shape = rate,
    so the checks above could not tell the two apart if they were swapped; these can (Ga(0.1, 1) has mean 0.1)."""
    from rbf_bayes.bmars import bmars_regressor_prior
    rng = np.random.default_rng(21)
    x = rng.uniform(size=(40, 2))   # k is also held below the number of rows (a design of full rank): 40 > 26
    pr = bmars_regressor_prior(max_interaction=2, k_max=25)
    # thin 500: k steps by one and ranges over 26 values (at thin 40 its draws are far from independent, chi-square p
    # 7e-7); and k_max 25 rather than smaller: lambda's step proposes from the untruncated Gamma conditional, whose
    # tail is lighter than the truncated target's once k sits at k_max, so with k_max 12 lambda's chain lingers in
    # its tail (lag-one autocorrelation 0.66 at thin 2,000 on one seed of two; KS p 3e-13): exact, but slow there
    tr = sample_bmars(x, rng.normal(size=40), prior=pr, n_iter=1_000_000, burn_in=2000, thin=500,
                      rng=np.random.default_rng(22), prior_only=True)
    shape, rate = pr.lambda_shape, pr.lambda_rate
    pk = np.array([integrate.quad(lambda L, k=k: np.exp(k * np.log(L) - special.gammaln(k + 1)
                                                        - log_poisson_normaliser(L, 25)
                                                        + stats.gamma.logpdf(L, shape, scale=1 / rate)), 0, np.inf)[0]
                   for k in range(26)])
    pk /= pk.sum()
    ks = tr.k[tr.kept]
    assert stats.chisquare(np.bincount(ks, minlength=26), pk * len(ks)).pvalue > 1e-3
    lam = np.asarray(tr.lam)[tr.kept]
    assert stats.kstest(lam, stats.gamma(shape, scale=1 / rate).cdf).pvalue > 1e-3
    assert abs(lam.mean() - 10) < 1.0   # Ga(1, 0.1): mean 10 (swapped, Ga(0.1, 1): 0.1)


def test_fixed_lambda_prior_is_truncated_poisson():
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(10, 2))
    tr = sample_bmars(x, rng.normal(size=10), prior=BMARSPrior(k_max=6), n_iter=100_000, burn_in=1000, thin=25,
                      rng=np.random.default_rng(4), prior_only=True, fix_lambda=2.0)
    pk = stats.poisson.pmf(np.arange(7), 2.0)
    pk /= pk.sum()
    ks = tr.k[tr.kept]
    assert stats.chisquare(np.bincount(ks, minlength=7), pk * len(ks)).pvalue > 1e-3


def test_errors_and_protocol():
    x = np.random.default_rng(0).uniform(size=(30, 2))
    y = x[:, 0] ** 2 + 0.1 * np.random.default_rng(1).normal(size=30)
    with pytest.raises(ValueError, match="max_interaction must be an integer >= 1"):
        BMARSPrior(max_interaction=0)
    with pytest.raises(ValueError, match="coef_var must be a finite number > 0"):
        BMARSPrior(coef_var=-1)
    with pytest.raises(ValueError, match="burn_in must be in"):
        sample_bmars(x, y, n_iter=10, burn_in=10, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="no basis is non-zero"):
        log_valid_fraction(x, 1, 31)
    m = BMARSRegressor(n_iter=600, burn_in=300, random_state=0).fit(x, y)
    assert m.predict(x).shape == (30,)
    assert m.get_params()["n_iter"] == 600
    with pytest.raises(ValueError, match="X has 5 features, but BMARSRegressor is expecting 2 features"):
        m.predict(np.zeros((3, 5)))


def test_automatic_run_length_grows_the_fixed_chains():
    """BMARSRegressor(n_iter="auto"): the chains grown in rounds are the fixed-length chains of the length they
    stopped at, draw for draw (extending a run does not perturb it); the summary says how long they ran and why. Draw
    for draw while the automatic run thins its snapshots as the fixed one does, i.e. up to 2 * AUTO_KEEP * thin =
    20,000 iterations (8,000 here); beyond that it keeps fewer (the next test)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(80, 3)); y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(80)
    auto = BMARSRegressor(n_iter="auto", max_iter=8000, n_chains=2, n_jobs=2, random_state=0).fit(X, y)
    a = auto.trace_.meta["auto"]
    assert [r["n_iter"] for r in a["rounds"]][:2] == [4000, 8000][:len(a["rounds"])] and auto.n_iter_ == a["n_iter"]
    fixed = BMARSRegressor(n_iter=a["n_iter"], burn_in=2000, n_chains=2, n_jobs=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.trace_.k, fixed.trace_.k)
    np.testing.assert_array_equal(auto.trace_.log_marginal_likelihood, fixed.trace_.log_marginal_likelihood)
    assert dict(auto.summary().rows)["run length"].startswith("chosen by the chains")
    with pytest.raises(ValueError, match="n_iter must be a positive integer or 'auto'"):
        BMARSRegressor(n_iter="long").fit(X, y)


def test_automatic_run_thins_its_snapshots_as_it_grows_and_returns_about_auto_keep():
    """A run with a snapshot target keeps about that many snapshots in its second half however far it is extended
    (evenly spaced, never finer than its thin), and the automatic run returns about AUTO_KEEP per chain from the second
    halves: counted there, not as half of everything kept (which with the sparser later snapshots would return half)."""
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(60, 2)); y = np.sin(4 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    runs = [bmars_run(X, y, n_iter=4000, burn_in=2000, thin=10, rng=np.random.default_rng(s), snapshot_target=AUTO_KEEP)
            for s in (0, 1)]
    n = 4000
    for r in runs:
        r.run()
        assert r.thin == 10                           # ceil(2000 / 1000) = 2 < thin
    while n < 64_000:
        for r in runs:
            r.extend(n)
        n *= 2
        traces = [r.run() for r in runs]
        assert all(r.thin == max(10, -(-n // 2 // AUTO_KEEP)) for r in runs)
    for t in traces:
        late = t.kept[t.kept >= n // 2]
        assert abs(len(late) - AUTO_KEEP) <= 1 and set(np.diff(late)) == {32}   # 64,000 / 2 / 1,000 -> 32
        assert len(t.kept) > 3 * AUTO_KEEP                                        # the earlier rounds' are there too
    out, thin = _second_halves(pool_traces(traces, 1.0), n)
    assert thin == 1 and [len(i) for i in out.kept_by_chain()] == [len(t.kept[t.kept >= n // 2]) for t in traces]
    with pytest.raises(ValueError, match="snapshot_target"):
        bmars_run(X, y, n_iter=100, burn_in=10, rng=np.random.default_rng(0), snapshot_target=0)


@pytest.mark.parametrize("engine", ["c", "python"])
def test_prior_recovery_of_knots_and_signs_with_the_local_step(engine):
    """Likelihood off, lambda fixed, one-factor bases on one predictor with 30 distinct values: each basis's (sign,
    knot index) is uniform on the valid pairs: index 0 only with sign +1 and the last index only with sign -1 (the
    other sign is zero at every point), every other index with both. The change move with a local step (knot_step=3;
    a step off the ends refused, not clamped) must keep that law, in the C loop and in the reference. Changes are
    made 90 % of the time (c_move=0.05) so that births do not wash out a wrong change: the reference with the step
    clamped to the ends instead gives p = 5e-23 here (ends 1,070 and 1,016 against about 830 expected)."""
    from rbf_bayes.bmars import sample_bmars_reference
    x = np.random.default_rng(0).uniform(size=(30, 1)); n = 30
    pr = BMARSPrior(max_interaction=1, k_max=4)
    run = sample_bmars if engine == "c" else sample_bmars_reference
    tr = run(x, np.zeros(n), prior=pr, n_iter=200_000, burn_in=1000, thin=10, rng=np.random.default_rng(1),
             prior_only=True, fix_lambda=3.0, knot_step=3, c_move=0.05)
    sx = np.sort(x[:, 0])
    idx, sg = [], []
    for bases in tr.bases:
        for _, s, t in bases:
            idx.append(int(np.searchsorted(sx, t[0]))); sg.append(s[0])
    idx, sg = np.array(idx), np.array(sg)
    w = np.full(n, 2.0); w[0] = w[-1] = 1.0
    assert np.all(sg[idx == 0] == 1) and np.all(sg[idx == n - 1] == -1)
    assert stats.chisquare(np.bincount(idx, minlength=n), w / w.sum() * len(idx)).pvalue > 1e-3
    assert stats.binomtest(int(np.sum(sg == 1)), len(sg)).pvalue > 1e-3
    assert tr.meta.knot_step == 3


def test_the_regressors_default_prior_on_lambda_is_vaguer_than_the_papers():
    """BMARSRegressor() takes lambda ~ Ga(BMARS_LAMBDA) = Ga(1, 0.1) (10_bmars, "A vaguer prior on the number of
    bases", since stop 102), with the estimator's max_interaction and k_max; prior=BMARSPrior() is the paper's
    Ga(10, 10). The prior is the run's (its meta), the same chain as bmars_regressor_prior given explicitly, and it
    matters: on a smooth function the default keeps more bases than the paper's prior."""
    from rbf_bayes.bmars import BMARS_LAMBDA, BMARSPrior, BMARSRegressor, bmars_regressor_prior
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    kw = dict(n_iter=4000, burn_in=2000, n_chains=1, random_state=0)
    m = BMARSRegressor(max_interaction=1, k_max=30, **kw).fit(X, y)
    assert BMARS_LAMBDA == (1.0, 0.1) and (BMARSPrior().lambda_shape, BMARSPrior().lambda_rate) == (10.0, 10.0)
    assert m.trace_.meta["prior"] == dataclasses.asdict(bmars_regressor_prior(1, 30))
    assert (m.trace_.meta["prior"]["lambda_shape"], m.trace_.meta["prior"]["lambda_rate"]) == BMARS_LAMBDA
    same = BMARSRegressor(prior=bmars_regressor_prior(1, 30), **kw).fit(X, y)
    np.testing.assert_array_equal(m.trace_.k, same.trace_.k)
    paper = BMARSRegressor(prior=BMARSPrior(max_interaction=1, k_max=30), **kw).fit(X, y)
    assert paper.trace_.meta["prior"]["lambda_shape"] == 10.0
    k_default, k_paper = (np.arange(len(f.k_posterior_)) @ f.k_posterior_ for f in (m, paper))
    assert k_default > k_paper + 1, (k_default, k_paper)


def _truncated_nb(shape, rate, k_max):
    "k's prior under the joint truncation: NB(shape, rate / (1 + rate)) restricted to 0..k_max."
    pk = stats.nbinom.pmf(np.arange(k_max + 1), shape, rate / (1 + rate))
    return pk / pk.sum()


@pytest.mark.parametrize("engine", ["c", "python"])
def test_prior_recovery_under_the_joint_truncation(engine):
    """BMARSPrior(k_prior="joint") truncates p(k, lambda) rather than Poisson(k | lambda) (01_priors, "Two
    hierarchies"; 10_bmars): k's prior is the negative binomial NB(shape, rate / (1 + rate)) cut at k_max -- under
    lambda ~ Ga(1, 0.1) the geometric (1 / 1.1)^k -- and lambda | k ~ Ga(shape + k, rate + 1) exactly, so lambda's
    marginal is that Gamma mixed over k's prior. With the likelihood off both engines must recover both (chi-square of
    k, KS of lambda). The check can fail: at k_max = 12 the conditional truncation (lambda's independence MH step,
    what the C loop would run if the flag were not passed) puts 0.154 of k's mass at k_max against 0.041 here."""
    from rbf_bayes.bmars import sample_bmars_reference
    k_max = 12
    pr = BMARSPrior(max_interaction=2, k_max=k_max, lambda_shape=1.0, lambda_rate=0.1, k_prior="joint")
    rng = np.random.default_rng(21)
    x = rng.uniform(size=(40, 2))
    run, n_iter = (sample_bmars, 600_000) if engine == "c" else (sample_bmars_reference, 150_000)
    tr = run(x, rng.normal(size=40), prior=pr, n_iter=n_iter, burn_in=2000, thin=n_iter // 3000,
             rng=np.random.default_rng(22), prior_only=True)
    pk = _truncated_nb(1.0, 0.1, k_max)
    conditional = np.array([integrate.quad(lambda L, k=k: np.exp(k * np.log(L) - special.gammaln(k + 1)
                                                                 - log_poisson_normaliser(L, k_max)
                                                                 + stats.gamma.logpdf(L, 1.0, scale=10.0)),
                                           0, np.inf)[0] for k in range(k_max + 1)])
    conditional /= conditional.sum()
    assert pk[-1] < 0.05 and conditional[-1] > 0.15   # the two hierarchies differ where the test looks
    ks, lam = tr.k[tr.kept], np.asarray(tr.lam)[tr.kept]
    assert stats.chisquare(np.bincount(ks, minlength=k_max + 1), pk * len(ks)).pvalue > 1e-3
    cdf = lambda L: sum(pk[k] * stats.gamma(1.0 + k, scale=1 / 1.1).cdf(L) for k in range(k_max + 1))
    assert stats.kstest(lam, cdf).pvalue > 1e-3
    assert tr.meta["prior"]["k_prior"] == "joint"


@pytest.mark.parametrize("n_temps", [1, 3])
def test_enumeration_under_the_joint_truncation(n_temps):
    """The posterior of k under the joint truncation, enumerated exactly (10_bmars' six points, k_max = 2, every
    labelled model listed; k's prior the truncated geometric of lambda ~ Ga(1, 0.1)), against 8 C chains of
    25,000 iterations, alone and as the cold chain of a three-rung ladder (each replica keeps its own lambda, drawn
    exactly; swaps exchange the powers): within 4 between-chain standard errors. The conditional hierarchy's exact
    p(k | y) is also computed and must differ from the joint's by more than that, so the check can tell them apart."""
    from rbf_bayes.posterior import log_marginal_likelihood
    x6 = np.array([[0.1], [0.25], [0.4], [0.55], [0.7], [0.9]]); y6 = np.array([0.2, 0.1, 0.3, 0.9, 1.4, 2.1])
    pr6 = BMARSPrior(max_interaction=1, k_max=2, lambda_shape=1.0, lambda_rate=0.1, k_prior="joint")
    kn = np.sort(x6[:, 0]); lzv = log_valid_fraction(x6, 1, 1)
    cands = [((0,), (s,), (t,)) for s in (1, -1) for t in range(6)]
    cands = [b for b in cands if np.sum(hinge_column(x6, b[0], b[1], [kn[b[2][0]]]) > 0) >= 1]
    lml = {k: [log_marginal_likelihood(
        np.column_stack([np.ones(6)] + [hinge_column(x6, b[0], b[1], [kn[b[2][0]]]) for b in tup]), y6,
        pr6.coef_var, pr6.rbf_prior()) + k * (-np.log(12) - lzv) for tup in itertools.product(cands, repeat=k)]
        for k in range(3)}

    def exact(pk):
        lw = np.array([special.logsumexp(lml[k]) + np.log(pk[k]) for k in range(3)])
        return np.exp(lw - special.logsumexp(lw))

    joint = exact(_truncated_nb(1.0, 0.1, 2))
    pk_c = np.array([integrate.quad(lambda L, k=k: np.exp(k * np.log(L) - special.gammaln(k + 1)
                                                          - log_poisson_normaliser(L, 2)
                                                          + stats.gamma.logpdf(L, 1.0, scale=10.0)), 0, np.inf)[0]
                     for k in range(3)])
    cond = exact(pk_c / pk_c.sum())
    pks = np.array([np.bincount(sample_bmars(x6, y6, prior=pr6, n_iter=25_000, burn_in=1_000, thin=10,
                                             rng=np.random.default_rng(s), n_temps=n_temps).k[1000:],
                                minlength=3) / 24_000
                    for s in range(8)])
    se = pks.std(0, ddof=1) / np.sqrt(8)
    assert np.all(np.abs(pks.mean(0) - joint) < 4 * se + 1e-3), (pks.mean(0), joint, se)
    assert np.max(np.abs(cond - joint)) > 4 * se.max() + 1e-3, (cond, joint, se)


def test_k_prior_is_checked_by_name():
    with pytest.raises(ValueError, match="k_prior"):
        BMARSPrior(k_prior="marginal")
