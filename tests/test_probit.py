"""Probit classification (nbs/05c_probit.ipynb): the C loop against the NumPy reference sampler, in distribution, for
the binary (Albert & Chib) and the multinomial (three classes) model. Both run the same model — the Gaussian marginal
with sigma^2 = 1, the same moves and the same latent step — the C loop through `RJCore` with `fixed_sigma2` and
`set_targets`, the reference through dense linear algebra (`sample_rjmcmc_reference(latent=...)`)."""
import numpy as np
import pytest

from rbf_bayes.priors import RBFPrior
from rbf_bayes.probit import sample_probit
from rbf_bayes.rjmcmc import RJConfig

X_TEST = np.array([[-0.8], [-0.2], [0.3], [0.8]])


def _problem(n_classes):
    rng = np.random.default_rng(11)
    x = np.sort(rng.uniform(-1, 1, 25))[:, None]
    f = np.sin(4 * x[:, 0])
    y = (f + 0.5 * rng.normal(size=25) > 0).astype(int) if n_classes == 2 else \
        np.digitize(f + 0.3 * rng.normal(size=25), [-0.4, 0.4])
    return x, y


@pytest.mark.parametrize("n_classes", [2, 3])
def test_cython_and_reference_probit_agree_in_distribution(n_classes):
    """Six independent chains of each sampler (k mixes slowly, so the comparison uses the between-chain spread):
    E[k], the acceptance rate of every move and the posterior-mean class probabilities at four inputs, each within
    4.5 combined standard errors."""
    x, y = _problem(n_classes)
    cfg = RJConfig(n_iter=2500, burn_in=500, thin=20, rw_var=0.01, split_scale=0.1)
    out = {False: [], True: []}
    for ref in (False, True):
        for seed in range(6):
            t = sample_probit(x, y, prior=RBFPrior(k_max=4), config=cfg, rng=np.random.default_rng(2000 + seed),
                              basis="gaussian", width=0.3, reference=ref)
            assert t.meta["sampler"] == ("reference" if ref else "cython") and t.n_classes == n_classes
            rates = t.n_accepted / np.maximum(t.n_proposed, 1)
            P = t.predict_proba(X_TEST)
            out[ref].append(np.concatenate([[t.k[500:].mean()], rates, np.ravel(P)]))
    a, b = np.array(out[False]), np.array(out[True])
    se = np.sqrt(a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b))
    diff = np.abs(a.mean(0) - b.mean(0))
    bad = np.flatnonzero(diff >= 4.5 * se + 1e-12)
    assert bad.size == 0, [
        (int(i), round(float(a.mean(0)[i]), 4), round(float(b.mean(0)[i]), 4), round(float(se[i]), 4)) for i in bad
    ]


def test_binary_latent_step_in_c_follows_the_python_step():
    """The binary probit's latent step runs in the C loop (RJCore.enable_probit): the same chain as the Python step
    between one-iteration runs, up to the summation order of f = D alpha (same k path over 3,000 Ripley iterations, log
    posteriors within 1e-8)."""
    import rbf_bayes.probit as P
    from rbf_bayes.datasets import load_ripley
    from rbf_bayes.rjmcmc import RJConfig
    x, y, _, _ = load_ripley()
    cfg = RJConfig(n_iter=3000, burn_in=1000, thin=5)
    a = P.sample_probit(x, y, config=cfg, rng=np.random.default_rng(0), basis="thin_plate")
    orig = P._ProbitRun.__init__
    P._ProbitRun.__init__ = lambda self, *ar, **k: orig(self, *ar, **k, in_python=True)
    try:
        b = P.sample_probit(x, y, config=cfg, rng=np.random.default_rng(0), basis="thin_plate")
    finally:
        P._ProbitRun.__init__ = orig
    np.testing.assert_array_equal(a.k, b.k)
    np.testing.assert_allclose(a.log_posterior, b.log_posterior, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(a.sample_k(), b.sample_k())


def test_multinomial_utility_step_in_c_follows_the_python_step():
    """The multinomial probit's utility sweep runs in the C loop too (RJCore.enable_probit with the utilities): the same
    chain as `probit.sample_utilities` between one-iteration runs, up to the summation order of F = D alpha (same k
    path over 3,000 iterations on three classes in two inputs, log posteriors within 1e-8), and the utilities read back
    keep each row's largest at its class."""
    import rbf_bayes.probit as P
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (120, 2))
    y = np.digitize(x[:, 0] + 0.6 * x[:, 1] ** 2 + 0.3 * rng.normal(size=120), [-0.3, 0.4])
    assert np.bincount(y).min() > 20
    cfg = RJConfig(n_iter=3000, burn_in=1000, thin=5)
    a = P.sample_probit(x, y, config=cfg, rng=np.random.default_rng(0))
    orig = P._ProbitRun.__init__
    P._ProbitRun.__init__ = lambda self, *ar, **k: orig(self, *ar, **k, in_python=True)
    try:
        b = P.sample_probit(x, y, config=cfg, rng=np.random.default_rng(0))
    finally:
        P._ProbitRun.__init__ = orig
    assert a.n_classes == 3 and np.ptp(a.k) > 0
    np.testing.assert_array_equal(a.k, b.k)
    np.testing.assert_allclose(a.log_posterior, b.log_posterior, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(a.sample_k(), b.sample_k())
    run = P.probit_run(x, y, config=RJConfig(n_iter=200, burn_in=100), rng=np.random.default_rng(1))
    run.run(False)
    U = run.core.utilities()
    assert U.shape == (120, 3) and (U.argmax(1) == y).all()


def test_enable_probit_refuses_bad_shapes():
    "The multinomial step's buffers are checked: utilities of the wrong shape and classes out of range name the shape."
    import rbf_bayes.probit as P
    x = np.random.default_rng(0).uniform(-1, 1, (30, 1)); y = np.arange(30) % 3
    run = P.probit_run(x, y, config=RJConfig(n_iter=10, burn_in=5), rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match=r"\(30, 3\)"):
        run.core.enable_probit(y, np.zeros((30, 2)))
    with pytest.raises(ValueError, match="classes in 0..c"):
        run.core.enable_probit(y + 1, np.zeros((30, 3)))


def test_the_reference_takes_a_latent_step_by_its_protocol():
    """`sample_rjmcmc_reference(latent=...)` with the latent scale move takes a `LatentStep` (callable, with base() and
    rescale(g)); a bare function is refused there with an error naming the argument, before anything runs (it used to
    be probed by hasattr), and taken without the move; something not callable is refused."""
    from rbf_bayes.probit import _RefLatent
    from rbf_bayes.rjmcmc import LatentStep, sample_rjmcmc_reference
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 1, (20, 1)), (rng.uniform(size=20) > 0.5).astype(int)
    assert isinstance(_RefLatent(y, None, rng), LatentStep)
    with pytest.raises(TypeError, match="latent must be a LatentStep"):
        sample_rjmcmc_reference(x, y.astype(float), config=RJConfig(n_iter=5, burn_in=0, latent_scale_step=0.3),
                                rng=rng, latent=lambda F: F)
    t = sample_rjmcmc_reference(x, y.astype(float), config=RJConfig(n_iter=5, burn_in=0), rng=rng, latent=lambda F: F)
    assert len(t.k) == 5
    with pytest.raises(TypeError, match="latent must be callable"):
        sample_rjmcmc_reference(x, y.astype(float), config=RJConfig(n_iter=5, burn_in=0), rng=rng, latent=3.0)


def test_class_log_probabilities_are_quiet_where_a_product_rounds_below_zero():
    """Three classes with utilities up to ~10 apart: the closed form's product rounds below 0 for some entries, which
    the log's small-probability path replaces; no RuntimeWarning may reach the user (the kept output of 05c's check
    showed "invalid value encountered in log" until stop 83), and every entry is finite and matches the sums of
    log_ndtr."""
    import warnings

    from rbf_bayes.probit import class_log_probabilities, class_probabilities
    U3 = np.random.default_rng(13).normal(size=(20_000, 3)) * 3
    U3[:, 0] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        L = class_log_probabilities(U3)
    assert np.isfinite(L).all()
    np.testing.assert_allclose(np.exp(L).sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(L), class_probabilities(U3), rtol=1e-10, atol=1e-300)
