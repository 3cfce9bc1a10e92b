# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The reversible-jump MCMC iteration loop (Andrieu, de Freitas & Doucet 1999, §4) in C.

Documented and checked in `nbs/05_rjmcmc.ipynb` against the pure-NumPy reference sampler in
`rbf_bayes.rjmcmc`.  Every acceptance ratio is the one derived in `nbs/03_moves.ipynb`; every
marginal likelihood comes from the incremental `GramFactor` state of `_kernel.pyx` through the
likelihood seam (`_likelihood.pxd`); move probabilities, the MH test, the rate step and the
propose/commit/reject tail are the shared primitives of `_core.pxd`.  Random numbers
come from the caller's `numpy.random.Generator` bit generator (numpy's C distributions), so a seed
reproduces a run bit for bit; the loop runs with the GIL released.
"""
import numpy as np
cimport cython
cimport numpy as cnp
from libc.math cimport sqrt, log, log1p, exp, lgamma, INFINITY, pow, fmax
from libc.stdint cimport int64_t, int32_t
from libc.string cimport memcpy, memmove, memset
from cpython.pycapsule cimport PyCapsule_GetPointer
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (random_standard_uniform, random_standard_normal,
                                           random_standard_gamma, random_interval)
from scipy.special.cython_special cimport log_ndtr, ndtri_exp
from rbf_bayes._kernel cimport GramFactor, log_trunc_poisson_norm, basis_column_c, basis_column_scaled_t
from rbf_bayes._kernel import BASIS_CODES
from rbf_bayes._likelihood cimport Likelihood, COLLAPSED, GAUSSIAN, log_ml, LOG_2PI, YPY_REL_MIN
from rbf_bayes._core cimport (BIRTH, DEATH, SPLIT, MERGE, UPDATE, CHANGE, STAY, N_RJ_MOVES, APPEND, DELETE, REPLACE,
                              move_probs, mh_accept, rate_mh_step, propose, settle, swap_round)

cnp.import_array()


# Everything the core reads from the prior (`priors.RBFPrior`) and the run's configuration (`rjmcmc.RJConfig`), typed.
# `rjmcmc.core_settings` fills it from those two objects, the one place that translates them; a missing or unknown
# field is an error when the core is made, so no setting has a second default here.
cdef struct RJSettings:
    # the prior: delta^2 ~ IG(alpha_delta2, beta_delta2); sigma^2 ~ IG(v0 / 2, gamma0 / 2) (Jeffreys' at v0 = 0);
    # Lambda ~ Ga(1/2 + eps1, eps2)
    double alpha_delta2, beta_delta2, v0, gamma0, eps1, eps2
    bint g_prior                # coef_prior == "g" (else the ridge prior)
    bint delta2_per_basis       # delta^2 | k ~ IG(alpha_delta2, beta_delta2 / max(k, 1)) (nbs/01_priors)
    bint joint_k_prior          # k_prior == "joint"
    double log_k_normaliser     # log Z of the joint hierarchy of k (0 for the conditional one)
    double log_scale_sd         # learned scales: theta = log s ~ N(0, log_scale_sd^2)
    double log_scale_sd_up      # ... and its sd above 0 (a two-piece normal, nbs/05d; = log_scale_sd: the normal)
    double inclusion_prob       # input selection: gamma_j ~ Bernoulli(inclusion_prob)
    # the moves
    double c_star, varpi, rw_var, split_scale, scale_step
    bint birth_death, split_merge, update          # the enabled move pairs
    bint prior_only, fix_Lambda, fix_delta2, sample_nuisance
    bint fixed_probs            # (fp_birth, fp_death, fp_split, fp_merge) instead of eq. 22 (RJ simulated annealing)
    double fp_birth, fp_death, fp_split, fp_merge
    bint known_sigma2           # sigma^2 known and equal to sigma2 (the probit's data augmentation: 1)
    double sigma2
    Py_ssize_t n_tries          # candidates per birth / death / multiple-try update (1: the plain moves)
    bint learn_scales, select_inputs
    double pair_jumps           # input selection: the share of its jumps that switch a pair of inputs (nbs/05d)
    double triple_jumps         # ... and the share of those pair jumps that switch a third input with the pair
    # the centre prior (nbs/00_basis, "Centres beyond the data"): each coordinate of a centre is uniform on the far box
    # (lo, hi) with probability far_prob, else uniform on the near box (near_lo, near_hi); 0: uniform on (lo, hi)
    double far_prob
    # the probit's latent scale move (nbs/05c_probit, "A scale move"): the sd of log g; 0: off
    double latent_scale_step
    # the learned scales' zoom (nbs/05d, "A zoom about a data point"): the share of scale steps that are zooms, and the
    # sd of their change of log s; 0: no zoom; zoom_hot: only in the replicas at beta < 1 of a tempered ladder
    double scale_zoom, zoom_step
    bint zoom_hot


def _settings_fields():
    cdef RJSettings s
    memset(&s, 0, sizeof(s))
    return tuple(dict(s))


SETTINGS_FIELDS = _settings_fields()    # RJSettings' fields in declaration order


C_YPY_REL_MIN = YPY_REL_MIN    # sigma^2's floor of scale (kernel.YPY_REL_MIN must equal it: tests/test_kernel.py)
MOVES = ("birth", "death", "split", "merge", "update")   # in Move code order (_core.pxd)
# The C view of the one set of move codes (`rbf_bayes.moves.MOVE_CODES` must equal it: tests/test_kernel.py)
C_MOVE_CODES = {"birth": BIRTH, "death": DEATH, "split": SPLIT, "merge": MERGE, "update": UPDATE, "change": CHANGE,
                "stay": STAY}
# The learned basis's steps (nbs/05d), in the order of `step_counts`' rows: the scale step, its zooms, the input in/out
# step, its pair and its triple jumps, the basis type's step
STEPS = ("scale", "zoom", "sel", "pair", "triple", "kind")


# Where a chunk of the loop writes (issue 37: typed records, not sixteen positional arrays). `Records`: one row per
# iteration (k, log posterior, Lambda, delta^2 and sigma^2 per output, the move code, accepted). `Snapshots`: the kept
# draws' rows (centres, h, alpha), their sizes (k, m), the input scales and the basis code of each.
cdef class Records:
    """The per-iteration outputs of `RJCore.run` / `run_kept` / `ladder_run`: views of the caller's arrays
    (k int64 (n,), log posterior, Lambda (n,), delta^2, sigma^2 (n, c), move and accepted int8 (n,)), shapes checked."""
    cdef int64_t[::1] k
    cdef double[::1] lp, lam
    cdef double[:, ::1] d2, s2
    cdef signed char[::1] mv, acc
    cdef readonly Py_ssize_t n

    def __cinit__(self, int64_t[::1] k, double[::1] lp, double[::1] lam, double[:, ::1] d2, double[:, ::1] s2,
                  signed char[::1] mv, signed char[::1] acc):
        self.n = k.shape[0]
        if not (lp.shape[0] == lam.shape[0] == d2.shape[0] == s2.shape[0] == mv.shape[0] == acc.shape[0] == self.n) \
                or d2.shape[1] != s2.shape[1]:
            raise ValueError("Records: k, log posterior, Lambda, delta^2, sigma^2, move and accepted must have the "
                             "same number of rows, and delta^2 and sigma^2 the same width")
        self.k, self.lp, self.lam, self.d2, self.s2, self.mv, self.acc = k, lp, lam, d2, s2, mv, acc


cdef class Snapshots:
    """The kept draws' outputs of `RJCore.run_kept` / `ladder_run`: centre rows (cap k_max, d), coefficient rows h and
    alpha (cap m_max, c), sizes (cap, 2) = (k, m), scales (cap, d), and optionally the basis code (cap,) int8."""
    cdef double[:, ::1] cen, h, a, sc
    cdef int64_t[:, ::1] sizes
    cdef signed char[::1] kind
    cdef bint has_kind
    cdef readonly Py_ssize_t cap

    def __cinit__(self, double[:, ::1] cen, double[:, ::1] h, double[:, ::1] a, int64_t[:, ::1] sizes,
                  double[:, ::1] sc, signed char[::1] kind=None):
        self.cen, self.h, self.a, self.sizes, self.sc = cen, h, a, sizes, sc
        self.cap = sizes.shape[0]
        self.has_kind = kind is not None
        if self.has_kind:
            if kind.shape[0] < self.cap:
                raise ValueError("Snapshots: the basis codes (kind) are fewer than the sizes rows")
            self.kind = kind

    cdef int check(self, Py_ssize_t d, Py_ssize_t c, Py_ssize_t kmax, Py_ssize_t m_max) except -1:
        if self.cen.shape[1] != d or self.h.shape[1] != c or self.a.shape[1] != c or self.sizes.shape[1] != 2 \
                or self.sc.shape[1] != d:
            raise ValueError("snapshot buffers have the wrong width")
        if self.cap and (self.sc.shape[0] < self.cap or self.cen.shape[0] < self.cap * kmax
                         or self.h.shape[0] < self.cap * m_max or self.a.shape[0] < self.cap * m_max):
            raise ValueError("snapshot buffers are too short")
        return 0


# One iteration as tables (issue 37): the move drawn by eq. 22 is the index of the function that makes it
# (`RJCore.moves`, filled when the core is made: the plain or the multiple-try birth and death); the steps that follow
# every move (the multiple-try update, the learned scales, input selection, the basis type) are components in a list
# (`RJCore.after`). A new move or step is one function here and one line where the tables are filled.
cdef class RJCore
ctypedef int (*CoreStep)(RJCore) noexcept nogil
cdef enum:
    MAX_AFTER = 4               # the components after the move: at most one of each kind
    N_STEPS = 6                 # the learned basis's steps with counters (STEPS)

cdef int _birth_plain(RJCore c) noexcept nogil:
    return c._birth()
cdef int _birth_tries(RJCore c) noexcept nogil:
    return c._birth_mt()
cdef int _death_plain(RJCore c) noexcept nogil:
    return c._death()
cdef int _death_tries(RJCore c) noexcept nogil:
    return c._death_mt()
cdef int _split_move(RJCore c) noexcept nogil:
    return c._split()
cdef int _merge_move(RJCore c) noexcept nogil:
    return c._merge()
cdef int _update_move(RJCore c) noexcept nogil:
    return c._update()
cdef int _update_tries(RJCore c) noexcept nogil:
    return c._update_mt()
cdef int _scales(RJCore c) noexcept nogil:
    return c._scale_step()
cdef int _inputs(RJCore c) noexcept nogil:
    return c._select_step()
cdef int _basis_type(RJCore c) noexcept nogil:
    return c._kind_step()


PAIR_INPUTS_MAX = 1000    # above this many inputs no pair jumps (the table would hold d (d - 1) / 2 pairs)


def _squared_correlations(x):
    """The d x d squared correlations r_ab^2 of the training inputs' columns, 0 on the diagonal and for a constant
    input (whose correlation is undefined)."""
    x = np.asarray(x, dtype=float)
    xc = x - x.mean(0)
    sd = np.sqrt((xc ** 2).sum(0))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc.T @ xc) / np.outer(sd, sd)
    r2 = np.nan_to_num(r ** 2, nan=0.0, posinf=0.0)
    np.fill_diagonal(r2, 0.0)
    return np.ascontiguousarray(r2)


def _pair_table(x):
    """The pair jumps' table (nbs/05d): every pair a < b of inputs with weight r_ab^2, their correlation's square in
    the training inputs (uniform where no pair is correlated; a constant input's pairs weigh 0); cumulative. None (no
    input selection, or more than PAIR_INPUTS_MAX inputs): no pairs."""
    if x is None:
        return np.zeros(0), np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    x = np.asarray(x, dtype=float)
    d = x.shape[1]
    a, b = np.triu_indices(d, 1)
    if d < 2:
        return np.zeros(0), np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    w = _squared_correlations(x)[a, b]
    if not w.sum() > 0:
        w = np.ones(len(a))
    return np.cumsum(w), a.astype(np.intp), b.astype(np.intp)


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _RJState:
    """The chain's memory: the GramFactor it drives, the centres and their workspaces, the hyperparameters, the learned
    basis's scales, inputs and type, the probit buffers, the typed settings (`RJSettings`) and the counters sized from
    the move enum, allocated from the arguments and freed. A room of `RJCore` (nbs/05_rjmcmc, "The loop's rooms"): never
    built on its own."""
    cdef GramFactor st
    cdef object _x, _xT, _lo, _hi, _nlo, _nhi, _lcin, _lcout, _C, _W, _tmp, _alpha, _bitgen, _lock, _lgam, _d2, _s2
    cdef double* lgam          # lgamma(j + 1), j = 0..kmax
    cdef Likelihood lik        # the likelihood seam: collapsed over sigma^2, reads delta2_buf
    cdef double logS_cur       # log S(Lambda) (conditional hierarchy)
    cdef double logZk          # log Z of the joint hierarchy (a constant)
    cdef bint joint            # prior.k_prior == "joint"
    cdef double* x
    cdef double* xT            # (d, N): the inputs transposed (the scaled columns' contiguous loads)
    cdef double* lo
    cdef double* hi
    # the near/far centre prior (cmix): the near box, and per coordinate the log density inside / outside it
    cdef bint cmix
    cdef double fprob
    cdef double* nlo
    cdef double* nhi
    cdef double* lcin
    cdef double* lcout
    cdef double* C            # (kmax + 2, d) centres in column order
    cdef double* W            # (kmax + 2, d) workspace for proposed configurations
    cdef double* tmp          # (4, d): mu1, mu2, u, mu
    cdef double* alpha        # (M1, c): last coefficient draw, column-major by output
    cdef bitgen_t* rng
    cdef readonly Py_ssize_t N, d, c, k, kmax, p0
    cdef int kind, gprior, jeffreys
    cdef double w2, logvol, logvd
    cdef double a_d, b_d, v0, g0, eps1, eps2
    cdef bint d2k              # delta^2's prior scale per basis: b_d / max(k, 1) given k (nbs/01_priors)
    cdef double c_star, varpi, srw, vs
    cdef int en_bd, en_sm, en_u, prior_only, fix_Lambda, fix_delta2, use_fp, nuis
    cdef double fp_b, fp_d, fp_s, fp_m, inv_t1
    cdef bint has_s2           # sigma^2 known (config.fixed_sigma2; probit data augmentation: 1)
    cdef double s2_fixed
    cdef object _best
    cdef double* best
    cdef readonly double best_logf
    cdef readonly Py_ssize_t best_k
    cdef readonly double Lambda, lml, logpost
    cdef double* delta2_buf    # (c,)
    cdef double* sigma2_buf    # (c,)
    cdef public object n_prop, n_acc
    cdef int64_t[N_RJ_MOVES] np_, na_       # proposed / accepted per move code
    cdef CoreStep[N_RJ_MOVES] moves         # the function of each move code
    cdef CoreStep[MAX_AFTER] after          # the components run after every move, in order
    cdef int n_after
    cdef int last_move, last_acc
    # tempering (replica exchange, nbs/05e_tempering): the target p(y | k, mu, delta^2)^beta p(k, mu, delta^2, Lambda);
    # beta = 1 is the posterior (every ratio's dll is multiplied by beta; 1.0 * x == x, so untempered chains are
    # unchanged bit for bit). Below 1, delta^2 moves by a random walk on its log (the Gibbs step is the posterior's).
    cdef public double beta
    cdef public double d2_step           # random-walk sd of log delta^2 at beta < 1
    cdef readonly int64_t n_d2_prop, n_d2_acc
    # multiple-try birth/death (nbs/03_moves): K candidate centres from the uniform on Omega, one picked in proportion
    # to its likelihood; the death draws K - 1 reference candidates in the post-death state (K = 1: the plain moves)
    cdef object _cand, _lw
    cdef double* cand          # (K, d) candidate centres
    cdef double* lw            # (K,) their log weights beta (l(theta + c_i) - l(theta))
    cdef Py_ssize_t ntry
    # the binary probit's latent step in the loop (nbs/05c_probit): after each iteration's record, z ~ N(D alpha, 1)
    # truncated by the labels, then the targets of the factor are z
    cdef object _ylab, _zbuf
    cdef signed char* ylab
    cdef double* zbuf
    cdef bint probit
    cdef double lsstep           # the latent scale move's sd of log g (0: off)
    cdef readonly int64_t n_ls_prop, n_ls_acc
    # the multinomial probit's (C = c + 1 classes): the utilities U (N, C), row-major, and the classes 0..C-1
    cdef object _ucls, _ubuf, _d2old, _rnew
    cdef int32_t* ucls
    cdef double* ubuf
    cdef double* d2old         # (c,): delta^2 before the multinomial's scale move (restored if it is rejected)
    cdef double* rnew          # (q,): the ridges that move proposes (ridge prior)
    # learned per-input scales (nbs/05d_learned_basis): phi(||diag(s)(x - mu)||), theta = log s ~ N(0, s_sd^2) i.i.d.
    cdef object _th, _sc, _best_sc
    cdef double* th            # (d,) log scales
    cdef double* sc            # (d,) scales exp(theta)
    cdef double* best_sc       # (d,) the scales of the best configuration seen (`_track_best`; the annealer's)
    cdef bint learn
    cdef double sstep, s_sd, s_sd_up
    cdef readonly int64_t n_scale_prop, n_scale_acc
    cdef double zshare, zstep    # the zoom's share of the scale steps and its sd of log s (0: no zoom)
    cdef bint zhot               # zooms only while the replica's beta < 1 (the cold chain keeps the plain walk)
    cdef object _zold
    cdef double* zold            # (kmax + 2,): the centres' coordinates before a zoom (restored if it is rejected)
    cdef readonly int64_t n_zoom_prop, n_zoom_acc
    # input selection and the basis type as parameters (nbs/05d_learned_basis): input j enters (its linear column and
    # its scale) iff inc[j]; gamma_j ~ Bernoulli(pi) i.i.d. given at least one input; kind ~ uniform on `kinds`
    cdef object _inc, _kinds, _lin
    cdef int* inc              # (d,) 1: input j is in the model
    cdef Py_ssize_t* lin       # (d,) the included inputs in order (their linear columns are 1 .. nincl)
    cdef Py_ssize_t nincl
    cdef bint select, learn_kind, scaled
    cdef double lodds, lsel0   # log(pi / (1 - pi)); log normaliser of the gamma prior given a non-empty set
    cdef int* kinds
    cdef int nkinds
    cdef readonly int64_t n_sel_prop, n_sel_acc, n_kind_prop, n_kind_acc, n_pair_prop, n_pair_acc
    cdef readonly int64_t n_triple_prop, n_triple_acc
    cdef object _pcdf, _pa, _pb, _r2
    cdef double* pcdf          # (npairs,) cumulative weights of the input pairs (squared correlations), for pair jumps
    cdef Py_ssize_t* pa        # (npairs,) first input of each pair
    cdef Py_ssize_t* pb        # (npairs,) second input
    cdef Py_ssize_t npairs     # 0: no pair jumps (no selection, fewer than two inputs, or above PAIR_INPUTS_MAX)
    cdef double ppair          # the share of the input steps that are pair jumps (settings' pair_jumps)
    cdef double ptriple        # the share of the pair jumps that take a third input (settings' triple_jumps)
    cdef double* r2            # (d, d) squared correlations of the inputs: the third input's weights (triple jumps)

    def __cinit__(self, GramFactor st, x, lo, hi, str basis, double width, int kmax,
                  dict settings, tuple basis_types, bitgen, near_lo=None, near_hi=None):
        """`settings`: every field of `RJSettings` (`rjmcmc.core_settings(prior, config, k_max)`); `basis_types`: the
        names among which a learned basis type moves (config.basis_types; () for a fixed basis); `near_lo`, `near_hi`:
        the near box of the centre prior when settings["far_prob"] > 0 ((lo, hi) is then the far box)."""
        cdef Py_ssize_t i
        unknown = sorted(set(settings) - set(SETTINGS_FIELDS))
        missing = [f for f in SETTINGS_FIELDS if f not in settings]
        if unknown or missing:
            raise ValueError(f"RJCore settings: unknown {unknown}, missing {missing} (see rjmcmc.core_settings)")
        cdef RJSettings S = settings
        self.st = st
        self._x = np.ascontiguousarray(x, dtype=float)
        self.N, self.d = self._x.shape
        self._xT = np.ascontiguousarray(self._x.T)
        self.c = st.c
        self._d2 = np.zeros(self.c)
        self._s2 = np.full(self.c, np.nan)
        cdef double[::1] d2v = self._d2
        cdef double[::1] s2v = self._s2
        self.delta2_buf, self.sigma2_buf = &d2v[0], &s2v[0]
        self._lo = np.ascontiguousarray(lo, dtype=float)
        self._hi = np.ascontiguousarray(hi, dtype=float)
        self._C = np.zeros((kmax + 2, self.d))
        self._W = np.zeros((kmax + 2, self.d))
        self._tmp = np.zeros((4, self.d))
        self._best = np.zeros((kmax + 2, self.d))
        cdef double[:, ::1] bv = self._best
        self.best = &bv[0, 0]
        self.best_logf = -INFINITY
        self.best_k = 0
        self.inv_t1 = 0.0
        self._alpha = np.zeros((self.c, st.m_max + 1))
        from scipy.special import gammaln
        self._lgam = np.ascontiguousarray(gammaln(np.arange(kmax + 1) + 1.0))
        cdef double[::1] lgv = self._lgam
        self.lgam = &lgv[0]
        cdef const double[:, ::1] xv = self._x
        cdef const double[:, ::1] xtv = self._xT
        cdef const double[::1] lov = self._lo
        cdef const double[::1] hiv = self._hi
        cdef double[:, ::1] Cv = self._C
        cdef double[:, ::1] Wv = self._W
        cdef double[:, ::1] tv = self._tmp
        cdef double[:, ::1] av = self._alpha
        self.x, self.lo, self.hi = <double*> &xv[0, 0], <double*> &lov[0], <double*> &hiv[0]
        self.xT = <double*> &xtv[0, 0]
        self.C, self.W, self.tmp, self.alpha = &Cv[0, 0], &Wv[0, 0], &tv[0, 0], &av[0, 0]
        self.kind = BASIS_CODES[basis]
        self.w2 = width * width
        self.kmax = kmax
        self.p0 = 1 + self.d
        self.logvol = float(np.sum(np.log(self._hi - self._lo)))
        self.fprob = S.far_prob
        self.cmix = self.fprob > 0
        if self.cmix:
            if near_lo is None or near_hi is None:
                raise ValueError("far_prob > 0 needs the near box (near_lo, near_hi)")
            self._nlo = np.ascontiguousarray(near_lo, dtype=float)
            self._nhi = np.ascontiguousarray(near_hi, dtype=float)
            if (self._nlo.shape != (self.d,) or self._nhi.shape != (self.d,) or np.any(self._nlo < self._lo)
                    or np.any(self._nhi > self._hi) or np.any(self._nhi <= self._nlo)):
                raise ValueError("the near box must lie inside the far box (lo, hi) and have positive volume")
            far = np.log(self.fprob) - np.log(self._hi - self._lo)
            self._lcin = np.ascontiguousarray(np.logaddexp(np.log1p(-self.fprob) - np.log(self._nhi - self._nlo), far))
            self._lcout = np.ascontiguousarray(far)
        else:
            self._nlo, self._nhi = self._lo, self._hi
            self._lcin = self._lcout = np.zeros(self.d)
        cdef const double[::1] nlov = self._nlo
        cdef const double[::1] nhiv = self._nhi
        cdef const double[::1] lcinv = self._lcin
        cdef const double[::1] lcoutv = self._lcout
        self.nlo, self.nhi = <double*> &nlov[0], <double*> &nhiv[0]
        self.lcin, self.lcout = <double*> &lcinv[0], <double*> &lcoutv[0]
        self.logvd = 0.5 * self.d * log(np.pi) - lgamma(0.5 * self.d + 1)
        self.a_d, self.b_d = S.alpha_delta2, S.beta_delta2
        self.d2k = S.delta2_per_basis
        self.v0, self.g0 = S.v0, S.gamma0
        self.eps1, self.eps2 = S.eps1, S.eps2
        self.gprior = S.g_prior
        self.joint = S.joint_k_prior
        self.logZk = S.log_k_normaliser
        self.jeffreys = S.v0 == 0
        a_ = 0.5 * (self.v0 + self.N)
        self.lik.kind, self.lik.gprior, self.lik.n = COLLAPSED, self.gprior, self.N
        self.lik.a, self.lik.gamma0 = a_, self.g0
        self.lik.const = -0.5 * self.N * LOG_2PI + lgamma(a_) + a_ * log(2.0)
        if not self.jeffreys:
            self.lik.const += 0.5 * self.v0 * log(0.5 * self.g0) - lgamma(0.5 * self.v0)
        self.lik.delta2, self.lik.delta2_stride = self.delta2_buf, 1
        self.has_s2 = S.known_sigma2
        self.s2_fixed = S.sigma2 if self.has_s2 else 0.0
        if self.has_s2:      # the likelihood seam's second kind: y ~ N(D alpha, sigma^2 I) with sigma^2 known
            self.lik.kind, self.lik.sigma2 = GAUSSIAN, self.s2_fixed
        self.c_star, self.varpi = S.c_star, S.varpi
        self.srw, self.vs = sqrt(S.rw_var), S.split_scale
        self.en_bd = S.birth_death
        self.en_sm = S.split_merge
        self.en_u = S.update
        self.prior_only = S.prior_only
        self.fix_Lambda = S.fix_Lambda
        self.fix_delta2 = S.fix_delta2
        self.use_fp = S.fixed_probs
        if self.use_fp:
            self.fp_b, self.fp_d, self.fp_s, self.fp_m = S.fp_birth, S.fp_death, S.fp_split, S.fp_merge
        self.nuis = S.sample_nuisance
        self._bitgen = bitgen
        self._lock = bitgen.lock
        self.rng = <bitgen_t*> PyCapsule_GetPointer(bitgen.capsule, "BitGenerator")
        for i in range(N_RJ_MOVES):
            self.np_[i] = 0
            self.na_[i] = 0
        self.k = 0
        self.beta, self.d2_step = 1.0, 0.5
        self.ntry = S.n_tries
        self._cand = np.zeros((self.ntry, self.d))
        self._lw = np.zeros(self.ntry)
        cdef double[:, ::1] cav = self._cand
        cdef double[::1] lwv = self._lw
        self.cand, self.lw = &cav[0, 0], &lwv[0]
        self.n_d2_prop = self.n_d2_acc = 0
        self.learn = S.learn_scales
        self.lsstep = S.latent_scale_step
        self.n_ls_prop = self.n_ls_acc = 0
        self.sstep = S.scale_step
        self.s_sd = S.log_scale_sd
        self.s_sd_up = S.log_scale_sd_up
        self._th = np.zeros(self.d)
        self._sc = np.ones(self.d)
        cdef double[::1] thv = self._th
        cdef double[::1] scv = self._sc
        self.th, self.sc = &thv[0], &scv[0]
        self._best_sc = np.ones(self.d)
        cdef double[::1] bscv = self._best_sc
        self.best_sc = &bscv[0]
        self.n_scale_prop = self.n_scale_acc = 0
        self.zshare, self.zstep, self.zhot = S.scale_zoom, S.zoom_step, S.zoom_hot
        self._zold = np.zeros(self.kmax + 2)
        cdef double[::1] zov = self._zold
        self.zold = &zov[0]
        self.n_zoom_prop = self.n_zoom_acc = 0
        self.select = S.select_inputs
        pi = S.inclusion_prob
        self.lodds = log(pi) - log1p(-pi)
        self.lsel0 = self.d * log1p(-pi) - log1p(-(1.0 - pi) ** self.d)   # log p(gamma) = nincl * lodds + lsel0
        self._inc = np.ones(self.d, dtype=np.intc)
        self._lin = np.arange(self.d, dtype=np.intp)
        cdef int[::1] incv = self._inc
        cdef Py_ssize_t[::1] linv = self._lin
        self.inc, self.lin, self.nincl = &incv[0], &linv[0], self.d
        kl = list(basis_types)
        self.learn_kind = len(kl) > 1
        self._kinds = np.array([BASIS_CODES[b] for b in kl] or [self.kind], dtype=np.intc)
        cdef int[::1] kv = self._kinds
        self.kinds, self.nkinds = &kv[0], len(self._kinds)
        self.n_sel_prop = self.n_sel_acc = self.n_kind_prop = self.n_kind_acc = self.n_pair_prop = self.n_pair_acc = 0
        self.n_triple_prop = self.n_triple_acc = 0
        self._pcdf, self._pa, self._pb = _pair_table(self._x if self.select and self.d <= PAIR_INPUTS_MAX else None)
        self.npairs = len(self._pcdf)
        self.ppair = S.pair_jumps
        cdef double[::1] pcv = self._pcdf
        cdef Py_ssize_t[::1] pav = self._pa
        cdef Py_ssize_t[::1] pbv = self._pb
        if self.npairs:
            self.pcdf, self.pa, self.pb = &pcv[0], &pav[0], &pbv[0]
        self.ptriple = S.triple_jumps if self.npairs and self.d >= 3 else 0.0
        self._r2 = _squared_correlations(self._x) if self.ptriple > 0 else np.zeros((1, 1))
        cdef double[:, ::1] r2v = self._r2
        self.r2 = &r2v[0, 0]
        self.scaled = self.learn or self.select
        if (self.learn or self.select or self.learn_kind) and not self.prior_only:
            if st.recompute:
                raise ValueError("learned scales, input selection and a learned basis type rebuild the design: they "
                                 "need a stored design (design='stored')")
            st.enable_rebuild()
        self.moves[<int> BIRTH] = _birth_plain if self.ntry == 1 else _birth_tries
        self.moves[<int> DEATH] = _death_plain if self.ntry == 1 else _death_tries
        self.moves[<int> SPLIT] = _split_move
        self.moves[<int> MERGE] = _merge_move
        self.moves[<int> UPDATE] = _update_move
        self.n_after = 0
        if self.ntry > 1:
            self._add_after(_update_tries)
        if self.learn:
            self._add_after(_scales)
        if self.select:
            self._add_after(_inputs)
        if self.learn_kind:
            self._add_after(_basis_type)

    cdef void _add_after(self, CoreStep step) noexcept:
        self.after[self.n_after] = step
        self.n_after += 1


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _RJModel(_RJState):
    """The model's pieces every move uses: the state set from Python, the log prior, eq. 22's move probabilities, the
    Metropolis-Hastings test and its settlement on the factor, the best state seen (annealing), a centre's column into
    the factor's scratch, a full rebuild of the design, and the Gibbs / MH steps of the hyperparameters (delta^2,
    Lambda, sigma^2). A room of `RJCore`."""

    def set_state(self, centres, double Lambda, delta2, scales=None, inputs=None, basis=None):
        """Initial (k, centres, Lambda, delta^2[, per-input scales when learning them][, the included inputs (a (d,)
        bool mask) when selecting them][, the basis type when it is learned]): the GramFactor must already hold
        [1, x, phi(centres)] (all inputs, unscaled, the basis of construction); it is rebuilt to the given state."""
        cdef Py_ssize_t i, j, o
        if inputs is not None:
            iv = np.asarray(inputs, dtype=bool).reshape(-1)
            if iv.shape != (self.d,) or not iv.any():
                raise ValueError(f"inputs must be a mask of {self.d} booleans with at least one True, got {inputs}")
            if not self.select and not iv.all():
                raise ValueError("excluded inputs need config.select_inputs")
            self.nincl = 0
            for j in range(self.d):
                self.inc[j] = 1 if iv[j] else 0
                if iv[j]:
                    self.lin[self.nincl] = j
                    self.nincl += 1
        if basis is not None:
            code = BASIS_CODES[basis]
            if code not in list(self._kinds):
                raise ValueError(f"basis {basis!r} is not among config.basis_types")
            self.kind = code
        if scales is not None:
            sv = np.asarray(scales, dtype=float).reshape(-1)
            if sv.shape != (self.d,) or not np.all(np.isfinite(sv)) or np.any(sv <= 0):
                raise ValueError(f"scales must be {self.d} finite values > 0, got {scales}")
            if not self.learn and np.any(sv != 1.0):
                raise ValueError("scales other than 1 need config.learn_scales")
            for j in range(self.d):
                self.th[j] = log(sv[j])
                self.sc[j] = exp(self.th[j])
        for j in range(self.d):       # an excluded input has scale 0: the basis ignores it
            if not self.inc[j]:
                self.sc[j] = 0.0
            elif not self.learn:
                self.sc[j] = 1.0
        centres = np.asarray(centres, dtype=float).reshape(-1, self.d)
        self.k = centres.shape[0]
        if self.k > self.kmax:
            raise ValueError(f"initial k = {self.k} exceeds k_max = {self.kmax}")
        for i in range(self.k):
            for j in range(self.d):
                self.C[i * self.d + j] = centres[i, j]
        self.Lambda = Lambda
        self.logS_cur = log_trunc_poisson_norm(Lambda, self.kmax, self.lgam)
        d2 = np.broadcast_to(np.asarray(delta2, dtype=float), (self.c,))
        for o in range(self.c):
            self.delta2_buf[o] = d2[o]
            self.sigma2_buf[o] = np.nan
        if not self.prior_only:
            if self.st.m != 1 + self.d + self.k:
                raise ValueError("the GramFactor does not hold 1 + d + k columns")
            if self.learn or self.select or self.learn_kind:
                if self._rebuild_from(0, self.inc, self.sc, self.kind):
                    raise np.linalg.LinAlgError("the initial design at the given scales, inputs and basis is singular")
                self.st._commit()
        self.p0 = 1 + self.nincl
        if not self.prior_only:
            if not self.gprior:
                for o in range(self.c):
                    self.st.ridge[o] = 1.0 / self.delta2_buf[o]
                    if self.st._refactor(o):
                        raise np.linalg.LinAlgError("initial design is not positive definite")
            self.lml = log_ml(&self.lik, self.st, False)
            if not (self.lml > -INFINITY):
                raise np.linalg.LinAlgError("the initial state has zero likelihood (y in the column space of D?)")
        else:
            self.lml = 0.0
        self.logpost = self.lml + self._log_prior()
        self.best_logf = -INFINITY
        self._track_best()

    cdef inline double _tsd(self, double t) noexcept nogil:
        "The prior sd of a log scale t: log_scale_sd_up above 0, log_scale_sd at or below (nbs/05d)."
        return self.s_sd_up if t > 0 else self.s_sd

    cdef inline double _b_k(self, Py_ssize_t k) noexcept nogil:
        "delta^2's prior scale given k bases: beta_delta2, or beta_delta2 / max(k, 1) per basis (priors.delta2_scale)."
        return self.b_d / <double> (k if k > 1 else 1) if self.d2k else self.b_d

    cdef double _d2_jump(self, Py_ssize_t k, Py_ssize_t kn) noexcept nogil:
        """log prod_o p(delta_o^2 | kn) / p(delta_o^2 | k), the prior ratio of a move from k to kn bases that holds
        delta^2: 0 unless per basis (`priors.log_delta2_jump`)."""
        cdef Py_ssize_t o
        cdef double kb = <double> (k if k > 1 else 1), knb = <double> (kn if kn > 1 else 1), s = 0.0
        if not self.d2k:
            return 0.0
        for o in range(self.c):
            s += self.a_d * log(kb / knb) - self.b_d * (1.0 / knb - 1.0 / kb) / self.delta2_buf[o]
        return s

    cdef double _log_prior(self) noexcept nogil:
        """log p(k, Lambda) (either hierarchy) + log p(mu | k) + sum log p(delta^2). With Lambda held fixed
        (config.fix_Lambda) its own prior density is left out: it is a constant of the target, and a large fixed Lambda
        (the annealer's calibrated Lambda-bar grows as delta-bar^c: 9e24 at c = 5 outputs) makes -eps2 Lambda so large
        (-9e20) that every other term would drown in its rounding."""
        cdef Py_ssize_t o
        cdef double L = self.Lambda, lp, a1 = 0.5 + self.eps1, b = self._b_k(self.k)
        lp = ((self.k * log(L) if self.k > 0 else 0.0) - self.lgam[self.k]
              + (self._log_centres() if self.cmix else -self.k * self.logvol)
              - (L + self.logZk if self.joint else self.logS_cur))
        for o in range(self.c):
            lp += (self.a_d * log(b) - lgamma(self.a_d) - (self.a_d + 1) * log(self.delta2_buf[o])
                   - b / self.delta2_buf[o])
        if not self.fix_Lambda:
            lp += a1 * log(self.eps2) - lgamma(a1) + (a1 - 1) * log(L) - self.eps2 * L
        if self.learn:
            for o in range(self.d):
                if self.inc[o]:
                    lp -= 0.5 * (self.th[o] / self._tsd(self.th[o])) ** 2 + log(self._tsd(self.th[o])) + 0.5 * LOG_2PI
        if self.select:
            lp += self.nincl * self.lodds + self.lsel0
        if self.learn_kind:
            lp -= log(<double> self.nkinds)
        return lp

    cdef double _log_centre(self, const double* mu) noexcept nogil:
        """log p(mu), the centre prior's density at a centre inside the far box: -log Im when it is uniform."""
        cdef Py_ssize_t i
        cdef double s = 0.0
        if not self.cmix:
            return -self.logvol
        for i in range(self.d):
            s += self.lcin[i] if self.nlo[i] <= mu[i] <= self.nhi[i] else self.lcout[i]
        return s

    cdef double _log_centres(self) noexcept nogil:
        """log p(mu_1..mu_k | k) under the near/far centre prior."""
        cdef Py_ssize_t j
        cdef double s = 0.0
        for j in range(self.k):
            s += self._log_centre(self.C + j * self.d)
        return s

    cdef void _probs(self, Py_ssize_t k, double* b, double* dd, double* s, double* m) noexcept nogil:
        """Move probabilities of eq. 22 with the boundary cases (or fixed ones); disabled moves get 0."""
        if self.use_fp:     # fixed probabilities (RJSA: 0.2 each); impossible moves are null moves
            b[0] = self.fp_b if self.en_bd else 0.0
            dd[0] = self.fp_d if self.en_bd else 0.0
            s[0] = self.fp_s if self.en_sm else 0.0
            m[0] = self.fp_m if self.en_sm else 0.0
            return
        cdef double pb, pd
        move_probs(self.c_star, self.Lambda, k, self.kmax, &pb, &pd)
        b[0] = pb if self.en_bd else 0.0
        dd[0] = pd if self.en_bd else 0.0
        s[0] = pb if (self.en_sm and k >= 1) else 0.0
        m[0] = pd if (self.en_sm and k >= 2) else 0.0

    cdef bint _accept(self, double logr, double dlogf) noexcept nogil:
        """MH test of the RJ ratio r, times the annealing factor min(1, (f*/f)^(1/T - 1)) (eq. 38)."""
        return mh_accept(self.rng, logr, self.inv_t1, dlogf)

    cdef bint _settle(self, bint accepted, double new) noexcept nogil:
        """Commit or reject the pending kernel proposal (none in a prior-only run); returns accepted."""
        if not self.prior_only:
            accepted = settle(self.st, accepted, new, &self.lml)     # False if a deferred accuracy test fails
        return accepted

    cdef void _track_best(self) noexcept nogil:
        """Keep the configuration with the largest log f_S = log posterior + log k! seen so far: its centres and its
        per-input scales (all 1 unless learned)."""
        cdef double f = self.logpost + self.lgam[self.k]
        if f > self.best_logf:
            self.best_logf = f
            self.best_k = self.k
            memcpy(self.best, self.C, self.k * self.d * sizeof(double))
            memcpy(self.best_sc, self.sc, self.d * sizeof(double))

    cdef void _scratch(self, const double* mu) noexcept nogil:
        """phi at centre mu into the kernel's scratch column: on the scaled distance when scales are learned or inputs
        selected (an excluded input has scale 0)."""
        if self.st.recompute:       # the kernel evaluates the column itself, block by block, when it needs it
            memcpy(self.st.scratch_centre(), mu, self.d * sizeof(double))
        elif self.scaled:
            basis_column_scaled_t(self.xT, self.N, self.d, mu, self.sc, self.kind, self.w2, self.st.scratch())
        else:
            self.st._scratch_basis(self.x, self.d, mu, self.kind, self.w2)

    cdef int _rebuild_from(self, Py_ssize_t first, const int* inc, const double* s, int kind) noexcept nogil:
        """Propose the design [1, x_j (inc[j]), phi(||diag(s)(x - mu_i)||) of `kind`] from column `first` on (0: every
        column, the linear part from inc; self.p0: the basis columns only): the kernel's full-rebuild path, with a new
        number of columns when inc changes the linear part. 0 if pending."""
        cdef Py_ssize_t i, j, n, p0 = 1
        cdef double* cols = self.st.rebuild_columns()
        for j in range(self.d):
            if inc[j]:
                if first == 0:
                    for n in range(self.N):
                        cols[p0 * self.N + n] = self.x[n * self.d + j]
                p0 += 1
        if first == 0:
            for n in range(self.N):
                cols[n] = 1.0
        elif first != p0:
            return 2
        for i in range(self.k):
            if self.scaled:
                basis_column_scaled_t(self.xT, self.N, self.d, self.C + i * self.d, s, kind, self.w2,
                                      cols + (p0 + i) * self.N)
            else:
                basis_column_c(self.x, self.N, self.d, self.C + i * self.d, kind, self.w2, cols + (p0 + i) * self.N)
        return self.st._prop_rebuild_m(first, p0 + self.k)

    cdef inline double _log_ig_ratio(self, double new, double old) noexcept nogil:
        "log IG(new) - log IG(old) under delta^2's prior given the current k (`_b_k`)."
        return -(self.a_d + 1.0) * (log(new) - log(old)) - self._b_k(self.k) * (1.0 / new - 1.0 / old)

    cdef void _delta2_walk(self) noexcept nogil:
        """The tempered target's delta^2 step (beta < 1): for each output a random walk on log delta_o^2, accepted with
        beta (l' - l) + log IG(delta'^2) - log IG(delta^2) + log delta'^2 - log delta^2 (the walk's Jacobian). Under the
        g-prior the factor does not depend on delta^2; under the ridge prior factor o at the new ridge is a proposal of
        the kernel (`_prop_ridge`: committed if accepted, the old factor kept if not; not PD there is a rejection)."""
        cdef Py_ssize_t o, f
        cdef double old, new, lnew, lr
        cdef bint bad
        for o in range(self.c):
            old = self.delta2_buf[o]
            new = old * exp(self.d2_step * random_standard_normal(self.rng))
            self.n_d2_prop += 1
            self.delta2_buf[o] = new
            bad = False
            f = self.st.ofac[o]
            if not self.gprior:
                bad = self.st._prop_ridge(f, 1.0 / new) != 0     # a proposal: nothing changes if not PD
            lnew = -INFINITY if bad else log_ml(&self.lik, self.st, not self.gprior)
            lr = self.beta * (lnew - self.lml) + self._log_ig_ratio(new, old) + log(new) - log(old)
            if log(random_standard_uniform(self.rng)) < lr and lr == lr:
                self.lml = lnew
                self.n_d2_acc += 1
                if not self.gprior:
                    self.st._commit()
            else:
                self.delta2_buf[o] = old
                if not self.gprior and not bad:
                    self.st._reject()

    cdef void _hypers(self) noexcept nogil:
        cdef Py_ssize_t o, i, m = self.st.m, M1 = self.st.M1
        cdef double a_s = 0.5 * (self.v0 + self.N), s, yPy, s2, quad, q
        cdef double* z
        cdef double* al
        if self.beta != 1.0 and not self.prior_only:
            if not self.fix_delta2:
                self._delta2_walk()
        elif self.prior_only:
            if not self.fix_delta2:
                for o in range(self.c):
                    self.delta2_buf[o] = self._b_k(self.k) / random_standard_gamma(self.rng, self.a_d)
        elif self.nuis:
            for o in range(self.c):
                z = self.st.Z + o * M1
                al = self.alpha + o * M1
                s = self.delta2_buf[o] / (1.0 + self.delta2_buf[o]) if self.gprior else 1.0
                yPy = self.st.yy[o] - s * self.st.e[o]
                if self.has_s2:
                    s2 = self.s2_fixed
                else:   # the scale at least the rounding of y'y - e (noise-free y fitted to the last bits; 04_kernel)
                    q = fmax(self.g0 + yPy, YPY_REL_MIN * (self.g0 + self.st.yy[o]))
                    s2 = 0.5 * q / random_standard_gamma(self.rng, a_s)
                self.sigma2_buf[o] = s2
                # w = L' alpha ~ N(s z, s2 s I); quad = alpha' S alpha
                quad = 0.0
                for i in range(m):
                    al[i] = s * z[i] + sqrt(s2 * s) * random_standard_normal(self.rng)
                    if self.gprior:
                        quad += al[i] * al[i]
                self.st._back_solve(self.st.ofac[o], al, al)   # alpha = L'^{-1} w
                if not self.gprior:
                    for i in range(m):
                        quad += al[i] * al[i]
                if not self.fix_delta2:
                    self.delta2_buf[o] = ((self._b_k(self.k) + 0.5 * quad / s2)
                                          / random_standard_gamma(self.rng, self.a_d + 0.5 * m))
            if not self.gprior and not self.fix_delta2:
                # every factor at its new ridge 1 / delta_o^2 (interleaved); one not PD there keeps its old ridge
                # (-1: every ridge kept its old value), and delta_o^2 follows the ridge it got
                if self.st._set_inverse_ridges(self.delta2_buf) != 0:
                    for o in range(self.c):
                        if self.st.ridge[o] != 1.0 / self.delta2_buf[o]:
                            self.delta2_buf[o] = 1.0 / self.st.ridge[o]
            self.lml = log_ml(&self.lik, self.st, False)
        if not self.fix_Lambda:
            rate_mh_step(self.rng, self.k + 0.5 + self.eps1, 1.0 + self.eps2, self.kmax, self.lgam, &self.Lambda,
                         &self.logS_cur, self.joint)


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _RJProbit(_RJModel):
    """The probit likelihood's data augmentation in the loop (nbs/05c_probit): the latent utilities' Gibbs sweep
    given the fitted values, the targets retargeted to them. A room of `RJCore`."""

    def enable_probit(self, y, U=None):
        """Run the probit's latent step (Albert & Chib; nbs/05c_probit) inside the loop, after each iteration's record
        and before its snapshot, as `_ProbitRun` does from Python. Two classes: y the 0/1 labels (N,), one output.
        C = c + 1 > 2 classes: y the classes 0..C-1 (N,) and U the current utilities (N, C), each row's largest at its
        class (`probit.sample_utilities` runs in the loop; `utilities()` reads them back). A stored design, sigma^2
        fixed at 1."""
        if self.st.recompute or not self.has_s2 or self.prior_only:
            raise ValueError("the probit step needs sigma^2 fixed at 1, a stored design and the likelihood on")
        if U is None:
            ya = np.ascontiguousarray(y, dtype=np.int8).reshape(-1)
            if ya.shape[0] != self.N or self.c != 1:
                raise ValueError("the binary probit step needs N labels 0/1 and one output")
            self._ylab, self._zbuf = ya, np.zeros(self.N)
            self._set_probit_buffers(None, None)
            return
        yc = np.ascontiguousarray(y, dtype=np.int32).reshape(-1)
        ua = np.array(U, dtype=float, order="C")
        if yc.shape[0] != self.N or ua.shape != (self.N, self.c + 1) or self.c < 2 or yc.min() < 0 or yc.max() > self.c:
            raise ValueError(f"the multinomial probit step needs N classes in 0..c and utilities of shape (N, c + 1) = "
                             f"({self.N}, {self.c + 1}) with c >= 2 outputs")
        self._ylab, self._zbuf = np.zeros(1, np.int8), np.zeros(self.c * self.N)
        self._set_probit_buffers(yc, ua)

    def _set_probit_buffers(self, yc, ua):
        cdef signed char[::1] yv = self._ylab
        cdef double[::1] zv = self._zbuf
        cdef int32_t[::1] cv
        cdef double[:, ::1] uv
        self.ylab, self.zbuf, self.probit = &yv[0], &zv[0], True
        cdef double[::1] dv, rv
        self._ucls, self._ubuf, self.ucls, self.ubuf = yc, ua, NULL, NULL
        if yc is not None:
            cv, uv = yc, ua
            self.ucls, self.ubuf = &cv[0], &uv[0, 0]
            self._d2old, self._rnew = np.zeros(self.c), np.zeros(self.st.q)
            dv, rv = self._d2old, self._rnew
            self.d2old, self.rnew = &dv[0], &rv[0]

    def utilities(self):
        "The multinomial probit's current utilities (N, C) (a copy); None for the binary probit or none enabled."
        return None if self._ubuf is None else np.array(self._ubuf)

    cdef void _utility_step(self) noexcept nogil:
        """One Gibbs sweep over the classes j = 0..C-1 (`probit.sample_utilities`' arithmetic, N uniforms per class in
        row order): z_nj ~ N(F_nj, 1), F_n0 = 0 and F_nj = (D alpha_{j-1})_n, truncated so that the observed class's
        utility stays the largest; then the targets of the factor are the utilities of classes 1..C-1."""
        cdef Py_ssize_t n, o, j, l, N = self.N, c = self.c, C = self.c + 1
        cdef double f, lu, b
        cdef double* F = self.zbuf
        self._fitted_values(F)
        for j in range(C):
            for n in range(N):
                f = 0.0 if j == 0 else F[(j - 1) * N + n]
                lu = log1p(-random_standard_uniform(self.rng))
                if self.ucls[n] == j:
                    b = -INFINITY
                    for l in range(C):
                        if l != j and self.ubuf[n * C + l] > b:
                            b = self.ubuf[n * C + l]
                    self.ubuf[n * C + j] = f - ndtri_exp(lu + log_ndtr(f - b))
                else:
                    b = self.ubuf[n * C + self.ucls[n]]
                    self.ubuf[n * C + j] = f + ndtri_exp(lu + log_ndtr(b - f))
        for o in range(c):
            for n in range(N):
                F[o * N + n] = self.ubuf[n * C + o + 1]
        self._retarget(F)
        if self.lsstep > 0.0 and not self.fix_delta2 and self.beta == 1.0:
            self._utility_scale_move()

    cdef void _utility_scale_move(self) noexcept nogil:
        """The multinomial's scale move (nbs/05c_probit, "A scale move"): every utility's difference from class 0's
        scaled by g, U_nj -> U_n0 + g (U_nj - U_n0) (j >= 1; class 0's kept), and every delta_o^2 -> g^2 delta_o^2,
        alpha integrated out: log g ~ N(0, lsstep^2), accepted with the collapsed likelihood's and delta^2's prior
        ratios times g^(N c + 2 c) (the map's Jacobian). Every utility's order in its row is kept, so the classes are.
        The proposal: the targets moved (D'Y, z and e from the factors as they stand), then, under the ridge prior,
        every factor at its new ridge as a kernel proposal (`_prop_ridges`; a factor not PD there is a rejection).
        Rejected: the proposal dropped and the old targets set back, O(N m c); no factor is rebuilt."""
        cdef Py_ssize_t n, o, N = self.N, c = self.c, C = self.c + 1
        cdef double lg = self.lsstep * random_standard_normal(self.rng), g = exp(lg), g2 = exp(2.0 * lg), lr
        cdef double lnew = -INFINITY
        cdef double* F = self.zbuf
        cdef double* u
        cdef bint bad = False
        self.n_ls_prop += 1
        lr = (N * c + 2.0 * c) * lg
        for o in range(c):
            self.d2old[o] = self.delta2_buf[o]
            self.delta2_buf[o] = self.d2old[o] * g2
            lr += self._log_ig_ratio(self.delta2_buf[o], self.d2old[o])
            self.rnew[self.st.ofac[o]] = 1.0 / self.delta2_buf[o]
            for n in range(N):
                u = self.ubuf + n * C
                F[o * N + n] = u[0] + g * (u[o + 1] - u[0])
        self.st._set_targets_c(F)
        if not self.gprior:
            bad = self.st._prop_ridges(self.rnew) >= 0
        if bad:
            lr = -INFINITY
        else:
            lnew = log_ml(&self.lik, self.st, not self.gprior)
            lr += lnew - self.lml
        if log(random_standard_uniform(self.rng)) < lr and lr == lr:
            self.n_ls_acc += 1
            if not self.gprior:
                self.st._commit()
            for n in range(N):
                u = self.ubuf + n * C
                for o in range(1, C):
                    u[o] = u[0] + g * (u[o] - u[0])
            self.lml = lnew
            self.logpost = self.lml + self._log_prior()
            return
        if not self.gprior and not bad:
            self.st._reject()
        for o in range(c):
            self.delta2_buf[o] = self.d2old[o]
            for n in range(N):
                F[o * N + n] = self.ubuf[n * C + o + 1]
        self._retarget(F)

    cdef void _fitted_values(self, double* F) noexcept nogil:
        """F[o N + n] = (D alpha_o)_n for every output o, from the last coefficient draw: the latent mean of the
        probit's data augmentation (binary and multinomial share it; the columns in factor order, once per output)."""
        cdef Py_ssize_t n, i, o, N = self.N, M1 = self.st.M1
        cdef double a
        cdef const double* col
        for o in range(self.c):
            for n in range(N):
                F[o * N + n] = 0.0
        for i in range(self.st.m):
            col = self.st.Dt + self.st.slot[i] * N
            for o in range(self.c):
                a = self.alpha[o * M1 + i]
                for n in range(N):
                    F[o * N + n] += col[n] * a

    cdef void _retarget(self, double* Z) noexcept nogil:
        "The factor's targets become the latent draws Z; the likelihood and the log posterior follow."
        self.st._set_targets_c(Z)
        self.lml = log_ml(&self.lik, self.st, False)
        self.logpost = self.lml + self._log_prior()

    cdef void _latent_step(self) noexcept nogil:
        """z_n ~ N(f_n, 1) truncated to z > 0 where y_n = 1 and to z <= 0 where y_n = 0, f = D alpha (the last draw),
        by inversion in log space (`probit.sample_latent`'s arithmetic, one uniform per row in order); then the
        factor's targets are z, and the likelihood and log posterior follow."""
        cdef Py_ssize_t n, N = self.N
        cdef double f, lu
        if self.ucls != NULL:
            self._utility_step()
            return
        self._fitted_values(self.zbuf)
        for n in range(N):
            f = self.zbuf[n]
            lu = log1p(-random_standard_uniform(self.rng))
            if self.ylab[n]:
                self.zbuf[n] = f - ndtri_exp(lu + log_ndtr(f))
            else:
                self.zbuf[n] = f + ndtri_exp(lu + log_ndtr(-f))
        self._retarget(self.zbuf)
        if self.lsstep > 0.0 and not self.fix_delta2 and self.beta == 1.0:
            self._latent_scale_move()

    cdef void _latent_scale_move(self) noexcept nogil:
        """(z, delta^2) -> (g z, g^2 delta^2), alpha integrated out: log g ~ N(0, lsstep^2), accepted with
        log p(g z | g^2 delta^2) - log p(z | delta^2) + log IG(g^2 delta^2) - log IG(delta^2) + (N + 2) log g (the map's
        Jacobian). The labels fix only the signs of z, which g > 0 keeps (nbs/05c_probit, "A scale move")."""
        cdef Py_ssize_t n, f = self.st.ofac[0]
        cdef double lg = self.lsstep * random_standard_normal(self.rng), g2 = exp(2.0 * lg), g
        cdef double old = self.delta2_buf[0], new = old * g2, lnew, ypy, lr
        cdef bint bad = False
        self.n_ls_prop += 1
        self.delta2_buf[0] = new
        if not self.gprior:         # the factor at the new ridge, a proposal of the kernel (`_prop_ridge`)
            bad = self.st._prop_ridge(f, 1.0 / new) != 0
        if bad:
            lr = -INFINITY
        else:
            ypy = self.st.yy[0] - (new / (1.0 + new) * self.st.e[0] if self.gprior else self.st.ep[0])
            lnew = log_ml(&self.lik, self.st, not self.gprior) - 0.5 * (g2 - 1.0) * ypy
            lr = lnew - self.lml + self._log_ig_ratio(new, old) + (self.N + 2.0) * lg
        if log(random_standard_uniform(self.rng)) < lr and lr == lr:
            self.n_ls_acc += 1
            if not self.gprior:
                self.st._commit()
            g = exp(lg)
            for n in range(self.N):
                self.zbuf[n] *= g
            self._retarget(self.zbuf)
        else:
            self.delta2_buf[0] = old
            if not self.gprior and not bad:
                self.st._reject()


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _RJLearnedBasis(_RJProbit):
    """The learned basis's steps (nbs/05d_learned_basis): the per-input log scales' random walk, the inputs'
    add / drop / swap, and the basis type's switch, each a full rebuild of the design judged by one MH test. A room of
    `RJCore`."""

    cdef double _dll_rebuilt(self, Py_ssize_t first, int kind, double* new, int* rc) noexcept nogil:
        """The change of the log marginal likelihood when the design is rebuilt from column `first` on with the current
        inputs, scales and the basis type `kind` (`_rebuild_from`): new[0] the proposal's log marginal likelihood, rc[0]
        the kernel's code (not 0: the design was refused, -inf). 0 without the likelihood (prior_only)."""
        if self.prior_only:
            return 0.0
        rc[0] = self._rebuild_from(first, self.inc, self.sc, kind)
        if rc[0] != 0:
            return -INFINITY
        new[0] = log_ml(&self.lik, self.st, True)
        return new[0] - self.lml

    cdef inline bint _settle_rebuilt(self, bint acc, int rc, double new) noexcept nogil:
        "The tail of a step that rebuilt the design (`_dll_rebuilt`): commit or reject it (`settle`); its answer."
        if not self.prior_only and rc == 0:
            return settle(self.st, acc, new, &self.lml)
        return acc

    cdef inline double _log_theta_ratio(self, double old_t, double new_t) noexcept nogil:
        "log p(theta') - log p(theta) under a log scale's two-piece normal prior (`_tsd`: 0 unless theta crosses 0)."
        return 0.5 * ((old_t / self._tsd(old_t)) ** 2 - (new_t / self._tsd(new_t)) ** 2) \
            + (log(self._tsd(old_t)) - log(self._tsd(new_t)))

    cdef int _scale_step(self) noexcept nogil:
        """Random-walk MH on one log scale theta_j (j uniform among the included inputs): centres, Lambda and delta^2
        held, every basis column rebuilt. Symmetric in theta, so r = p(y | theta') p(theta') / (p(y | theta) p(theta))
        (nbs/05d). A share zshare of the steps are zooms (`_zoom_step`); with zhot only at beta < 1, where each rung's
        kernel keeps that rung's tempered posterior (no uniform is drawn for the choice at beta = 1)."""
        if self.zshare > 0.0 and (not self.zhot or self.beta < 1.0) \
                and random_standard_uniform(self.rng) < self.zshare:
            return self._zoom_step()
        cdef Py_ssize_t j = self.lin[<Py_ssize_t> random_interval(self.rng, self.nincl - 1)]
        cdef double old_t = self.th[j], old_s = self.sc[j], new_t, dlp, new = 0.0, dll
        cdef int rc = 0
        cdef bint acc
        new_t = old_t + self.sstep * random_standard_normal(self.rng)
        dlp = self._log_theta_ratio(old_t, new_t)
        self.n_scale_prop += 1
        self.sc[j] = exp(new_t)
        dll = self._dll_rebuilt(self.p0, self.kind, &new, &rc)
        acc = self._settle_rebuilt(self._accept(self.beta * dll + dlp, dll + dlp), rc, new)
        if acc:
            self.th[j] = new_t
            self.n_scale_acc += 1
        else:
            self.sc[j] = old_s
        return acc

    cdef inline double _log_coord(self, Py_ssize_t j, double v) noexcept nogil:
        "log density of coordinate j of a centre at v under the near/far centre prior (cmix), v inside the far box."
        return self.lcin[j] if self.nlo[j] <= v <= self.nhi[j] else self.lcout[j]

    cdef int _zoom_step(self) noexcept nogil:
        """The zoom about a data point (nbs/05d): j uniform among the included inputs, a pivot c = x_nj (n uniform among
        the rows), eps ~ N(0, zoom_step^2); theta_j' = theta_j + eps and every centre's j-th coordinate
        mu_ij' = c + (mu_ij - c) exp(-eps), so that each centre keeps its scaled offset s_j (mu_ij - c) from the pivot.
        Its own reverse (the same c, -eps), with Jacobian exp(-k eps): log r = beta (l' - l) + log p(theta') - log
        p(theta) + sum_i [log p(mu_ij') - log p(mu_ij)] - k eps. A centre pushed out of the far box is a rejection."""
        cdef Py_ssize_t i, d = self.d, j = self.lin[<Py_ssize_t> random_interval(self.rng, self.nincl - 1)]
        cdef double c = self.x[<Py_ssize_t> random_interval(self.rng, self.N - 1) * d + j]
        cdef double eps = self.zstep * random_standard_normal(self.rng)
        cdef double old_t = self.th[j], old_s = self.sc[j], new_t = old_t + eps, f = exp(-eps)
        cdef double dlp, lcr = 0.0, v, new = 0.0, dll
        cdef int rc = 0
        cdef bint acc = False, inside = True
        dlp = self._log_theta_ratio(old_t, new_t)
        self.n_zoom_prop += 1
        for i in range(self.k):
            self.zold[i] = self.C[i * d + j]
            v = c + (self.zold[i] - c) * f
            if v < self.lo[j] or v > self.hi[j]:
                inside = False
            elif self.cmix:
                lcr += self._log_coord(j, v) - self._log_coord(j, self.zold[i])
            self.C[i * d + j] = v
        if inside:
            self.sc[j] = exp(new_t)
            dll = self._dll_rebuilt(self.p0, self.kind, &new, &rc)
            acc = self._settle_rebuilt(self._accept(self.beta * dll + dlp + lcr - self.k * eps, dll + dlp + lcr),
                                       rc, new)
        if acc:
            self.th[j] = new_t
            self.n_zoom_acc += 1
        else:
            self.sc[j] = old_s
            for i in range(self.k):
                self.C[i * d + j] = self.zold[i]
        return acc

    cdef int _select_step(self) noexcept nogil:
        """The reversible jumps on the included inputs (nbs/05d): a share `ppair` of the steps switches a pair (a, b)
        drawn with probability proportional to the inputs' squared correlation, the others one input (j uniform)
        (`_toggle`). A share `ptriple` of the pair jumps switches a third input c with the pair, drawn with probability
        proportional to r_ac^2 + r_bc^2 (uniform among the others where that is 0 for every c). The set switched is
        drawn from a law that does not depend on the state, and the same set undoes the move: no proposal ratio. With
        ppair = 0 no uniform is drawn for the choice (the chain of one-input jumps only), with ptriple = 0 none for
        the third input (the chain of single and pair jumps)."""
        cdef Py_ssize_t p, lo_, hi_, a, b, c = -1
        cdef double u, tot = 0.0
        cdef const double* ra
        cdef const double* rb
        cdef bint triple
        if self.npairs == 0 or self.ppair == 0.0 or random_standard_uniform(self.rng) >= self.ppair:
            return self._toggle(<Py_ssize_t> random_interval(self.rng, self.d - 1), -1, -1)
        u = random_standard_uniform(self.rng) * self.pcdf[self.npairs - 1]
        lo_, hi_ = 0, self.npairs - 1
        while lo_ < hi_:                     # the first pair whose cumulative weight exceeds u
            p = (lo_ + hi_) // 2
            if self.pcdf[p] > u:
                hi_ = p
            else:
                lo_ = p + 1
        a, b = self.pa[lo_], self.pb[lo_]
        triple = self.ptriple > 0.0 and random_standard_uniform(self.rng) < self.ptriple
        if triple:                           # the third input: c != a, b with weight r_ac^2 + r_bc^2
            ra, rb = self.r2 + a * self.d, self.r2 + b * self.d
            for p in range(self.d):
                if p != a and p != b:
                    tot += ra[p] + rb[p]
            if tot > 0.0:
                u = random_standard_uniform(self.rng) * tot
                for p in range(self.d):
                    if p == a or p == b or ra[p] + rb[p] == 0.0:
                        continue
                    c = p                    # the last input of positive weight, should rounding leave u >= 0
                    u -= ra[p] + rb[p]
                    if u < 0.0:
                        break
            else:                            # no input correlated with the pair: uniform among the d - 2 others
                c = <Py_ssize_t> random_interval(self.rng, self.d - 3)
                c += (c >= min(a, b))
                c += (c >= max(a, b))
            self.n_triple_prop += 1
        self.n_pair_prop += 1
        if self._toggle(a, b, c):
            self.n_pair_acc += 1
            self.n_triple_acc += triple
            return 1
        return 0

    cdef int _toggle(self, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c) noexcept nogil:
        """The reversible jump that switches input a (and b, when b >= 0, and c, when c >= 0) in or out: out drops its
        linear column and its scale (s_j = 0); in adds them with theta_j drawn from its prior N(0, tau^2). The prior
        draw cancels the scale's prior density, so r = p(y | new) / p(y | old) times pi / (1 - pi) for each input
        switched in, its inverse for each switched out (nbs/05d). The set is drawn from a law that does not depend on
        the state and the same set undoes the move, so no proposal ratio enters. Leaving no input has prior mass 0:
        rejected. Every column is rebuilt (the number of columns changes)."""
        cdef Py_ssize_t[3] js
        cdef bint[3] outs
        cdef double[3] old_s, new_t
        cdef Py_ssize_t n = 1 if b < 0 else (2 if c < 0 else 3), t, i, j, left = self.nincl
        cdef bint acc
        cdef double lr, new = 0.0, dll, dpr = 0.0, dlf, ts
        cdef int rc = 0
        js[0], js[1], js[2] = a, b, c
        self.n_sel_prop += 1
        for t in range(n):
            j = js[t]
            outs[t] = self.inc[j] != 0
            left += -1 if outs[t] else 1
        if left == 0:
            return 0
        for t in range(n):
            j = js[t]
            old_s[t] = self.sc[j]
            new_t[t] = 0.0
            if not outs[t] and self.learn:
                new_t[t] = random_standard_normal(self.rng)
                new_t[t] = self._tsd(new_t[t]) * new_t[t]    # a draw of the (two-piece) normal: halves of mass 1/2
            self.inc[j] = 0 if outs[t] else 1
            self.sc[j] = 0.0 if outs[t] else (exp(new_t[t]) if self.learn else 1.0)
            dpr += -self.lodds if outs[t] else self.lodds
        dll = self._dll_rebuilt(0, self.kind, &new, &rc)
        lr = self.beta * dll + dpr
        dlf = dll + dpr
        if self.learn:   # the change of the log posterior (for the annealing factor): the scales' prior densities
            for t in range(n):
                ts = self.th[js[t]] if outs[t] else new_t[t]
                dlf += (1.0 if outs[t] else -1.0) * (0.5 * (ts / self._tsd(ts)) ** 2 + log(self._tsd(ts))
                                                     + 0.5 * LOG_2PI)
        acc = self._settle_rebuilt(self._accept(lr, dlf), rc, new)
        if acc:
            self.n_sel_acc += 1
            self.nincl = 0
            for i in range(self.d):
                if self.inc[i]:
                    self.lin[self.nincl] = i
                    self.nincl += 1
            self.p0 = 1 + self.nincl
            for t in range(n):
                self.th[js[t]] = 0.0 if outs[t] else new_t[t]
        else:
            for t in range(n):
                self.inc[js[t]] = 1 if outs[t] else 0
                self.sc[js[t]] = old_s[t]
        return acc

    cdef int _kind_step(self) noexcept nogil:
        """MH on the basis type: a new type uniform among the other allowed ones (a symmetric proposal of a discrete
        parameter; no dimension changes), centres and scales held, every basis column rebuilt. With the uniform prior
        on types, r = p(y | new type) / p(y | type) (nbs/05d)."""
        cdef Py_ssize_t t = <Py_ssize_t> random_interval(self.rng, self.nkinds - 2), i, cur = 0
        cdef int nk
        cdef double new = 0.0, dll
        cdef int rc = 0
        cdef bint acc
        for i in range(self.nkinds):
            if self.kinds[i] == self.kind:
                cur = i
        nk = self.kinds[t if t < cur else t + 1]
        self.n_kind_prop += 1
        dll = self._dll_rebuilt(self.p0, nk, &new, &rc)
        acc = self._settle_rebuilt(self._accept(self.beta * dll, dll), rc, new)
        if acc:
            self.kind = nk
            self.n_kind_acc += 1
        return acc

    cdef void _step_counts(self, int64_t* out) noexcept nogil:
        "(proposed, accepted) of each learned-basis step, in STEPS' order, into out[0 .. 2 N_STEPS - 1]."
        out[0] = self.n_scale_prop; out[1] = self.n_scale_acc
        out[2] = self.n_zoom_prop; out[3] = self.n_zoom_acc
        out[4] = self.n_sel_prop; out[5] = self.n_sel_acc
        out[6] = self.n_pair_prop; out[7] = self.n_pair_acc
        out[8] = self.n_triple_prop; out[9] = self.n_triple_acc
        out[10] = self.n_kind_prop; out[11] = self.n_kind_acc

    @property
    def step_counts(self):
        "(proposed, accepted) of the learned basis's steps since the core was built: (N_STEPS, 2), a row per STEPS."
        cdef int64_t[2 * N_STEPS] c
        self._step_counts(&c[0])
        return np.array([c[i] for i in range(2 * N_STEPS)], dtype=np.int64).reshape(N_STEPS, 2)


@cython.auto_pickle(False)    # a room is never built on its own
cdef class _RJDimensionMoves(_RJLearnedBasis):
    """The moves on the centres (nbs/03_moves): birth, death, split, merge and update, plain and multiple-try, with
    their geometry (the centre space, nearest neighbours, a column moved to the end) and the candidate sets' weights. A
    room of `RJCore`."""

    cdef void _uniform_centre(self, double* mu) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.d):
            mu[i] = self.lo[i] + (self.hi[i] - self.lo[i]) * random_standard_uniform(self.rng)

    cdef void _prior_centre(self, double* mu) noexcept nogil:
        """A centre from its prior: uniform on Omega, or each coordinate on the far box w.p. far_prob, else the near."""
        cdef Py_ssize_t i
        if not self.cmix:
            self._uniform_centre(mu)
            return
        for i in range(self.d):
            if random_standard_uniform(self.rng) < self.fprob:
                mu[i] = self.lo[i] + (self.hi[i] - self.lo[i]) * random_standard_uniform(self.rng)
            else:
                mu[i] = self.nlo[i] + (self.nhi[i] - self.nlo[i]) * random_standard_uniform(self.rng)

    cdef bint _inside(self, const double* mu) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.d):
            if mu[i] < self.lo[i] or mu[i] > self.hi[i]:
                return False
        return True

    cdef Py_ssize_t _nn(self, const double* S, Py_ssize_t n, Py_ssize_t j) noexcept nogil:
        """Euclidean nearest neighbour of S[j] among the other n - 1 rows."""
        cdef Py_ssize_t i, t, best = -1
        cdef double dist, bd = INFINITY, z
        for i in range(n):
            if i == j:
                continue
            dist = 0.0
            for t in range(self.d):
                z = S[i * self.d + t] - S[j * self.d + t]
                dist += z * z
            if dist < bd:
                bd = dist
                best = i
        return best

    cdef int _n_mutual(self, const double* S, Py_ssize_t n, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        return (self._nn(S, n, a) == b) + (self._nn(S, n, b) == a)

    cdef void _move_to_end(self, Py_ssize_t j) noexcept nogil:
        """Centre j goes to the end of the list (mirrors a kernel replace)."""
        cdef Py_ssize_t d = self.d
        memcpy(self.tmp + 3 * d, self.C + j * d, d * sizeof(double))
        memmove(self.C + j * d, self.C + (j + 1) * d, (self.k - 1 - j) * d * sizeof(double))
        memcpy(self.C + (self.k - 1) * d, self.tmp + 3 * d, d * sizeof(double))

    cdef int _replace_commit(self, Py_ssize_t col, const double* mu) noexcept nogil:
        """Replace design column `col` by phi(||x - mu||) and commit; 1 if singular or inaccurate (state unchanged)."""
        self._scratch(mu)
        if self.st._prop_replace(col):
            return 1
        if not self.st._pending_accurate():
            self.st._reject()
            return 1
        self.st._commit()
        return 0

    cdef double _try_candidates(self, Py_ssize_t first, double base, int op, Py_ssize_t col) noexcept nogil:
        """Draw candidates first..K-1 uniformly on Omega and write their log weights
        lw_i = beta (l(theta' + c_i) - base) (-inf if the kernel refuses the column), each a kernel proposal rejected
        at once: an APPEND to the current state (theta' = theta), or the REPLACE of column col (theta' = theta
        without that column); returns log((1/K) sum_i exp(lw_i)) over all K (lw[0..first-1] already set)."""
        cdef Py_ssize_t i
        cdef double new, mx = -INFINITY, acc = 0.0
        for i in range(first, self.ntry):
            self._prior_centre(self.cand + i * self.d)
            self.lw[i] = -INFINITY
            if self.prior_only:
                self.lw[i] = 0.0
                continue
            self._scratch(self.cand + i * self.d)
            if propose(self.st, op, col, &self.lik, &new) == 0:
                self.lw[i] = self.beta * (new - base)
                self.st._reject()
        for i in range(self.ntry):
            if self.lw[i] > mx:
                mx = self.lw[i]
        if mx == -INFINITY:
            return -INFINITY
        for i in range(self.ntry):
            acc += exp(self.lw[i] - mx)
        return mx + log(acc / self.ntry)

    cdef Py_ssize_t _pick(self, double lmw) noexcept nogil:
        """J with probability exp(lw_J - lmw) / K (lmw the log mean weight of the K candidates): one uniform."""
        cdef Py_ssize_t i, J = 0
        cdef double cum = 0.0, u = random_standard_uniform(self.rng)
        for i in range(self.ntry):
            cum += exp(self.lw[i] - lmw) / self.ntry
            J = i
            if u < cum:
                break
        while self.lw[J] == -INFINITY:      # rounding at the end of the sum: the last candidate with weight > 0
            J -= 1
        return J

    cdef int _birth_mt(self) noexcept nogil:
        """Multiple-try birth: K candidates c_i ~ U(Omega), c_J picked with probability w_J / sum w (w_i = exp(lw_i)),
        accepted with the plain birth's ratio in which the likelihood ratio is replaced by the mean weight (nbs/03)."""
        cdef Py_ssize_t k = self.k, J
        cdef double b, dd, s, m, b1, d1, s1, m1, new = 0.0, lmw, jp
        cdef double* mu = self.C + k * self.d
        if k >= self.kmax:
            return 0
        self._probs(k, &b, &dd, &s, &m)
        self._probs(k + 1, &b1, &d1, &s1, &m1)
        lmw = self._try_candidates(0, self.lml, APPEND, 0)
        if lmw == -INFINITY:
            return 0
        J = self._pick(lmw)
        memcpy(mu, self.cand + J * self.d, self.d * sizeof(double))
        if not self.prior_only:
            self._scratch(mu)
            if propose(self.st, APPEND, 0, &self.lik, &new):
                return 0
        jp = self._d2_jump(k, k + 1)
        if self._settle(self._accept(lmw + log(self.Lambda) + log(d1) - log(k + 1.0) - log(b) + jp,
                                     (new - self.lml) + log(self.Lambda) + self._log_centre(mu) + jp), new):
            self.k += 1
            return 1
        return 0

    cdef int _death_mt(self) noexcept nogil:
        """Multiple-try death, the reverse of `_birth_mt`: centre j (uniform) is removed; in the post-death state theta'
        its weight and those of K - 1 fresh candidates c_i ~ U(Omega) give the mean weight W; accepted with the plain
        death's ratio in which the likelihood ratio is replaced by 1 / W. theta' + c_i is the current state with centre
        j replaced by c_i, so each reference weight is one proposed replace: nothing is committed before the test."""
        cdef Py_ssize_t k = self.k, j
        cdef double b, dd, s, m, b0, d0, s0, m0, new = 0.0, lmw, jp
        if k == 0:
            return 0
        j = <Py_ssize_t> random_interval(self.rng, k - 1)
        self._probs(k, &b, &dd, &s, &m)
        self._probs(k - 1, &b0, &d0, &s0, &m0)
        self.lw[0] = 0.0
        if not self.prior_only:
            if propose(self.st, DELETE, self.p0 + j, &self.lik, &new):
                return 0
            self.st._reject()
            self.lw[0] = self.beta * (self.lml - new)
        lmw = self._try_candidates(1, new, REPLACE, self.p0 + j)
        jp = self._d2_jump(k, k - 1)
        if not self._accept(-lmw - (log(self.Lambda) + log(dd) - log(<double> k) - log(b0)) + jp,
                            (new - self.lml) - log(self.Lambda) - self._log_centre(self.C + j * self.d) + jp):
            return 0
        if not self.prior_only:
            propose(self.st, DELETE, self.p0 + j, &self.lik, &new)
            if not settle(self.st, True, new, &self.lml):      # the deferred accuracy test
                return 0
        memmove(self.C + j * self.d, self.C + (j + 1) * self.d, (k - 1 - j) * self.d * sizeof(double))
        self.k -= 1
        return 1

    cdef int _update_mt(self) noexcept nogil:
        """Multiple-try independence update of one centre j (uniform): K candidates c_i ~ U(Omega), c_J picked with
        probability w_J / sum w (w_i = exp(beta (l(theta with mu_j -> c_i) - l(theta)))), accepted with probability
        min(1, sum_i w_i / (1 + sum_{i<K} w(r_i))), r_1..r_{K-1} fresh references weighed in the same way (the current
        centre's weight is 1): Liu, Liang & Wong (2000) for an independence proposal, whose weights pi / q are the
        likelihood ratios here because q and the centre prior are both uniform on Omega (nbs/03_moves)."""
        cdef Py_ssize_t k = self.k, d = self.d, j, J
        cdef double lf, lb, new = 0.0
        cdef double* mu = self.tmp
        if k == 0:
            return 0
        j = <Py_ssize_t> random_interval(self.rng, k - 1)
        self.np_[4] += 1
        lf = self._try_candidates(0, self.lml, REPLACE, self.p0 + j)
        if lf == -INFINITY:
            return 0
        J = self._pick(lf)
        memcpy(mu, self.cand + J * d, d * sizeof(double))
        self.lw[0] = 0.0
        lb = self._try_candidates(1, self.lml, REPLACE, self.p0 + j)
        if not self._accept(lf - lb, lf - lb):
            return 0
        if self.prior_only:
            memcpy(self.C + j * d, mu, d * sizeof(double))
            self.na_[4] += 1
            return 1
        self._scratch(mu)
        if propose(self.st, REPLACE, self.p0 + j, &self.lik, &new):
            return 0
        if not settle(self.st, True, new, &self.lml):
            return 0
        self._move_to_end(j)
        memcpy(self.C + (k - 1) * d, mu, d * sizeof(double))
        self.na_[4] += 1
        return 1

    cdef int _birth(self) noexcept nogil:
        cdef Py_ssize_t k = self.k
        cdef double b, dd, s, m, b1, d1, s1, m1, new = 0.0, dll = 0.0, jp
        cdef double* mu = self.C + k * self.d
        if k >= self.kmax:
            return 0
        self._probs(k, &b, &dd, &s, &m)
        self._probs(k + 1, &b1, &d1, &s1, &m1)
        self._prior_centre(mu)
        if not self.prior_only:
            self._scratch(mu)
            if propose(self.st, APPEND, 0, &self.lik, &new):
                return 0
            dll = new - self.lml
        jp = self._d2_jump(k, k + 1)
        if self._settle(self._accept(self.beta * dll + log(self.Lambda) + log(d1) - log(k + 1.0) - log(b) + jp,
                                     dll + log(self.Lambda) + self._log_centre(mu) + jp), new):
            self.k += 1
            return 1
        return 0

    cdef int _death(self) noexcept nogil:
        cdef Py_ssize_t k = self.k, j
        cdef double b, dd, s, m, b0, d0, s0, m0, new = 0.0, dll = 0.0, jp
        if k == 0:
            return 0
        j = <Py_ssize_t> random_interval(self.rng, k - 1)
        self._probs(k, &b, &dd, &s, &m)
        self._probs(k - 1, &b0, &d0, &s0, &m0)
        if not self.prior_only:
            propose(self.st, DELETE, self.p0 + j, &self.lik, &new)
            dll = new - self.lml
        jp = self._d2_jump(k, k - 1)
        if self._settle(self._accept(self.beta * dll - (log(self.Lambda) + log(dd) - log(<double> k) - log(b0)) + jp,
                                     dll - log(self.Lambda) - self._log_centre(self.C + j * self.d) + jp), new):
            memmove(self.C + j * self.d, self.C + (j + 1) * self.d, (k - 1 - j) * self.d * sizeof(double))
            self.k -= 1
            return 1
        return 0

    cdef double _split_terms(self, Py_ssize_t k, int n_nn, double lcr) noexcept nogil:
        """log r_split - dll for a split from k centres (03_moves); lcr = log p(mu1) + log p(mu2) - log p(mu), the
        centre prior's ratio (-log Im when it is uniform)."""
        cdef double b, dd, s, m, b1, d1, s1, m1
        self._probs(k, &b, &dd, &s, &m)
        self._probs(k + 1, &b1, &d1, &s1, &m1)
        return (log(self.Lambda) + lcr + log(m1) - log(s) + log(<double> k * n_nn) - log(2.0 * (k + 1))
                + self.logvd + self.d * log(2.0 * self.vs))

    cdef int _split(self) noexcept nogil:
        cdef Py_ssize_t k = self.k, d = self.d, j, i
        cdef double* mu1 = self.tmp
        cdef double* mu2 = self.tmp + d
        cdef double* u = self.tmp + 2 * d
        cdef double nrm = 0.0, r, new = 0.0, dll = 0.0, lcr, jp
        cdef int n_nn
        if k == 0 or k >= self.kmax:
            return 0
        j = <Py_ssize_t> random_interval(self.rng, k - 1)
        for i in range(d):
            u[i] = random_standard_normal(self.rng)
            nrm += u[i] * u[i]
        r = pow(random_standard_uniform(self.rng), 1.0 / d) / sqrt(nrm)
        for i in range(d):
            mu1[i] = self.C[j * d + i] - self.vs * r * u[i]
            mu2[i] = self.C[j * d + i] + self.vs * r * u[i]
        if not (self._inside(mu1) and self._inside(mu2)):
            return 0
        # proposed configuration: the others in order, then mu1, mu2 (the kernel's column order)
        memcpy(self.W, self.C, j * d * sizeof(double))
        memcpy(self.W + j * d, self.C + (j + 1) * d, (k - 1 - j) * d * sizeof(double))
        memcpy(self.W + (k - 1) * d, mu1, d * sizeof(double))
        memcpy(self.W + k * d, mu2, d * sizeof(double))
        n_nn = self._n_mutual(self.W, k + 1, k - 1, k)
        if n_nn == 0:
            return 0
        # the centre prior's ratio, before the kernel's replace reorders the centres
        lcr = (self._log_centre(mu1) + self._log_centre(mu2) - self._log_centre(self.C + j * d) if self.cmix
               else -self.logvol)
        if not self.prior_only:
            if self._replace_commit(self.p0 + j, mu1):
                return 0
            self._scratch(mu2)
            if propose(self.st, APPEND, 0, &self.lik, &new):
                self._undo_replace(j)
                return 0
            dll = new - self.lml
        jp = self._d2_jump(k, k + 1)
        if self._settle(self._accept(self.beta * dll + self._split_terms(k, n_nn, lcr) + jp,
                                     dll + log(self.Lambda) + lcr + jp), new):
            memcpy(self.C, self.W, (k + 1) * d * sizeof(double))
            self.k += 1
            return 1
        if not self.prior_only:
            self._undo_replace(j)
        return 0

    cdef void _undo_replace(self, Py_ssize_t j) noexcept nogil:
        """After a committed replace of centre j, put its old centre back (as the last column)."""
        self._replace_commit(self.st.m - 1, self.C + j * self.d)   # cannot be singular: it was there before
        self._move_to_end(j)

    cdef int _merge(self) noexcept nogil:
        cdef Py_ssize_t k = self.k, d = self.d, j, nn, i, t, col
        cdef double* mu = self.tmp
        cdef double uu = 0.0, z, new = 0.0, dll = 0.0, lcr, jp
        cdef int n_nn
        if k < 2:
            return 0
        j = <Py_ssize_t> random_interval(self.rng, k - 1)
        nn = self._nn(self.C, k, j)
        for i in range(d):
            z = (self.C[nn * d + i] - self.C[j * d + i]) / (2.0 * self.vs)
            uu += z * z
            mu[i] = 0.5 * (self.C[nn * d + i] + self.C[j * d + i])
        if uu >= 1.0:
            return 0
        n_nn = self._n_mutual(self.C, k, j, nn)
        # proposed configuration: the others in order, then mu
        t = 0
        for i in range(k):
            if i != j and i != nn:
                memcpy(self.W + t * d, self.C + i * d, d * sizeof(double))
                t += 1
        memcpy(self.W + (k - 2) * d, mu, d * sizeof(double))
        lcr = (self._log_centre(self.C + j * d) + self._log_centre(self.C + nn * d) - self._log_centre(mu) if self.cmix
               else -self.logvol)
        if not self.prior_only:
            if self._replace_commit(self.p0 + j, mu):
                return 0
            col = self.p0 + (nn if nn < j else nn - 1)
            propose(self.st, DELETE, col, &self.lik, &new)
            dll = new - self.lml
        jp = self._d2_jump(k, k - 1)
        if self._settle(self._accept(self.beta * dll - self._split_terms(k - 1, n_nn, lcr) + jp,
                                     dll - log(self.Lambda) - lcr + jp), new):
            memcpy(self.C, self.W, (k - 1) * d * sizeof(double))
            self.k -= 1
            return 1
        if not self.prior_only:
            self._undo_replace(j)
        return 0

    cdef int _update(self) noexcept nogil:
        """One sweep of single-centre MH updates (uniform-on-Omega w.p. varpi, else random walk), the last centre
        first. The centres after the one proposed are then exactly those already visited (an accepted centre goes to
        the end, behind them), so the kernel's replace, which re-factorises the columns after the replaced one, works
        on trailing blocks of 0, 1, .., k - 1 columns. First to last, the accepted centres would pile up behind the
        unvisited ones: at acceptance rate a the Givens work is 1 - (1 - a) + (1 - a)^2 / 3 of k^3 against 1/3 (0.58
        against 0.33 at the robot arm's a = 1/2; nbs/05_rjmcmc)."""
        cdef Py_ssize_t k = self.k, d = self.d, pos, i
        cdef double* mu = self.tmp
        cdef double new, lcr = 0.0
        cdef int acc = 0
        for pos in range(k - 1, -1, -1):
            if random_standard_uniform(self.rng) < self.varpi:
                self._uniform_centre(mu)
            else:
                for i in range(d):
                    mu[i] = self.C[pos * d + i] + self.srw * random_standard_normal(self.rng)
            self.np_[4] += 1
            if not self._inside(mu):
                continue
            if self.cmix:   # the proposal is symmetric (uniform on the far box or a random walk): the prior's ratio
                lcr = self._log_centre(mu) - self._log_centre(self.C + pos * d)
            if self.prior_only:
                if self.cmix and not self._accept(lcr, lcr):
                    continue
                memcpy(self.C + pos * d, mu, d * sizeof(double))
                acc += 1
                self.na_[4] += 1
                continue
            self._scratch(mu)
            if propose(self.st, REPLACE, self.p0 + pos, &self.lik, &new):
                continue
            if settle(self.st, self._accept(self.beta * (new - self.lml) + lcr, new - self.lml + lcr), new,
                      &self.lml):
                self._move_to_end(pos)
                memcpy(self.C + (k - 1) * d, mu, d * sizeof(double))
                acc += 1
                self.na_[4] += 1
        return acc > 0


cdef class RJCore(_RJDimensionMoves):
    """State and loop of the reversible-jump sampler; driven in chunks from `rbf_bayes.rjmcmc`. Built in rooms, each a
    base class with one job: `_RJState` (memory) -> `_RJModel` (prior, MH test, hyperparameters) -> `_RJProbit` (latent
    utilities) -> `_RJLearnedBasis` (scales, inputs, type) -> `_RJDimensionMoves` (the moves on the centres) -> `RJCore`
    (the iteration through the move table, chunks, records and snapshots, read-only views)."""

    cdef void _iterate(self) noexcept nogil:
        """One iteration: a move drawn with eq. 22's probabilities (birth, death, split, merge; else an update of
        the centres, or nothing at k = 0), made by its function in the table; then the components after the move, the
        hyperparameters, and the log posterior."""
        cdef double[N_RJ_MOVES] p
        cdef double u, cum = 0.0
        cdef Py_ssize_t k = self.k
        cdef int j, mv = STAY
        self._probs(k, &p[<int> BIRTH], &p[<int> DEATH], &p[<int> SPLIT], &p[<int> MERGE])
        u = random_standard_uniform(self.rng)
        for j in range(<int> UPDATE):       # the dimension moves, in code order: u < b, u < b + d, ...
            cum += p[j]
            if u < cum:
                mv = j
                break
        else:
            if self.en_u and k > 0:
                mv = UPDATE
        self.last_move = mv
        self.last_acc = 0 if mv == STAY else self.moves[mv](self)
        if mv < UPDATE:
            self.np_[mv] += 1
            self.na_[mv] += self.last_acc
        for j in range(self.n_after):
            self.after[j](self)
        self._hypers()
        self.logpost = self.lml + self._log_prior()
        self._track_best()

    def run(self, Py_ssize_t n, Records out, Py_ssize_t offset=0, const double[::1] temps=None):
        """Run n iterations, writing per-iteration scalars to rows offset .. offset + n - 1 of `out`; with `temps`,
        iteration i runs at temperature temps[i] (annealed acceptance, eq. 38)."""
        cdef Py_ssize_t i
        cdef bint anneal = temps is not None
        if anneal and temps.shape[0] < offset + n:
            raise ValueError("temps is too short")
        if offset < 0 or offset + n > out.n:
            raise ValueError("output arrays are too short")
        if out.d2.shape[1] != self.c:
            raise ValueError("Records: delta^2 and sigma^2 need one column per output")
        with self._lock:
            self.st.defer_acc = True        # accuracy tests only on accepted proposals (`settle`)
            try:
                with nogil:
                    for i in range(offset, offset + n):
                        if anneal:
                            self.inv_t1 = 1.0 / temps[i] - 1.0
                        self._iterate()
                        self._record(i, out)
                        if self.probit:
                            self._latent_step()
            finally:
                self.st.defer_acc = False

    cdef void _record(self, Py_ssize_t i, Records out) noexcept nogil:
        "Write iteration i's scalars (k, log posterior, Lambda, delta^2, sigma^2, move, accepted) to row i of `out`."
        cdef Py_ssize_t o
        out.k[i] = self.k
        out.lp[i] = self.logpost
        out.lam[i] = self.Lambda
        for o in range(self.c):
            out.d2[i, o] = self.delta2_buf[o]
            out.s2[i, o] = self.sigma2_buf[o]
        out.mv[i] = self.last_move
        out.acc[i] = self.last_acc

    cdef inline Py_ssize_t _row(self, Py_ssize_t i) noexcept nogil:
        """The row of design column i in the full layout [1, x_1 .. x_d, phi_1 .. phi_k] of the snapshots (with
        selected inputs, the design holds only the included inputs' linear columns)."""
        if i == 0:
            return 0
        if i < self.p0:
            return 1 + self.lin[i - 1]
        return 1 + self.d + i - self.p0

    cdef void _snapshot_into(self, double* cen, double* h, double* a, double* zbuf, double* hbuf,
                             double* sc) noexcept nogil:
        """The state's snapshot without the GIL: centres (k, d) to cen; posterior-mean coefficients (1 + d + k, c) to h
        (the arithmetic of `snapshot`: s * L'^{-1} z_o); the last coefficient draw (1 + d + k, c) to a. Rows in the full
        layout: an excluded input's linear coefficient is 0. zbuf, hbuf: m_max + 1 each."""
        cdef Py_ssize_t i, o, r, m = self.st.m, M1 = self.st.M1, mf = 1 + self.d + self.k
        cdef double s
        for i in range(self.k * self.d):
            cen[i] = self.C[i]
        for i in range(self.d):
            sc[i] = self.sc[i]
        if self.prior_only:
            return
        for i in range(mf * self.c):
            h[i] = 0.0
            a[i] = 0.0
        for o in range(self.c):
            s = self.delta2_buf[o] / (1.0 + self.delta2_buf[o]) if self.gprior else 1.0
            for i in range(m):
                zbuf[i] = self.st.Z[o * M1 + i]
            if m:
                self.st._back_solve(self.st.ofac[o], zbuf, hbuf)
            for i in range(m):
                r = self._row(i)
                h[r * self.c + o] = s * hbuf[i]
                a[r * self.c + o] = self.alpha[o * M1 + i]

    def run_kept(self, Py_ssize_t n, Records out, Py_ssize_t offset, Py_ssize_t next_keep, Py_ssize_t thin,
                 Snapshots snaps):
        """`run`, plus a snapshot (as `snapshot`) after every iteration i >= next_keep with (i - next_keep) % thin == 0,
        all without the GIL: snapshot s appends its k centres to the rows of snaps.cen and its m coefficient rows to
        snaps.h and snaps.a, and snaps.sizes[s] = (k, m), snaps.sc[s] = the per-input scales (all 1 unless they are
        learned; 0 for an excluded input), snaps.kind[s] (if given) = the basis code. Returns the number of snapshots.
        The buffers must hold every snapshot of the n iterations (k <= kmax, m <= m_max rows each); the arithmetic is
        `snapshot`'s, so the draws are unchanged."""
        cdef Py_ssize_t rc = 0
        if thin < 1:
            raise ValueError("thin must be >= 1")
        if offset < 0 or offset + n > out.n:
            raise ValueError("output arrays are too short")
        snaps.check(self.d, self.c, self.kmax, self.st.m_max)
        zb = np.zeros(self.st.m_max + 1)
        hb = np.zeros(self.st.m_max + 1)
        cdef double[::1] zv = zb
        cdef double[::1] hv = hb
        cdef Py_ssize_t[3] cnt
        cnt[0] = cnt[1] = cnt[2] = 0
        with self._lock:
            self.st.defer_acc = True        # accuracy tests only on accepted proposals (`settle`)
            try:
                with nogil:
                    rc = self._kept_loop(offset, n, out, next_keep, thin, snaps, zv, hv, cnt)
                if rc:
                    raise ValueError("more snapshots than the snapshot buffers hold")
            finally:
                self.st.defer_acc = False
        return cnt[0]

    cdef int _kept_loop(self, Py_ssize_t offset, Py_ssize_t n, Records out, Py_ssize_t next_keep, Py_ssize_t thin,
                        Snapshots snaps, double[::1] zv, double[::1] hv, Py_ssize_t* cnt) noexcept nogil:
        """Iterations offset .. offset + n - 1 with their records and snapshots (`run_kept`); cnt = (snapshots, centre
        rows, coefficient rows) written so far, advanced. 1 if the snapshot buffers are full."""
        cdef Py_ssize_t i, cap = snaps.cap
        for i in range(offset, offset + n):
            self._iterate()
            self._record(i, out)
            if self.probit:
                self._latent_step()
            if i >= next_keep and (i - next_keep) % thin == 0:
                if cnt[0] >= cap:
                    return 1
                self._snapshot_into(&snaps.cen[cnt[1], 0] if self.k else &snaps.cen[0, 0],
                                    &snaps.h[cnt[2], 0], &snaps.a[cnt[2], 0], &zv[0], &hv[0], &snaps.sc[cnt[0], 0])
                snaps.sizes[cnt[0], 0] = self.k
                snaps.sizes[cnt[0], 1] = 0 if self.prior_only else 1 + self.d + self.k
                if snaps.has_kind:
                    snaps.kind[cnt[0]] = self.kind
                cnt[1] += self.k
                cnt[2] += snaps.sizes[cnt[0], 1]
                cnt[0] += 1
        return 0

    cdef void _run_quiet(self, Py_ssize_t n) noexcept nogil:
        """n iterations that record nothing (a hot replica of a tempered ladder)."""
        cdef Py_ssize_t _i
        for _i in range(n):
            self._iterate()
            if self.probit:
                self._latent_step()

    def set_targets(self, Y):
        """Replace the targets, e.g. by the latent z of data augmentation (probit): D'Y and y'y from the stored
        columns, z and e against the factors as they stand (O(N m c + c m^2)), then the marginal likelihood and log
        posterior."""
        self.st.set_targets(Y)
        if not self.prior_only:
            self.lml = log_ml(&self.lik, self.st, False)
        self.logpost = self.lml + self._log_prior()

    def _rows(self):
        "The full-layout row of each design column (`_row`)."
        return np.array([self._row(i) for i in range(self.st.m)], dtype=np.intp)

    def coef_draw(self):
        """The coefficient draw alpha (1 + d + k, c) of the current state (drawn at the end of the last iteration),
        in the full layout (an excluded input's linear coefficient is 0)."""
        out = np.zeros((1 + self.d + self.k, self.c))
        out[self._rows()] = self._alpha[:, :self.st.m].T
        return out

    def snapshot(self):
        """(centres (k, d), posterior-mean coefficients h (1 + d + k, c), last coefficient draw (1 + d + k, c)), in the
        full layout."""
        cdef Py_ssize_t o
        cdef double s
        centres = self._C[:self.k].copy()
        if self.prior_only:
            return centres, np.zeros((0, self.c)), np.zeros((0, self.c))
        h = np.zeros((1 + self.d + self.k, self.c))
        rows = self._rows()
        for o in range(self.c):
            s = self.delta2_buf[o] / (1.0 + self.delta2_buf[o]) if self.gprior else 1.0
            h[rows, o] = s * self.st.posterior_coef(o)[1]
        return centres, h, self.coef_draw()

    @property
    def scales(self):
        """The current per-input scales s = exp(theta) (all 1 unless config.learn_scales; 0 for an excluded input)."""
        return self._sc.copy()

    @property
    def inputs(self):
        """The current inclusion mask of the inputs (all True unless config.select_inputs)."""
        return self._inc.astype(bool)

    @property
    def basis(self):
        """The current basis type (its name)."""
        from rbf_bayes.basis import BASES
        return BASES[self.kind]

    @property
    def factor(self):
        """The core's GramFactor (its incremental Cholesky state)."""
        return self.st

    @property
    def best_centres(self):
        """Centres of the configuration with the largest log f_S seen (log posterior + log k!)."""
        return self._best[:self.best_k].copy()

    @property
    def best_scales(self):
        """Per-input scales of the configuration with the largest log f_S seen (all 1 unless config.learn_scales)."""
        return self._best_sc.copy()

    @property
    def centres(self):
        return self._C[:self.k].copy()

    @property
    def delta2(self):
        return self._d2.copy()

    @property
    def sigma2(self):
        return self._s2.copy()

    @property
    def counts(self):
        """(proposed, accepted) per move: birth, death, split, merge, update (per centre)."""
        return (np.array([self.np_[i] for i in range(N_RJ_MOVES)]), np.array([self.na_[i] for i in range(N_RJ_MOVES)]))


cdef inline void _add_steps(RJCore c, int64_t* pre, int64_t* post, int64_t* into) noexcept:
    "into += the learned-basis step counts of core c now (post, scratch) minus pre: one rung's share of a block."
    cdef Py_ssize_t j
    c._step_counts(post)
    for j in range(2 * N_STEPS):
        into[j] += post[j] - pre[j]


def ladder_run(list cores, Py_ssize_t[::1] rung, double[::1] betas, double[::1] log_gap, int64_t[::1] n_swap,
               int64_t[::1] n_swap_acc, double[::1] p_swap, int64_t rounds, Py_ssize_t n, Py_ssize_t swap_every,
               Py_ssize_t adapt_until, double target, int64_t[::1] cold_prop, int64_t[::1] cold_acc,
               int64_t[:, ::1] rung_steps, Records out, Py_ssize_t offset, Py_ssize_t next_keep, Py_ssize_t thin,
               Snapshots snaps):
    """Replica exchange for iterations offset .. offset + n - 1 (nbs/05_rjmcmc, "Tempering"): in blocks of swap_every
    iterations, the core at rung 0 (power 1) runs `run_kept`'s loop (records and snapshots), the others run quietly,
    each with the GIL released; then a round of swaps (`_core.swap_round`: neighbouring rungs of this round's parity
    propose to swap their powers, accepted with probability min(1, exp((beta_r - beta_{r+1}) (l_{r+1} - l_r))); while
    offset + (iterations done) < adapt_until the log gaps of T = 1 / beta move towards the target acceptance). The cores
    share one bit generator (the swap uniforms come from it too). rung, betas, log_gap, the swap counters, the cold
    chain's move counters and rung_steps (R, 2 N_STEPS: row r the learned-basis steps' (proposed, accepted) of the
    replicas while they held rung r, `step_counts`' order) are updated in place. Returns (snapshots written, rounds)."""
    cdef Py_ssize_t R = len(cores), done = 0, blk, r, j
    cdef RJCore cold, a
    cdef int rc = 0
    cdef bint adapting
    cdef int64_t[N_RJ_MOVES] pre_p, pre_a
    cdef int64_t[2 * N_STEPS] pre_s, post_s
    cdef Py_ssize_t[3] cnt
    cold = <RJCore> cores[rung[0]]
    if thin < 1 or swap_every < 1:
        raise ValueError("thin and swap_every must be >= 1")
    if offset < 0 or offset + n > out.n:
        raise ValueError("output arrays are too short")
    snaps.check(cold.d, cold.c, cold.kmax, cold.st.m_max)
    if betas.shape[0] != R or rung.shape[0] != R or log_gap.shape[0] != R - 1 or n_swap.shape[0] != R - 1 \
            or n_swap_acc.shape[0] != R - 1 or p_swap.shape[0] != R - 1 or rung_steps.shape[0] != R \
            or rung_steps.shape[1] != 2 * N_STEPS:
        raise ValueError("ladder arrays do not match the number of cores")
    zb = np.zeros(cold.st.m_max + 1)
    hb = np.zeros(cold.st.m_max + 1)
    cdef double[::1] zv = zb
    cdef double[::1] hv = hb
    cdef double[::1] lv = np.empty(R)   # each core's log ML for the round of swaps
    cnt[0] = cnt[1] = cnt[2] = 0
    with cold._lock:
        for r in range(R):
            (<RJCore> cores[r]).st.defer_acc = True
        try:
            while done < n:
                blk = min(swap_every, n - done)
                adapting = offset + done < adapt_until
                cold = <RJCore> cores[rung[0]]
                for j in range(N_RJ_MOVES):
                    pre_p[j] = cold.np_[j]
                    pre_a[j] = cold.na_[j]
                cold._step_counts(&pre_s[0])
                with nogil:
                    rc = cold._kept_loop(offset + done, blk, out, next_keep, thin, snaps, zv, hv, cnt)
                if rc:
                    raise ValueError("more snapshots than the snapshot buffers hold")
                for j in range(N_RJ_MOVES):
                    cold_prop[j] += cold.np_[j] - pre_p[j]
                    cold_acc[j] += cold.na_[j] - pre_a[j]
                _add_steps(cold, &pre_s[0], &post_s[0], &rung_steps[0, 0])
                for r in range(1, R):
                    a = <RJCore> cores[rung[r]]
                    a._step_counts(&pre_s[0])
                    with nogil:
                        a._run_quiet(blk)
                    _add_steps(a, &pre_s[0], &post_s[0], &rung_steps[r, 0])
                done += blk
                for r in range(R):
                    lv[r] = (<RJCore> cores[r]).lml
                swap_round(R, rounds, &lv[0], &rung[0], &betas[0], &log_gap[0], &n_swap[0], &n_swap_acc[0],
                           &p_swap[0], adapting, target, cold.rng)
                rounds += 1
                for r in range(R):
                    (<RJCore> cores[rung[r]]).beta = betas[r]
        finally:
            for r in range(R):
                (<RJCore> cores[r]).st.defer_acc = False
    return cnt[0], rounds
