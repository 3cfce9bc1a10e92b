# cython: language_level=3
# Shared reversible-jump primitives, written once and inlined into every loop (`_rjmcmc.pyx`, `_bmars.pyx`,
# `_smc.pyx`): the move codes, the birth/death probabilities of eq. 22, the Metropolis-Hastings test (with
# the annealing factor of eq. 38), the Gamma-proposal MH step for a truncated-Poisson rate, and the
# propose -> ratio -> commit/reject tail on a GramFactor through the likelihood seam.  Each has a NumPy
# twin that is its specification: `moves.move_probabilities`, `posterior.sample_rate`, and
# `kernel.state_log_ml` (through `posterior.summaries_from_kernel` and `posterior.log_ml_terms`); and the round of
# swaps of the tempered ladders (`_rjmcmc.ladder_run`, `_bmars.ladder_run`), whose twin is `rjmcmc._SwapRound`.
from libc.math cimport exp, log, pow
from libc.stdint cimport int64_t
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_standard_uniform, random_standard_gamma
from rbf_bayes._kernel cimport GramFactor, log_trunc_poisson_norm
from rbf_bayes._likelihood cimport Likelihood, log_ml

# One set of move codes for every sampler and every trace (`rbf_bayes.moves.MOVE_CODES` is the Python view).
cdef enum Move:
    BIRTH = 0
    DEATH = 1
    SPLIT = 2
    MERGE = 3
    UPDATE = 4
    CHANGE = 5      # BMARS: a new knot / sign for one factor of one basis
    STAY = 6        # no move proposed (TD-SMC's zero move; RJ with nothing possible)

# The reversible-jump sampler's moves are the codes BIRTH .. UPDATE: its tables and counters have this many entries
cdef enum:
    N_RJ_MOVES = UPDATE + 1

# A GramFactor proposal
cdef enum Proposal:
    APPEND = 1      # the scratch column becomes the last column
    DELETE = 2      # column j goes
    REPLACE = 3     # column j goes, the scratch column becomes the last column


cdef inline void move_probs(double cst, double rate, Py_ssize_t k, Py_ssize_t top,
                            double* b, double* d) noexcept nogil:
    """eq. 22: b_k = cst min(1, rate / (k + 1)) for k < top, else 0; d_k = cst min(1, k / rate) for k >= 1, else 0."""
    b[0] = cst * (1.0 if rate >= k + 1 else rate / (k + 1)) if k < top else 0.0
    d[0] = cst * (1.0 if k >= rate else k / rate) if k >= 1 else 0.0


cdef inline bint mh_accept(bitgen_t* rng, double logr, double inv_t1, double dlogf) noexcept nogil:
    """log u < min(0, log r) + min(0, (1/T - 1) dlogf): the MH test, times the annealing factor of eq. 38
    (inv_t1 = 0 outside annealing).  A NaN ratio is a rejection (the uniform is drawn all the same)."""
    cdef double la = logr if logr < 0.0 else 0.0
    cdef double lt = inv_t1 * dlogf
    if lt < 0.0:
        la += lt
    cdef double lu = log(random_standard_uniform(rng))
    return lu < la and logr == logr


cdef inline bint rate_mh_step(bitgen_t* rng, double shape, double rate, Py_ssize_t kmax, const double* lgam,
                              double* lam, double* log_norm, bint exact) noexcept nogil:
    """One step for a Poisson rate with a Gamma hyperprior. Truncation of k at kmax given the rate (conditional
    hierarchy): independence MH with L* ~ Ga(shape, rate), the untruncated conditional, accepted with the
    correction exp(log S(L) - L - log S(L*) + L*), S(L) = sum_{j <= kmax} L^j / j!. Truncation of the joint
    (exact = 1): Ga(shape, rate) is the exact conditional, a Gibbs draw (log_norm is left alone). nbs/01, 02."""
    cdef double Ls = random_standard_gamma(rng, shape) / rate
    if exact:
        lam[0] = Ls
        return True
    cdef double lSs = log_trunc_poisson_norm(Ls, kmax, lgam)
    if log(random_standard_uniform(rng)) < (log_norm[0] - lam[0]) - (lSs - Ls):
        lam[0] = Ls
        log_norm[0] = lSs
        return True
    return False


cdef inline int propose(GramFactor st, int op, Py_ssize_t j, const Likelihood* lk, double* new) noexcept nogil:
    """Make the GramFactor proposal op (APPEND / DELETE column j / REPLACE column j by the scratch column) and
    write the proposed state's log marginal likelihood into new; non-zero (nothing pending) if the proposal
    is numerically singular: the caller treats that as a rejected move."""
    cdef int rc
    if op == APPEND:
        rc = st._prop_append()
    elif op == DELETE:
        rc = st._prop_delete(j)
    else:
        rc = st._prop_replace(j)
    if rc == 0:
        new[0] = log_ml(lk, st, True)
    return rc


cdef inline bint settle(GramFactor st, bint accepted, double new, double* lml) noexcept nogil:
    """The tail of every move: commit the pending proposal and take its log likelihood, or reject it. An accepted
    proposal whose accuracy test was deferred (`GramFactor.defer_acc`) takes it now and is rejected if it fails."""
    if accepted and not st._pending_accurate():
        accepted = False
    if accepted:
        st._commit()
        lml[0] = new
    else:
        st._reject()
    return accepted


cdef inline void swap_round(Py_ssize_t R, int64_t rounds, const double* lml, Py_ssize_t* rung, double* betas,
                            double* log_gap, int64_t* n_swap, int64_t* n_swap_acc, double* p_swap, bint adapting,
                            double target, bitgen_t* rng) noexcept nogil:
    """One round of replica exchange on a ladder of R replicas (nbs/05_rjmcmc, "Tempering"; its Python form
    `rjmcmc._SwapRound`): the neighbouring rungs (r, r + 1) of this round's parity (r = rounds % 2, + 2, ...) propose
    to swap their powers, accepted with probability min(1, exp((beta_r - beta_{r+1}) (l_{r+1} - l_r))), l the log
    marginal likelihood of the replica at that rung; lml[i] is replica i's (rung[r] is the replica at rung r, so the
    swaps do not move lml). While adapting, each pair's log gap of T = 1 / beta moves towards the target acceptance
    (Robbins-Monro, steps (1 + n_swap)^-0.6, capped at log 1e4) and the powers follow: beta_{r+1} = 1 / (1 + sum of
    the gaps' exponentials up to r). rung, betas, log_gap and the swap counters are updated; the caller gives each
    replica its power, betas[r] to replica rung[r]."""
    cdef Py_ssize_t r, t
    cdef double la, p, cs
    for r in range(rounds % 2, R - 1, 2):
        la = (betas[r] - betas[r + 1]) * (lml[rung[r + 1]] - lml[rung[r]])
        p = 1.0 if la >= 0 else exp(la)
        n_swap[r] += 1
        p_swap[r] += p
        if random_standard_uniform(rng) < p:
            n_swap_acc[r] += 1
            t = rung[r]
            rung[r] = rung[r + 1]
            rung[r + 1] = t
        if adapting:
            log_gap[r] = min(log_gap[r] + (p - target) / pow(1.0 + n_swap[r], 0.6), log(1e4))
    if adapting:
        cs = 0.0
        for r in range(R - 1):
            cs += exp(log_gap[r])
            betas[r + 1] = 1.0 / (1.0 + cs)
