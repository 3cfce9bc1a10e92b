"""The binary probit's latent scale move (nbs/05c_probit, "A scale move"): repeated, it keeps the posterior, and a move
without its Jacobian is caught; the classifier uses it where it applies; the arguments it cannot take are refused by
name. That the chains with the move and without have one law of delta^2 (both coefficient priors) and that the C loop
and the reference draw the same chain with it are 05c's checks (nbdev_test runs them; not repeated here)."""
import numpy as np
import pytest
from scipy import stats

import rbf_bayes.rjmcmc as rj
from rbf_bayes.priors import RBFPrior
from rbf_bayes.probit import LATENT_SCALE_STEP, sample_probit
from rbf_bayes.rjmcmc import RJConfig

P_MIN = 1e-3
X = np.random.default_rng(0).normal(size=(40, 1))
Y = (X[:, 0] + 0.5 * np.random.default_rng(1).normal(size=40) > 0).astype(int)


def _log_d2(step, seed, n, ref=False, coef="ridge"):
    "k = 0 (no centres, moves off but the update), delta^2 free: log delta^2 at the kept draws."
    cfg = RJConfig(n_iter=n, burn_in=1000, thin=10, moves=("update",), fix_Lambda=1.0, latent_scale_step=step)
    t = sample_probit(X, Y, prior=RBFPrior(k_max=4, coef_prior=coef), config=cfg, rng=np.random.default_rng(seed),
                      init={"centres": np.empty((0, 1))}, reference=ref)
    return np.log(t.delta2[t.kept, 0])


def test_the_move_repeated_keeps_the_posterior_and_one_without_its_jacobian_does_not(monkeypatch):
    """Where the move is one kernel among exact Gibbs steps its error is diluted (the delta^2 | alpha draw resets
    delta^2 every iteration), so the reference runs it five times per iteration: the right move still gives the C
    loop's law of log delta^2, and the move without the map's Jacobian g^(N + 2) (the ratio of the densities alone, the
    classic slip) is told from it (KS, p < 0.001; once per iteration it gave p 0.07 here, so the repeat is what makes
    the check able to fail). A slip in the delta^2 part alone (g^N for g^(N + 2)) is not seen at this size."""
    import dataclasses
    import math

    from rbf_bayes.priors import log_delta2_prior

    def slipped(m, st, rng):
        lg = m.config.latent_scale_step * rng.standard_normal()
        Y1, d1 = st.Y * math.exp(lg), st.d2 * math.exp(2 * lg)
        new = m.lml(dataclasses.replace(st, Y=Y1, d2=d1), st.S)
        k = len(st.S)
        lr = new - st.cur + float(np.sum(log_delta2_prior(d1, m.prior, k) - log_delta2_prior(st.d2, m.prior, k)))
        if math.log(rng.random()) < lr:
            st.Y, st.d2, st.cur = Y1, d1, new
    good = np.concatenate([_log_d2(0.5, 10 + s, 60_000) for s in range(4)])[::10]
    right = rj._ref_latent_scale
    for move, same in ((right, True), (slipped, False)):
        monkeypatch.setattr(rj, "_ref_latent_scale", lambda m, st, rng, f=move: [f(m, st, rng) for _ in range(5)])
        p = stats.ks_2samp(good, _log_d2(0.5, 3, 6000, ref=True)).pvalue
        assert (p > P_MIN) if same else (p < P_MIN), (move.__name__, p)


def test_the_classifier_uses_it_where_it_applies():
    "The binary probit gets LATENT_SCALE_STEP; three classes and the discriminant do not (no move there)."
    from rbf_bayes import RJMCMCClassifier
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 2)); y2 = (x[:, 0] > 0).astype(int); y3 = np.digitize(x[:, 0], [-0.5, 0.5])
    fit = lambda y, **k: RJMCMCClassifier(n_iter=600, burn_in=300, n_chains=1, random_state=0, **k).fit(x, y)  # noqa
    assert fit(y2).trace_.meta.config["latent_scale_step"] == LATENT_SCALE_STEP
    assert fit(y3).trace_.meta.config["latent_scale_step"] == 0.0
    assert fit(y2, link="discriminant").trace_.meta.config["latent_scale_step"] == 0.0


def test_what_it_cannot_take_is_refused():
    with pytest.raises(ValueError, match="latent_scale_step"):
        RJConfig(latent_scale_step=-0.1)
    with pytest.raises(TypeError, match="latent_scale_step"):
        RJConfig(latent_scale_step="0.3")
    cfg = RJConfig(n_iter=50, burn_in=10, latent_scale_step=0.3)
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    with pytest.raises(ValueError, match="latent_scale_step.*two classes"):
        sample_probit(X, y3, config=cfg, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="latent_scale_step"):
        sample_probit(X, Y, config=RJConfig(n_iter=50, burn_in=10, latent_scale_step=0.3, fix_delta2=2.0),
                      rng=np.random.default_rng(0))
    import rbf_bayes.probit as P
    orig = P._ProbitRun.__init__
    P._ProbitRun.__init__ = lambda self, *a, **k: orig(self, *a, **k, in_python=True)
    try:
        with pytest.raises(ValueError, match="latent_scale_step"):
            sample_probit(X, Y, config=cfg, rng=np.random.default_rng(0))
    finally:
        P._ProbitRun.__init__ = orig
