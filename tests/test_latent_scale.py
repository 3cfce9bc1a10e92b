"""The probit's latent scale move (nbs/05c_probit, "A scale move"), binary and multinomial: repeated, it keeps the
posterior, and a move without its Jacobian is caught; the classifier uses it where it applies; the arguments it cannot
take are refused by name. That the chains with the move and without have one law of delta^2 (both coefficient priors,
two classes and three) and that the C loop and the reference draw the same binary chain with it are 05c's checks
(nbdev_test runs them; not repeated here)."""
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
Y3 = np.digitize(X[:, 0] + 0.5 * np.random.default_rng(1).normal(size=40), [-0.5, 0.5])


def _log_d2(step, seed, n, ref=False, coef="ridge", y=Y):
    "k = 0 (no centres, moves off but the update), delta^2 free: log delta^2 at the kept draws, (draws, outputs)."
    cfg = RJConfig(n_iter=n, burn_in=1000, thin=10, moves=("update",), fix_Lambda=1.0, latent_scale_step=step)
    t = sample_probit(X, y, prior=RBFPrior(k_max=4, coef_prior=coef), config=cfg, rng=np.random.default_rng(seed),
                      init={"centres": np.empty((0, 1))}, reference=ref)
    return np.log(t.delta2[t.kept])


def _slipped(m, st, rng, base=None):
    "The move without the map's Jacobian g^(N c + 2 c): the ratio of the densities alone, the classic slip."
    import dataclasses
    import math

    from rbf_bayes.priors import log_delta2_prior
    lg = m.config.latent_scale_step * rng.standard_normal()
    g, b = math.exp(lg), 0.0 if base is None else np.asarray(base)[:, None]
    Y1, d1 = b + g * (st.Y - b), st.d2 * math.exp(2 * lg)
    new = m.lml(dataclasses.replace(st, Y=Y1, d2=d1), st.S)
    k = len(st.S)
    lr = new - st.cur + float(np.sum(log_delta2_prior(d1, m.prior, k) - log_delta2_prior(st.d2, m.prior, k)))
    if math.log(rng.random()) < lr:
        st.Y, st.d2, st.cur = Y1, d1, new
        return g
    return None


def _five_times(move):
    "The move run five times per iteration; the product of the accepted g (the maps compose), None if none was."
    def run(m, st, rng, base=None):
        gs = [g for g in (move(m, st, rng, base) for _ in range(5)) if g is not None]
        return float(np.prod(gs)) if gs else None
    return run


@pytest.mark.parametrize("classes", [2, 3])
def test_the_move_repeated_keeps_the_posterior_and_one_without_its_jacobian_does_not(monkeypatch, classes):
    """Where the move is one kernel among exact Gibbs steps its error is diluted (the delta^2 | alpha draw resets
    delta^2 every iteration), so the reference runs it five times per iteration: the right move still gives the law of
    log delta^2 of the C loop's chains without it, and the move without the map's Jacobian g^(N c + 2 c) is told from
    it (KS, p < 0.001; once per iteration the binary slip gave p 0.02 here, so the repeat is what makes the check able
    to fail). Two classes: the binary probit's move (z -> g z); three: the multinomial's (every utility's difference
    from class 0's times g, each output's delta^2 checked; 3,000 reference iterations, where the slip's p is 0.000 at
    seeds 3 and 4). A slip in the delta^2 part alone (g^(N c) for g^(N c + 2 c)) is not seen at this size."""
    y = Y if classes == 2 else Y3
    off = np.concatenate([_log_d2(0.0, 10 + s, 60_000, y=y) for s in range(4)])[::10]
    right = rj._ref_latent_scale
    for move, same in ((right, True), (_slipped, False)):
        monkeypatch.setattr(rj, "_ref_latent_scale", _five_times(move))
        got = _log_d2(0.5, 3, 6000 if classes == 2 else 3000, ref=True, y=y)
        p = min(stats.ks_2samp(off[:, o], got[:, o]).pvalue for o in range(classes - 1))
        assert (p > P_MIN / (classes - 1)) if same else (p < P_MIN), (move.__name__, classes, p)


def test_the_classifier_uses_it_where_it_applies():
    "The probit gets LATENT_SCALE_STEP, with two classes and with three; the discriminant does not (no move there)."
    from rbf_bayes import RJMCMCClassifier
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 2)); y2 = (x[:, 0] > 0).astype(int); y3 = np.digitize(x[:, 0], [-0.5, 0.5])
    fit = lambda y, **k: RJMCMCClassifier(n_iter=600, burn_in=300, n_chains=1, random_state=0, **k).fit(x, y)  # noqa
    assert fit(y2).trace_.meta.config["latent_scale_step"] == LATENT_SCALE_STEP
    assert fit(y3).trace_.meta.config["latent_scale_step"] == LATENT_SCALE_STEP
    assert fit(y2, link="discriminant").trace_.meta.config["latent_scale_step"] == 0.0


def test_what_it_cannot_take_is_refused():
    with pytest.raises(ValueError, match="latent_scale_step"):
        RJConfig(latent_scale_step=-0.1)
    with pytest.raises(TypeError, match="latent_scale_step"):
        RJConfig(latent_scale_step="0.3")
    cfg = RJConfig(n_iter=50, burn_in=10, latent_scale_step=0.3)
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
