# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The posterior-ratio hot loop: an incremental Gram / Cholesky state for basis-function regression.

Documented, derived and checked against the NumPy reference in `nbs/04_kernel.ipynb`.
Hand-written (nbdev cannot export Cython); the reference implementation in
`rbf_bayes.kernel` is the specification.

The state keeps, for the design matrix D = [d_0 ... d_{m-1}] (N x m) and targets Y (N x c):
the columns, the Gram matrix G = D'D, D'Y, y_o'y_o, and for each of q ridge values r_f the
lower Cholesky factor L_f of G + r_f I together with z_o = L_f^{-1} D'y_o for every output o
that uses factor f.  From these, the two quantities every posterior ratio needs are O(m):

    e_o  = ||z_o||^2 = y_o' D (G + r_f I)^{-1} D' y_o      (explained sum of squares)
    ld_f = 2 sum_i log L_f[i, i] = log det(G + r_f I)

Append / delete / replace a column cost O(N m) (the new column's inner products, one BLAS
gemv) plus O(q m^2) (factor row / rank-one update of the trailing block), never O(m^3).
Every change is a proposal first (`_prop_*`), then `_commit()` or `_reject()`; a proposal
whose new pivot is numerically zero returns 1 and leaves the state untouched.
"""
import math

import numpy as np
cimport cython
cimport numpy as cnp
from libc.math cimport sqrt, log, exp, isfinite
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memmove, memset

# Pivot floor relative to the design's largest column: a Schur complement below ~450 machine epsilons of the largest
# G_ii is rounding noise (the forward substitution's error scales with the large entries), so such a column is
# numerically dependent however small its own norm (nbs/04_kernel.ipynb; the probit Gibbs loop amplified these).
cdef double TOL_FLOOR = 1e-13
# A proposed state is accepted only if the first-order rounding error of every output's explained sum of squares e_o
# is below TOL_RESID of its residual y_o'y_o - e_o, or of TOL_FIT y_o'y_o if the residual is smaller (an exact fit)
# (`_inaccurate`, nbs/04_kernel.ipynb): the pivot tests bound each new column's angle to the others, not the growth
# of the coefficients over a cluster of nearly dependent columns, where e_o (and so the likelihood) can be wrong by
# more than the residual itself.
cdef double TOL_RESID = 1e-6
cdef double TOL_FIT = 1e-6
cdef double EPS = 2.220446049250313e-16
# Rows per block of the recompute mode: two blocks of doubles (8 KiB) stay in L1 while a column is evaluated and dotted.
cdef enum:
    BLK = 512
from scipy.linalg.cython_blas cimport ddot, dgemv

cnp.import_array()

from rbf_bayes.basis import BASES

# One basis registry: the C list `RBF_BASES` (`_basis_loops.h`) gives every C loop its formulas, its codes (the
# positions) and its names; `rbf_bayes.basis.BASES` names the same bases in the same order for the NumPy twin.
cdef extern from "_basis_loops.h":
    int RBF_N_BASES
    const char* rbf_basis_names[]
    double rbf_exp(double x) noexcept nogil
    double rbf_phi_r2(double r2, int kind, double w2) noexcept nogil
    void rbf_phi_inplace(double* v, Py_ssize_t n, int kind, double w2) noexcept nogil
    void rbf_sqdist2(const double* x, Py_ssize_t n, double m0, double m1, double* out) noexcept nogil
    void rbf_sqdist_scaled_t(const double* xT, Py_ssize_t n, Py_ssize_t d, const double* mu, const double* s,
                             double* out) noexcept nogil

BASIS_CODES = {rbf_basis_names[i].decode(): i for i in range(RBF_N_BASES)}


def _check_basis_names(bases=BASES):
    """The names of the NumPy registry (`rbf_bayes.basis.BASES`) are those of the C registry, in the same order (the
    codes are the positions): checked at import, an ImportError naming both lists otherwise."""
    if tuple(BASIS_CODES) != tuple(bases):
        raise ImportError(f"rbf_bayes.basis.BASES {tuple(bases)} and the C registry RBF_BASES "
                          f"(rbf_bayes/_basis_loops.h) {tuple(BASIS_CODES)} disagree: a basis is added to both, in "
                          "the same place")


_check_basis_names()


cdef double phi_r2(double r2, int kind, double w2) noexcept nogil:
    """phi as a function of the squared distance r2 = rho^2 (w2 = width^2): the registry's formula; NaN for a code
    outside it."""
    return rbf_phi_r2(r2, kind, w2)


cdef void basis_column_c(const double* x, Py_ssize_t N, Py_ssize_t d, const double* mu,
                         int kind, double w2, double* out) noexcept nogil:
    """out[n] = phi(||x_n - mu||) for a C-contiguous (N, d) x."""
    cdef Py_ssize_t n, i
    cdef double r2, t
    if d == 2:                  # the common case spelled out: 0 + t0^2 + t1^2 = t0^2 + t1^2 exactly
        rbf_sqdist2(x, N, mu[0], mu[1], out)
        rbf_phi_inplace(out, N, kind, w2)
        return
    for n in range(N):          # two passes, each a plain loop the compiler vectorises; the same arithmetic
        r2 = 0.0
        for i in range(d):
            t = x[n * d + i] - mu[i]
            r2 += t * t
        out[n] = r2
    rbf_phi_inplace(out, N, kind, w2)


cdef void basis_column_scaled_t(const double* xT, Py_ssize_t N, Py_ssize_t d, const double* mu, const double* s,
                                int kind, double w2, double* out) noexcept nogil:
    """out[n] = phi(||diag(s)(x_n - mu)||), the per-input scaled distance of the learned basis (nbs/05d), from the
    transposed inputs xT (d, N): distances input by input over contiguous rows, then phi over the column (the
    learned-scale step rebuilds every column with it)."""
    rbf_sqdist_scaled_t(xT, N, d, mu, s, out)
    rbf_phi_inplace(out, N, kind, w2)


cdef extern from "_gram_loops.h":
    void rbf_gemv_t(const double* A, Py_ssize_t lda, Py_ssize_t m, const double* v, Py_ssize_t n,
                    double* out) noexcept nogil
    ctypedef void (*rbf_gemv_fn)(const double* A, Py_ssize_t lda, Py_ssize_t m, const double* v, Py_ssize_t n,
                                 double* out) noexcept nogil
    int rbf_gemv_widest() noexcept nogil
    void rbf_gemv_init() noexcept nogil
    rbf_gemv_fn rbf_gemv_pick(int w) noexcept nogil
    void rbf_forward_rows(const double* Lb, double* rows, const double* inv, Py_ssize_t q, Py_ssize_t S,
                          Py_ssize_t M1, Py_ssize_t n) noexcept nogil
    void rbf_downdate(const double* L, double* Lp, double* xq, double* rq, double* rows, const double* g,
                      const double* Z, double* Zp, const double* B, const Py_ssize_t* ofac, Py_ssize_t q, Py_ssize_t c,
                      Py_ssize_t S, Py_ssize_t M1, Py_ssize_t j, Py_ssize_t n, Py_ssize_t i0) noexcept nogil
    double rbf_coef_weight(const double* L, const double* z, const double* dg, double r, Py_ssize_t M1, Py_ssize_t m,
                           double* h, double* inv, double* sd) noexcept nogil
    Py_ssize_t rbf_chol(const double* G, double* Wb, const double* ridge, Py_ssize_t m, Py_ssize_t f0, Py_ssize_t f1,
                        Py_ssize_t S, Py_ssize_t M1, double tol, double flo, double gmax) noexcept nogil


rbf_gemv_init()


def rbf_gemv_widest_py():
    """The widest vector (in doubles: 2, 4 or 8) the inner-product kernel uses on this processor."""
    return rbf_gemv_widest()


def _gemv_t_width(const double[:, ::1] A, const double[::1] v, int width):
    """A @ v by `rbf_gemv_t`'s kernel for vectors of `width` doubles (2, 4 or 8; the processor must have them): the
    tests check that every width gives the same bits."""
    if width not in (2, 4, 8) or width > rbf_gemv_widest():
        raise ValueError(f"width must be 2, 4 or 8 and at most {rbf_gemv_widest()} on this processor, got {width}")
    if A.shape[1] != v.shape[0]:
        raise ValueError(f"A has {A.shape[1]} columns but v has {v.shape[0]} entries")
    out = np.zeros(A.shape[0])
    cdef double[::1] o = out
    if A.shape[0] and A.shape[1]:
        rbf_gemv_pick(width)(&A[0, 0], A.shape[1], A.shape[0], &v[0], A.shape[1], &o[0])
    return out


cdef double log_trunc_poisson_norm(double L, Py_ssize_t kmax, const double* lgam) noexcept nogil:
    """log sum_{j <= kmax} L^j / j! with lgam[j] = lgamma(j + 1); one exp per term, the largest term at
    j = min(floor(L), kmax)."""
    cdef Py_ssize_t j, jm
    cdef double lL, mx, s = 0.0
    if L <= 0.0:
        return 0.0
    lL = log(L)
    if L >= <double> kmax:      # compare as doubles: casting a rate above 2^63 to an integer overflows
        jm = kmax
    else:
        jm = <Py_ssize_t> L
    mx = jm * lL - lgam[jm]
    for j in range(kmax + 1):
        s += exp(j * lL - lgam[j] - mx)
    return mx + log(s)


def log_trunc_poisson_norm_py(double L, Py_ssize_t kmax):
    """The C `log_trunc_poisson_norm` from Python (tests compare it with the NumPy twin `smc.log_Z` for any rate)."""
    if kmax < 0:
        raise ValueError(f"kmax must be >= 0, got {kmax}")
    lg = np.array([math.lgamma(j + 1.0) for j in range(kmax + 1)])
    cdef double[::1] lgv = lg
    return log_trunc_poisson_norm(L, kmax, &lgv[0])


def basis_column(const double[:, ::1] x, const double[::1] mu, str basis, double width=1.0):
    """phi(||x_n - mu||) for every row of x, computed in C (the kernel's column generator)."""
    if basis not in BASIS_CODES:
        raise ValueError(f"basis must be one of {sorted(BASIS_CODES)}, got {basis!r}")
    if mu.shape[0] != x.shape[1]:
        raise ValueError(f"mu has {mu.shape[0]} coordinates but x has d={x.shape[1]} columns")
    out = np.empty(x.shape[0])
    cdef double[::1] o = out
    cdef int kind = BASIS_CODES[basis]
    with nogil:
        basis_column_c(&x[0, 0], x.shape[0], x.shape[1], &mu[0], kind, width * width, &o[0])
    return out


def draw_values(const double[:, ::1] x, const double[:, ::1] centres, const cnp.int64_t[::1] centre_offsets,
                const double[:, ::1] coef, const cnp.int64_t[::1] coef_offsets, const cnp.int64_t[::1] kinds,
                const double[:, ::1] scales, double width, Py_ssize_t s0, Py_ssize_t s1):
    """f_s(x_i) = D_s(x_i) alpha_s for the kept draws s0 <= s < s1 of a trace at every row x_i: an array (s1 - s0, n, c)
    (nbs/05_rjmcmc.ipynb, "Predicting with every kept draw"). Draw s has the centres centres[centre_offsets[s] :
    centre_offsets[s + 1]], basis code kinds[s] (`BASIS_CODES`), per-input scales scales[s] (ones: none) and the rows
    coef[coef_offsets[s] : coef_offsets[s + 1]] = (intercept, the d linear terms, one per centre), each with c
    columns. Every basis column is evaluated once into a buffer of n (the loops of `_basis_loops.h`, the values of
    `basis_column`) and added into the draw's outputs, so no design matrix is formed."""
    cdef Py_ssize_t n = x.shape[0], d = x.shape[1], c = coef.shape[1], P = centre_offsets.shape[0] - 1
    if not (0 <= s0 <= s1 <= P) or coef_offsets.shape[0] != P + 1 or kinds.shape[0] < P or scales.shape[0] < P:
        raise ValueError(f"draws {s0}:{s1} of a trace with {P} kept draws (offsets, kinds, scales of matching length)")
    if centres.shape[1] != d or scales.shape[1] != d:
        raise ValueError(f"centres and scales must have d={d} columns, got {centres.shape[1]} and {scales.shape[1]}")
    out = np.zeros((s1 - s0, n, c))
    if n == 0 or s1 == s0:
        return out
    cdef const double[:, ::1] xT = np.ascontiguousarray(np.asarray(x).T)
    cdef double[::1] buf = np.empty(n)
    cdef double[:, :, ::1] o = out
    cdef double* op
    cdef double* b = &buf[0]
    cdef double w2 = width * width, v, w
    cdef Py_ssize_t s, i, j, q, a, jc, r
    cdef int kind
    for s in range(s0, s1):
        kind = <int>kinds[s]
        if kind < 0 or kind >= RBF_N_BASES:
            raise ValueError(f"draw {s} has basis code {kind}, not one of {sorted(BASIS_CODES.values())}")
        if coef_offsets[s + 1] - coef_offsets[s] != 1 + d + centre_offsets[s + 1] - centre_offsets[s]:
            raise ValueError(f"draw {s}: {coef_offsets[s + 1] - coef_offsets[s]} coefficient rows for "
                             f"{centre_offsets[s + 1] - centre_offsets[s]} centres and d={d}")
    with nogil:
        for s in range(s0, s1):
            op = &o[s - s0, 0, 0]
            a = coef_offsets[s]
            for i in range(n):                       # the intercept and the linear terms, unscaled
                for q in range(c):
                    v = coef[a, q]
                    for j in range(d):
                        v = v + x[i, j] * coef[a + 1 + j, q]
                    op[i * c + q] = v
            for jc in range(centre_offsets[s], centre_offsets[s + 1]):
                rbf_sqdist_scaled_t(&xT[0, 0], n, d, &centres[jc, 0], &scales[s, 0], b)
                rbf_phi_inplace(b, n, <int>kinds[s], w2)
                r = a + 1 + d + (jc - centre_offsets[s])
                if c == 1:
                    w = coef[r, 0]
                    for i in range(n):
                        op[i] += w * b[i]
                else:
                    for q in range(c):
                        w = coef[r, q]
                        for i in range(n):
                            op[i * c + q] += w * b[i]
    return out


cdef inline double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """a . b with four partial sums: four independent dependency chains instead of one running sum, about 3x the
    speed on the short vectors of the factor algebra (a running sum waits one floating-point add latency per term).
    The rounding differs from one running sum at the level of the last bits; nothing compares it bit for bit."""
    cdef Py_ssize_t i = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while i + 4 <= n:
        s0 += a[i] * b[i]
        s1 += a[i + 1] * b[i + 1]
        s2 += a[i + 2] * b[i + 2]
        s3 += a[i + 3] * b[i + 3]
        i += 4
    while i < n:
        s0 += a[i] * b[i]
        i += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double _sdot(const double* a, Py_ssize_t sa, const double* b, Py_ssize_t n) noexcept nogil:
    """a[0], a[sa], a[2 sa], ... dotted with b[:n], summed in `_dot`'s order (so its rounding): a row of a factor
    stored by columns (stride M1)."""
    cdef Py_ssize_t i = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while i + 4 <= n:
        s0 += a[i * sa] * b[i]
        s1 += a[(i + 1) * sa] * b[i + 1]
        s2 += a[(i + 2) * sa] * b[i + 2]
        s3 += a[(i + 3) * sa] * b[i + 3]
        i += 4
    while i < n:
        s0 += a[i * sa] * b[i]
        i += 1
    return (s0 + s1) + (s2 + s3)


cdef void _gemv_t(const double* A, Py_ssize_t N, Py_ssize_t m, const double* v, double* out) noexcept nogil:
    """out[i] = A_i . v for the m contiguous rows A_i (length N) of A, via BLAS."""
    cdef int n_ = <int> N, m_ = <int> m, one = 1
    cdef double a = 1.0, b = 0.0
    cdef char tr = b'T'
    if m == 0:
        return
    dgemv(&tr, &n_, &m_, &a, <double*> A, &n_, <double*> v, &one, &b, out, &one)


cdef Py_ssize_t GEMV_OWN_MAX = 1 << 18


cdef inline void _products_of(const double* A, Py_ssize_t N, Py_ssize_t m, const double* v,
                              double* out) noexcept nogil:
    """out[i] = A_i . v for the m contiguous rows A_i (length N): `rbf_gemv_t` (the same bits on every processor) while
    the matrix is at most GEMV_OWN_MAX doubles (2 MiB, a core's L2 cache: N <= 10,922 at the robot arm's m = 24),
    BLAS dgemv beyond, where the product runs at memory speed and OpenBLAS spreads it over the cores (N = 1e5:
    1.47x faster than one core)."""
    if m * N <= GEMV_OWN_MAX:
        rbf_gemv_t(A, N, m, v, N, out)
    else:
        _gemv_t(A, N, m, v, out)


cdef inline void _products_ld(const double* A, Py_ssize_t lda, Py_ssize_t m, const double* v, Py_ssize_t n,
                              double* out) noexcept nogil:
    """out[i] = A_i[:n] . v[:n] for the m rows A_i of A stored lda apart (the first n entries of each), by the rule
    of `_products_of`: `rbf_gemv_t` while m n <= GEMV_OWN_MAX, BLAS dgemv beyond. The design rebuild of the learned
    bases (every column at each scale step) computes its Gram rows with it: own loop 1.33x faster than OpenBLAS's
    dgemv there (Boston, 300 x ~39), and single-threaded, where a BLAS level-3 product spawned BLAS threads that spin
    beside the chains (bench note, stop 48)."""
    cdef int n_ = <int> n, ld = <int> lda, m_ = <int> m, one = 1
    cdef double a = 1.0, b = 0.0
    cdef char tr = b'T'
    cdef Py_ssize_t i
    if m == 0:
        return
    if m * n <= GEMV_OWN_MAX:
        rbf_gemv_t(A, lda, m, v, n, out)
    elif n == 0:
        for i in range(m):
            out[i] = 0.0
    else:
        dgemv(&tr, &n_, &m_, &a, <double*> A, &ld, <double*> v, &one, &b, out, &one)


cdef object _copy_out(const double* p, Py_ssize_t n):
    "A NumPy copy of n doubles at p."
    out = np.empty(n)
    cdef double[::1] o = out
    if n:
        memcpy(&o[0], p, n * sizeof(double))
    return out


def _transposed(a, Py_ssize_t q, Py_ssize_t M1):
    """The q stacked (M1, M1) factors of a flat buffer, each transposed: the factors are stored by columns and pickled
    by rows (the pickle format of the row-major layout, kept)."""
    return np.ascontiguousarray(np.asarray(a, dtype=float).reshape(q, M1, M1).transpose(0, 2, 1)).reshape(-1)


cdef void _fill(double* p, a, Py_ssize_t n):
    "Copy n doubles from the array a into p (shapes checked by the caller's construction)."
    cdef const double[::1] v = np.ascontiguousarray(a, dtype=float).reshape(-1)
    if v.shape[0] != n:
        raise ValueError(f"GramFactor state: expected {n} values, got {v.shape[0]}")
    if n:
        memcpy(p, &v[0], n * sizeof(double))


def _rebuild_gram_factor(N, c, m_max, ridge, out_factor, m, tol, bufs, design=True, recompute=None):
    "Unpickle a GramFactor (see GramFactor.__reduce__)."
    cdef GramFactor g = GramFactor(N, c, m_max, ridge=ridge, out_factor=out_factor, design=design)
    if recompute is not None:
        g.enable_recompute(*recompute)
    g._copy_in(bufs)
    g.m, g.tol = m, tol
    g._slots_identity()
    return g


@cython.auto_pickle(False)    # a room is never built on its own; GramFactor pickles (`_Persistence`)
cdef class _GramBuffers:
    """The state's memory: every buffer of the factor state (their layout is declared in `_kernel.pxd`), its
    allocation from the sizes and its release, and the two guards every room uses (a proposal pending; a design kept).
    A room of `GramFactor` (nbs/04_kernel, "The kernel's rooms"): never built on its own."""

    def __cinit__(self, Py_ssize_t N, Py_ssize_t c, Py_ssize_t m_max, ridge=(0.0,), out_factor=None,
                  bint design=True):
        """design=False keeps no design and no targets (no N x m buffer): the caller supplies every new column's
        inner products (`_prop_append_given`, `_prop_replace_given`) and each new row (`_add_row`); TD-SMC's shared
        column store (nbs/09_smc.ipynb). The factor algebra is the same."""
        cdef Py_ssize_t o, f
        if N < 1:
            raise ValueError(f"N must be >= 1, got {N}")
        if c < 1:
            raise ValueError(f"c must be >= 1, got {c}")
        if m_max < 1:
            raise ValueError(f"m_max must be >= 1, got {m_max}")
        r = np.atleast_1d(np.asarray(ridge, dtype=float))
        if r.ndim != 1 or r.shape[0] < 1:
            raise ValueError("ridge must be a non-empty 1-d sequence of non-negative floats")
        if not np.all(np.isfinite(r)) or np.any(r < 0):
            raise ValueError(f"ridge values must be finite and >= 0, got {r}")
        q = r.shape[0]
        if out_factor is None:
            if q == 1:
                of = np.zeros(c, dtype=np.intp)
            elif q == c:
                of = np.arange(c, dtype=np.intp)
            else:
                raise ValueError(f"out_factor is required when q={q} ridge values serve c={c} outputs")
        else:
            of = np.asarray(out_factor, dtype=np.intp)
            if of.shape != (c,) or np.any(of < 0) or np.any(of >= q):
                raise ValueError(f"out_factor must have shape ({c},) with entries in [0, {q})")
        self.N, self.c, self.q, self.m_max, self.m = N, c, q, m_max, 0
        self.M1 = m_max + 1
        self.design = design
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1
        self.Dt = <double*> malloc(M1 * N * sizeof(double)) if design else <double*> malloc(sizeof(double))
        self.Yt = <double*> malloc(c * N * sizeof(double)) if design else <double*> malloc(sizeof(double))
        self.G = <double*> malloc(S * sizeof(double))
        self.B = <double*> malloc(M1 * c * sizeof(double))
        self.L = <double*> malloc(q * S * sizeof(double))
        self.Lp = <double*> malloc(q * S * sizeof(double))
        self.Z = <double*> malloc(c * M1 * sizeof(double))
        self.Zp = <double*> malloc(c * M1 * sizeof(double))
        self.yy = <double*> malloc(c * sizeof(double))
        self.ridge = <double*> malloc(q * sizeof(double))
        self.pridges = <double*> malloc(q * sizeof(double))
        self.ofac = <Py_ssize_t*> malloc(c * sizeof(Py_ssize_t))
        self.e = <double*> malloc(c * sizeof(double))
        self.ep = <double*> malloc(c * sizeof(double))
        self.ld = <double*> malloc(q * sizeof(double))
        self.ldp = <double*> malloc(q * sizeof(double))
        self.lpre = <double*> calloc(q * (self.M1 + 1), sizeof(double))
        self.slot = <Py_ssize_t*> malloc(M1 * sizeof(Py_ssize_t))
        self.W = M1 if M1 > c else c
        self.work = <double*> malloc((4 * self.W + 3 * q * self.M1) * sizeof(double))
        if (self.Dt == NULL or self.Yt == NULL or self.G == NULL or self.B == NULL or self.L == NULL
                or self.Lp == NULL or self.Z == NULL or self.Zp == NULL or self.yy == NULL
                or self.ridge == NULL or self.pridges == NULL or self.ofac == NULL or self.e == NULL or self.ep == NULL
                or self.ld == NULL or self.ldp == NULL or self.lpre == NULL or self.work == NULL
                or self.slot == NULL):
            raise MemoryError("GramFactor: cannot allocate buffers")
        if design:
            memset(self.Dt, 0, M1 * N * sizeof(double))
            memset(self.Yt, 0, c * N * sizeof(double))
        else:                       # no design: the pointers exist (freed as usual) but are never read
            free(self.Dt); free(self.Yt)
            self.Dt = self.Yt = NULL
        memset(self.G, 0, S * sizeof(double))
        memset(self.B, 0, M1 * c * sizeof(double))
        memset(self.L, 0, q * S * sizeof(double))
        memset(self.Lp, 0, q * S * sizeof(double))
        memset(self.Z, 0, c * M1 * sizeof(double))
        memset(self.Zp, 0, c * M1 * sizeof(double))
        for o in range(c):
            self.yy[o] = 0.0
            self.e[o] = 0.0
            self.ep[o] = 0.0
            self.ofac[o] = of[o]
        for f in range(q):
            self.ridge[f] = r[f]
            self.pridges[f] = r[f]
            self.ld[f] = 0.0
            self.ldp[f] = 0.0
        for o in range(M1):         # column j at physical row j of Dt, the scratch at row m = 0 (`_slots_identity`)
            self.slot[o] = o
        self.sslot = 0
        self.pending = 0
        self.pj = -1
        self.tol = 1e-10
        self.Dr = NULL
        self.Gr = NULL
        self.Br = NULL
        self.recompute = False
        self.check_accuracy = True
        self.defer_acc = False
        self.acc_due = False
        self.lsame = 0
        self.npre = 0
        self.n_deferred_refusals = 0
        self.Ct = NULL
        self.ctype = NULL
        self.blk = NULL
        self.sb = NULL

    def __dealloc__(self):
        free(self.Dt); free(self.Yt); free(self.G); free(self.B); free(self.L); free(self.Lp)
        free(self.Z); free(self.Zp); free(self.yy); free(self.ridge); free(self.pridges); free(self.ofac)
        free(self.e); free(self.ep); free(self.ld); free(self.ldp); free(self.lpre); free(self.work)
        free(self.slot)
        free(self.Dr); free(self.Gr); free(self.Br)
        free(self.Ct); free(self.ctype); free(self.blk); free(self.sb)

    cdef double* _rows(self) noexcept nogil:
        """(q, M1) scratch after the first 2 q M1 of work[4 W:] (`_downdate_copy`'s x and reciprocal diagonals): the
        new rows `_new_rows` leaves, contiguous."""
        return self.work + 4 * self.W + 2 * self.q * self.M1

    @property
    def ridges(self):
        """The ridge value r_f of each factor."""
        return np.array([self.ridge[f] for f in range(self.q)])

    @property
    def out_factor(self):
        """The factor each output uses."""
        return np.array([self.ofac[o] for o in range(self.c)], dtype=np.intp)

    def _check_idle(self):
        if self.pending:
            raise RuntimeError("a proposal is pending: call commit() or reject() first")

    def _need_design(self, what):
        if not self.design:
            raise RuntimeError(f"{what} needs the design, and this GramFactor keeps none (design=False): supply the "
                               "inner products instead (propose_append_given / propose_replace_given)")


@cython.auto_pickle(False)    # a room is never built on its own; GramFactor pickles (`_Persistence`)
cdef class _ColumnSource(_GramBuffers):
    """Where the design's columns come from: a stored design (column j at physical row slot[j] of Dt, a scratch row
    for the proposed column), the recompute mode (each column described by a term and evaluated again in row blocks),
    or the caller's inner products (design=False); the new column's inner products with the columns and the targets;
    the full-rebuild buffers. A room of `GramFactor`."""

    def enable_recompute(self, x, str basis, double width=1.0):
        """Recompute mode for a design=False factor with no columns yet: columns are described (`append_term`: the
        constant, an input, or phi(||x - mu||) of `basis`), and whenever a proposal needs a new column's inner products
        every column is evaluated again on x, BLK rows at a time (O(N m) evaluations of phi instead of O(N m) reads of
        a stored design: memory O(N (d + c)) instead of O(N m)). The targets are kept (set_targets)."""
        if self.design or self.recompute:
            raise RuntimeError("enable_recompute needs a design=False factor, once")
        if self.m:
            raise RuntimeError("enable_recompute needs a factor without columns")
        xa = np.ascontiguousarray(x, dtype=float)
        if xa.ndim != 2 or xa.shape[0] != self.N:
            raise ValueError(f"x must have shape ({self.N}, d), got {xa.shape}")
        cdef const double[:, ::1] xv = xa
        self._xr, self.dx = xa, xa.shape[1]
        self.Xr = &xv[0, 0]
        self.rkind = BASIS_CODES[basis]
        self.rw2 = width * width
        self.Yt = <double*> calloc(self.c * self.N, sizeof(double))
        self.Ct = <double*> calloc(self.M1 * (self.dx if self.dx else 1), sizeof(double))
        self.ctype = <int*> calloc(self.M1, sizeof(int))
        self.blk = <double*> malloc(2 * BLK * sizeof(double))
        self.sb = <double*> malloc(self.c * sizeof(double))
        if self.Yt == NULL or self.Ct == NULL or self.ctype == NULL or self.blk == NULL or self.sb == NULL:
            raise MemoryError("GramFactor: cannot allocate the recompute buffers")
        self.recompute = True

    cdef double* scratch_centre(self) noexcept nogil:
        """Recompute mode: where a sampler writes the centre of a proposed basis column (then `_prop_append()` or
        `_prop_replace(j)`, as with `scratch()` in design mode); NULL otherwise."""
        if not self.recompute:
            return NULL
        self.ctype[self.m] = 0
        return self.Ct + self.m * self.dx

    cdef void _col_block(self, Py_ssize_t a, Py_ssize_t r0, Py_ssize_t nb, double* out) noexcept nogil:
        "Rows r0 .. r0 + nb - 1 of (described) column a."
        cdef Py_ssize_t i, j
        cdef int ty = self.ctype[a]
        if ty == -1:
            for i in range(nb):
                out[i] = 1.0
        elif ty <= -2:
            j = -2 - ty
            for i in range(nb):
                out[i] = self.Xr[(r0 + i) * self.dx + j]
        else:
            basis_column_c(self.Xr + r0 * self.dx, nb, self.dx, self.Ct + a * self.dx, self.rkind, self.rw2, out)

    cdef double _products(self, Py_ssize_t m) noexcept nogil:
        """Column m's (the scratch column's) inner products with columns 0 .. m-1 into row m of G and with the targets
        into sb, block by block; returns its squared norm. O(N m) evaluations."""
        cdef Py_ssize_t r0, nb, a, o, M1 = self.M1
        cdef double* g = self.G + m * M1
        cdef double* v = self.blk
        cdef double* u = self.blk + BLK
        cdef double gnn = 0.0
        for a in range(m):
            g[a] = 0.0
        for o in range(self.c):
            self.sb[o] = 0.0
        cdef int nbi, one = 1
        r0 = 0
        while r0 < self.N:
            nb = BLK if r0 + BLK <= self.N else self.N - r0
            nbi = <int> nb
            self._col_block(m, r0, nb, v)
            gnn += ddot(&nbi, v, &one, v, &one)         # BLAS: several accumulators (a scalar sum waits on each add)
            for o in range(self.c):
                self.sb[o] += ddot(&nbi, v, &one, self.Yt + o * self.N + r0, &one)
            for a in range(m):
                self._col_block(a, r0, nb, u)
                g[a] += ddot(&nbi, u, &one, v, &one)
            r0 += BLK
        return gnn

    def enable_rebuild(self):
        """Allocate the buffers of the full-rebuild proposal (`_prop_rebuild`): a second design, Gram matrix and D'Y
        (M1 x N + M1^2 + M1 c doubles). Idempotent."""
        if self.Dr != NULL:
            return
        self._need_design("enable_rebuild")
        cdef Py_ssize_t M1 = self.M1
        self.Dr = <double*> calloc(M1 * self.N, sizeof(double))
        self.Gr = <double*> calloc(M1 * M1, sizeof(double))
        self.Br = <double*> calloc(M1 * self.c, sizeof(double))
        if self.Dr == NULL or self.Gr == NULL or self.Br == NULL:
            free(self.Dr); free(self.Gr); free(self.Br)
            self.Dr = self.Gr = self.Br = NULL
            raise MemoryError("GramFactor: cannot allocate the rebuild buffers")

    cdef void _swap_rebuild(self, _ColumnSource other) noexcept nogil:
        """Exchange the full-rebuild buffers with another factor of the same N and m_max (both idle): TD-SMC keeps one
        set for all its particles and lends it to the particle whose width moves (a commit swaps the design into
        the factor and leaves the old one in the lent set, which goes back)."""
        cdef double* tmp
        tmp = self.Dr; self.Dr = other.Dr; other.Dr = tmp
        tmp = self.Gr; self.Gr = other.Gr; other.Gr = tmp
        tmp = self.Br; self.Br = other.Br; other.Br = tmp

    cdef double* rebuild_columns(self) noexcept nogil:
        """Where a caller writes the proposed columns j = first .. m-1 of `_prop_rebuild` (column j at + j * N)."""
        return self.Dr

    cdef double* scratch(self) noexcept nogil:
        """The scratch column (N values, at the free physical row `sslot`): a sampler writes a proposed column here,
        then calls `_prop_append()` or `_prop_replace(j)`; other modules use this instead of pointer arithmetic on Dt.
        NULL without a design."""
        if self.Dt == NULL:
            return NULL
        return self.Dt + self.sslot * self.N

    cdef double design_value(self, Py_ssize_t t, Py_ssize_t j) noexcept nogil:
        """D[t, j], j < m (the design must be kept)."""
        return self.Dt[self.slot[j] * self.N + t]

    cdef void _slots_identity(self) noexcept nogil:
        """Column j at physical row j of Dt, the scratch at row m: after a rebuild, a copy or unpickling."""
        cdef Py_ssize_t i
        for i in range(self.M1):
            self.slot[i] = i
        self.sslot = self.m

    cdef void _products_in_order(self, Py_ssize_t m, double* g) noexcept nogil:
        """g[i] = d_i'v for the m columns in their order and g[m] = v'v, v the scratch column: one pass over the
        m + 1 physical rows of Dt (`_products_of`), then read through `slot`."""
        cdef double* tmp = self._rows()
        cdef Py_ssize_t i
        _products_of(self.Dt, self.N, m + 1, self.Dt + self.sslot * self.N, tmp)
        for i in range(m):
            g[i] = tmp[self.slot[i]]
        g[m] = tmp[self.sslot]

    cdef void _scratch_basis(self, const double* x, Py_ssize_t d, const double* mu, int kind,
                             double w2) noexcept nogil:
        """Write phi(||x_n - mu||) into the scratch column (`scratch()`)."""
        basis_column_c(x, self.N, d, mu, kind, w2, self.scratch())

    cdef void _drop_slot(self, Py_ssize_t j, Py_ssize_t s) noexcept nogil:
        """Column j leaves the design's column order without moving the others' values: `slot` (column i at physical
        row slot[i] of Dt) loses entry j. s = m + 1 (a replace: column m is the new one, at the scratch row) frees
        j's row as the new scratch. s = m (a delete): the rows in use must stay 0 .. m - 1, so what sits at row m
        (the scratch, or one column, copied) moves into j's row."""
        cdef Py_ssize_t i, freed = self.slot[j], m = self.m
        for i in range(j, m - 1):
            self.slot[i] = self.slot[i + 1]
        if s == m + 1:
            self.slot[m - 1] = self.sslot
            self.sslot = freed
            return
        if freed == m:
            return
        if self.sslot == m:
            self.sslot = freed
            return
        for i in range(m - 1):
            if self.slot[i] == m:
                memcpy(self.Dt + freed * self.N, self.Dt + m * self.N, self.N * sizeof(double))
                self.slot[i] = freed
                return

    def _load(self, col):
        if self.recompute:
            raise RuntimeError("a recompute-mode GramFactor takes described columns (append_term), not values")
        self._need_design("a column argument")
        a = np.ascontiguousarray(col, dtype=float)
        if a.shape != (self.N,):
            raise ValueError(f"col must have shape ({self.N},), got {a.shape}")
        cdef const double[::1] v = a
        memcpy(self.Dt + self.sslot * self.N, &v[0], self.N * sizeof(double))

    def columns(self):
        """Copy of the current design matrix D, shape (N, m) (recomputed in recompute mode)."""
        cdef Py_ssize_t a
        if self.recompute:
            out = np.empty((self.m, self.N))
            for a in range(self.m):
                ov = out[a]
                self._fill_column(a, ov)
            return out.T.copy()
        self._need_design("columns")
        out = np.empty((self.m, self.N))
        cdef double[:, ::1] o = out
        cdef Py_ssize_t i
        for i in range(self.m):
            memcpy(&o[i, 0], self.Dt + self.slot[i] * self.N, self.N * sizeof(double))
        return out.T.copy()

    def _fill_column(self, Py_ssize_t a, double[::1] out):
        cdef Py_ssize_t r0, nb
        r0 = 0
        while r0 < self.N:
            nb = BLK if r0 + BLK <= self.N else self.N - r0
            self._col_block(a, r0, nb, &out[r0])
            r0 += BLK


@cython.auto_pickle(False)    # a room is never built on its own; GramFactor pickles (`_Persistence`)
cdef class _AccuracyRule(_ColumnSource):
    """When a proposal is refused as numerically unsafe: the pivot floors of a new factor row (relative to the new
    column, `tol`, and to the design's largest column, `TOL_FLOOR`) and the first-order bound on the rounding error
    of the explained sums of squares (`_inaccurate`, TOL_RESID / TOL_FIT), immediate or deferred to the proposals a
    sampler accepts. A room of `GramFactor`."""

    cdef double _gmax(self, Py_ssize_t m, Py_ssize_t skip, double gnn) noexcept nogil:
        """The largest of gnn and the diagonal G_ii, i < m, i != skip: the scale of the pivot floor."""
        cdef Py_ssize_t i
        cdef double gm = gnn
        for i in range(m):
            if i != skip and self.G[i * self.M1 + i] > gm:
                gm = self.G[i * self.M1 + i]
        return gm

    cdef int _store_rows(self, double* Lb, Py_ssize_t n, double gnn, double gmax) noexcept nogil:
        """The new rows' pivots, and the rows into the factors' columns (row n of every factor). Returns 1 if some
        pivot vanishes: relative to the new column (tol) or below the rounding level of the design's largest column
        (TOL_FLOOR * gmax); then nothing is pending."""
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, f, k
        cdef double* Lf
        cdef double* row
        cdef double piv
        for f in range(self.q):
            row = self._rows() + f * M1
            piv = gnn + self.ridge[f] - _dot(row, row, n)
            if not (piv > self.tol * (gnn + self.ridge[f])) or not (piv > TOL_FLOOR * (gmax + self.ridge[f])):
                return 1
            row[n] = sqrt(piv)
            Lf = Lb + f * S
            for k in range(n + 1):
                Lf[k * M1 + n] = row[k]
        return 0

    cdef int _inaccurate(self, const double* Lb, const double* Zb, const double* ee, Py_ssize_t m) noexcept nogil:
        """1 if, for some output o, the rounding error of e_o = |z_o|^2 may exceed TOL_RESID max(y_o'y_o - e_o,
        TOL_FIT y_o'y_o). The caller wrote the proposed design's diagonal G_ii, in its column order, to
        work[W : W + m]. First-order bound: the Cholesky L L' = G + rI + dG with |dG_ij| <= gamma sqrt(G_ii + r)
        sqrt(G_jj + r) (the rows of L have those norms; the Gram's inner products add an error of the same form),
        so |de_o| = |h'dG h| <= gamma (sum_i sqrt(G_ii + r) |h_i|)^2 with h = L'^{-1} z_o the coefficients,
        gamma = (m + sqrt(N)) eps. O(m^2) per output (a back-solve), against the proposal's O(N m)."""
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, o, f
        cdef double v, acc, gam = (m + sqrt(<double> self.N)) * EPS
        for o in range(self.c):
            f = self.ofac[o]
            acc = rbf_coef_weight(Lb + f * S, Zb + o * M1, self.work + self.W, self.ridge[f], M1, m, self.work,
                                  self.work + 2 * self.W, self.work + 3 * self.W)
            v = self.yy[o] - ee[o]
            if v < TOL_FIT * self.yy[o]:
                v = TOL_FIT * self.yy[o]
            if not (gam * acc * acc <= TOL_RESID * v):
                return 1
        return 0

    cdef bint _pending_accurate(self) noexcept nogil:
        """The accuracy test (`_inaccurate`) of the pending append or replace, when `defer_acc` left it for later: a
        sampler runs it only on the proposals its Metropolis-Hastings test accepts (the transition is the same:
        accepted iff accurate and the MH test passes). The pending buffers and the diagonal in work[W:] are those the
        proposal left. True if no test is due."""
        if not self.acc_due:
            return True
        self.acc_due = False
        if ((self.pending == 1 and self._inaccurate(self.L, self.Z, self.ep, self.m + 1))
                or (self.pending == 3 and self._inaccurate(self.Lp, self.Zp, self.ep, self.m))):
            self.n_deferred_refusals += 1
            return False
        return True

    def is_accurate(self):
        """The accuracy rule (`_inaccurate`) on the current state: False if the rounding error of some output's
        explained sum of squares may exceed TOL_RESID of its residual. A state built column by column with
        check_accuracy off (whose intermediate subsets may fail the rule although the whole passes) is checked once
        this way."""
        self._check_idle()
        cdef Py_ssize_t i
        for i in range(self.m):
            self.work[self.W + i] = self.G[i * self.M1 + i]
        return not self._inaccurate(self.L, self.Z, self.e, self.m)

    @property
    def defer_accuracy(self):
        """True: an append or replace proposal leaves its accuracy test (`_inaccurate`) to `pending_accurate()`; the
        samplers run it only on the proposals their Metropolis-Hastings test accepts (nbs/04_kernel). Off by default:
        a proposal that fails the test is refused at once."""
        return self.defer_acc

    @defer_accuracy.setter
    def defer_accuracy(self, bint value):
        self._check_idle()
        self.defer_acc = value

    def pending_accurate(self):
        """The pending proposal's deferred accuracy test: False if it fails (then reject it). True if no test is due
        (deferral off, a delete, or the test already ran)."""
        if not self.pending:
            raise RuntimeError("no pending proposal")
        return bool(self._pending_accurate())


@cython.auto_pickle(False)    # a room is never built on its own; GramFactor pickles (`_Persistence`)
cdef class _FactorAlgebra(_AccuracyRule):
    """The factor algebra: append / delete / replace / rebuild as proposals on the Cholesky factors of G + r_f I,
    z = L^{-1} D'y and log det, then commit or reject; a new data row as a rank-one update; a ridge change as a
    refactorisation. O(N m + q m^2) per column move, never O(m^3). A room of `GramFactor`."""

    cdef Py_ssize_t proposed_m(self) noexcept nogil:
        """Columns of the state the pending proposal would make (m + 1, m - 1 or m; m if none is pending)."""
        if self.pending == 1:
            return self.m + 1
        if self.pending == 2:
            return self.m - 1
        if self.pending == 4:
            return self.pm
        return self.m

    cdef int _new_rows(self, double* Lb, Py_ssize_t n, const double* g, double gnn, double gmax) noexcept nogil:
        """Forward-solve row n of every factor f (at Lb + f M1^2) against g (length n), column by column: once entry k
        is known, its multiples of column k (contiguous: the factors are stored by columns) leave the remaining
        right-hand sides (independent updates, a vectorised multiply-add; one multiply-add per step on the dependency
        chain), with the reciprocal diagonals computed ahead. The factors' substitutions are interleaved step by
        step, independent chains the processor overlaps. Each row is built contiguous in `_rows()` + f M1, where the
        caller reads it for z, and then stored into the factor's columns (`_store_rows`: 1 if a pivot vanishes). A
        replace does the same substitution inside `_downdate_copy`'s loop nest."""
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, q = self.q, f, i
        cdef double* inv = self.work + 4 * self.W     # (q, M1): xq, free outside a downdate
        cdef double* rows = self._rows()
        cdef double* Lf
        for f in range(q):
            Lf = Lb + f * S
            for i in range(n):
                inv[f * M1 + i] = 1.0 / Lf[i * M1 + i]
            memcpy(rows + f * M1, g, n * sizeof(double))
        rbf_forward_rows(Lb, rows, inv, q, S, M1, n)
        return self._store_rows(Lb, n, gnn, gmax)

    cdef double _logdet(self, const double* Lf, Py_ssize_t n) noexcept nogil:
        """2 sum_i log L_ii over the first n rows (`_logdet_from`)."""
        return self._logdet_from(Lf, 0, n)

    cdef double _ld_prefix(self, Py_ssize_t f, Py_ssize_t j) noexcept nogil:
        """2 sum_{i<j} log L_f,ii of the current factor f: the prefix sums of every factor are kept for the rows below
        npre (rows a commit did not touch) and extended here with one log per row. A proposal that changes rows >= j
        only needs log det of its rows >= j on top (`_prop_delete`, `_prop_replace_given`, `_prop_append_given`)."""
        cdef Py_ssize_t M1 = self.M1, P = M1 + 1, g, i
        cdef double* lp
        if j > self.npre:
            for g in range(self.q):
                lp = self.lpre + g * P
                for i in range(self.npre, j):
                    lp[i + 1] = lp[i] + 2.0 * log(self.L[g * M1 * M1 + i * M1 + i])
            self.npre = j
        return self.lpre[f * P + j]

    cdef double _logdet_from(self, const double* Lf, Py_ssize_t a, Py_ssize_t n) noexcept nogil:
        """2 sum_{a<=i<n} log L_ii: one log per four diagonal entries (their product, when it is a normal number far
        from overflow; else their logs one by one)."""
        cdef Py_ssize_t i = a, M1 = self.M1
        cdef double s = 0.0, p
        while i + 4 <= n:
            p = (Lf[i * M1 + i] * Lf[(i + 1) * (M1 + 1)]) * (Lf[(i + 2) * (M1 + 1)] * Lf[(i + 3) * (M1 + 1)])
            if 1e-280 < p < 1e280:
                s += log(p)
            else:
                s += (log(Lf[i * M1 + i]) + log(Lf[(i + 1) * (M1 + 1)])
                      + (log(Lf[(i + 2) * (M1 + 1)]) + log(Lf[(i + 3) * (M1 + 1)])))
            i += 4
        while i < n:
            s += log(Lf[i * M1 + i])
            i += 1
        return 2.0 * s

    cdef int _prop_append(self) noexcept nogil:
        """Propose appending the scratch column (`scratch()`) as column m: its inner products with the columns and the
        targets (`rbf_gemv_t`, O(N m)), then `_prop_append_given`."""
        cdef Py_ssize_t N = self.N, m = self.m, M1 = self.M1
        cdef double* v
        if m >= self.m_max:
            return 2
        if self.Dt == NULL:
            if not self.recompute:
                return 2
            return self._prop_append_given(self.G + m * M1, self._products(m), self.sb)
        v = self.Dt + self.sslot * N
        # inner products with the existing columns and itself (row m of G, stored also as column m)
        self._products_in_order(m, self.G + m * M1)
        _products_of(self.Yt, N, self.c, v, self.work)
        return self._prop_append_given(self.G + m * M1, self.G[m * M1 + m], self.work)

    cdef int _prop_append_given(self, const double* g, double gnn, const double* b) noexcept nogil:
        """Propose appending a column v given its inner products: g[i] = d_i'v with the m columns (g may be row m of
        G itself), gnn = v'v and b[o] = v'y_o. The factor row, z and the accuracy test: O(q m^2)."""
        cdef Py_ssize_t m = self.m, M1 = self.M1, S = M1 * M1, f, o, k
        cdef double s, gmax
        cdef double* Lf
        cdef double* zo
        if m >= self.m_max:
            return 2
        if not isfinite(gnn):
            return 1
        if g != self.G + m * M1:
            memcpy(self.G + m * M1, g, m * sizeof(double))
        for k in range(m):
            self.G[k * M1 + m] = self.G[m * M1 + k]
        self.G[m * M1 + m] = gnn
        gmax = self._gmax(m, -1, gnn)
        for o in range(self.c):
            self.B[m * self.c + o] = b[o]
        if self._new_rows(self.L, m, self.G + m * M1, gnn, gmax):
            return 1
        for f in range(self.q):
            self.ldp[f] = self._ld_prefix(f, m) + self._logdet_from(self.L + f * S, m, m + 1)
        for o in range(self.c):
            Lf = self.L + self.ofac[o] * S
            zo = self.Z + o * M1
            s = self.B[m * self.c + o] - _dot(self._rows() + self.ofac[o] * M1, zo, m)
            zo[m] = s / Lf[m * M1 + m]
            self.ep[o] = _dot(zo, zo, m + 1)
        for k in range(m):
            self.work[self.W + k] = self.G[k * M1 + k]
        self.work[self.W + m] = gnn
        if self.check_accuracy:
            if self.defer_acc:
                self.acc_due = True
            elif self._inaccurate(self.L, self.Z, self.ep, m + 1):
                return 1
        self.pending = 1
        self.pj = m
        return 0

    cdef void _downdate_copy(self, Py_ssize_t j, Py_ssize_t m, const double* g) noexcept nogil:
        """Lp_f <- factor of G with row/col j removed (size m - 1), for every f; Zp likewise. Columns before j are
        copied without row j, and the trailing block takes the rank-one update by Givens rotations c = a / r,
        s = x_k / r (one division per column, none in the inner loop), read from L's columns j+1.. as it writes Lp's
        columns j.. (contiguous: the factors are stored by columns); its new diagonal's reciprocals then serve the z
        update. g not NULL (a replace): the forward substitution of the new row (`_new_rows`) against g (the new
        column's products with the m - 1 columns left, in their order) in the same pass, into `_rows()`; the caller
        then stores it (`_store_rows`). One loop nest (`rbf_downdate`): the factors' rotations, the outputs' z and the
        factors' new rows are independent dependency chains, interleaved step by step, which the processor overlaps."""
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, n = m - 1, i0
        cdef double* xq = self.work + 4 * self.W           # (q, M1): each factor's x
        cdef double* rq = xq + self.q * M1                 # (q, M1): each factor's 1 / new diagonal
        i0 = self.lsame if self.lsame < j else j        # rows below lsame are equal already
        rbf_downdate(self.L, self.Lp, xq, rq, self._rows() if g != NULL else NULL, g, self.Z, self.Zp, self.B,
                     self.ofac, self.q, self.c, S, M1, j, n, i0)
        self.lsame = j              # rows >= j of every Lp_f changed; rows < j now equal L_f's

    cdef int _prop_delete(self, Py_ssize_t j) noexcept nogil:
        """Propose deleting column j (columns after j shift left by one)."""
        cdef Py_ssize_t o, f, M1 = self.M1, S = M1 * M1
        if j < 0 or j >= self.m:
            return 2
        self._downdate_copy(j, self.m, NULL)
        for f in range(self.q):
            self.ldp[f] = self._ld_prefix(f, j) + self._logdet_from(self.Lp + f * S, j, self.m - 1)
        for o in range(self.c):
            self.ep[o] = _dot(self.Zp + o * M1, self.Zp + o * M1, self.m - 1)
        self.pending = 2
        self.pj = j
        return 0

    cdef int _prop_replace(self, Py_ssize_t j) noexcept nogil:
        """Propose replacing column j by the scratch column; the new column becomes the last one: its inner products
        (`rbf_gemv_t`, O(N m)), then `_prop_replace_given`."""
        cdef Py_ssize_t N = self.N, m = self.m, M1 = self.M1
        cdef double* v
        if j < 0 or j >= m:
            return 2
        if self.Dt == NULL:
            if not self.recompute:
                return 2
            return self._prop_replace_given(j, self.G + m * M1, self._products(m), self.sb)
        v = self.Dt + self.sslot * N
        self._products_in_order(m, self.G + m * M1)
        _products_of(self.Yt, N, self.c, v, self.work)
        return self._prop_replace_given(j, self.G + m * M1, self.G[m * M1 + m], self.work)

    cdef int _prop_replace_given(self, Py_ssize_t j, const double* g, double gnn, const double* b) noexcept nogil:
        """Propose replacing column j by a column v given its inner products with the m current columns (g, j's
        included; g may be row m of G), gnn = v'v and b[o] = v'y_o: the downdate copy, the new factor row, z and the
        accuracy test, O(q m^2)."""
        cdef Py_ssize_t m = self.m, M1 = self.M1, S = M1 * M1, n = m - 1, f, o, k
        cdef double s, gmax
        cdef double* Lf
        cdef double* zp
        cdef double* gm = self.G + m * M1
        cdef double* gr = self.work + self.W
        if j < 0 or j >= m:
            return 2
        if not isfinite(gnn):
            return 1
        if g != gm:
            memcpy(gm, g, m * sizeof(double))
        for k in range(m):
            self.G[k * M1 + m] = gm[k]
        self.G[m * M1 + m] = gnn
        gmax = self._gmax(m, j, gnn)
        for o in range(self.c):
            self.B[m * self.c + o] = b[o]
        # the inner products with the surviving columns, in their post-delete order
        memcpy(gr, gm, j * sizeof(double))
        memcpy(gr + j, gm + j + 1, (n - j) * sizeof(double))
        self._downdate_copy(j, m, gr)
        if self._store_rows(self.Lp, n, gnn, gmax):
            return 1
        for f in range(self.q):
            self.ldp[f] = self._ld_prefix(f, j) + self._logdet_from(self.Lp + f * S, j, m)
        for o in range(self.c):
            Lf = self.Lp + self.ofac[o] * S
            zp = self.Zp + o * M1
            s = self.B[m * self.c + o] - _dot(self._rows() + self.ofac[o] * M1, zp, n)
            zp[n] = s / Lf[n * M1 + n]
            self.ep[o] = _dot(zp, zp, m)
        for k in range(n):
            self.work[self.W + k] = self.G[(k if k < j else k + 1) * (M1 + 1)]
        self.work[self.W + n] = gnn
        if self.check_accuracy:
            if self.defer_acc:
                self.acc_due = True
            elif self._inaccurate(self.Lp, self.Zp, self.ep, m):
                return 1
        self.pending = 3
        self.pj = j
        return 0

    cdef void _drop(self, Py_ssize_t j, Py_ssize_t s) noexcept nogil:
        """Remove index j from the first s columns of G, B (in place) and from the design's column order."""
        cdef Py_ssize_t M1 = self.M1, c = self.c, i, k
        cdef double* row
        for i in range(s):          # column j leaves every row, then row j leaves
            row = self.G + i * M1
            for k in range(j, s - 1):
                row[k] = row[k + 1]
        if s - 1 - j > 0:
            memmove(self.G + j * M1, self.G + (j + 1) * M1, (s - 1 - j) * M1 * sizeof(double))
        for i in range(j, s - 1):
            for k in range(c):
                self.B[i * c + k] = self.B[(i + 1) * c + k]
        if s - 1 - j > 0 and self.recompute:
            memmove(self.Ct + j * self.dx, self.Ct + (j + 1) * self.dx, (s - 1 - j) * self.dx * sizeof(double))
            memmove(self.ctype + j, self.ctype + j + 1, (s - 1 - j) * sizeof(int))
        if self.Dt != NULL:
            self._drop_slot(j, s)

    cdef void _commit(self) noexcept nogil:
        cdef double* tmp
        cdef Py_ssize_t o, f, i, S
        if self.pending == 1:       # the scratch row becomes column m's; rows 0 .. m are in use, row m + 1 is free
            self.slot[self.m] = self.sslot
            self.m += 1
            self.sslot = self.m
        elif self.pending == 2 or self.pending == 3:
            tmp = self.L; self.L = self.Lp; self.Lp = tmp
            tmp = self.Z; self.Z = self.Zp; self.Zp = tmp
            if self.pj < self.npre:     # the new factor's rows below pj are the old one's
                self.npre = self.pj
            if self.pending == 2:
                self._drop(self.pj, self.m)
                self.m -= 1
            else:
                self._drop(self.pj, self.m + 1)
        elif self.pending == 5:     # factor pj's triangle and its outputs' z from the proposal buffers (O(m^2))
            S = self.M1 * self.M1
            for i in range(self.m):
                memcpy(self.L + self.pj * S + i * self.M1 + i, self.Lp + self.pj * S + i * self.M1 + i,
                       (self.m - i) * sizeof(double))
            for o in range(self.c):
                if self.ofac[o] == self.pj:
                    memcpy(self.Z + o * self.M1, self.Zp + o * self.M1, self.m * sizeof(double))
            self.ridge[self.pj] = self.pridge
            self.npre = 0
        elif self.pending == 6:     # every factor at its proposed ridge, swapped in by pointer
            tmp = self.L; self.L = self.Lp; self.Lp = tmp
            tmp = self.Z; self.Z = self.Zp; self.Zp = tmp
            for f in range(self.q):
                self.ridge[f] = self.pridges[f]
            self.lsame = 0
            self.npre = 0
        elif self.pending == 4:
            tmp = self.L; self.L = self.Lp; self.Lp = tmp
            tmp = self.Z; self.Z = self.Zp; self.Zp = tmp
            tmp = self.Dt; self.Dt = self.Dr; self.Dr = tmp
            tmp = self.G; self.G = self.Gr; self.Gr = tmp
            tmp = self.B; self.B = self.Br; self.Br = tmp
            self.m = self.pm
            self._slots_identity()
            self.lsame = 0
            self.npre = 0
        else:
            return
        for o in range(self.c):
            self.e[o] = self.ep[o]
        for f in range(self.q):
            self.ld[f] = self.ldp[f]
        self.pending = 0
        self.pj = -1
        self.acc_due = False

    cdef void _reject(self) noexcept nogil:
        self.pending = 0
        self.pj = -1
        self.acc_due = False

    cdef Py_ssize_t _chol(self, const double* G, double* Wb, Py_ssize_t m, Py_ssize_t f0,
                          Py_ssize_t f1) noexcept nogil:
        """Cholesky of G + ridge_f I (the first m rows and columns of G, stride M1) into Wb + f M1^2 for the factors
        f0 <= f < f1, stored by columns (G's row k from the diagonal on is column k of its lower triangle).
        Right-looking: once column k is scaled, its outer product leaves the trailing block, column by column a
        contiguous multiply-add (independent updates; the dependency chain is one square root and one division per
        column). The factors' columns are interleaved step by step: independent chains the processor overlaps (each
        factor's arithmetic is the same as alone). -1, or the first factor that is not PD (the pivot floors of
        `_new_rows`)."""
        cdef Py_ssize_t M1 = self.M1, i
        cdef double gmax = 0.0
        for i in range(m):
            if G[i * M1 + i] > gmax:
                gmax = G[i * M1 + i]
        return rbf_chol(G, Wb, self.ridge, m, f0, f1, M1 * M1, M1, self.tol, TOL_FLOOR, gmax)

    cdef void _solve_z(self, Py_ssize_t f, const double* Lf, const double* B, double* Z, double* e,
                       Py_ssize_t m) noexcept nogil:
        """z_o = Lf^{-1} B[:, o] and e_o = ||z_o||^2 for every output o of factor f (m rows)."""
        cdef Py_ssize_t M1 = self.M1, i, o
        cdef double* zo
        cdef double s
        for o in range(self.c):
            if self.ofac[o] != f:
                continue
            zo = Z + o * M1
            for i in range(m):
                s = B[i * self.c + o] - _sdot(Lf + i, M1, zo, i)
                zo[i] = s / Lf[i * M1 + i]
            e[o] = _dot(zo, zo, m)

    cdef int _refactor(self, Py_ssize_t f) noexcept nogil:
        """Cholesky of G + ridge_f I from scratch into factor f (transactional); 1 if not PD."""
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, m = self.m, i
        cdef double* W = self.Lp + f * S
        self.lsame = 0
        self.npre = 0
        if self._chol(self.G, self.Lp, m, f, f + 1) >= 0:
            return 1
        for i in range(m):
            memcpy(self.L + f * S + i * M1 + i, W + i * M1 + i, (m - i) * sizeof(double))
        W = self.L + f * S
        self.ld[f] = self._logdet(W, m)
        self._solve_z(f, W, self.B, self.Z, self.e, m)
        return 0

    cdef int _prop_rebuild(self, Py_ssize_t first) noexcept nogil:
        """Propose a new design whose columns first .. m-1 the caller wrote to `rebuild_columns()` (columns < first
        are kept): `_prop_rebuild_m` with the same number of columns."""
        return self._prop_rebuild_m(first, self.m)

    cdef int _prop_rebuild_m(self, Py_ssize_t first, Py_ssize_t m) noexcept nogil:
        """Propose a new design of m columns (m <= m_max; it may differ from the current number) whose columns
        first .. m-1 the caller wrote to `rebuild_columns()` (columns < first, first <= both numbers, are kept): the
        Gram rows of the new columns (`_products_ld`, O(N m (m - first))), D'Y, and every factor from scratch (O(q m^3))
        into the proposal buffers. 1 if not PD or not finite (nothing pending), 2 without `enable_rebuild()` or with
        bad sizes. Commit swaps the buffers in (and sets the number of columns); reject leaves the state as it was."""
        return self._prop_rebuild_rows(first, m, self.N)

    cdef int _prop_rebuild_rows(self, Py_ssize_t first, Py_ssize_t m, Py_ssize_t n) noexcept nogil:
        """`_prop_rebuild_m` over the first n data rows only, O(n m (m - first)): for a design whose rows >= n are
        zero (TD-SMC at time t = n). The caller guarantees that rows >= n of the rebuild buffer's columns < m are
        zero too (they are in a buffer that only ever held such designs, or a fresh one); they are not touched."""
        cdef Py_ssize_t N = self.N, M1 = self.M1, S = M1 * M1, c = self.c, i, k, o, f
        cdef double* v
        if (self.Dr == NULL or self.Dt == NULL or first < 0 or first > m or first > self.m or m > self.m_max or n < 0
                or n > N):
            return 2
        self.lsame = 0              # the factors below are written into Lp
        for i in range(first):
            memcpy(self.Dr + i * N, self.Dt + self.slot[i] * N, n * sizeof(double))
            memcpy(self.Gr + i * M1, self.G + i * M1, first * sizeof(double))
            for o in range(c):
                self.Br[i * c + o] = self.B[i * c + o]
        for i in range(first, m):
            v = self.Dr + i * N
            _products_ld(self.Dr, N, i + 1, v, n, self.Gr + i * M1)
            if not isfinite(self.Gr[i * M1 + i]):
                return 1
            for k in range(i):
                self.Gr[k * M1 + i] = self.Gr[i * M1 + k]
            _products_ld(self.Yt, N, c, v, n, self.work)
            for o in range(c):
                self.Br[i * c + o] = self.work[o]
        if self._chol(self.Gr, self.Lp, m, 0, self.q) >= 0:
            return 1
        for f in range(self.q):
            self.ldp[f] = self._logdet(self.Lp + f * S, m)
            self._solve_z(f, self.Lp + f * S, self.Br, self.Zp, self.ep, m)
        for i in range(m):
            self.work[self.W + i] = self.Gr[i * M1 + i]
        if self._inaccurate(self.Lp, self.Zp, self.ep, m):
            return 1
        self.pm = m
        self.pending = 4
        self.pj = -1
        return 0

    cdef void _add_row(self, Py_ssize_t t, const double* dv, const double* yv) noexcept nogil:
        """Data row t arrives (it was all zeros): D[t, :] = dv (m values), Y[t, :] = yv. G += d d' is a rank-one
        update of every factor (O(m^2)), D'Y += d y', y'y += y^2, then z, e and log det are refreshed (O(m^2))."""
        cdef Py_ssize_t m = self.m, M1 = self.M1, S = M1 * M1, N = self.N, f, i, k, o
        cdef double* L
        cdef double* col
        cdef double* x = self.work
        cdef double a, xk, r, cth, sn, s
        cdef double* zo
        self.lsame = 0
        self.npre = 0
        for k in range(m):
            if self.Dt != NULL:
                self.Dt[self.slot[k] * N + t] = dv[k]
            for i in range(m):
                self.G[k * M1 + i] += dv[k] * dv[i]
            for o in range(self.c):
                self.B[k * self.c + o] += dv[k] * yv[o]
        for o in range(self.c):
            if self.Yt != NULL:
                self.Yt[o * N + t] = yv[o]
            self.yy[o] += yv[o] * yv[o]
        for f in range(self.q):
            L = self.L + f * S
            for k in range(m):
                x[k] = dv[k]
            for k in range(m):
                col = L + k * M1
                a = col[k]
                xk = x[k]
                r = sqrt(a * a + xk * xk)
                cth = r / a
                sn = xk / a
                col[k] = r
                for i in range(k + 1, m):
                    col[i] = (col[i] + sn * x[i]) / cth
                    x[i] = cth * x[i] - sn * col[i]
            self.ld[f] = self._logdet(L, m)
        for o in range(self.c):
            L = self.L + self.ofac[o] * S
            zo = self.Z + o * M1
            for i in range(m):
                s = self.B[i * self.c + o] - _sdot(L + i, M1, zo, i)
                zo[i] = s / L[i * M1 + i]
            self.e[o] = _dot(zo, zo, m)

    cdef void _back_solve(self, Py_ssize_t f, const double* w, double* out) noexcept nogil:
        """out = L_f'^{-1} w (length m); out may alias w. With w = z_o this is the ridge posterior mean
        (G + r I)^{-1} D'y_o; with w = z_o + s eps, a draw with covariance s^2 (G + r I)^{-1}."""
        cdef Py_ssize_t M1 = self.M1, m = self.m, i
        cdef double* L = self.L + f * M1 * M1
        cdef double v
        for i in range(m - 1, -1, -1):     # column i of L (contiguous) against the entries already solved
            v = w[i] - _dot(L + i * M1 + i + 1, out + i + 1, m - 1 - i)
            out[i] = v / L[i * M1 + i]

    cdef void _set_targets_c(self, const double* Yt) noexcept nogil:
        """`set_targets` without the GIL (a stored design, nothing pending): Yt (c, N), one row per output; D'Y, y'y,
        then every output's z and e from its factor as it stands (O(N m c + c m^2)): G and the ridges are unchanged,
        so the factors are (the probit's latent step calls this every iteration; refactorising there cost O(q m^3))."""
        cdef Py_ssize_t o, i, S = self.M1 * self.M1
        memcpy(self.Yt, Yt, self.c * self.N * sizeof(double))
        for o in range(self.c):
            self.yy[o] = _dot(self.Yt + o * self.N, self.Yt + o * self.N, self.N)
        for i in range(self.m):
            _gemv_t(self.Yt, self.N, self.c, self.Dt + self.slot[i] * self.N, self.work)
            for o in range(self.c):
                self.B[i * self.c + o] = self.work[o]
        for o in range(self.q):
            self._solve_z(o, self.L + o * S, self.B, self.Z, self.e, self.m)


@cython.auto_pickle(False)    # a room is never built on its own; GramFactor pickles (`_Persistence`)
cdef class _RidgeSteps(_FactorAlgebra):
    """The ridge prior's delta^2 steps on the factors: every factor at its new ridge at once (the Gibbs block's
    `_set_inverse_ridges`), or one ridge as a proposal to commit or reject (`_prop_ridge`: the binary probit's scale
    move, the tempered delta^2 walk), or every ridge as one (`_prop_ridges`: the multinomial probit's scale move). Each
    factor from G, O(m^3). A room of `GramFactor`."""

    cdef Py_ssize_t _set_inverse_ridges(self, const double* d2) noexcept nogil:
        """ridge_f <- 1 / d2[f] for every factor (the ridge prior's delta^2 step): every factor at its new ridge as one
        proposal (`_prop_ridges`), committed. A factor that is not PD at its new ridge keeps its old one (the others
        are proposed again without it; the caller reads `ridge` back). Returns the number of such factors, or -1
        (nothing changed) if even the old ridges fail.
        The result is that of `_refactor` called per factor, bit for bit."""
        cdef Py_ssize_t f, nfail = 0
        cdef double* r = self.work + 4 * self.W + self.q * self.M1         # after `_chol`'s columns
        for f in range(self.q):
            r[f] = 1.0 / d2[f]
        while True:
            f = self._prop_ridges(r)
            if f < 0:
                break
            if r[f] == self.ridge[f]:
                return -1
            r[f] = self.ridge[f]
            nfail += 1
        self._commit()
        return nfail

    cdef int _prop_ridge(self, Py_ssize_t f, double r) noexcept nogil:
        """Propose ridge_f <- r: the Cholesky of G + r I from scratch into factor f's proposal buffer (O(m^3)), its log
        det and its outputs' z and e; the other factors' summaries carried. 1 if not PD (nothing pending). Commit
        copies factor f in (O(m^2)); reject leaves the state as it was, with no second factorisation (`_refactor`
        changes the state at once, so undoing it costs another)."""
        cdef Py_ssize_t S = self.M1 * self.M1, o, g
        cdef double old = self.ridge[f]
        self.lsame = 0              # factor f of Lp is written below
        self.ridge[f] = r
        g = self._chol(self.G, self.Lp, self.m, f, f + 1)
        self.ridge[f] = old
        if g >= 0:
            return 1
        for g in range(self.q):
            self.ldp[g] = self.ld[g]
        for o in range(self.c):
            self.ep[o] = self.e[o]
        self.ldp[f] = self._logdet(self.Lp + f * S, self.m)
        self._solve_z(f, self.Lp + f * S, self.B, self.Zp, self.ep, self.m)
        self.pridge, self.pj, self.pending = r, f, 5
        return 0

    cdef Py_ssize_t _prop_ridges(self, const double* r) noexcept nogil:
        """Propose ridge_f <- r[f] for every factor at once: each Cholesky of G + r_f I from scratch into the proposal
        buffers (O(q m^3)), its log det and its outputs' z and e: -1 (pending), or the first factor that is not PD
        there (nothing pending). Commit swaps the factors in by pointer; reject leaves the state as it was, with no
        second factorisation (the multinomial probit's scale move, which changes every output's delta^2 at once; the
        Gibbs block's `_set_inverse_ridges`)."""
        cdef Py_ssize_t S = self.M1 * self.M1, f, bad
        cdef double t
        self.lsame = 0              # every factor of Lp is written below
        for f in range(self.q):     # _chol reads the ridges: the proposed ones in, the current ones kept aside
            t = self.ridge[f]; self.ridge[f] = r[f]; self.pridges[f] = t
        bad = self._chol(self.G, self.Lp, self.m, 0, self.q)
        for f in range(self.q):
            t = self.ridge[f]; self.ridge[f] = self.pridges[f]; self.pridges[f] = t
        if bad >= 0:
            return bad
        for f in range(self.q):
            self.ldp[f] = self._logdet(self.Lp + f * S, self.m)
            self._solve_z(f, self.Lp + f * S, self.B, self.Zp, self.ep, self.m)
        self.pj, self.pending = -1, 6
        return -1


cdef class _Persistence(_RidgeSteps):
    """The state kept and copied: pickling (every buffer as a NumPy array, idle states only), an independent copy,
    a copy into an existing state without allocating (TD-SMC's resampling), and growth of the data capacity. A room
    of `GramFactor`."""

    def __reduce__(self):
        """Pickle support: every buffer as a NumPy array (an idle state only), rebuilt by `_rebuild_gram_factor`."""
        self._check_idle()
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, N = self.N, c = self.c, q = self.q
        bufs = dict(G=_copy_out(self.G, S),
                    B=_copy_out(self.B, M1 * c), L=_transposed(_copy_out(self.L, q * S), q, M1),
                    Z=_copy_out(self.Z, c * M1),
                    yy=_copy_out(self.yy, c), e=_copy_out(self.e, c), ld=_copy_out(self.ld, q))
        if self.design:
            bufs.update(Dt=self._design_in_order(), Yt=_copy_out(self.Yt, c * N))
        rc = None
        if self.recompute:
            bufs.update(Yt=_copy_out(self.Yt, c * N), Ct=_copy_out(self.Ct, M1 * self.dx),
                        ctype=np.array([self.ctype[i] for i in range(M1)], dtype=np.intc))
            rc = (self._xr, BASES[self.rkind], math.sqrt(self.rw2))
        return (_rebuild_gram_factor,
                (self.N, self.c, self.m_max, self.ridges, self.out_factor, self.m, self.tol, bufs, self.design, rc))

    def _design_in_order(self):
        """Dt with column j at row j and the scratch at row m (the layout pickles keep), flat (M1 N,)."""
        cdef Py_ssize_t i, N = self.N
        out = np.zeros(self.M1 * N)
        cdef double[::1] o = out
        for i in range(self.m):
            memcpy(&o[i * N], self.Dt + self.slot[i] * N, N * sizeof(double))
        if self.m < self.M1:
            memcpy(&o[self.m * N], self.Dt + self.sslot * N, N * sizeof(double))
        return out

    cdef void _copy_in(self, dict bufs):
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, N = self.N, c = self.c, q = self.q
        cdef Py_ssize_t i
        if self.design:
            _fill(self.Dt, bufs["Dt"], M1 * N); _fill(self.Yt, bufs["Yt"], c * N)
        if self.recompute:
            _fill(self.Yt, bufs["Yt"], c * N); _fill(self.Ct, bufs["Ct"], M1 * self.dx)
            for i in range(M1):
                self.ctype[i] = bufs["ctype"][i]
        _fill(self.G, bufs["G"], S)
        _fill(self.B, bufs["B"], M1 * c); _fill(self.L, _transposed(bufs["L"], q, M1), q * S)
        _fill(self.Z, bufs["Z"], c * M1)
        _fill(self.yy, bufs["yy"], c); _fill(self.e, bufs["e"], c); _fill(self.ld, bufs["ld"], q)
        self.npre = 0

    cdef void _copy_from(self, _GramBuffers s, Py_ssize_t n) noexcept nogil:
        """Become a copy of s (same N, c, q, m_max; both idle), copying only the first n data rows of the
        design and targets: the TD-SMC resampling copy, where rows >= n are all zeros in every particle."""
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, N = self.N, m = s.m, i, f
        self.lsame = 0
        self.npre = 0
        if self.recompute and s.recompute:
            memcpy(self.Ct, s.Ct, self.M1 * self.dx * sizeof(double))
            memcpy(self.ctype, s.ctype, self.M1 * sizeof(int))
        for i in range(m):
            if self.Dt != NULL:
                memcpy(self.Dt + i * N, s.Dt + s.slot[i] * N, n * sizeof(double))
            memcpy(self.G + i * M1, s.G + i * M1, m * sizeof(double))
            for f in range(self.q):       # column i of the factors
                memcpy(self.L + f * S + i * M1 + i, s.L + f * S + i * M1 + i, (m - i) * sizeof(double))
        for i in range(self.c):
            if self.Yt != NULL:
                memcpy(self.Yt + i * N, s.Yt + i * N, n * sizeof(double))
        memcpy(self.B, s.B, M1 * self.c * sizeof(double))
        memcpy(self.Z, s.Z, self.c * M1 * sizeof(double))
        memcpy(self.yy, s.yy, self.c * sizeof(double))
        memcpy(self.e, s.e, self.c * sizeof(double))
        memcpy(self.ld, s.ld, self.q * sizeof(double))
        memcpy(self.ridge, s.ridge, self.q * sizeof(double))
        self.m = m
        self._slots_identity()

    def copy(self):
        """An independent copy of the state (memcpy of every buffer): how a resampled particle is duplicated."""
        self._check_idle()
        cdef Py_ssize_t M1 = self.M1, S = M1 * M1, q = self.q, c = self.c, N = self.N
        if self.recompute:
            import pickle
            return pickle.loads(pickle.dumps(self))
        cdef GramFactor g = GramFactor(N, c, self.m_max, ridge=self.ridges, out_factor=self.out_factor,
                                       design=self.design)
        if self.design:
            memcpy(g.Dt, self.Dt, M1 * N * sizeof(double))
            memcpy(g.slot, self.slot, M1 * sizeof(Py_ssize_t))
            memcpy(g.Yt, self.Yt, c * N * sizeof(double))
        memcpy(g.G, self.G, S * sizeof(double))
        memcpy(g.B, self.B, M1 * c * sizeof(double))
        memcpy(g.L, self.L, q * S * sizeof(double))
        memcpy(g.Z, self.Z, c * M1 * sizeof(double))
        memcpy(g.yy, self.yy, c * sizeof(double))
        memcpy(g.e, self.e, c * sizeof(double))
        memcpy(g.ld, self.ld, q * sizeof(double))
        g.m = self.m
        g.sslot = self.sslot
        g.tol = self.tol
        return g

    def copy_from(self, GramFactor src, n_rows=None):
        """Overwrite this state with src's (same N, c, q, m_max and out_factor) without allocating. With n_rows, only
        the first n_rows data rows are copied: valid when rows >= n_rows are all zeros in both states (rows that have
        not arrived yet in TD-SMC)."""
        self._check_idle()
        src._check_idle()
        if (src.N, src.c, src.q, src.m_max, src.design) != (self.N, self.c, self.q, self.m_max, self.design):
            raise ValueError("src must have the same N, c, q, m_max and design")
        if not np.array_equal(src.out_factor, self.out_factor):
            raise ValueError("src must have the same out_factor")
        cdef Py_ssize_t n = self.N if n_rows is None else n_rows
        if n < 0 or n > self.N:
            raise ValueError(f"n_rows must be in [0, {self.N}], got {n_rows}")
        self._copy_from(src, n)
        self.tol = src.tol

    def resize_rows(self, Py_ssize_t N):
        """Grow the data capacity to N >= current N rows (new rows are zeros): lets TD-SMC keep taking observations."""
        self._check_idle()
        if N < self.N:
            raise ValueError(f"N must be >= the current {self.N}, got {N}")
        if N == self.N:
            return
        if self.recompute:
            raise RuntimeError("a recompute-mode GramFactor has a fixed number of rows")
        if not self.design:
            self.N = N
            return
        cdef Py_ssize_t i, M1 = self.M1, old = self.N
        cdef double* Dt = <double*> calloc(M1 * N, sizeof(double))
        cdef double* Yt = <double*> calloc(self.c * N, sizeof(double))
        if Dt == NULL or Yt == NULL:
            free(Dt); free(Yt)
            raise MemoryError("GramFactor: cannot allocate buffers")
        for i in range(M1):
            memcpy(Dt + i * N, self.Dt + i * old, old * sizeof(double))
        for i in range(self.c):
            memcpy(Yt + i * N, self.Yt + i * old, old * sizeof(double))
        free(self.Dt); free(self.Yt)
        self.Dt, self.Yt, self.N = Dt, Yt, N
        if self.Dr != NULL:     # the rebuild buffers follow the new N
            free(self.Dr); free(self.Gr); free(self.Br)
            self.Dr = self.Gr = self.Br = NULL
            self.enable_rebuild()


cdef class GramFactor(_Persistence):
    """Incremental Cholesky state of G + r_f I, G = D'D, with D'Y and y'y (see module docstring): the Python
    API over the rooms `_GramBuffers` -> `_ColumnSource` -> `_AccuracyRule` -> `_FactorAlgebra` -> `_Persistence`
    (each a base class with one job; nbs/04_kernel, "The kernel's rooms")."""

    def set_targets(self, Y):
        """Set the (N, c) targets; recomputes D'Y, y'y and the explained sums of squares."""
        self._check_idle()
        if not self.recompute:
            self._need_design("set_targets")
        elif self.m:           # the recompute mode's D'Y comes from the products of each appended column
            raise RuntimeError("a recompute-mode GramFactor takes its targets before its first column")
        Ya = np.asarray(Y, dtype=float)
        if Ya.ndim == 1:
            Ya = Ya[:, None]
        if Ya.shape != (self.N, self.c):
            raise ValueError(f"Y must have shape ({self.N}, {self.c}), got {Ya.shape}")
        if not np.all(np.isfinite(Ya)):
            raise ValueError("Y contains NaN or inf")
        cdef const double[:, ::1] yt = np.ascontiguousarray(Ya.T)
        self._set_targets_c(&yt[0, 0])

    def propose_append(self, col):
        """Propose appending `col`; False (state unchanged) if it makes the factor singular."""
        self._check_idle()
        if self.m >= self.m_max:
            raise ValueError(f"cannot append: m = m_max = {self.m_max}")
        self._load(col)
        return self._prop_append() == 0

    def _given(self, g, gnn, b, Py_ssize_t n):
        ga = np.ascontiguousarray(g, dtype=float).reshape(-1)
        ba = np.ascontiguousarray(b, dtype=float).reshape(-1)
        if ga.shape[0] != n:
            raise ValueError(f"g must have the m = {n} inner products with the current columns, got {ga.shape[0]}")
        if ba.shape[0] != self.c:
            raise ValueError(f"b must have c = {self.c} values, got {ba.shape[0]}")
        return np.append(ga, 0.0), ba, float(gnn)

    def propose_term(self, str term, value=None, j=None):
        """Recompute mode: propose appending a described column (or, with j, replacing column j by it; it moves to the
        end): "constant", "input" (value: the input's index i, the column x_i) or "basis" (value: the centre mu, the
        column phi(||x - mu||)). False (nothing pending) if singular."""
        self._check_idle()
        if not self.recompute:
            raise RuntimeError("append_term / propose_term need the recompute mode (enable_recompute)")
        if j is None and self.m >= self.m_max:
            raise ValueError(f"cannot append: m = m_max = {self.m_max}")
        if j is not None and not (isinstance(j, (int, np.integer)) and 0 <= j < self.m):
            raise IndexError(f"j must be in [0, {self.m}), got {j!r}")
        if term == "constant":
            self.ctype[self.m] = -1
        elif term == "input":
            if not (isinstance(value, (int, np.integer)) and 0 <= value < self.dx):
                raise ValueError(f"value must be an input index in [0, {self.dx}), got {value!r}")
            self.ctype[self.m] = -2 - <int> value
        elif term == "basis":
            mu = np.asarray(value, dtype=float).reshape(-1)
            if mu.shape != (self.dx,) or not np.all(np.isfinite(mu)):
                raise ValueError(f"value must be a finite centre of {self.dx} coordinates, got {value!r}")
            for i in range(self.dx):
                self.scratch_centre()[i] = mu[i]
        else:
            raise ValueError(f"term must be 'constant', 'input' or 'basis', got {term!r}")
        return (self._prop_append() if j is None else self._prop_replace(j)) == 0

    def append_term(self, str term, value=None):
        """Append a described column now (`propose_term`, then commit); False (state unchanged) if singular."""
        ok = self.propose_term(term, value)
        if ok:
            self._commit()
        return ok

    def propose_append_given(self, g, gnn, b):
        """Propose appending a column v known only by its inner products: g (m,) with the current columns, gnn = v'v,
        b (c,) = v'Y. The same factor algebra as `propose_append`; the only way to grow a design=False factor."""
        self._check_idle()
        if self.m >= self.m_max:
            raise ValueError(f"cannot append: m = m_max = {self.m_max}")
        ga, ba, gv = self._given(g, gnn, b, self.m)
        cdef const double[::1] gw = ga
        cdef const double[::1] bw = ba
        return self._prop_append_given(&gw[0], gv, &bw[0]) == 0

    def append_given(self, g, gnn, b):
        """Append now (`propose_append_given`, then commit); False if singular."""
        ok = self.propose_append_given(g, gnn, b)
        if ok:
            self._commit()
        return ok

    def propose_replace_given(self, Py_ssize_t j, g, gnn, b):
        """Propose replacing column j by a column v known by its inner products g (m,) with the current columns
        (column j's included), gnn = v'v and b (c,) = v'Y; the new column moves to the end (`propose_replace`)."""
        self._check_idle()
        if j < 0 or j >= self.m:
            raise IndexError(f"j must be in [0, {self.m}), got {j}")
        ga, ba, gv = self._given(g, gnn, b, self.m)
        cdef const double[::1] gw = ga
        cdef const double[::1] bw = ba
        return self._prop_replace_given(j, &gw[0], gv, &bw[0]) == 0

    def propose_delete(self, Py_ssize_t j):
        """Propose deleting column j."""
        self._check_idle()
        if j < 0 or j >= self.m:
            raise IndexError(f"j must be in [0, {self.m}), got {j}")
        return self._prop_delete(j) == 0

    def propose_replace(self, Py_ssize_t j, col):
        """Propose replacing column j by `col` (the new column is moved to the end)."""
        self._check_idle()
        if j < 0 or j >= self.m:
            raise IndexError(f"j must be in [0, {self.m}), got {j}")
        self._load(col)
        return self._prop_replace(j) == 0

    def propose_rebuild(self, Py_ssize_t first, cols):
        """Propose replacing columns first .. m-1 by the rows of `cols` ((m' - first, N)): the full-rebuild path
        (`_prop_rebuild_m`); the new design has m' columns (m' may differ from m, up to m_max). False (state
        unchanged) if the new design is singular. Needs `enable_rebuild()`."""
        self._check_idle()
        self._need_design("propose_rebuild")
        if first < 0 or first > self.m:
            raise IndexError(f"first must be in [0, {self.m}], got {first}")
        a = np.ascontiguousarray(cols, dtype=float).reshape(-1, self.N)
        if first + a.shape[0] > self.m_max:
            raise ValueError(f"cols must have at most m_max - first = {self.m_max - first} rows of length "
                             f"N = {self.N}, got {a.shape}")
        if self.Dr == NULL:
            raise RuntimeError("call enable_rebuild() first")
        cdef const double[:, ::1] av = a
        if a.shape[0]:
            memcpy(self.Dr + first * self.N, &av[0, 0], a.shape[0] * self.N * sizeof(double))
        return self._prop_rebuild_m(first, first + a.shape[0]) == 0

    def rebuild(self, Py_ssize_t first, cols):
        """Replace columns first .. m-1 now (`propose_rebuild`, then commit); False if singular."""
        ok = self.propose_rebuild(first, cols)
        if ok:
            self._commit()
        return ok

    def commit(self):
        """Accept the pending proposal."""
        if not self.pending:
            raise RuntimeError("no pending proposal")
        self._commit()

    def reject(self):
        """Discard the pending proposal."""
        self._reject()

    def append(self, col):
        """Append a column now; returns False if it was singular (state unchanged)."""
        ok = self.propose_append(col)
        if ok:
            self._commit()
        return ok

    def delete(self, Py_ssize_t j):
        """Delete column j now."""
        ok = self.propose_delete(j)
        if ok:
            self._commit()
        return ok

    def replace(self, Py_ssize_t j, col):
        """Replace column j by `col` now (moved to the end); False if singular."""
        ok = self.propose_replace(j, col)
        if ok:
            self._commit()
        return ok

    def add_row(self, Py_ssize_t t, d, y):
        """Data row t arrives: its m design values d (current column order) and its c targets y. Row t must still
        be empty (all zeros in the design and the targets): the row-by-row growth of TD-SMC."""
        self._check_idle()
        if t < 0 or t >= self.N:
            raise IndexError(f"t must be in [0, {self.N}), got {t}")
        da = np.ascontiguousarray(d, dtype=float).reshape(-1)
        ya = np.ascontiguousarray(y, dtype=float).reshape(-1)
        if da.shape[0] != self.m:
            raise ValueError(f"d must have the m = {self.m} values of row t, got {da.shape[0]}")
        if ya.shape[0] != self.c:
            raise ValueError(f"y must have c = {self.c} values, got {ya.shape[0]}")
        if not (np.all(np.isfinite(da)) and np.all(np.isfinite(ya))):
            raise ValueError("d and y must be finite")
        cdef Py_ssize_t k, o
        if self.design:         # without a design the caller keeps the rows (and their order)
            for k in range(self.m):
                if self.Dt[self.slot[k] * self.N + t] != 0.0:
                    raise ValueError(f"row {t} is not empty: add_row only adds new rows")
            for o in range(self.c):
                if self.Yt[o * self.N + t] != 0.0:
                    raise ValueError(f"row {t} of the targets is not empty")
        cdef const double[::1] dvv = da
        cdef const double[::1] yvv = ya
        cdef double dummy = 0.0
        self._add_row(t, &dvv[0] if self.m else &dummy, &yvv[0])

    def posterior_coef(self, Py_ssize_t o, double scale=0.0, eps=None):
        """For output o: z = L^{-1} D'y_o, the mean h = (G + r I)^{-1} D'y_o = L'^{-1} z and, if eps (m standard
        normals)
        is given, the draw L'^{-1}(z + scale eps) ~ N(h, scale^2 (G + r I)^{-1}). O(m^2), from the factor."""
        self._check_idle()
        if o < 0 or o >= self.c:
            raise IndexError(f"o must be in [0, {self.c}), got {o}")
        cdef Py_ssize_t m = self.m, i, f = self.ofac[o]
        z = np.array([self.Z[o * self.M1 + i] for i in range(m)])
        h = np.empty(m)
        cdef double[::1] zv = z
        cdef double[::1] hv = h
        if m:
            self._back_solve(f, &zv[0], &hv[0])
        if eps is None:
            return z, h, None
        w = z + scale * np.ascontiguousarray(eps, dtype=float).reshape(m)
        d = np.empty(m)
        cdef double[::1] wv = w
        cdef double[::1] dv = d
        if m:
            self._back_solve(f, &wv[0], &dv[0])
        return z, h, d

    def set_ridge(self, Py_ssize_t f, double r):
        """Set ridge value r_f and refactorise factor f from G (O(m^3)); False if not PD."""
        self._check_idle()
        if f < 0 or f >= self.q:
            raise IndexError(f"f must be in [0, {self.q}), got {f}")
        if not (r >= 0.0 and np.isfinite(r)):
            raise ValueError(f"r must be finite and >= 0, got {r}")
        old = self.ridge[f]
        self.ridge[f] = r
        if self._refactor(f):
            self.ridge[f] = old
            return False
        return True

    def propose_ridge(self, Py_ssize_t f, double r):
        """Propose ridge value r_f (`_prop_ridge`: factor f from G into the proposal buffers, O(m^3)); commit() sets it,
        reject() leaves the state as it was. False (nothing pending) if not PD."""
        self._check_idle()
        if f < 0 or f >= self.q:
            raise IndexError(f"f must be in [0, {self.q}), got {f}")
        if not (r >= 0.0 and np.isfinite(r)):
            raise ValueError(f"r must be finite and >= 0, got {r}")
        return self._prop_ridge(f, r) == 0

    def propose_ridges(self, r):
        """Propose ridge values r (q,) for every factor at once (`_prop_ridges`: each factor from G into the proposal
        buffers, O(q m^3)); commit() sets them, reject() leaves the state as it was. False (nothing pending) if a
        factor is not PD."""
        self._check_idle()
        ra = np.asarray(r, dtype=float).reshape(-1)
        if ra.shape[0] != self.q:
            raise ValueError(f"r must hold one ridge per factor ({self.q}), got {ra.shape[0]}")
        if not np.all((ra >= 0.0) & np.isfinite(ra)):
            raise ValueError(f"r must be finite and >= 0, got {ra}")
        cdef const double[::1] rv = np.ascontiguousarray(ra)
        return self._prop_ridges(&rv[0]) < 0

    def refactor(self):
        """Recompute every factor from G (to shed accumulated rounding)."""
        self._check_idle()
        cdef Py_ssize_t f
        for f in range(self.q):
            if self._refactor(f):
                return False
        return True

    @property
    def explained(self):
        """e_o = y_o' D (G + r I)^{-1} D' y_o for each output, current state."""
        return np.array([self.e[o] for o in range(self.c)])

    @property
    def logdet(self):
        """log det(G + r_f I) for each factor, current state."""
        return np.array([self.ld[f] for f in range(self.q)])

    @property
    def proposed_explained(self):
        if not self.pending:
            raise RuntimeError("no pending proposal")
        return np.array([self.ep[o] for o in range(self.c)])

    @property
    def proposed_logdet(self):
        if not self.pending:
            raise RuntimeError("no pending proposal")
        return np.array([self.ldp[f] for f in range(self.q)])

    @property
    def yty(self):
        return np.array([self.yy[o] for o in range(self.c)])

    def gram(self):
        """Copy of G = D'D, shape (m, m)."""
        out = np.zeros((self.m, self.m))
        cdef Py_ssize_t i, k
        for i in range(self.m):
            for k in range(self.m):
                out[i, k] = self.G[i * self.M1 + k]
        return out

    def factor(self, Py_ssize_t f=0):
        """Copy of the lower Cholesky factor of G + r_f I, shape (m, m)."""
        if f < 0 or f >= self.q:
            raise IndexError(f"f must be in [0, {self.q}), got {f}")
        out = np.zeros((self.m, self.m))
        cdef Py_ssize_t i, k, S = self.M1 * self.M1
        for i in range(self.m):
            for k in range(i + 1):
                out[i, k] = self.L[f * S + k * self.M1 + i]
        return out

    def dty(self):
        """Copy of D'Y, shape (m, c)."""
        out = np.zeros((self.m, self.c))
        cdef Py_ssize_t i, o
        for i in range(self.m):
            for o in range(self.c):
                out[i, o] = self.B[i * self.c + o]
        return out


cdef _phi_scalar_code(r2, int code, double w2):
    """phi of basis code `code` at every squared distance of r2 (float64) by the scalar dispatch `rbf_phi_r2`, one
    call per element (`phi_scalar` and the import-time check `_check_basis_dispatch`)."""
    cdef double[::1] v = np.ascontiguousarray(r2, dtype=np.float64).ravel().copy()
    cdef Py_ssize_t i
    for i in range(v.shape[0]):
        v[i] = phi_r2(v[i], code, w2)
    return np.asarray(v).reshape(np.shape(r2))


def _check_basis_dispatch():
    """Every basis of the registry (`rbf_bayes.basis.BASES`) computed by both C dispatches (`rbf_phi_r2`,
    `rbf_phi_inplace`) as the NumPy specification computes it, at import: a basis the C registry does not compute as
    `basis_from_sq` does is an ImportError naming it, never silently another basis's values (issue 37)."""
    from rbf_bayes.basis import basis_from_sq
    x = np.linspace(-2.0, 2.0, 9).reshape(-1, 1); mu = np.array([0.3]); r2 = (x[:, 0] - 0.3) ** 2
    for name, code in BASIS_CODES.items():
        want = basis_from_sq(r2, name, 0.7)
        col = np.asarray(basis_column(x, mu, name, 0.7))                      # the vectorised switch
        one = _phi_scalar_code(r2, code, 0.49)                                 # the scalar switch
        for what, got in (("rbf_phi_inplace", col), ("rbf_phi_r2", one)):
            if not np.allclose(got, want, rtol=1e-12, atol=1e-15):
                raise ImportError(f"the C dispatch {what} does not compute basis {name!r} (code {code}) as "
                                  "rbf_bayes.basis.basis_from_sq does: add its line to RBF_BASES in "
                                  "rbf_bayes/_basis_loops.h")


_check_basis_dispatch()


def exp_c(x):
    """rbf_exp (`_basis_loops.h`), the Gaussian basis's exp in the C loops, at every element of x (float64), for the
    checks of `00_basis`: within 1 ulp of the correctly rounded exp for -708 <= x <= 709, 0 below -708."""
    cdef double[::1] v = np.ascontiguousarray(x, dtype=np.float64).ravel().copy()
    cdef Py_ssize_t i
    for i in range(v.shape[0]):
        v[i] = rbf_exp(v[i])
    return np.asarray(v).reshape(np.shape(x))


def phi_scalar(r2, str basis, double width=1.0):
    """phi at every squared distance of r2 (float64) by the scalar dispatch `rbf_phi_r2`, one call per element: the
    values the vectorised column loop must reproduce bit for bit (tests/test_kernel.py)."""
    if basis not in BASIS_CODES:
        raise ValueError(f"basis must be one of {sorted(BASIS_CODES)}, got {basis!r}")
    return _phi_scalar_code(r2, BASIS_CODES[basis], width * width)


def _check_exp():
    """rbf_exp against libm's exp at import, on 2,001 points of [-708, 0] and the ends: at most 2 ulp apart (each is
    within 1 ulp of the correctly rounded value), an ImportError otherwise (a compiler that contracts or reorders the
    arithmetic would show here)."""
    x = np.concatenate([np.linspace(-708.0, 0.0, 2001), [-1e-300, -0.34657359027997264, 0.34657359027997264]])
    got, want = exp_c(x), np.array([math.exp(v) for v in x])
    if not np.all(np.abs(got - want) <= 2 * np.spacing(want)):
        raise ImportError("rbf_exp (rbf_bayes/_basis_loops.h) is more than 2 ulp from libm's exp: the C loops were "
                          "compiled with arithmetic that is not IEEE (fast-math or FMA contraction?)")


_check_exp()
