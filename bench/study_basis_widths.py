"""Issue 35, evidence before any C work: two of Holmes & Mallick's (1998) choices, and the ridge prior's GP limit,
on the default's model.

A prototype on the NumPy reference sampler (`rjmcmc._RefModel`, its scale step and Gibbs block): the default's model
(Gaussian bases, width w = sqrt(d) on standardised inputs and outputs, learned per-input scales s,
`priors.REGRESSOR_PRIOR`: ridge coefficients, k ~ NB(10, 1/2), centres reaching beyond the data) in arm
`fixed_width`, against

- `basis_widths`: a log width omega_i per basis, phi_i(x) = exp(-||diag(s)(x - mu_i)||^2 / (w^2 exp(2 omega_i))),
  omega_i ~ N(0, tau^2) i.i.d. The birth draws omega from that prior (proposal = prior: the ratio is the fixed-width
  birth's); a sweep of random-walk steps on each omega_i is accepted with the likelihood ratio times
  N(omega'; 0, tau^2) / N(omega; 0, tau^2);
- `data_centres`: each centre one of the N training inputs, uniformly (`DataCentres`; the birth draws from it, the
  update proposes a data point uniformly with probability varpi, else one of the current centre's ten nearest);
- `gp_limit`: the ridge prior's GP limit. The bases' columns are divided by sqrt(k), so a basis coefficient's prior
  variance is sigma^2 delta^2 / k (the linear part's stays sigma^2 delta^2). Given k, this is the default's model with
  another design: the marginal likelihood, the Gibbs block and every move's ratio are the default's with that design,
  and no move is new. As k grows with centres i.i.d. on Omega, the bases' sum tends to a Gaussian process whose
  kernel is sigma^2 delta^2 E_mu[phi(x; mu) phi(x'; mu)], for Gaussian bases on a wide Omega the ARD
  squared-exponential kernel with length scales sqrt(2) w / s_i (exp6_learned_basis derives it).
  `gp_limit_k30`: with a prior on k of mean 30 (eps1 = 29.5); `gp_limit_k30_d30`: and delta^2's prior scale
  beta_delta2 = 300, so that a coefficient's prior variance at k = 30 is the default's. `gp_limit_all`: every column
  (the linear part's too) divided by sqrt(max(k, 1)), with gp_limit_k30_d30's priors: the default's model with
  delta^2 | k ~ IG(2, 300 / max(k, 1)), the form the package builds (`RBFPrior(delta2_per_basis=True)`).

Every arm runs birth, death and the centre update (split and merge are off in all of them: widths would need a
matched split of omega), the log-scale step and the Gibbs block; no input selection and no tempering. The arms
differ in the one choice only, so the paired difference of their errors is its effect at this run length. Fitted on
the bench's splits (`bench_defaults.cases`), the ARD GP in the same run for scale; predictions from the kept draws,
new inputs held in the training range as the package's default does.

    python bench/study_basis_widths.py --cases boston robot --splits 2 --n-iter 6000 --chains 2 --peers gp
    python bench/study_basis_widths.py --cases boston robot --splits 2 --arms fixed_width data_centres --peers gp
    python bench/study_basis_widths.py --cases boston robot --splits 2 --arms fixed_width gp_limit gp_limit_k30
    python bench/study_basis_widths.py --cases boston robot --splits 2 --arms gp_limit_k30_d30 --peers
    python bench/study_basis_widths.py --cases sinc --splits 1 --n-iter 600 --chains 1 --peers    # smoke run
    python bench/study_basis_widths.py --check-prior    # prior recovery of the width moves (likelihood off)
"""
import argparse
import dataclasses
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import bench_defaults as B  # noqa: E402

from rbf_bayes.basis import sq_distances  # noqa: E402
from rbf_bayes.moves import log_ratio_birth, log_ratio_death  # noqa: E402
from rbf_bayes.posterior import dense_summaries, log_marginal_likelihood, log_ml_terms_known  # noqa: E402
from rbf_bayes.priors import REGRESSOR_PRIOR  # noqa: E402
from rbf_bayes.rjmcmc import RJConfig, _ref_gibbs, _ref_scale_step, _ref_update, _reference_start, _RefModel  # noqa: E402


@dataclasses.dataclass(kw_only=True, eq=False)
class _WidthModel(_RefModel):
    "The reference model with a log width per basis (the state's `w`, aligned with its centres)."
    tau: float = 0.5            # prior sd of omega_i
    w_step: float = 0.3         # random-walk sd of the omega_i step
    learn_w: bool = True        # False: every omega_i = 0 (the default's model)
    inv_k: bool = False         # True: the bases' columns divided by sqrt(k) (ridge prior variance sigma^2 delta^2 / k)
    inv_k_all: bool = False     # True: every column divided by sqrt(max(k, 1)) (delta^2's prior scale beta / max(k, 1))

    def design(self, st, S_, s_=None, g_=None, kind_=None, w_=None):
        "The reference's signature (g_ and kind_ unused: no selection, Gaussian bases); w_: the log widths."
        return self.design_at(self.x, S_, st.w if w_ is None else w_, st.sc if s_ is None else s_)

    def design_at(self, xn, S, w, sc):
        "[1, x, phi_i(x)] at inputs xn for centres S, log widths w and scales sc."
        Phi = np.exp(-sq_distances(xn, S, sc) * np.exp(-2.0 * np.asarray(w))[None, :] / self.width ** 2)
        if self.inv_k and len(S):
            Phi /= math.sqrt(len(S))
        D = np.hstack([np.ones((len(xn), 1)), xn, Phi])
        return D / math.sqrt(max(len(S), 1)) if self.inv_k_all else D

    def lml(self, st, S_, s_=None, g_=None, kind_=None, w_=None):
        "log p(y | the state with centres S_ and log widths w_); -inf for a singular design (no kernel rule here)."
        if self.config.prior_only:
            return 0.0
        p = self.prior
        try:
            D_ = self.design(st, S_, s_, g_, kind_, w_)
            if self.s2k is None:
                return log_marginal_likelihood(D_, st.Y, st.d2, p)
            return float(np.sum(log_ml_terms_known(*dense_summaries(D_, st.Y, st.d2, p), self.N, self.s2k)))
        except np.linalg.LinAlgError:
            return -math.inf


def _birth(m, st, rng):
    k = len(st.S)
    S1 = np.vstack([st.S, m.om.sample(rng)[0]])
    w1 = np.append(st.w, m.tau * rng.standard_normal() if m.learn_w else 0.0)
    new = m.lml(st, S1, w_=w1)
    if math.log(rng.random()) < log_ratio_birth(new - st.cur, k, st.Lam, m.k_max, m.config.c_star):
        st.S, st.w, st.cur = S1, w1, new


def _death(m, st, rng):
    k = len(st.S)
    j = rng.integers(k)
    S1, w1 = np.delete(st.S, j, 0), np.delete(st.w, j)
    new = m.lml(st, S1, w_=w1)
    if math.log(rng.random()) < log_ratio_death(new - st.cur, k, st.Lam, m.k_max, m.config.c_star):
        st.S, st.w, st.cur = S1, w1, new


class DataCentres:
    """The centre prior of Holmes & Mallick (1998): each centre one of the N (standardised) training inputs, uniformly.
    The birth draws from it (so the ratio is the plain birth's); the update proposes, with probability varpi, a data
    point uniformly (an independence proposal equal to the prior: the likelihood ratio alone), else one of the
    current centre's `n_nb` nearest data points, accepted only if the current one is among the proposal's `n_nb`
    nearest as well (both directions then have probability 1 / n_nb)."""

    def __init__(self, x, n_nb=10):
        self.x, self.n_nb = x, n_nb
        d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        np.fill_diagonal(d2, np.inf)
        self.nb = np.argsort(d2, axis=1)[:, :n_nb]
        self.index = {r.tobytes(): i for i, r in enumerate(x)}

    def sample(self, rng, k=1):
        return self.x[rng.integers(len(self.x), size=k)]

    def neighbour_move(self, mu, rng):
        "A proposed centre near mu and whether the reverse move could propose mu (else the move is refused)."
        i = self.index[mu.tobytes()]
        j = self.nb[i, rng.integers(self.n_nb)]
        return self.x[j], i in self.nb[j]


def _update_data(m, st, rng):
    "The centre update sweep of the data-point prior (`DataCentres`)."
    for j in range(len(st.S) - 1, -1, -1):
        if rng.random() < m.config.varpi:
            prop, ok = m.om.sample(rng)[0], True
        else:
            prop, ok = m.om.neighbour_move(st.S[j], rng)
        if not ok:
            continue
        S1 = st.S.copy()
        S1[j] = prop
        new = m.lml(st, S1)
        if math.log(rng.random()) < new - st.cur:
            st.S, st.cur = S1, new


def _width_sweep(m, st, rng):
    for j in range(len(st.S)):
        w1 = st.w.copy()
        w1[j] += m.w_step * rng.standard_normal()
        new = m.lml(st, st.S, w_=w1)
        dlp = 0.5 * (st.w[j] ** 2 - w1[j] ** 2) / m.tau ** 2
        st.n_w[0] += 1
        if math.log(rng.random()) < new - st.cur + dlp:
            st.w, st.cur = w1, new
            st.n_w[1] += 1


def sample(x, Y, rng, n_iter, learn_w, tau=0.5, data_centres=False, prior_only=False, inv_k=False,
           prior=REGRESSOR_PRIOR):
    "One chain; every fifth iteration of the second half kept: (centres, omega, scales, alpha draw, sigma^2), k."
    d = x.shape[1]
    cfg = RJConfig(n_iter=n_iter, burn_in=n_iter // 2, learn_scales=True, moves=("birth", "death", "update"),
                   prior_only=prior_only)
    m0, st = _reference_start(x, Y, prior, cfg, "gaussian", math.sqrt(d), None, rng)
    m = _WidthModel(**{f.name: getattr(m0, f.name) for f in dataclasses.fields(_RefModel)}, tau=tau, learn_w=learn_w,
                   inv_k=inv_k is True, inv_k_all=inv_k == "all")
    if data_centres:
        m.om = DataCentres(x)
    st.w, st.n_w = np.zeros(0), [0, 0]
    st.cur = m.lml(st, st.S)
    kept, ks = [], []
    for it in range(n_iter):
        b, dd, _, _ = m.probs(len(st.S), st.Lam)
        u = rng.random()
        if u < b:
            _birth(m, st, rng)
        elif u < b + dd:
            _death(m, st, rng)
        elif len(st.S):
            (_update_data if data_centres else _ref_update)(m, st, rng)
        if learn_w and len(st.S):
            _width_sweep(m, st, rng)
        _ref_scale_step(m, st, rng)
        _ref_gibbs(m, st, rng)
        ks.append(len(st.S))
        if it >= cfg.burn_in and (it - cfg.burn_in) % 5 == 0:
            kept.append((st.S.copy(), st.w.copy(), st.sc.copy(), None if prior_only else st.alpha.copy(),
                         st.sig2.copy()))
    return m, kept, np.array(ks), st.n_w


def proto(learn_w, n_iter, n_chains=2, tau=0.5, data_centres=False, inv_k=False, prior=REGRESSOR_PRIOR):
    "A bench configuration: `n_chains` chains of the prototype, pooled; predictions from the kept draws."
    def fit(X, y, Xt, seed):
        y2 = np.reshape(y, (len(y), -1))
        mx, sx, my, sy = X.mean(0), X.std(0), y2.mean(0), y2.std(0)
        xs, xts, ys = (X - mx) / sx, (Xt - mx) / sx, (y2 - my) / sy
        F, sig, ks, acc = [], [], [], []
        for c in range(n_chains):
            m, kept, k, n_w = sample(xs, ys, np.random.default_rng([seed, c]), n_iter, learn_w, tau,
                                       data_centres, inv_k=inv_k, prior=prior)
            ks.append(k[n_iter // 2:])
            acc.append(n_w[1] / max(n_w[0], 1))
            xin = np.clip(xts, m.x.min(0), m.x.max(0))   # held in the training range, as the package's default
            for S, w, sc, al, s2 in kept:
                F.append(m.design_at(xin, S, w, sc) @ al)
                sig.append(np.sqrt(s2))
        F = np.array(F) * sy + my                      # (S, n, c)
        sig = np.array(sig) * sy                       # (S, c)
        ks = np.concatenate(ks)
        print(f"    k mean {ks.mean():.1f}, width-step acceptance {np.mean(acc):.2f}", flush=True)
        outs = [B._draws_result(F[:, :, j], sig[:, j], seed) for j in range(F.shape[2])]
        if np.ndim(y) == 1:
            return outs[0]
        res = {v: np.stack([o[v] for o in outs], 1) for v in ("pred", "lo", "hi")}
        return dict(res, model=None, lpd=lambda yt: sum(o["lpd"](yt[:, j]) for j, o in enumerate(outs)))
    return fit


def check_prior(tau=0.5, n_iter=40_000):
    """Prior recovery of the width moves: with the likelihood switched off, the kept omega_i must be N(0, tau^2) and
    the kept k must follow the prior on k (the birth and death are the reference's; the omega draws and steps are
    new). Kept draws are every fifth iteration of the second half; the tests are on every 20th of them."""
    from scipy import stats

    x = np.random.default_rng(0).random((30, 2))
    m, kept, ks, _ = sample(x, np.zeros((30, 1)), np.random.default_rng(1), n_iter, True, tau, prior_only=True)
    om = np.concatenate([w for _, w, *_ in kept[::20]])
    print(f"omega: {len(om)} draws, mean {om.mean():+.3f}, sd {om.std():.3f} (prior 0, {tau}); "
          f"KS p {stats.kstest(om, 'norm', args=(0, tau)).pvalue:.3f}")
    k = np.array([len(S) for S, *_ in kept])
    # the prior on k with Lambda integrated: negative binomial NB(eps1 + 1/2, eps2 / (1 + eps2)), truncated at k_max
    p = REGRESSOR_PRIOR
    pk = stats.nbinom.pmf(np.arange(m.k_max + 1), p.eps1 + 0.5, p.eps2 / (1 + p.eps2))
    pk /= pk.sum()
    from rbf_bayes.convergence import ess
    se = k.std() / math.sqrt(ess(k[None, :]))
    print(f"k: mean {k.mean():.2f} (Monte Carlo se {se:.2f}) against the prior's {np.arange(m.k_max + 1) @ pk:.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="*", default=["boston", "robot"])
    ap.add_argument("--splits", type=int, default=2)
    ap.add_argument("--only", type=int, nargs="*", default=None, help="only these splits (seeds) of every case")
    ap.add_argument("--n-iter", type=int, default=6000)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--tau", type=float, default=0.5)
    ap.add_argument("--peers", nargs="*", default=["gp"])
    ap.add_argument("--arms", nargs="*", default=["fixed_width", "basis_widths"])
    ap.add_argument("--check-prior", action="store_true", help="prior recovery of the width moves, then stop")
    a = ap.parse_args()
    if a.check_prior:
        return check_prior(a.tau)
    B.CONFIGS["fixed_width"] = proto(False, a.n_iter, a.chains)
    B.CONFIGS["basis_widths"] = proto(True, a.n_iter, a.chains, a.tau)
    B.CONFIGS["data_centres"] = proto(False, a.n_iter, a.chains, data_centres=True)
    B.CONFIGS["gp_limit"] = proto(False, a.n_iter, a.chains, inv_k=True)
    B.CONFIGS["gp_limit_k30"] = proto(False, a.n_iter, a.chains, inv_k=True, prior=REGRESSOR_PRIOR.replace(eps1=29.5))
    # and delta^2's prior scale times 30, so that a coefficient's prior variance at k = 30 is the default's
    B.CONFIGS["gp_limit_k30_d30"] = proto(False, a.n_iter, a.chains, inv_k=True,
                                          prior=REGRESSOR_PRIOR.replace(eps1=29.5, beta_delta2=300.0))
    # every column / sqrt(max(k, 1)), the linear part too: the default's model with delta^2 ~ IG(2, 300 / max(k, 1))
    B.CONFIGS["gp_limit_all"] = proto(False, a.n_iter, a.chains, inv_k="all",
                                      prior=REGRESSOR_PRIOR.replace(eps1=29.5, beta_delta2=300.0))
    warnings.simplefilter("ignore")
    t = time.time()
    n_splits = max(a.splits, max(a.only) + 1) if a.only else a.splits   # --only 4 runs split 4 whatever --splits says
    rows = B.run(a.cases, [*a.arms, *a.peers], n_splits=n_splits, splits=a.only)
    B.print_summary(B.summarise(rows, "fixed_width"), "fixed_width")
    print(f"\n{time.time() - t:.0f} s")


if __name__ == "__main__":
    main()
