# cython: language_level=3
# The likelihood seam: every reversible-jump loop reaches the marginal likelihood of a state through
# `log_ml` below, reading only the GramFactor summaries (explained sums of squares e_o = ||z_o||^2,
# log det(G + r I), y_o'y_o, the number of columns m).  A new likelihood (e.g. probit classification
# through latent z with sigma^2 = 1) is a new `kind` here, not a new loop.
#
# Derived in nbs/02_posterior.ipynb (collapsed: sigma^2 integrated against IG(v0/2, gamma0/2), eq. 14
# for the g-prior, eq. 49 for the ridge prior) and nbs/09_smc.ipynb (sigma^2 known); the NumPy
# reference is `rbf_bayes.kernel.state_log_ml` (`posterior.summaries_from_kernel`, then `posterior.log_ml_terms` or
# `posterior.log_ml_terms_known`).
from libc.math cimport log, log1p, INFINITY
from rbf_bayes._kernel cimport GramFactor

cdef enum LikelihoodKind:
    COLLAPSED = 0   # sigma_o^2 integrated out (RJMCMC, RJSA, BMARS)
    GAUSSIAN = 1    # sigma^2 known (TD-SMC given its variances; a latent-variable classifier with sigma^2 = 1)

cdef struct Likelihood:
    int kind            # LikelihoodKind
    int gprior          # 1: g-prior, coefficient covariance delta^2 sigma^2 (D'D)^{-1}; 0: ridge delta^2 sigma^2 I
    double n            # number of observed rows (N; t for TD-SMC)
    double a            # COLLAPSED: (v0 + n) / 2
    double gamma0       # COLLAPSED: gamma0 of the IG prior (0 for Jeffreys)
    double const        # COLLAPSED: the per-output constant of eq. 14 / 49
    double sigma2       # GAUSSIAN: the known noise variance (shared by the outputs)
    const double* delta2    # delta^2 of output o at delta2[o * delta2_stride]
    Py_ssize_t delta2_stride  # 1: one per output; 0: one shared by every output

cdef extern from "_likelihood.h":
    const double LOG_2PI "RBF_LOG_2PI"     # log(2 pi)
    const double YPY_REL_MIN "RBF_YPY_REL_MIN"   # sigma^2 draw: the floor of gamma0 + y'Py over gamma0 + y'y


cdef inline double log_ml(const Likelihood* lk, GramFactor g, bint proposed) noexcept nogil:
    """sum_o log p(y_o | state) of the current state, or of the pending proposal; -inf if y is (numerically)
    in the column space, where the collapsed likelihood is not defined."""
    cdef Py_ssize_t o, m = g.proposed_m() if proposed else g.m
    cdef double* e = g.ep if proposed else g.e
    cdef double* ld = g.ldp if proposed else g.ld
    cdef double tot = 0.0, d2, yPy, hl, q
    for o in range(g.c):
        d2 = lk.delta2[o * lk.delta2_stride]
        if lk.gprior:
            yPy = g.yy[o] - d2 / (1.0 + d2) * e[o]
            hl = -0.5 * m * log1p(d2)
        else:
            yPy = g.yy[o] - e[o]
            hl = -0.5 * m * log(d2) - 0.5 * ld[g.ofac[o]]
        if lk.kind == COLLAPSED:
            q = lk.gamma0 + yPy
            if not (q > 1e-300):
                return -INFINITY
            tot += lk.const + hl - lk.a * log(q)
        else:
            tot += -0.5 * lk.n * (LOG_2PI + log(lk.sigma2)) + hl - 0.5 * yPy / lk.sigma2
    return tot
