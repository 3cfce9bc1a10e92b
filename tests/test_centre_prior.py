"""The near/far centre prior (nbs/00_basis, "Centres beyond the data"): each coordinate of a centre is uniform on the
far box with probability far_prob, else on the near box. Checked as every prior of the sampler is (ARCHITECTURE.md):

1. Prior recovery with the likelihood off: k ~ truncated Poisson(Lambda) and each coordinate of a centre follows the
   mixture (chi-square on k, KS on the coordinates; fixed seeds, 0.1 % level), for all moves, birth/death only,
   update only, and split/merge started from exact prior draws (invariance).
2. Power: the same KS rejects the uniform prior's centres.
3. The C loop's log posterior equals the dense one; the C sampler and the NumPy reference agree in distribution.
4. The density and the sampler of `CentreSpace` agree; bad arguments are named.
"""
import numpy as np
import pytest
from scipy import stats

from rbf_bayes.basis import CentreSpace
from rbf_bayes.priors import RBFPrior, log_k_prior
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc, sample_rjmcmc_reference

P_MIN = 1e-3
LAM, KMAX = 2.5, 8
X = np.random.default_rng(0).uniform(size=(30, 2))
Y = np.random.default_rng(1).normal(size=30)
PRIOR = RBFPrior(k_max=KMAX, iota=0.1, iota_far=1.0, far_prob=0.3)
OMEGA = CentreSpace.from_data(X, PRIOR.iota, PRIOR.iota_far, PRIOR.far_prob)


def _coord_cdf(i, space=OMEGA):
    "The CDF of coordinate i of a centre under the near/far prior."
    lo, hi, nlo, nhi, p = space.lo[i], space.hi[i], space.near_lo[i], space.near_hi[i], space.far_prob
    return lambda t: p * stats.uniform(lo, hi - lo).cdf(t) + (1 - p) * stats.uniform(nlo, nhi - nlo).cdf(t)


def _prior_pk():
    pk = np.exp(log_k_prior(np.arange(KMAX + 1), LAM, KMAX))
    return pk / pk.sum()


def _chi2_k(ks, pk):
    obs = np.bincount(ks, minlength=len(pk))[:len(pk)]
    assert obs.sum() == len(ks)
    return stats.chisquare(obs, pk * len(ks)).pvalue


def _run(moves, n_iter, thin, init=None, seed=0, prior=PRIOR, split_scale=0.15, burn_in=1000):
    cfg = RJConfig(n_iter=n_iter, burn_in=burn_in, thin=thin, moves=moves, prior_only=True, fix_Lambda=LAM,
                   split_scale=split_scale)
    return sample_rjmcmc(X, Y, prior=prior, config=cfg, rng=np.random.default_rng(seed), basis="gaussian",
                         width=0.3, init=init)


def _one_centre_each(tr, seed=99):
    r = np.random.default_rng(seed)
    out = [c[r.integers(len(c))] for c in (tr.sample_centres(s) for s in range(tr.n_samples)) if len(c)]
    return np.array(out)


def test_space_density_and_sampler_agree():
    "log_density integrates to 1 over the far box (grid), and the sampler's coordinates pass a KS test against it."
    sp = CentreSpace.from_data(X, 0.1, 1.0, 0.3)
    g = [np.linspace(sp.lo[i], sp.hi[i], 801) for i in range(2)]
    G = np.stack(np.meshgrid(*g, indexing="ij"), -1).reshape(-1, 2)
    dens = np.exp(sp.log_density(G)).reshape(801, 801)
    from scipy.integrate import trapezoid
    assert abs(trapezoid(trapezoid(dens, g[1], axis=1), g[0]) - 1) < 5e-3
    s = sp.sample(np.random.default_rng(0), 20_000)
    for i in range(2):
        assert stats.kstest(s[:, i], _coord_cdf(i, sp)).pvalue > P_MIN
    assert np.isneginf(sp.log_density(sp.hi + 0.1)[0])
    # far_prob 0 is the uniform prior on Omega
    u = CentreSpace.from_data(X, 0.1)
    np.testing.assert_allclose(u.log_density(u.sample(np.random.default_rng(1), 5)), -u.log_volume)


@pytest.mark.parametrize("moves", [("birth", "death", "split", "merge", "update"), ("birth", "death")])
def test_prior_recovery(moves):
    tr = _run(moves, 300_000, 30)
    ks = tr.k[tr.kept]
    assert _chi2_k(ks, _prior_pk()) > P_MIN, (moves, ks.mean())
    c = _one_centre_each(tr)
    for i in range(2):
        assert stats.kstest(c[:, i], _coord_cdf(i)).pvalue > P_MIN, (moves, i)


def test_prior_recovery_update_only():
    init = {"centres": OMEGA.sample(np.random.default_rng(5), 4)}
    tr = _run(("update",), 100_000, 20, init=init)
    assert np.all(tr.k == 4)
    allc = np.concatenate([tr.sample_centres(s) for s in range(tr.n_samples)])
    for i in range(2):
        assert stats.kstest(allc[::4, i], _coord_cdf(i)).pvalue > P_MIN


def test_prior_invariance_split_merge_only():
    "Started from exact prior draws, split/merge alone must leave k and the centres prior-distributed."
    rng = np.random.default_rng(11)
    pk = _prior_pk()
    finals, cs, total = [], [], 0
    for _ in range(4000):
        init = {"centres": OMEGA.sample(rng, rng.choice(KMAX + 1, p=pk))}
        tr = _run(("split", "merge"), 25, 1, init=init, seed=int(rng.integers(2**31)), split_scale=0.25,
                  burn_in=24)
        tr_k = tr.k[-1]
        finals.append(tr_k)
        total += tr.n_accepted[2] + tr.n_accepted[3]
        if tr_k:
            c = tr.sample_centres(tr.n_samples - 1)
            cs.append(c[rng.integers(len(c))])
    assert total > 3000
    assert _chi2_k(np.array(finals), pk) > P_MIN
    cs = np.array(cs)
    for i in range(2):
        assert stats.kstest(cs[:, i], _coord_cdf(i)).pvalue > P_MIN


def test_the_coordinate_test_rejects_the_uniform_prior():
    "Power: the centres of the uniform prior on the far box fail the near/far KS test."
    tr = _run(("birth", "death", "split", "merge", "update"), 300_000, 30,
              prior=PRIOR.replace(iota=1.0, iota_far=None))
    c = _one_centre_each(tr)
    assert min(stats.kstest(c[:, i], _coord_cdf(i)).pvalue for i in range(2)) < 1e-6


def test_log_posterior_matches_dense():
    from rbf_bayes.posterior import log_posterior
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(0, 1, 25))[:, None]
    y = np.sin(6 * x[:, 0]) + 0.3 * rng.normal(size=25)
    for cp in ("ridge", "g"):
        prior = RBFPrior(k_max=6, coef_prior=cp, iota_far=1.0, far_prob=0.8)
        tr = sample_rjmcmc(x, y, prior=prior, config=RJConfig(n_iter=400, burn_in=200, thin=5),
                           rng=np.random.default_rng(0), basis="gaussian", width=0.2)
        om = CentreSpace.from_data(x, prior.iota, prior.iota_far, prior.far_prob)
        # some recorded centre lies outside the near box, where the density is the far component's alone
        assert any(np.any((c < om.near_lo) | (c > om.near_hi)) for c in map(tr.sample_centres, range(tr.n_samples)))
        for s, it in enumerate(tr.kept):
            dense = log_posterior(x, y, tr.sample_centres(s), tr.Lambda[it], tr.delta2[it], prior, "gaussian", 0.2, om)
            np.testing.assert_allclose(tr.log_posterior[it], dense, rtol=1e-9)


def test_cython_and_reference_agree_in_distribution():
    """As tests/test_rjmcmc.py's check, under the near/far prior: E[k], E[sigma^2] and each move's acceptance rate
    within 4.5 combined between-chain SE, over 12 chains of each sampler. (Six chains, as the uniform prior's check
    has, gave z = 4.6 on the death rate at these seeds; 24 chains at the same seeds gave |z| <= 1.1 on every quantity,
    and 12 chains at seeds 2000.. |z| <= 2.2: six chains' SE of an acceptance rate is too rough an estimate here.)"""
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(0, 1, 25))[:, None]
    y = np.sin(6 * x[:, 0]) + 0.3 * rng.normal(size=25)
    prior = RBFPrior(k_max=5, iota_far=1.0, far_prob=0.4)
    cfg = RJConfig(n_iter=2500, burn_in=500, thin=500, rw_var=0.01, split_scale=0.1)
    out = {}
    for name, fn in (("c", sample_rjmcmc), ("r", sample_rjmcmc_reference)):
        rows = []
        for seed in range(12):
            tr = fn(x, y, prior=prior, config=cfg, rng=np.random.default_rng(1000 + seed), basis="gaussian", width=0.15)
            rates = tr.n_accepted / np.maximum(tr.n_proposed, 1)
            rows.append(np.concatenate([[tr.k[500:].mean(), tr.sigma2[500:, 0].mean()], rates]))
        out[name] = np.array(rows)
    a, b = out["c"], out["r"]
    se = np.sqrt(a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b))
    assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4.5 * se), (a.mean(0), b.mean(0), se)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="iota_far"):
        RBFPrior(iota=0.5, iota_far=0.2)
    with pytest.raises(ValueError, match="far_prob"):
        RBFPrior(iota_far=1.0, far_prob=1.0)
    with pytest.raises(ValueError, match="far_prob"):
        CentreSpace(np.zeros(2), np.ones(2), far_prob=-0.1)
    with pytest.raises(ValueError, match="near box"):
        CentreSpace(np.zeros(2), np.ones(2), np.full(2, -1.0), np.ones(2), far_prob=0.2)
