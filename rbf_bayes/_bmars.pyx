# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The Bayesian MARS reversible-jump loop (Denison, Mallick & Smith 1998) in C, on the shared GramFactor state.

Derived and checked in `nbs/10_bmars.ipynb` against the Python-driven sampler `rbf_bayes.bmars.sample_bmars`
(same moves, same maths): the only new ingredient is the hinge-product column generator; the linear algebra is
`_kernel.GramFactor` (birth = append, death = delete, change = replace), reached through the likelihood seam
(`_likelihood.pxd`, collapsed over sigma^2 with the ridge 1 / v) and the shared primitives of `_core.pxd`.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport log, lgamma
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from cpython.pycapsule cimport PyCapsule_GetPointer
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (random_standard_uniform, random_standard_gamma, random_interval,
                                           random_standard_normal)
from rbf_bayes._kernel cimport GramFactor, log_trunc_poisson_norm
from rbf_bayes._likelihood cimport Likelihood, COLLAPSED, log_ml, LOG_2PI
from rbf_bayes._core cimport (BIRTH, DEATH, CHANGE, STAY, APPEND, DELETE, REPLACE, move_probs, mh_accept,
                              rate_mh_step, propose, settle, swap_round)

cnp.import_array()


cdef class BMARSCore:
    """State and loop of the BMARS sampler; driven in chunks from `rbf_bayes.bmars`."""
    cdef GramFactor st
    cdef object _x, _sx, _types, _tsize, _bv, _bs, _bk, _bJ, _lgam, _bitgen, _lock
    cdef double* x           # (n, p)
    cdef double* sx          # (p, n): sorted values of each predictor (the knot candidates)
    cdef int* types          # (NT, mi): predictors of each type
    cdef int* tsize          # (NT,)
    cdef int* bv             # (kmax + 1, mi): predictors of basis j (column 1 + j); row kmax is scratch
    cdef int* bs             # signs
    cdef int* bk             # knot indices
    cdef int* bJ             # (kmax + 1,): factors per basis
    cdef double* lgam
    cdef bitgen_t* rng
    cdef readonly Py_ssize_t n, p, c, k, kmax, NT, mi
    cdef double v, a_post, gam0, log_zv, c_move, lam_shape, lam_rate
    cdef Likelihood lik
    cdef int n_min, prior_only, fix_lambda
    cdef bint joint          # prior.k_prior == "joint": lambda | k is drawn exactly (nbs/10_bmars)
    cdef readonly int knot_step   # the change move's local step: knot index +- 1..knot_step w.p. 1/2 (0: off)
    cdef readonly double lam, lml, logS_cur
    cdef public double beta   # the likelihood's power: 1 the posterior, < 1 a tempered replica (nbs/10_bmars)
    cdef int64_t[4] np_, na_   # birth, death, change, stay

    def __cinit__(self, GramFactor st, x, types, prior, double log_zv, int kmax, double c_move, bint prior_only,
                  fix_lambda, bitgen, int knot_step=0):
        cdef Py_ssize_t i
        self.st = st
        self._x = np.ascontiguousarray(x, dtype=float)
        self.n, self.p = self._x.shape
        self.c = st.c
        self._sx = np.ascontiguousarray(np.sort(self._x, axis=0).T)
        self.mi = max(len(t) for t in types)
        self.NT = len(types)
        self._types = np.full((self.NT, self.mi), -1, dtype=np.intc)
        self._tsize = np.array([len(t) for t in types], dtype=np.intc)
        for i, t in enumerate(types):
            self._types[i, :len(t)] = t
        self.kmax = kmax
        self._bv = np.zeros((kmax + 1, self.mi), dtype=np.intc)
        self._bs = np.zeros((kmax + 1, self.mi), dtype=np.intc)
        self._bk = np.zeros((kmax + 1, self.mi), dtype=np.intc)
        self._bJ = np.zeros(kmax + 1, dtype=np.intc)
        from scipy.special import gammaln
        self._lgam = np.ascontiguousarray(gammaln(np.arange(kmax + 1) + 1.0))
        cdef const double[:, ::1] xv = self._x
        cdef double[:, ::1] sxv = self._sx
        cdef int[:, ::1] tv = self._types
        cdef int[::1] tsv = self._tsize
        cdef int[:, ::1] bvv = self._bv
        cdef int[:, ::1] bsv = self._bs
        cdef int[:, ::1] bkv = self._bk
        cdef int[::1] bJv = self._bJ
        cdef double[::1] lgv = self._lgam
        self.x, self.sx, self.types, self.tsize = <double*> &xv[0, 0], &sxv[0, 0], &tv[0, 0], &tsv[0]
        self.bv, self.bs, self.bk, self.bJ, self.lgam = &bvv[0, 0], &bsv[0, 0], &bkv[0, 0], &bJv[0], &lgv[0]
        self.v = prior.coef_var
        self.a_post = prior.a0 + 0.5 * self.n
        self.gam0 = 2.0 * prior.b0
        # log p(y_o | .) = const + hl - a log(gamma0 + y'Py), a = a0 + n/2 (02_posterior with v0 = 2 a0, gamma0 = 2 b0)
        self.lik.kind, self.lik.gprior, self.lik.n = COLLAPSED, 0, self.n
        self.lik.a, self.lik.gamma0 = self.a_post, self.gam0
        self.lik.const = (-0.5 * self.n * LOG_2PI + prior.a0 * log(prior.b0) - lgamma(prior.a0) + lgamma(self.a_post)
                          + self.a_post * log(2.0))
        self.lik.delta2, self.lik.delta2_stride = &self.v, 0      # ridge 1 / v shared by every output
        self.log_zv = log_zv
        self.c_move = c_move
        self.lam_shape, self.lam_rate = prior.lambda_shape, prior.lambda_rate
        self.n_min = prior.n_min
        self.joint = prior.k_prior == "joint"
        if knot_step < 0:
            raise ValueError(f"knot_step must be >= 0, got {knot_step}")
        self.knot_step = knot_step
        self.prior_only = prior_only
        self.fix_lambda = fix_lambda is not None
        self.lam = float(fix_lambda) if fix_lambda is not None else prior.lambda_shape / prior.lambda_rate
        self.logS_cur = log_trunc_poisson_norm(self.lam, self.kmax, self.lgam)
        self._bitgen = bitgen
        self._lock = bitgen.lock
        self.rng = <bitgen_t*> PyCapsule_GetPointer(bitgen.capsule, "BitGenerator")
        self.k = 0
        self.beta = 1.0
        for i in range(4):
            self.np_[i] = 0
            self.na_[i] = 0
        self.lml = 0.0 if prior_only else log_ml(&self.lik, self.st, False)

    cdef void _probs(self, Py_ssize_t k, double* b, double* d) noexcept nogil:
        move_probs(self.c_move, self.lam, k, self.kmax, b, d)

    cdef bint _settle(self, bint accepted, double new) noexcept nogil:
        """Commit or reject the pending kernel proposal (none in a prior-only run); returns accepted."""
        if not self.prior_only:
            accepted = settle(self.st, accepted, new, &self.lml)     # False if a deferred accuracy test fails
        return accepted

    cdef int _column(self, Py_ssize_t slot) noexcept nogil:
        """Hinge product of basis `slot` into the GramFactor's scratch column; returns its number of non-zeros."""
        cdef Py_ssize_t i, l, J = self.bJ[slot], mi = self.mi, n = self.n, p = self.p
        cdef double* out = self.st.scratch()
        cdef double h, t
        cdef int nz = 0, v, s
        for i in range(n):
            h = 1.0
            for l in range(J):
                v = self.bv[slot * mi + l]
                s = self.bs[slot * mi + l]
                t = self.sx[v * n + self.bk[slot * mi + l]]
                h *= (self.x[i * p + v] - t) * s
                if h <= 0.0:
                    h = 0.0
                    break
            out[i] = h
            nz += h > 0.0
        return nz

    cdef void _copy_basis(self, Py_ssize_t dst, Py_ssize_t src) noexcept nogil:
        cdef Py_ssize_t mi = self.mi
        memcpy(self.bv + dst * mi, self.bv + src * mi, mi * sizeof(int))
        memcpy(self.bs + dst * mi, self.bs + src * mi, mi * sizeof(int))
        memcpy(self.bk + dst * mi, self.bk + src * mi, mi * sizeof(int))
        self.bJ[dst] = self.bJ[src]

    cdef void _remove_basis(self, Py_ssize_t j) noexcept nogil:
        """Drop basis j, shifting the later ones down (mirrors the GramFactor's delete)."""
        cdef Py_ssize_t t
        for t in range(j, self.k - 1):
            self._copy_basis(t, t + 1)

    cdef int _birth(self) noexcept nogil:
        cdef Py_ssize_t k = self.k, S = self.kmax, mi = self.mi, l, ty
        cdef double b, d, b1, d1, new = 0.0, dll = 0.0
        cdef int nz
        self._probs(k, &b, &d)
        self._probs(k + 1, &b1, &d1)
        ty = <Py_ssize_t> random_interval(self.rng, self.NT - 1)
        self.bJ[S] = self.tsize[ty]
        for l in range(self.bJ[S]):
            self.bv[S * mi + l] = self.types[ty * mi + l]
            self.bs[S * mi + l] = 1 if random_standard_uniform(self.rng) < 0.5 else -1
            self.bk[S * mi + l] = <int> random_interval(self.rng, self.n - 1)
        nz = self._column(S)
        if nz < self.n_min:
            return 0
        if not self.prior_only:
            if propose(self.st, APPEND, 0, &self.lik, &new):
                return 0
            dll = self.beta * (new - self.lml)
        if self._settle(mh_accept(self.rng, dll - self.log_zv + log(self.lam) + log(d1) - log(k + 1.0) - log(b),
                                  0.0, 0.0), new):
            self._copy_basis(k, S)
            self.k += 1
            return 1
        return 0

    cdef int _death(self) noexcept nogil:
        cdef Py_ssize_t k = self.k, j = <Py_ssize_t> random_interval(self.rng, k - 1)
        cdef double b, d, b0, d0, new = 0.0, dll = 0.0
        self._probs(k, &b, &d)
        self._probs(k - 1, &b0, &d0)
        if not self.prior_only:
            propose(self.st, DELETE, 1 + j, &self.lik, &new)
            dll = self.beta * (new - self.lml)
        if self._settle(mh_accept(self.rng, dll - (-self.log_zv + log(self.lam) + log(d) - log(<double> k) - log(b0)),
                                  0.0, 0.0), new):
            self._remove_basis(j)
            self.k -= 1
            return 1
        return 0

    cdef int _change(self) noexcept nogil:
        """Change one knot of one basis: with knot_step > 0, half the time a local step (index +- 1..knot_step, refused
        off the ends), else the paper's move (a uniform index, the sign flipped w.p. 1/2); both are symmetric, so the
        ratio is the likelihood ratio (nbs/10_bmars)."""
        cdef Py_ssize_t k = self.k, S = self.kmax, mi = self.mi, j = <Py_ssize_t> random_interval(self.rng, k - 1), l
        cdef double new = 0.0, dll = 0.0
        cdef int nz, step, nk
        self._copy_basis(S, j)
        l = <Py_ssize_t> random_interval(self.rng, self.bJ[S] - 1)
        if self.knot_step > 0 and random_standard_uniform(self.rng) < 0.5:
            step = 1 + <int> random_interval(self.rng, self.knot_step - 1)
            nk = self.bk[S * mi + l] + (step if random_standard_uniform(self.rng) < 0.5 else -step)
            if nk < 0 or nk >= self.n:
                return 0
            self.bk[S * mi + l] = nk
        else:
            self.bk[S * mi + l] = <int> random_interval(self.rng, self.n - 1)
            if random_standard_uniform(self.rng) < 0.5:
                self.bs[S * mi + l] = -self.bs[S * mi + l]
        nz = self._column(S)
        if nz < self.n_min:
            return 0
        if not self.prior_only:
            if propose(self.st, REPLACE, 1 + j, &self.lik, &new):
                return 0
            dll = self.beta * (new - self.lml)
        if self._settle(mh_accept(self.rng, dll, 0.0, 0.0), new):
            self._remove_basis(j)           # the changed basis becomes the last one (replace semantics)
            self._copy_basis(k - 1, S)
            return 1
        return 0

    cdef void _iterate(self, signed char* mv, signed char* acc) noexcept nogil:
        cdef double b, d, u
        cdef int slot
        self._probs(self.k, &b, &d)
        u = random_standard_uniform(self.rng)
        if u < b:
            mv[0], slot = BIRTH, 0
            acc[0] = self._birth()
        elif u < b + d:
            mv[0], slot = DEATH, 1
            acc[0] = self._death()
        elif self.k >= 1:
            mv[0], slot = CHANGE, 2
            acc[0] = self._change()
        else:
            mv[0], slot = STAY, 3
            acc[0] = 0
        if slot < 3:
            self.np_[slot] += 1
            self.na_[slot] += acc[0]
        if not self.fix_lambda:
            rate_mh_step(self.rng, self.lam_shape + self.k, self.lam_rate + 1.0, self.kmax, self.lgam, &self.lam,
                         &self.logS_cur, self.joint)

    def run(self, Py_ssize_t n_it, int64_t[::1] k_out, double[::1] lml_out, double[::1] lam_out,
            signed char[::1] mv_out, signed char[::1] acc_out, Py_ssize_t offset=0):
        """Run n_it iterations, writing per-iteration scalars from position `offset`."""
        cdef Py_ssize_t i
        if offset < 0 or offset + n_it > k_out.shape[0]:
            raise ValueError("output arrays are too short")
        with self._lock:
            with nogil:
                for i in range(offset, offset + n_it):
                    self._iterate(&mv_out[i], &acc_out[i])
                    k_out[i] = self.k
                    lml_out[i] = self.lml
                    lam_out[i] = self.lam

    cdef void _run_quiet(self, Py_ssize_t n_it) noexcept nogil:
        "n_it iterations with nothing recorded (a hot replica of the ladder)."
        cdef signed char mv, acc
        cdef Py_ssize_t _i
        for _i in range(n_it):
            self._iterate(&mv, &acc)

    def bases(self):
        """Current bases as (predictors, signs, knot indices) tuples in column order."""
        out = []
        for j in range(self.k):
            J = self._bJ[j]
            out.append((tuple(int(v) for v in self._bv[j, :J]), tuple(int(s) for s in self._bs[j, :J]),
                        tuple(int(t) for t in self._bk[j, :J])))
        return out

    @property
    def counts(self):
        """(proposed, accepted) for birth, death, change, stay."""
        return (np.array([self.np_[i] for i in range(4)]), np.array([self.na_[i] for i in range(4)]))

    def snapshot(self):
        """(predictors, signs, knot indices, factors per basis) of the k bases, the posterior-mean coefficients
        h = L'^{-1} z (m, c), a draw alpha = L'^{-1}(z + sigma eps) and sigma^2 (c,) — O(m^2) from the factor."""
        cdef Py_ssize_t o, i, m = self.st.m
        cdef double s2
        h = np.zeros((m, self.c)); dr = np.zeros((m, self.c)); s2s = np.zeros(self.c)
        eps = np.empty(m)
        with self._lock:
            for o in range(self.c):
                s2 = 0.5 * (self.gam0 + self.st.yy[o] - self.st.e[o]) / random_standard_gamma(self.rng, self.a_post)
                s2s[o] = s2
                for i in range(m):
                    eps[i] = random_standard_normal(self.rng)
                _, h[:, o], dr[:, o] = self.st.posterior_coef(o, s2 ** 0.5, eps)
        k = self.k
        return (self._bv[:k].copy(), self._bs[:k].copy(), self._bk[:k].copy(), self._bJ[:k].copy(), h, dr, s2s)


def ladder_run(list cores, Py_ssize_t[::1] rung, double[::1] betas, double[::1] log_gap, int64_t[::1] n_swap,
               int64_t[::1] n_swap_acc, double[::1] p_swap, int64_t rounds, Py_ssize_t n, Py_ssize_t swap_every,
               double target, int64_t[::1] k_out, double[::1] lml_out, double[::1] lam_out, signed char[::1] mv_out,
               signed char[::1] acc_out, Py_ssize_t offset):
    """Replica exchange for iterations offset .. offset + n - 1 (nbs/10_bmars, "Tempering (replica exchange)"): in
    blocks that end where the iteration count is a multiple of swap_every, the core at rung 0 (power 1) runs `run`'s
    loop (its records at offset ..), the others run quietly; after a block that ends at a multiple of swap_every, and
    not at offset + n, a round of swaps with adaptation (`_core.swap_round`: neighbouring rungs of this round's parity
    propose to swap their powers, accepted with probability min(1, exp((beta_r - beta_{r+1}) (l_{r+1} - l_r))), and
    the log gaps of T = 1 / beta move towards the target acceptance). The round due at offset + n is left to the
    caller, which may first snapshot the cold core. The cores share one bit generator (the swap uniforms come from it
    too). The whole span runs with the GIL released (the cores are reached through a table of borrowed pointers), so
    chains on other threads never wait for this one. rung, betas, log_gap and the swap counters are updated in place.
    Returns the rounds made so far. The same steps from Python: `bmars._BMARSRoundsInPython` (tested equal, bit for
    bit)."""
    cdef Py_ssize_t R = len(cores), i = offset, end = offset + n, blk, r, j
    if swap_every < 1 or n < 0:
        raise ValueError("swap_every must be >= 1 and n >= 0")
    if offset < 0 or end > k_out.shape[0] or end > lml_out.shape[0] or end > lam_out.shape[0] \
            or end > mv_out.shape[0] or end > acc_out.shape[0]:
        raise ValueError("output arrays are too short")
    if betas.shape[0] != R or rung.shape[0] != R or log_gap.shape[0] != R - 1 or n_swap.shape[0] != R - 1 \
            or n_swap_acc.shape[0] != R - 1 or p_swap.shape[0] != R - 1:
        raise ValueError("ladder arrays do not match the number of cores")
    for r in range(R):
        if not 0 <= rung[r] < R:
            raise ValueError("rung holds a core index out of range")
    cdef BMARSCore c0 = <BMARSCore?> cores[rung[0]]
    cdef void** cp = <void**> malloc(R * sizeof(void*))
    cdef double* lv = <double*> malloc(R * sizeof(double))   # each core's log ML for the round of swaps
    if cp == NULL or lv == NULL:
        free(cp)
        free(lv)
        raise MemoryError("the ladder's core table")
    for r in range(R):
        cp[r] = <void*> (<BMARSCore?> cores[r])   # borrowed: the list holds the cores for the whole call
    try:
        with c0._lock:              # one lock: the replicas share the bit generator and its lock
            with nogil:             # the whole span: two chains on two threads do not wait for each other's GIL
                while i < end:
                    blk = min(swap_every - i % swap_every, end - i)
                    for j in range(i, i + blk):
                        (<BMARSCore> cp[rung[0]])._iterate(&mv_out[j], &acc_out[j])
                        k_out[j] = (<BMARSCore> cp[rung[0]]).k
                        lml_out[j] = (<BMARSCore> cp[rung[0]]).lml
                        lam_out[j] = (<BMARSCore> cp[rung[0]]).lam
                    for r in range(1, R):
                        (<BMARSCore> cp[rung[r]])._run_quiet(blk)
                    i += blk
                    if i % swap_every or i == end:
                        continue
                    for r in range(R):
                        lv[r] = (<BMARSCore> cp[r]).lml
                    swap_round(R, rounds, lv, &rung[0], &betas[0], &log_gap[0], &n_swap[0], &n_swap_acc[0],
                               &p_swap[0], True, target, (<BMARSCore> cp[0]).rng)
                    rounds += 1
                    for r in range(R):
                        (<BMARSCore> cp[rung[r]]).beta = betas[r]
    finally:
        free(cp)
        free(lv)
    return rounds


def count_valid_pairs(const Py_ssize_t[::1] ia, const Py_ssize_t[::1] ib, Py_ssize_t na, Py_ssize_t nb,
                      Py_ssize_t n_min):
    """#{(i, j) in [0, na) x [0, nb): #{points with ia > i and ib > j} >= n_min}, in O(n log n).

    Points are inserted in decreasing ia into a Fenwick tree over ib; for knot i the valid j are those below the
    n_min-th largest ib present (found by a Fenwick select).  Equals the O(n^2) 2-d suffix-sum count."""
    cdef Py_ssize_t n = ia.shape[0], i, t, pos, step, LOG, size = nb + 1, need, total = 0, ins = 0, r
    order = np.argsort(-np.asarray(ia), kind="stable")
    cdef const Py_ssize_t[::1] od = order
    tree = np.zeros(size + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] tr = tree
    LOG = 1
    while LOG * 2 <= size:
        LOG *= 2
    t = 0
    for i in range(na - 1, -1, -1):
        while t < n and ia[od[t]] > i:             # insert ib value (0..nb) at Fenwick index ib + 1
            pos = ib[od[t]] + 1
            while pos <= size:
                tr[pos] += 1
                pos += pos & (-pos)
            ins += 1
            t += 1
        if ins < n_min:
            continue
        need = ins - n_min + 1                    # the n_min-th largest is the (ins - n_min + 1)-th smallest
        pos = 0
        step = LOG
        while step > 0:
            if pos + step <= size and tr[pos + step] < need:
                pos += step
                need -= tr[pos]
            step //= 2
        r = pos                                   # Fenwick index pos + 1 holds value pos: the selected ib
        total += r if r < nb else nb
    return total
