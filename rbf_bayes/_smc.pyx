# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The TD-SMC particle loop (Vermaak, Godsill & Doucet) in C.

Derived and checked in `nbs/09_smc.ipynb`, where the pure-Python `TDSMCReference` spells out every step; this
loop makes the same random draws in the same order, so the two give the same particle system for the same seed
(tested).  Each particle is a `GramFactor` (`_kernel.pyx`) grown one data row at a time (`_add_row`), with its
centres as indices of observed inputs in column order, and its variances (sigma_y^2, sigma_beta^2).  Per
observation: new row, zero / birth / death move and its importance weight (eq. 8 with the normalised backward
kernel of the notebook), then (separately) the Gibbs refresh of the variances, resampling into dead slots
(in-place copies, no allocation), the optional resample-move reversible-jump steps and, with a learned width
(each particle its own), the Metropolis-Hastings step on the log width (`width_sweep`, nb 09, "Learning the
width"): a full rebuild of the particle's design over the t rows seen, in one set of rebuild buffers lent to
each particle in turn.  With learned per-input scales (`scale_sweep`, nb 09, "Learning the input scales") each
particle's distance is ||diag(s)(x - mu)|| with its own scales s, one Metropolis-Hastings step per input, each a
full rebuild the same way.
"""
import numpy as np
cimport cython
cimport numpy as cnp
from libc.math cimport sqrt, log, exp, lgamma, INFINITY, floor
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, realloc, free
from scipy.linalg.cython_blas cimport ddot
from cpython.pycapsule cimport PyCapsule_GetPointer
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (random_standard_uniform, random_standard_normal,
                                           random_standard_gamma)
from rbf_bayes._kernel cimport GramFactor, phi_r2, basis_column_c, log_trunc_poisson_norm
from rbf_bayes._kernel import BASIS_CODES
from rbf_bayes._likelihood cimport Likelihood, GAUSSIAN, log_ml
from rbf_bayes._core cimport (BIRTH, DEATH, STAY, APPEND, DELETE, REPLACE, move_probs, mh_accept, propose,
                              settle)

cnp.import_array()


cdef inline double _lbinom(double n, double r) noexcept nogil:
    return lgamma(n + 1.0) - lgamma(r + 1.0) - lgamma(n - r + 1.0)


cdef inline bint _has(const Py_ssize_t* ce, Py_ssize_t k, Py_ssize_t j) noexcept nogil:
    "Is input j among the k centres ce?"
    cdef Py_ssize_t a
    for a in range(k):
        if ce[a] == j:
            return True
    return False


cdef inline void _remove(Py_ssize_t* ce, Py_ssize_t k, Py_ssize_t pos) noexcept nogil:
    "Drop centre pos of k, keeping column order (as GramFactor delete shifts its columns)."
    cdef Py_ssize_t a
    for a in range(pos, k - 1):
        ce[a] = ce[a + 1]


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _Particles:
    """The particles' memory: their GramFactors, centres, variances, log marginal likelihoods, weights' pieces,
    workspaces and settings, allocated from the prior and the capacity and freed. A room of `SMCCore` (nbs/09_smc, "The
    loop's rooms"): never built on its own."""
    cdef list fac
    cdef object _lgam, _X, _Y, _cent, _k, _s2y, _s2b, _lml, _inc, _pre, _post, _dv, _w, _beta, _free
    cdef object _bitgen, _lock, _nsing, _args, _w2, _nwid, _sc, _nsc, _sp
    cdef GramFactor spare      # the rebuild buffers lent to each particle in turn by width_sweep (learn only)
    cdef double* X             # (cap, d) observed inputs
    cdef double* Y             # (cap, c) observed targets
    cdef Py_ssize_t* cent      # (Np, kmax) centre indices, column order
    cdef Py_ssize_t* kk        # (Np,) number of kernels
    cdef double* s2y
    cdef double* s2b
    cdef double* lml           # log p(Y_t | S, s2y, s2b) of each particle
    cdef double* inc           # (Np,) log incremental weights of the last step
    cdef double* pre           # (Np, c) one-step predictive mean k_t'h before y_t
    cdef double* post          # (Np, c) filtered estimate k_t'h after the move
    cdef double* lgam          # (kmax + 1,) lgamma(j + 1)
    cdef double* dv            # (kmax + 1,) new design row
    cdef double* wv            # (kmax + 1,) refresh workspace
    cdef double* beta          # (kmax + 1,)
    cdef Py_ssize_t* freebuf   # (cap,) free inputs when enumerated
    cdef int64_t* nsing        # (3,) singular proposals: birth step, refresh, resample-move
    cdef double* w2v           # (Np,) squared width of each particle (all the same unless the width is learned)
    cdef int64_t* nwid         # (2,) width steps proposed, accepted
    cdef double* scv           # (Np, d) each particle's input scales s (all 1 unless the scales are learned)
    cdef double* spv           # (d,) the proposed scales of a scale step
    cdef int64_t* nsc          # (2,) scale steps proposed, accepted
    cdef bitgen_t* rng
    # the shared column store (fixed width; nb 09 "One column per distinct centre"): factors keep no design
    cdef readonly bint store
    cdef double** scol         # (nalloc,) column buffers of cap doubles; slot 0 is the constant column
    cdef Py_ssize_t* sinp      # (nalloc,) input index held by each slot (-1: the constant, or free)
    cdef Py_ssize_t* sref      # (nalloc,) particles that have the slot's input among their centres
    cdef Py_ssize_t* sfree     # (nalloc,) stack of free slots below nslot
    cdef Py_ssize_t* slot_of   # (cap,) slot of input j, -1 if it is nobody's centre
    cdef Py_ssize_t nslot, nfree, nalloc
    cdef double* gbuf          # (kmax + 2,) a new column's inner products with a particle's columns
    cdef double* bbuf          # (c,) its inner products with the targets
    cdef double* rowb          # (kmax + 1,) a particle's design row, gathered from the store
    cdef double gnn
    cdef readonly Py_ssize_t Np, cap, d, c, kmax, t
    cdef int kind, fixed
    cdef readonly bint learn, scaled
    cdef double lam, cc, a_y, b_y, a_b, b_b, rho, lw0, lwsd, lssd
    cdef Likelihood lik        # the likelihood seam, pointed at one particle at a time (`_lik`)
    cdef double lik_d2

    def __cinit__(self, list factors, Py_ssize_t cap, Py_ssize_t d, Py_ssize_t kmax, str basis, double width,
                  double lam, double c, double a_y, double b_y, double a_b, double b_b, bint fixed,
                  s2y, s2b, bitgen, double birth_at_new=0.0, widths=None, double log_width_sd=0.0, scales=None,
                  double log_scale_sd=0.0):
        """widths: each particle's initial width (default all `width`); log_width_sd > 0 learns them, with the
        prior log w ~ N(log width, log_width_sd^2) (`width_sweep`). scales: each particle's initial input scales
        (Np, d) (default all 1); log_scale_sd > 0 learns them, with the prior log s_m ~ N(0, log_scale_sd^2)
        i.i.d. (`scale_sweep`); the width then stays `width`."""
        cdef GramFactor g
        self.fac = factors
        self.Np = len(factors)
        if self.Np < 1:
            raise ValueError("at least one particle is needed")
        g = <GramFactor> factors[0]
        self.store = not g.design
        self.cap, self.d, self.c, self.kmax, self.t = cap, d, g.c, kmax, 0
        for f in factors:
            g = <GramFactor> f
            if g.N != cap or g.c != self.c or g.q != 1 or g.m != 1 or g.m_max < kmax + 1 or g.design == self.store:
                raise ValueError("factors must be empty GramFactors (constant column only) with N = cap, one ridge,"
                                 " m_max >= kmax + 1 and all the same design flag")
        self._args = (cap, d, kmax, basis, width, lam, c, a_y, b_y, a_b, b_b, fixed)   # for pickling
        self.kind = BASIS_CODES[basis]
        self.learn = log_width_sd > 0.0
        if self.learn and self.store:
            raise ValueError("a learned width needs each particle's own design (GramFactor design=True)")
        self.scaled = log_scale_sd > 0.0
        if self.scaled and self.store:
            raise ValueError("learned input scales need each particle's own design (GramFactor design=True)")
        if self.scaled and self.learn:
            raise ValueError("learn the width or the input scales, not both (the scales carry the width)")
        self.lssd = log_scale_sd
        self._sc = (np.ones((self.Np, d)) if scales is None
                    else np.array(scales, dtype=float).reshape(self.Np, d).copy())
        if not np.all(np.isfinite(self._sc) & (self._sc > 0)):
            raise ValueError("scales must be positive and finite")
        if not self.scaled and not np.all(self._sc == 1.0):
            raise ValueError("scales other than 1 need log_scale_sd > 0 (learned input scales)")
        self._sp = np.ones(max(d, 1)); self._nsc = np.zeros(2, dtype=np.int64)
        self.lw0, self.lwsd = log(width), log_width_sd
        self._w2 = (np.full(self.Np, width, dtype=float) if widths is None
                    else np.array(widths, dtype=float).reshape(self.Np).copy()) ** 2
        if not np.all(np.isfinite(self._w2) & (self._w2 > 0)):
            raise ValueError("widths must be positive and finite")
        if self.store and not np.all(self._w2 == self._w2[0]):
            raise ValueError("particles with different widths have different columns: they need their own designs "
                             "(GramFactor design=True)")
        self._nwid = np.zeros(2, dtype=np.int64)
        if self.learn or self.scaled:
            self.spare = GramFactor(cap, self.c, g.m_max, ridge=(1.0,))
            self.spare.enable_rebuild()
        self.lam, self.cc = lam, c
        self.a_y, self.b_y, self.a_b, self.b_b, self.fixed = a_y, b_y, a_b, b_b, fixed
        if not 0.0 <= birth_at_new < 1.0:
            raise ValueError(f"birth_at_new must be in [0, 1), got {birth_at_new}")
        self.rho = birth_at_new
        self.lik.kind, self.lik.gprior, self.lik.delta2, self.lik.delta2_stride = GAUSSIAN, 0, &self.lik_d2, 0
        self._X = np.zeros((cap, d)); self._Y = np.zeros((cap, self.c))
        self._cent = np.zeros((self.Np, max(kmax, 1)), dtype=np.intp); self._k = np.zeros(self.Np, dtype=np.intp)
        self._s2y = np.array(s2y, dtype=float).reshape(self.Np).copy()
        self._s2b = np.array(s2b, dtype=float).reshape(self.Np).copy()
        self._lml = np.zeros(self.Np); self._inc = np.zeros(self.Np)
        self._pre = np.zeros((self.Np, self.c)); self._post = np.zeros((self.Np, self.c))
        self._dv = np.zeros(kmax + 1); self._w = np.zeros(kmax + 1); self._beta = np.zeros(kmax + 1)
        self._free = np.zeros(cap, dtype=np.intp); self._nsing = np.zeros(3, dtype=np.int64)
        from scipy.special import gammaln
        self._lgam = gammaln(np.arange(kmax + 1) + 1.0)
        cdef double[::1] lg = self._lgam
        self.lgam = &lg[0]
        cdef double[:, ::1] xv = self._X
        cdef double[:, ::1] yv = self._Y
        cdef Py_ssize_t[:, ::1] cv = self._cent
        cdef Py_ssize_t[::1] kv = self._k
        cdef double[::1] a1 = self._s2y
        cdef double[::1] a2 = self._s2b
        cdef double[::1] a3 = self._lml
        cdef double[::1] a4 = self._inc
        cdef double[:, ::1] a8 = self._pre
        cdef double[:, ::1] a9 = self._post
        cdef double[::1] a5 = self._dv
        cdef double[::1] a6 = self._w
        cdef double[::1] a7 = self._beta
        cdef Py_ssize_t[::1] fb = self._free
        cdef int64_t[::1] ns = self._nsing
        self.X, self.Y, self.cent, self.kk = &xv[0, 0], &yv[0, 0], &cv[0, 0], &kv[0]
        self.s2y, self.s2b, self.lml, self.inc = &a1[0], &a2[0], &a3[0], &a4[0]
        self.pre, self.post = &a8[0, 0], &a9[0, 0]
        self.dv, self.wv, self.beta, self.freebuf, self.nsing = &a5[0], &a6[0], &a7[0], &fb[0], &ns[0]
        cdef double[::1] wv2 = self._w2
        cdef int64_t[::1] nw = self._nwid
        self.w2v, self.nwid = &wv2[0], &nw[0]
        cdef double[:, ::1] scm = self._sc
        cdef double[::1] spm = self._sp
        cdef int64_t[::1] nsm = self._nsc
        self.scv, self.spv, self.nsc = &scm[0, 0], &spm[0], &nsm[0]
        self._bitgen = bitgen
        self._lock = bitgen.lock
        self.rng = <bitgen_t*> PyCapsule_GetPointer(bitgen.capsule, "BitGenerator")
        for i in range(self.Np):
            g = <GramFactor> factors[i]
            g.ridge[0] = self.s2y[i] / self.s2b[i]


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _SharedColumns(_Particles):
    """The shared column store (fixed width; nbs/09_smc "One column per distinct centre"): one column per
    input that some particle has as a centre, reference-counted, grown one row per observation, and a new column's inner
    products with a particle's columns gathered from it. A room of `SMCCore`."""

    def __cinit__(self, *args, **kwargs):
        """After `_Particles.__cinit__` (same arguments): the store's buffers, and slot 0, the constant column."""
        cdef Py_ssize_t i
        self.gbuf = <double*> malloc((self.kmax + 2) * sizeof(double))
        self.bbuf = <double*> malloc(self.c * sizeof(double))
        self.rowb = <double*> malloc((self.kmax + 1) * sizeof(double))
        self.slot_of = <Py_ssize_t*> malloc(self.cap * sizeof(Py_ssize_t))
        if self.gbuf == NULL or self.bbuf == NULL or self.rowb == NULL or self.slot_of == NULL:
            raise MemoryError("SMCCore: cannot allocate the store's buffers")
        for i in range(self.cap):
            self.slot_of[i] = -1
        self.nslot = self.nfree = self.nalloc = 0
        if self.store:
            self._reserve(1 + self.Np)
            self.nslot = 1                  # slot 0: the constant column
            self.sinp[0] = -1
            self.sref[0] = 0

    def __dealloc__(self):
        cdef Py_ssize_t s
        for s in range(self.nalloc):
            free(self.scol[s])
        free(self.scol); free(self.sinp); free(self.sref); free(self.sfree); free(self.slot_of)
        free(self.gbuf); free(self.bbuf); free(self.rowb)

    cdef void _reserve(self, Py_ssize_t n) except *:
        """Make sure n slots can be taken without allocating (free slots, or buffers above nslot), so that the nogil
        loops never allocate: at most one new centre per particle per stage. Column buffers are malloc'd, not
        written: pages count towards memory once a column is computed into them."""
        cdef Py_ssize_t need = n - self.nfree - (self.nalloc - self.nslot), new, s
        if need <= 0:
            return
        new = self.nalloc + (need if need > self.nalloc // 2 else self.nalloc // 2)
        cdef double** sc = <double**> realloc(self.scol, new * sizeof(double*))
        if sc == NULL:
            raise MemoryError("TD-SMC column store: cannot grow the slot table")
        self.scol = sc
        for s in range(self.nalloc, new):
            self.scol[s] = NULL
        cdef Py_ssize_t* a1 = <Py_ssize_t*> realloc(self.sinp, new * sizeof(Py_ssize_t))
        if a1 != NULL:
            self.sinp = a1
        cdef Py_ssize_t* a2 = <Py_ssize_t*> realloc(self.sref, new * sizeof(Py_ssize_t))
        if a2 != NULL:
            self.sref = a2
        cdef Py_ssize_t* a3 = <Py_ssize_t*> realloc(self.sfree, new * sizeof(Py_ssize_t))
        if a3 != NULL:
            self.sfree = a3
        if a1 == NULL or a2 == NULL or a3 == NULL:
            raise MemoryError("TD-SMC column store: cannot grow the slot table")
        for s in range(self.nalloc, new):
            self.scol[s] = <double*> malloc(self.cap * sizeof(double))
            if self.scol[s] == NULL:
                raise MemoryError(f"TD-SMC column store: cannot allocate column {s} ({self.cap} rows); lower "
                                  "n_particles or k_max, or stream fewer rows")
            self.sinp[s] = -1
            self.sref[s] = 0
            self.nalloc = s + 1

    cdef Py_ssize_t _acquire(self, Py_ssize_t j, Py_ssize_t t) noexcept nogil:
        """The slot holding phi(||x_s - x_j||), s < t: input j's column if some particle has it (kept up to date by
        `_store_row`), else a free slot with the column computed now (held by nobody until `_hold`)."""
        cdef Py_ssize_t s = self.slot_of[j]
        if s >= 0:
            return s
        if self.nfree > 0:
            self.nfree -= 1
            s = self.sfree[self.nfree]
        else:
            s = self.nslot
            self.nslot += 1
        basis_column_c(self.X, t, self.d, self.X + j * self.d, self.kind, self.w2v[0], self.scol[s])
        self.sinp[s] = j
        self.sref[s] = 0
        self.slot_of[j] = s
        return s

    cdef inline void _unused(self, Py_ssize_t j) noexcept nogil:
        "Input j's slot goes back to the free stack if no particle holds it (a rejected or singular proposal)."
        cdef Py_ssize_t s
        if not self.store:
            return
        s = self.slot_of[j]
        if s > 0 and self.sref[s] <= 0:
            self.slot_of[j] = -1
            self.sinp[s] = -1
            self.sref[s] = 0
            self.sfree[self.nfree] = s
            self.nfree += 1

    cdef inline void _hold(self, Py_ssize_t j) noexcept nogil:
        "One more particle has input j as a centre."
        if self.store:
            self.sref[self.slot_of[j]] += 1

    cdef inline void _let_go(self, Py_ssize_t j) noexcept nogil:
        "One particle fewer has input j as a centre (its slot is freed at zero)."
        if self.store:
            self.sref[self.slot_of[j]] -= 1
            self._unused(j)

    cdef void _store_row(self, Py_ssize_t t0) noexcept nogil:
        "Observation t0 arrived: row t0 of every held column (the constant's is 1), U evaluations of phi."
        cdef Py_ssize_t s
        self.scol[0][t0] = 1.0
        for s in range(1, self.nslot):
            if self.sinp[s] >= 0:
                basis_column_c(self.X + t0 * self.d, 1, self.d, self.X + self.sinp[s] * self.d, self.kind,
                               self.w2v[0], self.scol[s] + t0)

    cdef inline const double* _col(self, const Py_ssize_t* ce, Py_ssize_t a) noexcept nogil:
        "Column a of a particle with centres ce: the constant (a = 0) or centre a - 1's."
        return self.scol[0] if a == 0 else self.scol[self.slot_of[ce[a - 1]]]

    cdef void _products(self, const Py_ssize_t* ce, Py_ssize_t m, Py_ssize_t t, const double* v) noexcept nogil:
        """The inner products over the t rows seen of the column v with the particle's m columns (gbuf), itself (gnn)
        and the targets (bbuf): BLAS ddot, O(t m)."""
        cdef int n = <int> t, one = 1, cc = <int> self.c
        cdef Py_ssize_t a, o
        for a in range(m):
            self.gbuf[a] = ddot(&n, <double*> self._col(ce, a), &one, <double*> v, &one)
        self.gnn = ddot(&n, <double*> v, &one, <double*> v, &one)
        for o in range(self.c):
            self.bbuf[o] = ddot(&n, <double*> v, &one, self.Y + o, &cc)

    cdef const double* _row(self, const Py_ssize_t* ce, Py_ssize_t k, Py_ssize_t t0, double* out) noexcept nogil:
        "Row t0 of a particle's design (constant, then its k centres' columns), gathered from the store into out."
        cdef Py_ssize_t a
        out[0] = 1.0
        for a in range(k):
            out[1 + a] = self.scol[self.slot_of[ce[a]]][t0]
        return out

    cdef void _scaled_column(self, Py_ssize_t t, Py_ssize_t j, const double* s, double* out) noexcept nogil:
        """out[n] = phi(||diag(s)(x_n - x_j)||), n < t, at the fixed width (learned input scales): the squared
        distance summed input by input in input order, as the reference's NumPy sum."""
        cdef Py_ssize_t n, a
        cdef double r2, u
        cdef const double* mu = self.X + j * self.d
        for n in range(t):
            r2 = 0.0
            for a in range(self.d):
                u = (self.X[n * self.d + a] - mu[a]) * s[a]
                r2 += u * u
            out[n] = phi_r2(r2, self.kind, self.w2v[0])

    cdef int _prop_col(self, GramFactor g, Py_ssize_t i, int op, Py_ssize_t pos1, Py_ssize_t j,
                       Py_ssize_t t) noexcept nogil:
        """Particle i proposes to APPEND the column phi(||x_s - x_j||), s < t (or to REPLACE its column pos1 by it):
        from the store (its inner products, then the factor algebra) or, with per-particle designs, written into the
        scratch column. Non-zero if singular (nothing pending; a fresh store slot is freed again)."""
        cdef int rc
        cdef Py_ssize_t s
        if not self.store:
            if self.scaled:
                self._scaled_column(t, j, self.scv + i * self.d, g.scratch())
            else:
                basis_column_c(self.X, t, self.d, self.X + j * self.d, self.kind, self.w2v[i], g.scratch())
            return g._prop_append() if op == APPEND else g._prop_replace(pos1)
        s = self._acquire(j, t)
        self._products(self.cent + i * self.kmax, g.m, t, self.scol[s])
        if op == APPEND:
            rc = g._prop_append_given(self.gbuf, self.gnn, self.bbuf)
        else:
            rc = g._prop_replace_given(pos1, self.gbuf, self.gnn, self.bbuf)
        if rc:
            self._unused(j)
        return rc

    def store_holders(self):
        """{input index: number of particles with that input among their centres} for every column in the store (the
        reference counts; the invariant is that they equal the particles' own centre lists)."""
        cdef Py_ssize_t sl
        if not self.store:
            return {}
        return {int(self.sinp[sl]): int(self.sref[sl]) for sl in range(1, self.nslot) if self.sinp[sl] >= 0}

    @property
    def store_columns(self):
        """(columns held in the store, slots allocated, bytes of column buffers): U + 1 with the constant."""
        cdef Py_ssize_t s, u = 0
        if not self.store:
            return 0, 0, 0
        for s in range(self.nslot):
            if s == 0 or self.sinp[s] >= 0:
                u += 1
        return int(u), int(self.nalloc), int(self.nalloc * self.cap * 8)


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _SMCMoves(_SharedColumns):
    """The pieces of one particle's move: uniform draws of a free input, the birth and death probabilities,
    the likelihood seam pointed at a particle, proposals on its GramFactor, the normalised backward kernel, and the
    posterior-mean prediction at a design row. A room of `SMCCore`."""

    cdef inline Py_ssize_t _index(self, Py_ssize_t n) noexcept nogil:
        "floor(u n), u uniform on [0, 1): a uniform index in 0..n-1 (the reference does the same)."
        cdef Py_ssize_t j = <Py_ssize_t> floor(random_standard_uniform(self.rng) * n)
        return n - 1 if j >= n else j

    cdef Py_ssize_t _draw_free(self, Py_ssize_t i, Py_ssize_t t) noexcept nogil:
        "A uniform draw among the observed inputs 0..t-1 that are not centres of particle i."
        cdef Py_ssize_t k = self.kk[i], j, n = 0
        cdef Py_ssize_t* ce = self.cent + i * self.kmax
        if 2 * k < t:                       # rejection: expected t / (t - k) < 2 draws
            while True:
                j = self._index(t)
                if not _has(ce, k, j):
                    return j
        for j in range(t):
            if not _has(ce, k, j):
                self.freebuf[n] = j
                n += 1
        return self.freebuf[self._index(n)]

    cdef void _probs(self, Py_ssize_t k, Py_ssize_t t, double* b, double* dd) noexcept nogil:
        "alpha_birth, alpha_death of a particle with k kernels at time t (smc_move_probs)."
        move_probs(self.cc, self.lam, k, self.kmax if self.kmax < t else t, b, dd)

    cdef Likelihood* _lik(self, Py_ssize_t t, Py_ssize_t i) noexcept nogil:
        """Particle i's likelihood at time t (the seam's Gaussian kind): sigma^2 = sigma_y^2 and coefficient
        scale delta^2 = sigma_beta^2 / sigma_y^2."""
        self.lik_d2 = self.s2b[i] / self.s2y[i]
        self.lik.n, self.lik.sigma2 = t, self.s2y[i]
        return &self.lik

    cdef double _lml_of(self, GramFactor g, Py_ssize_t t, Py_ssize_t i, bint proposed) noexcept nogil:
        "log p(Y_t | particle i's centres and variances) of its current (or pending proposed) state."
        return log_ml(self._lik(t, i), g, proposed)

    cdef int _propose(self, GramFactor g, int op, Py_ssize_t j, Py_ssize_t t, Py_ssize_t i, double* new) noexcept nogil:
        """The shared GramFactor proposal (`_core.propose`) with particle i's likelihood; non-zero if singular
        (counted as a resample-move singularity)."""
        if propose(g, op, j, self._lik(t, i), new):
            self.nsing[2] += 1
            return 1
        return 0

    cdef int _propose_col(self, GramFactor g, Py_ssize_t i, int op, Py_ssize_t pos1, Py_ssize_t j, Py_ssize_t t,
                          double* new) noexcept nogil:
        """`_prop_col`, then the proposed state's log likelihood (as `_core.propose`); non-zero if singular (counted
        as a resample-move singularity)."""
        if self._prop_col(g, i, op, pos1, j, t):
            self.nsing[2] += 1
            return 1
        new[0] = self._lml_of(g, t, i, True)
        return 0

    cdef double _log_Z(self, Py_ssize_t t) noexcept nogil:
        "log of sum_{j <= min(kmax, t)} lam^j / j! (log_Z), by the kernel's shared truncated-Poisson normaliser."
        return log_trunc_poisson_norm(self.lam, self.kmax if self.kmax < t else t, self.lgam)

    cdef double _log_backward(self, int move, Py_ssize_t k_new, Py_ssize_t t, bint has_xt) noexcept nogil:
        "log L(old | new), the normalised backward kernel (log_backward)."
        cdef double b, dd, vz, vb, vd, tot
        cdef Py_ssize_t top
        if has_xt:
            return 0.0
        self._probs(k_new, t, &b, &dd)
        top = self.kmax if self.kmax < t - 1 else t - 1
        vz = 1.0 - b - dd
        vb = dd if k_new >= 1 else 0.0
        vd = b if k_new + 1 <= top else 0.0
        tot = vz + vb + vd
        if move == STAY:
            return log(vz / tot)
        if move == BIRTH:
            return log(vb / tot) - log(<double> k_new)
        return log(vd / tot) - log(<double> (t - 1 - k_new))

    cdef void _mean_at(self, GramFactor g, const double* row, Py_ssize_t stride, double* out) noexcept nogil:
        "out[o] = sum_a row[a * stride] h_o[a], h_o = (G + rI)^{-1} D'y_o the posterior-mean coefficients."
        cdef Py_ssize_t o, a, M1 = g.m_max + 1
        cdef double s
        for o in range(self.c):
            g._back_solve(g.ofac[o], g.Z + o * M1, self.beta)
            s = 0.0
            for a in range(g.m):
                s += row[a * stride] * self.beta[a]
            out[o] = s


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _SMCSteps(_SMCMoves):
    """The per-observation loop's steps over all particles: a new observation (row update, zero / birth / death
    move, incremental weight), the Gibbs refresh of the variances, resampling copies, a reversible-jump sweep targeting
    pi_t and the width step. A room of `SMCCore`."""

    def step(self, const double[::1] xt, const double[::1] yt):
        """Observation t arrives: every particle gets the new row, draws a zero / birth / death move and its log
        incremental weight; returns copies of (log weights, one-step predictive means, filtered estimates).
        Variances are not refreshed here (see `refresh`)."""
        if self.t >= self.cap:
            raise ValueError(f"capacity of {self.cap} observations reached: set capacity")
        if xt.shape[0] != self.d or yt.shape[0] != self.c:
            raise ValueError("xt / yt have the wrong length")
        cdef Py_ssize_t t0 = self.t, t = t0 + 1, i, a, j, k, pos, knew, dd_
        cdef double b, dth, u, lq, logZr, new, r2, diff, lpm
        cdef int move, rc
        cdef Py_ssize_t n_free
        cdef bint has_xt
        cdef GramFactor g
        cdef Py_ssize_t* ce
        for a in range(self.d):
            self.X[t0 * self.d + a] = xt[a]
        for a in range(self.c):
            self.Y[t0 * self.c + a] = yt[a]
        logZr = self._log_Z(t - 1) - self._log_Z(t)
        if self.store:
            self._reserve(self.Np)
        with self._lock:
            if self.store:
                self._store_row(t0)
            for i in range(self.Np):
                g = <GramFactor> self.fac[i]
                k = self.kk[i]
                ce = self.cent + i * self.kmax
                if self.store:
                    self._row(ce, k, t0, self.dv)
                else:
                    self.dv[0] = 1.0
                    for a in range(k):
                        r2 = 0.0
                        if self.scaled:
                            for dd_ in range(self.d):
                                diff = (self.X[ce[a] * self.d + dd_] - xt[dd_]) * self.scv[i * self.d + dd_]
                                r2 += diff * diff
                        else:
                            for dd_ in range(self.d):
                                diff = self.X[ce[a] * self.d + dd_] - xt[dd_]
                                r2 += diff * diff
                        self.dv[1 + a] = phi_r2(r2, self.kind, self.w2v[i])
                self._mean_at(g, self.dv, 1, self.pre + i * self.c)
                g._add_row(t0, self.dv, &yt[0])
                self._probs(k, t, &b, &dth)
                u = random_standard_uniform(self.rng)
                has_xt = False
                knew = k
                if u < b:
                    move = BIRTH
                    n_free = t - k
                    if self.rho > 0.0 and random_standard_uniform(self.rng) < self.rho:
                        j = t0                      # the newest input (always free at time t)
                    else:
                        j = self._draw_free(i, t)
                    rc = self._prop_col(g, i, APPEND, 0, j, t)
                    if rc != 0:             # numerically singular: this proposal cannot be weighted -> weight 0
                        self.nsing[0] += 1
                        self.lml[i] = self._lml_of(g, t, i, False)
                        self.inc[i] = -INFINITY
                        self._mean_at(g, self.dv, 1, self.post + i * self.c)   # the state is row t0's as added
                        continue
                    g._commit()
                    ce[k] = j
                    self._hold(j)
                    knew = k + 1
                    has_xt = j == t0
                    lq = log(b) + log(self.rho * has_xt + (1.0 - self.rho) / n_free)
                elif u < b + dth:
                    move = DEATH
                    pos = self._index(k)
                    g._prop_delete(1 + pos)
                    g._commit()
                    self._let_go(ce[pos])
                    _remove(ce, k, pos)
                    knew = k - 1
                    lq = log(dth) - log(<double> k)
                else:
                    move = STAY
                    lq = log(1.0 - b - dth)
                self.kk[i] = knew
                new = self._lml_of(g, t, i, False)
                # log p_t(k) p_t(S|k) / p_{t-1}(k') p_{t-1}(S'|k') without the Z ratio (log_prior_move_ratio)
                lpm = ((knew - k) * log(self.lam) - lgamma(knew + 1.0) + lgamma(k + 1.0)
                       + _lbinom(t - 1, k) - _lbinom(t, knew))
                self.inc[i] = (new - self.lml[i] + logZr + lpm + self._log_backward(move, knew, t, has_xt) - lq)
                self.lml[i] = new
                if self.store:
                    self._mean_at(g, self._row(ce, knew, t0, self.rowb), 1, self.post + i * self.c)
                else:
                    for a in range(g.m):
                        self.rowb[a] = g.design_value(t0, a)
                    self._mean_at(g, self.rowb, 1, self.post + i * self.c)
        self.t = t
        return self._inc.copy(), self._pre.copy(), self._post.copy()

    def refresh(self):
        """Gibbs refresh of (sigma_y^2, sigma_beta^2) through beta for every particle (eq. 4-5), O(m^2) draw plus
        the O(m^3) refactorisation at the new ridge; a refactorisation that fails keeps the old variances."""
        if self.fixed:
            return
        cdef Py_ssize_t i, o, a, m, M1, t = self.t
        cdef double ee, bb, r, sy, wz, ww, bt, ny, nb, old
        cdef double* z
        cdef GramFactor g
        with self._lock:
            for i in range(self.Np):
                g = <GramFactor> self.fac[i]
                m = g.m
                M1 = g.m_max + 1
                r = self.s2y[i] / self.s2b[i]
                sy = sqrt(self.s2y[i])
                ee = 0.0
                bb = 0.0
                for o in range(self.c):
                    z = g.Z + o * M1
                    for a in range(m):
                        self.wv[a] = z[a] + sy * random_standard_normal(self.rng)
                    g._back_solve(g.ofac[o], self.wv, self.beta)
                    wz = 0.0
                    ww = 0.0
                    bt = 0.0
                    for a in range(m):
                        wz += self.wv[a] * z[a]
                        ww += self.wv[a] * self.wv[a]
                        bt += self.beta[a] * self.beta[a]
                    ee += g.yy[o] - 2.0 * wz + ww - r * bt
                    bb += bt
                if ee < 1e-300:
                    ee = 1e-300
                ny = (self.b_y + 0.5 * ee) / random_standard_gamma(self.rng, self.a_y + 0.5 * t * self.c)
                nb = (self.b_b + 0.5 * bb) / random_standard_gamma(self.rng, self.a_b + 0.5 * m * self.c)
                old = g.ridge[0]
                g.ridge[0] = ny / nb
                if g._refactor(0):
                    g.ridge[0] = old
                    self.nsing[1] += 1
                else:
                    self.s2y[i] = ny
                    self.s2b[i] = nb
                self.lml[i] = self._lml_of(g, t, i, False)

    def resample(self, const Py_ssize_t[::1] src):
        """Slot i becomes a copy of particle src[i] (src[i] == i: kept). Sources must be kept slots."""
        cdef Py_ssize_t i, s, a
        if src.shape[0] != self.Np:
            raise ValueError("src must have one entry per particle")
        for i in range(self.Np):
            s = src[i]
            if s < 0 or s >= self.Np or src[s] != s:
                raise ValueError("src[i] must be a kept slot")
        for i in range(self.Np):
            s = src[i]
            if s == i:
                continue
            for a in range(self.kk[s]):             # the store's counts: s's centres gain a holder, i's lose one
                self._hold(self.cent[s * self.kmax + a])
            for a in range(self.kk[i]):
                self._let_go(self.cent[i * self.kmax + a])
            (<GramFactor> self.fac[i])._copy_from(<GramFactor> self.fac[s], self.t)
            for a in range(self.kk[s]):
                self.cent[i * self.kmax + a] = self.cent[s * self.kmax + a]
            self.kk[i] = self.kk[s]
            self.s2y[i] = self.s2y[s]
            self.s2b[i] = self.s2b[s]
            self.lml[i] = self.lml[s]
            self.w2v[i] = self.w2v[s]
            if self.scaled:
                for a in range(self.d):
                    self.scv[i * self.d + a] = self.scv[s * self.d + a]

    def rj_sweep(self):
        """One reversible-jump MCMC step per particle targeting pi_t: birth at a free observed input, death, or a
        swap of one centre to a free input (TDSMCReference._rj_move)."""
        cdef Py_ssize_t i, k, t = self.t, j, pos
        cdef double b, dth, b1, d1, u, new, lr
        cdef GramFactor g
        cdef Py_ssize_t* ce
        if self.store:
            self._reserve(self.Np)
        with self._lock:
            for i in range(self.Np):
                g = <GramFactor> self.fac[i]
                k = self.kk[i]
                ce = self.cent + i * self.kmax
                self._probs(k, t, &b, &dth)
                u = random_standard_uniform(self.rng)
                if u < b:
                    j = self._draw_free(i, t)
                    if self._propose_col(g, i, APPEND, 0, j, t, &new):
                        continue
                    self._probs(k + 1, t, &b1, &d1)
                    lr = new - self.lml[i] + log(self.lam) + log(d1) - log(<double> (k + 1)) - log(b)
                    if settle(g, mh_accept(self.rng, lr, 0.0, 0.0), new, &self.lml[i]):
                        ce[k] = j
                        self.kk[i] = k + 1
                        self._hold(j)
                    else:
                        self._unused(j)
                elif u < b + dth:
                    pos = self._index(k)
                    self._propose(g, DELETE, 1 + pos, t, i, &new)
                    self._probs(k - 1, t, &b1, &d1)
                    lr = new - self.lml[i] - (log(self.lam) + log(dth) - log(<double> k) - log(b1))
                    if settle(g, mh_accept(self.rng, lr, 0.0, 0.0), new, &self.lml[i]):
                        self._let_go(ce[pos])
                        _remove(ce, k, pos)
                        self.kk[i] = k - 1
                elif k > 0 and k < t:
                    pos = self._index(k)
                    j = self._draw_free(i, t)
                    if self._propose_col(g, i, REPLACE, 1 + pos, j, t, &new):
                        continue
                    if settle(g, mh_accept(self.rng, new - self.lml[i], 0.0, 0.0), new, &self.lml[i]):
                        self._hold(j)
                        self._let_go(ce[pos])
                        _remove(ce, k, pos)
                        ce[k - 1] = j
                    else:
                        self._unused(j)

    cdef bint _metric_proposal(self, GramFactor g, Py_ssize_t i, Py_ssize_t k, Py_ssize_t t,
                               double lprior) noexcept nogil:
        """The rest of a step on the metric (the width, or the input scales) once particle i's k kernel columns are
        built at the proposed value in the lent buffers (`_swap_rebuild`): refactor them (a singular rebuild is a
        rejection), accept with log r = log p(Y_t | S, proposed) - log p(Y_t | S, current) + lprior (the log prior
        ratio; the walk on the log metric is symmetric), settle, and hand the buffers back. Returns whether it was
        accepted; the caller sets the metric and counts (TDSMCReference._metric_proposal)."""
        cdef bint acc = False
        cdef double new
        if g._prop_rebuild_rows(1, 1 + k, t):
            self.nsing[2] += 1
        else:
            new = self._lml_of(g, t, i, True)
            acc = settle(g, mh_accept(self.rng, new - self.lml[i] + lprior, 0.0, 0.0), new, &self.lml[i])
        g._swap_rebuild(self.spare)
        return acc

    def width_sweep(self, double tau):
        """One Metropolis-Hastings step on each particle's log width targeting pi_t (TDSMCReference._width_move):
        log w' = log w + tau eps, every kernel column rebuilt at w' over the t rows seen (the kernel's full-rebuild
        path, O(t k (k + d) + k^3)), accepted with log r = log p(Y_t | S, w') - log p(Y_t | S, w) + log N(log w')
        - log N(log w) (a symmetric walk on log w, whose prior is normal). A singular rebuild is a rejection."""
        if not self.learn:
            raise ValueError("the width is not learned (log_width_sd = 0)")
        if not (tau > 0.0 and tau < INFINITY):
            raise ValueError(f"tau must be positive and finite, got {tau}")
        cdef Py_ssize_t i, a, k, t = self.t, N = self.cap
        cdef double lw, lw1, w21, lpr
        cdef double* cols
        cdef GramFactor g
        cdef Py_ssize_t* ce
        with self._lock:
            for i in range(self.Np):
                g = <GramFactor> self.fac[i]
                k = self.kk[i]
                ce = self.cent + i * self.kmax
                lw = 0.5 * log(self.w2v[i])
                lw1 = lw + tau * random_standard_normal(self.rng)
                w21 = exp(2.0 * lw1)
                self.nwid[0] += 1
                g._swap_rebuild(self.spare)
                cols = g.rebuild_columns()
                for a in range(k):
                    basis_column_c(self.X, t, self.d, self.X + ce[a] * self.d, self.kind, w21, cols + (1 + a) * N)
                lpr = -0.5 * ((lw1 - self.lw0) ** 2 - (lw - self.lw0) ** 2) / (self.lwsd * self.lwsd)
                if self._metric_proposal(g, i, k, t, lpr):
                    self.w2v[i] = w21
                    self.nwid[1] += 1

    def scale_sweep(self, const double[::1] tau):
        """One Metropolis-Hastings step on each input's log scale of each particle, targeting pi_t
        (TDSMCReference._scale_move): for m = 0..d-1, log s_m' = log s_m + tau_m eps, every kernel column rebuilt at
        the proposed scales over the t rows seen, accepted with log r = log p(Y_t | S, s') - log p(Y_t | S, s)
        + log N(log s_m'; 0, sd^2) - log N(log s_m; 0, sd^2). A singular rebuild is a rejection."""
        if not self.scaled:
            raise ValueError("the input scales are not learned (log_scale_sd = 0)")
        if tau.shape[0] != self.d:
            raise ValueError(f"tau must have one step per input ({self.d}), got {tau.shape[0]}")
        cdef Py_ssize_t i, a, m, k, t = self.t, N = self.cap, d = self.d
        for m in range(d):
            if not (tau[m] > 0.0 and tau[m] < INFINITY):
                raise ValueError(f"tau must be positive and finite, got {tau[m]} for input {m}")
        cdef double ls, ls1
        cdef double* cols
        cdef double* sc
        cdef GramFactor g
        cdef Py_ssize_t* ce
        with self._lock:
            for i in range(self.Np):
                g = <GramFactor> self.fac[i]
                ce = self.cent + i * self.kmax
                sc = self.scv + i * d
                for m in range(d):
                    k = self.kk[i]
                    ls = log(sc[m])
                    ls1 = ls + tau[m] * random_standard_normal(self.rng)
                    for a in range(d):
                        self.spv[a] = sc[a]
                    self.spv[m] = exp(ls1)
                    self.nsc[0] += 1
                    g._swap_rebuild(self.spare)
                    cols = g.rebuild_columns()
                    for a in range(k):
                        self._scaled_column(t, ce[a], self.spv, cols + (1 + a) * N)
                    if self._metric_proposal(g, i, k, t, -0.5 * (ls1 * ls1 - ls * ls) / (self.lssd * self.lssd)):
                        sc[m] = self.spv[m]
                        self.nsc[1] += 1


cdef class SMCCore(_SMCSteps):
    """Particle states and the per-observation loop; driven by `rbf_bayes.smc.TDSMC`. Built in rooms, each a base class
    with one job: `_Particles` (memory) -> `_SharedColumns` (the column store) -> `_SMCMoves` (one particle's move) ->
    `_SMCSteps` (the loop's steps) -> `SMCCore` (capacity, pickling, snapshots, read-only views)."""

    def grow(self, Py_ssize_t cap):
        """Raise the capacity to `cap` observations: every factor gets zero rows appended (`resize_rows`)."""
        if cap <= self.cap:
            return
        X, Y, fb = np.zeros((cap, self.d)), np.zeros((cap, self.c)), np.zeros(cap, dtype=np.intp)
        X[:self.cap] = self._X
        Y[:self.cap] = self._Y
        cdef Py_ssize_t sl
        cdef double* col
        cdef Py_ssize_t* so = <Py_ssize_t*> realloc(self.slot_of, cap * sizeof(Py_ssize_t))
        if so == NULL:
            raise MemoryError("TD-SMC: cannot grow the input-to-slot table")
        self.slot_of = so
        for sl in range(self.cap, cap):
            self.slot_of[sl] = -1
        for sl in range(self.nalloc):            # the store's columns get room for the new rows
            col = <double*> realloc(self.scol[sl], cap * sizeof(double))
            if col == NULL:
                raise MemoryError(f"TD-SMC column store: cannot grow column {sl} to {cap} rows")
            self.scol[sl] = col
        for f in self.fac:
            f.resize_rows(cap)
        if self.learn or self.scaled:
            self.spare.resize_rows(cap)
        self._X, self._Y, self._free = X, Y, fb
        cdef double[:, ::1] xv = self._X
        cdef double[:, ::1] yv = self._Y
        cdef Py_ssize_t[::1] fv = self._free
        self.X, self.Y, self.freebuf = &xv[0, 0], &yv[0, 0], &fv[0]
        self.cap = cap

    def __reduce__(self):
        """Pickle support: the settings, every particle's GramFactor, the per-particle arrays and the bit generator (so
        the unpickled sampler continues the same random stream); rebuilt by `_rebuild_smc_core`."""
        arrays = dict(X=self._X, Y=self._Y, cent=self._cent, k=self._k, s2y=self._s2y, s2b=self._s2b, lml=self._lml,
                      inc=self._inc, pre=self._pre, post=self._post, nsing=self._nsing, w2=self._w2, nwid=self._nwid,
                      sc=self._sc, nsc=self._nsc)
        args = (self.cap,) + tuple(self._args[1:])     # the capacity may have grown since construction
        return (_rebuild_smc_core, (self.fac, args, self.rho, self.t, self._bitgen, arrays, self.lwsd, self.lssd))

    def _restore(self, list factors, Py_ssize_t t, dict arrays):
        """Install unpickled particles and arrays (same shapes as this freshly built core's); the column store is
        rebuilt from the inputs and the centres (each column computed as `_acquire` does, so the values are the same
        as the pickled sampler's)."""
        cdef Py_ssize_t i, a, s
        for name, dst in (("X", self._X), ("Y", self._Y), ("cent", self._cent), ("k", self._k), ("s2y", self._s2y),
                          ("s2b", self._s2b), ("lml", self._lml), ("inc", self._inc), ("pre", self._pre),
                          ("post", self._post), ("nsing", self._nsing), ("w2", self._w2), ("nwid", self._nwid),
                          ("sc", self._sc), ("nsc", self._nsc)):
            if name in arrays:
                dst[...] = arrays[name]
        self.fac = factors
        self.t = t
        if self.store:
            for i in range(self.Np):
                self._reserve(self.kk[i])
                for a in range(self.kk[i]):
                    s = self._acquire(self.cent[i * self.kmax + a], t)
                    self.sref[s] += 1
            for a in range(t):
                self.scol[0][a] = 1.0

    def snapshot(self):
        """Every particle's state in one pass, for `TDSMC.result`: k (Np,), centre indices (sum k_i,), posterior
        means h = (G + rI)^{-1} D'y (sum m_i, c) and lower Cholesky factors flattened by rows (sum m_i^2,),
        with m_i = 1 + k_i."""
        cdef Py_ssize_t i, o, a, b, m, M1, pos = 0, pos2 = 0, tot = 0, tot2 = 0
        cdef GramFactor g
        for i in range(self.Np):
            m = (<GramFactor> self.fac[i]).m
            tot += m
            tot2 += m * m
        H = np.empty((tot, self.c))
        Lf = np.empty(tot2)
        cdef double[:, ::1] Hv = H
        cdef double[::1] Lv = Lf
        for i in range(self.Np):
            g = <GramFactor> self.fac[i]
            m = g.m
            M1 = g.m_max + 1
            for o in range(self.c):
                g._back_solve(g.ofac[o], g.Z + o * M1, self.beta)
                for a in range(m):
                    Hv[pos + a, o] = self.beta[a]
            for a in range(m):
                for b in range(m):
                    Lv[pos2 + a * m + b] = g.L[b * M1 + a] if b <= a else 0.0   # stored by columns
            pos += m
            pos2 += m * m
        k = self._k.copy()
        cent = np.concatenate([self._cent[i, :k[i]] for i in range(self.Np)]) if self.Np else np.empty(0, np.intp)
        return k, cent, H, Lf

    @property
    def k(self):
        return self._k.copy()

    @property
    def sigma2_y(self):
        return self._s2y.copy()

    @property
    def sigma2_beta(self):
        return self._s2b.copy()

    @property
    def widths(self):
        """Each particle's width."""
        return np.sqrt(self._w2)

    @property
    def width_acceptance(self):
        """Width steps (proposed, accepted) so far."""
        return int(self._nwid[0]), int(self._nwid[1])

    @property
    def scales(self):
        """Each particle's input scales (Np, d)."""
        return self._sc.copy()

    @property
    def scale_acceptance(self):
        """Scale steps (proposed, accepted) so far, one per input per particle per sweep."""
        return int(self._nsc[0]), int(self._nsc[1])

    @property
    def log_ml(self):
        return self._lml.copy()

    @property
    def inputs(self):
        return self._X[:self.t]

    @property
    def n_singular(self):
        """Proposals rejected as numerically singular: (birth in a step, variance refresh, resample-move)."""
        return tuple(int(v) for v in self._nsing)

    def centres(self, Py_ssize_t i):
        """Centre indices of particle i, in column order."""
        return [int(v) for v in self._cent[i, :self._k[i]]]

    def factor(self, Py_ssize_t i):
        return self.fac[i]


def _rebuild_smc_core(factors, args, rho, t, bitgen, arrays, log_width_sd=0.0, log_scale_sd=0.0):
    "Unpickle an SMCCore: a core built on placeholder particles, then the pickled state installed."
    cap, d, kmax, basis, width, lam, c, a_y, b_y, a_b, b_b, fixed = args
    g0 = factors[0]
    empty = []
    for _ in factors:
        e = GramFactor(cap, g0.c, g0.m_max, ridge=(1.0,), design=g0.design)
        if g0.design:
            e.append(np.zeros(cap))
        else:
            e.append_given(np.zeros(0), 0.0, np.zeros(g0.c))
        empty.append(e)
    core = SMCCore(empty, cap, d, kmax, basis, width, lam, c, a_y, b_y, a_b, b_b, fixed, arrays["s2y"], arrays["s2b"],
                   bitgen, rho, None, log_width_sd, None, log_scale_sd)
    core._restore(list(factors), t, arrays)
    return core
