# Declarations of the incremental Gram/Cholesky state, so other extension modules
# (the sampler loops) can `cimport` it and call its nogil methods directly.

# The basis codes are positions in the C registry `RBF_BASES` (`_basis_loops.h`), the names those of
# `rbf_bayes.basis.BASES` (checked when `_kernel` is imported); `_kernel.BASIS_CODES` maps names to codes.
cdef double phi_r2(double r2, int kind, double w2) noexcept nogil
cdef double log_trunc_poisson_norm(double L, Py_ssize_t kmax, const double* lgam) noexcept nogil
cdef void basis_column_c(const double* x, Py_ssize_t N, Py_ssize_t d, const double* mu,
                         int kind, double w2, double* out) noexcept nogil
cdef void basis_column_scaled_t(const double* xT, Py_ssize_t N, Py_ssize_t d, const double* mu, const double* s,
                                int kind, double w2, double* out) noexcept nogil

# GramFactor is built in rooms, each a base class of the next with one job (nbs/04_kernel, "The kernel's rooms"):
# the buffers (their layout, allocation and release), the column source, the accuracy rule, the factor algebra,
# persistence, then the Python API. One object, one allocation: the rooms share the fields declared here.
cdef class _GramBuffers:
    cdef readonly Py_ssize_t N, c, q, m_max, m
    cdef Py_ssize_t M1                 # row stride of the square buffers (m_max + 1)
    cdef Py_ssize_t W                  # workspace half-length max(M1, c)
    cdef double* Dt                    # (M1, N): design column j at row slot[j]; the scratch column at row sslot
    cdef Py_ssize_t* slot              # (M1,): {slot[0..m-1], sslot} = {0..m}; a commit moves slots, not columns
    cdef Py_ssize_t sslot
    cdef double* Yt                    # (c, N): targets, one contiguous row per output
    cdef double* G                     # (M1, M1): Gram matrix D'D (row m holds a proposal's new row)
    cdef double* B                     # (M1, c): D'Y
    cdef double* L                     # (q, M1, M1): lower Cholesky factors of G + ridge_f I, stored by columns:
    #                                    L_f[i, k] (i >= k) at f M1^2 + k M1 + i (the diagonal at (M1 + 1) i)
    cdef double* Lp                    # proposal factors (delete / replace)
    cdef double* Z                     # (c, M1): z_o = L_f^{-1} B[:, o] for the current state
    cdef double* Zp                    # proposal z
    cdef double* yy                    # (c,): y_o'y_o
    cdef double* ridge                 # (q,)
    cdef double* pridges               # (q,): the ridges of a pending change of every factor's (pending 6)
    cdef Py_ssize_t* ofac              # (c,): factor used by each output
    cdef double* e                     # (c,): explained sum of squares ||z_o||^2, current
    cdef double* ep                    # (c,): proposal
    cdef double* ld                    # (q,): log det(G + ridge_f I), current
    cdef double* ldp                   # (q,): proposal
    cdef double* lpre                  # (q, M1 + 1): lpre[f, i] = 2 sum_{t<i} log L_f,tt, valid for i <= npre
    cdef Py_ssize_t npre
    cdef double* work                  # (4 W + 3 q M1,): workspaces
    cdef Py_ssize_t lsame              # the first lsame rows of every Lp_f equal L_f's (`_downdate_copy` skips them)
    cdef double* Dr                    # full-rebuild proposal (enable_rebuild): design (M1, N), Gram, D'Y; else NULL
    cdef double* Gr
    cdef double* Br
    cdef int pending                   # 0 none, 1 append, 2 delete, 3 replace, 4 rebuild, 5 ridge, 6 ridges
    cdef Py_ssize_t pj                 # column index of a pending delete / replace; factor of a pending ridge
    cdef double pridge                 # the ridge of a pending ridge change (factor pj)
    cdef Py_ssize_t pm                 # number of columns of a pending rebuild
    cdef public double tol             # relative pivot tolerance below which a column is singular
    cdef readonly bint design          # False: Dt, Yt are NULL; new columns come as inner products (`_prop_*_given`)
    # recompute mode (design=False, then enable_recompute): each column described by a term, its values recomputed in
    # row blocks whenever inner products are needed, so memory does not hold an m x N design (nbs/04_kernel)
    cdef readonly bint recompute
    cdef public bint check_accuracy    # False: proposals skip `_inaccurate` (building a known state column by column)
    cdef bint defer_acc                # True: append / replace leave their accuracy test to `_pending_accurate`
    cdef bint acc_due                  # the pending proposal's accuracy test has not run yet
    cdef readonly Py_ssize_t n_deferred_refusals  # deferred accuracy tests that failed (`_pending_accurate`)
    cdef object _xr                    # the (N, d) inputs the terms are evaluated on
    cdef const double* Xr
    cdef Py_ssize_t dx
    cdef int rkind
    cdef double rw2
    cdef double* Ct                    # (M1, dx): centre of each rbf column (row m: the scratch column's)
    cdef int* ctype                    # (M1,): -1 the constant, -2 - i input i (linear), 0 a basis function at Ct
    cdef double* blk                   # (2 BLK,): two row blocks
    cdef double* sb                    # (c,): a new column's D'Y
    cdef double* _rows(self) noexcept nogil

cdef class _ColumnSource(_GramBuffers):
    cdef double* scratch_centre(self) noexcept nogil
    cdef void _col_block(self, Py_ssize_t a, Py_ssize_t r0, Py_ssize_t nb, double* out) noexcept nogil
    cdef double _products(self, Py_ssize_t m) noexcept nogil
    cdef double* scratch(self) noexcept nogil       # the scratch column (slot m, length N): write a proposal here
    cdef double design_value(self, Py_ssize_t t, Py_ssize_t j) noexcept nogil  # D[t, j]
    cdef void _slots_identity(self) noexcept nogil
    cdef void _products_in_order(self, Py_ssize_t m, double* g) noexcept nogil
    cdef void _drop_slot(self, Py_ssize_t j, Py_ssize_t s) noexcept nogil
    cdef double* rebuild_columns(self) noexcept nogil
    cdef void _swap_rebuild(self, _ColumnSource other) noexcept nogil
    cdef void _scratch_basis(self, const double* x, Py_ssize_t d, const double* mu, int kind,
                             double w2) noexcept nogil

cdef class _AccuracyRule(_ColumnSource):
    cdef double _gmax(self, Py_ssize_t m, Py_ssize_t skip, double gnn) noexcept nogil
    cdef int _store_rows(self, double* Lb, Py_ssize_t n, double gnn, double gmax) noexcept nogil
    cdef int _inaccurate(self, const double* Lb, const double* Zb, const double* ee, Py_ssize_t m) noexcept nogil
    cdef bint _pending_accurate(self) noexcept nogil

cdef class _FactorAlgebra(_AccuracyRule):
    cdef Py_ssize_t proposed_m(self) noexcept nogil  # number of columns of the pending proposal's state
    cdef int _prop_append(self) noexcept nogil
    cdef int _prop_delete(self, Py_ssize_t j) noexcept nogil
    cdef int _prop_replace(self, Py_ssize_t j) noexcept nogil
    cdef int _prop_append_given(self, const double* g, double gnn, const double* b) noexcept nogil
    cdef int _prop_replace_given(self, Py_ssize_t j, const double* g, double gnn, const double* b) noexcept nogil
    cdef void _commit(self) noexcept nogil
    cdef void _reject(self) noexcept nogil
    cdef int _refactor(self, Py_ssize_t f) noexcept nogil
    cdef void _set_targets_c(self, const double* Yt) noexcept nogil
    cdef Py_ssize_t _chol(self, const double* G, double* Wb, Py_ssize_t m, Py_ssize_t f0, Py_ssize_t f1) noexcept nogil
    cdef void _solve_z(self, Py_ssize_t f, const double* Lf, const double* B, double* Z, double* e,
                       Py_ssize_t m) noexcept nogil
    cdef int _prop_rebuild(self, Py_ssize_t first) noexcept nogil
    cdef int _prop_rebuild_m(self, Py_ssize_t first, Py_ssize_t m) noexcept nogil
    cdef int _prop_rebuild_rows(self, Py_ssize_t first, Py_ssize_t m, Py_ssize_t n) noexcept nogil
    cdef int _new_rows(self, double* Lb, Py_ssize_t n, const double* g, double gnn, double gmax) noexcept nogil
    cdef double _logdet(self, const double* Lf, Py_ssize_t n) noexcept nogil
    cdef double _logdet_from(self, const double* Lf, Py_ssize_t a, Py_ssize_t n) noexcept nogil
    cdef double _ld_prefix(self, Py_ssize_t f, Py_ssize_t j) noexcept nogil
    cdef void _downdate_copy(self, Py_ssize_t j, Py_ssize_t m, const double* g) noexcept nogil
    cdef void _drop(self, Py_ssize_t j, Py_ssize_t s) noexcept nogil
    cdef void _add_row(self, Py_ssize_t t, const double* dv, const double* yv) noexcept nogil
    cdef void _back_solve(self, Py_ssize_t f, const double* w, double* out) noexcept nogil

cdef class _RidgeSteps(_FactorAlgebra):
    cdef Py_ssize_t _set_inverse_ridges(self, const double* d2) noexcept nogil
    cdef int _prop_ridge(self, Py_ssize_t f, double r) noexcept nogil
    cdef Py_ssize_t _prop_ridges(self, const double* r) noexcept nogil

cdef class _Persistence(_RidgeSteps):
    cdef void _copy_from(self, _GramBuffers s, Py_ssize_t n) noexcept nogil
    cdef void _copy_in(self, dict bufs)

cdef class GramFactor(_Persistence):
    pass
