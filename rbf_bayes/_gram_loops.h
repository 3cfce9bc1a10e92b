/* The factor algebra's inner loops of rbf_bayes/_kernel.pyx (`GramFactor`; declared there in
   `cdef extern from "_gram_loops.h"`). Included by the generated _kernel.c after Python.h and _basis_loops.h
   (RBF_CLONES, RBF_NO_LIBCALLS). */
#ifndef RBF_GRAM_LOOPS_H
#define RBF_GRAM_LOOPS_H
/* The factor algebra's inner loops (`GramFactor`), cloned like the bases' loops above. The factors are stored by
   columns, so every inner loop here runs down a column: element-wise multiplies and adds, no reductions, which
   vectorise to the same roundings at any width (and no fused multiply-adds: -ffp-contract=off). Each function is
   the loop nest of the GramFactor method named in its comment, operation for operation. */
/* out[i] = A_i . v (n terms) for the m rows A_i of A stored lda apart: four rows at a time, each summed in eight
   lanes (element t into lane t mod 8, the tail of n mod 8 terms apart), the lanes added in a fixed tree, so the
   result is the same bit for bit in every clone (and on every processor, unlike a BLAS dgemv) */
/* out[i] = A_i . v (n terms) for the m rows A_i of A stored lda apart. Four rows at a time, each summed in eight
   lanes (element t into lane t mod 8; the n mod 8 last terms apart), the lanes added in a fixed tree: the same
   sums in the same order whatever the vector width, so the result is the same bit for bit on every processor
   (unlike a BLAS dgemv). One body, written with GCC vectors of W doubles (8 / W of them per lane group),
   compiled for W = 8 (AVX-512), 4 (AVX2) and 2 (SSE2, the x86-64 baseline); rbf_gemv_t picks the widest the
   processor has, once. A vector type wider than the target's registers would be split through memory, which is
   why each width has its own function rather than target_clones. */
#define RBF_GEMV_BODY(W)                                                                                      \
    typedef double vt __attribute__((vector_size(8 * (W))));                                                  \
    enum { NV = 8 / (W) };                                                                                    \
    Py_ssize_t i = 0, nb = n - n % 8;                                                                         \
    for (; i + 4 <= m; i += 4) {                                                                              \
        const double* a0 = A + i * lda;                                                                      \
        vt s[4][NV], w, x;                                                                                    \
        double e[4] = {0.0, 0.0, 0.0, 0.0}, lane[8];                                                         \
        __builtin_memset(s, 0, sizeof s);                                                                     \
        for (Py_ssize_t t = 0; t < nb; t += 8) {                                                              \
            for (int q = 0; q < NV; q++) {                                                                    \
                __builtin_memcpy(&w, v + t + q * (W), sizeof w);                                              \
                for (int r = 0; r < 4; r++) {                                                                 \
                    __builtin_memcpy(&x, a0 + r * lda + t + q * (W), sizeof x);                               \
                    s[r][q] += x * w;                                                                         \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        for (Py_ssize_t t = nb; t < n; t++)                                                                   \
            for (int r = 0; r < 4; r++) e[r] += a0[r * lda + t] * v[t];                                       \
        for (int r = 0; r < 4; r++) {                                                                         \
            __builtin_memcpy(lane, s[r], sizeof lane);                                                        \
            out[i + r] = RBF_HSUM8(lane) + e[r];                                                              \
        }                                                                                                     \
    }                                                                                                         \
    for (; i < m; i++) {                                                                                      \
        const double* a0 = A + i * lda;                                                                      \
        vt s[NV], w, x;                                                                                       \
        double e = 0.0, lane[8];                                                                              \
        __builtin_memset(s, 0, sizeof s);                                                                     \
        for (Py_ssize_t t = 0; t < nb; t += 8) {                                                              \
            for (int q = 0; q < NV; q++) {                                                                    \
                __builtin_memcpy(&w, v + t + q * (W), sizeof w);                                              \
                __builtin_memcpy(&x, a0 + t + q * (W), sizeof x);                                             \
                s[q] += x * w;                                                                                \
            }                                                                                                 \
        }                                                                                                     \
        for (Py_ssize_t t = nb; t < n; t++) e += a0[t] * v[t];                                                \
        __builtin_memcpy(lane, s, sizeof lane);                                                               \
        out[i] = RBF_HSUM8(lane) + e;                                                                         \
    }
#define RBF_HSUM8(s) ((((s)[0] + (s)[4]) + ((s)[2] + (s)[6])) + (((s)[1] + (s)[5]) + ((s)[3] + (s)[7])))
#define RBF_GEMV_ARGS const double* __restrict A, Py_ssize_t lda, Py_ssize_t m, const double* __restrict v, \
                      Py_ssize_t n, double* __restrict out
typedef void (*rbf_gemv_fn)(RBF_GEMV_ARGS);
static void rbf_gemv_t2(RBF_GEMV_ARGS) { RBF_GEMV_BODY(2) }
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target("avx2"))) static void rbf_gemv_t4(RBF_GEMV_ARGS) { RBF_GEMV_BODY(4) }
__attribute__((target("avx512f"))) static void rbf_gemv_t8(RBF_GEMV_ARGS) { RBF_GEMV_BODY(8) }
static int rbf_gemv_widest(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? 8 : __builtin_cpu_supports("avx2") ? 4 : 2;
}
#else
#define rbf_gemv_t4 rbf_gemv_t2
#define rbf_gemv_t8 rbf_gemv_t2
static int rbf_gemv_widest(void) { return 2; }
#endif
static rbf_gemv_fn rbf_gemv_pick(int w) { return w == 8 ? rbf_gemv_t8 : w == 4 ? rbf_gemv_t4 : rbf_gemv_t2; }
static rbf_gemv_fn rbf_gemv_best = rbf_gemv_t2;
static void rbf_gemv_init(void) { rbf_gemv_best = rbf_gemv_pick(rbf_gemv_widest()); }   /* at import */
static void rbf_gemv_t(RBF_GEMV_ARGS) { rbf_gemv_best(A, lda, m, v, n, out); }
/* _new_rows: forward substitution of the new row n of every factor, built in rows + f M1 (on entry g),
   with inv + f M1 the reciprocal diagonals */
RBF_CLONES static void rbf_forward_rows(const double* __restrict Lb, double* __restrict rows,
                                        const double* __restrict inv, Py_ssize_t q, Py_ssize_t S,
                                        Py_ssize_t M1, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        for (Py_ssize_t f = 0; f < q; f++) {
            const double* col = Lb + f * S + k * M1;
            double* row = rows + f * M1;
            double v = row[k] * inv[f * M1 + k];
            row[k] = v;
            for (Py_ssize_t i = k + 1; i < n; i++) row[i] -= col[i] * v;
        }
    }
}
/* _downdate_copy, one loop nest: every factor f in [0, q) of Lp <- L without row and column j (n = m - 1 columns
   left), every output's z likewise, and, if rows is not NULL, the forward substitution of a new row n (`_new_rows`:
   rows + f M1 holds g on entry). Step k (0 <= k < n) makes Lp's column k: below j a copy of L's without row j
   (rows below i0 are equal already), from j on L's column k + 1 rotated by x (xq + f M1, entries k - j; one
   Givens rotation c = a / r, s = x_k / r per column, the reciprocal new diagonal left in rq + f M1), and then
   takes column k's step of the two substitutions that read it: z (Zp_o[:j] = Z_o[:j]; the rest from D'y_o
   without row j, B[(i + 1) c + o], less each column's share) and the new rows. Three kinds of independent
   dependency chains (rotations, z, rows; one of each per factor or output) in one pass, which the processor
   overlaps; each chain's operations and their order are those of the three loop nests run one after another. */
RBF_CLONES RBF_NO_LIBCALLS static void rbf_downdate(
        const double* __restrict L, double* __restrict Lp, double* __restrict xq, double* __restrict rq,
        double* __restrict rows, const double* __restrict g, const double* __restrict Z, double* __restrict Zp,
        const double* __restrict B, const Py_ssize_t* __restrict ofac, Py_ssize_t q, Py_ssize_t c, Py_ssize_t S,
        Py_ssize_t M1, Py_ssize_t j, Py_ssize_t n, Py_ssize_t i0) {
    for (Py_ssize_t f = 0; f < q; f++) {
        const double* xs = L + f * S + j * M1 + j + 1;              /* L's column j below the diagonal */
        for (Py_ssize_t i = 0; i < n - j; i++) xq[f * M1 + i] = xs[i];
        if (rows) for (Py_ssize_t i = 0; i < n; i++) rows[f * M1 + i] = g[i];
    }
    for (Py_ssize_t o = 0; o < c; o++) {
        double* zp = Zp + o * M1;
        for (Py_ssize_t i = 0; i < j; i++) zp[i] = Z[o * M1 + i];
        for (Py_ssize_t i = j; i < n; i++) zp[i] = B[(i + 1) * c + o];
    }
    for (Py_ssize_t k = 0; k < j; k++) {
        Py_ssize_t a0 = i0 > k ? i0 : k;
        for (Py_ssize_t f = 0; f < q; f++) {
            const double* src = L + f * S + k * M1;
            double* dst = Lp + f * S + k * M1;
            for (Py_ssize_t i = a0; i < j; i++) dst[i] = src[i];
            for (Py_ssize_t i = j; i < n; i++) dst[i] = src[i + 1];
        }
        for (Py_ssize_t o = 0; o < c; o++) {
            const double* col = Lp + ofac[o] * S + k * M1;
            double* zp = Zp + o * M1;
            double t = zp[k];
            for (Py_ssize_t i = j; i < n; i++) zp[i] -= col[i] * t;
        }
        if (rows) {
            for (Py_ssize_t f = 0; f < q; f++) {
                const double* col = Lp + f * S + k * M1;
                double* row = rows + f * M1;
                double v = row[k] * (1.0 / col[k]);
                row[k] = v;
                for (Py_ssize_t i = k + 1; i < n; i++) row[i] -= col[i] * v;
            }
        }
    }
    for (Py_ssize_t k = j; k < n; k++) {
        for (Py_ssize_t f = 0; f < q; f++) {
            const double* src = L + f * S + (k + 1) * M1 + 1 + k;   /* src[i] = L[k + 1 + i + 1, k + 1] */
            double* dst = Lp + f * S + k * M1 + k;
            double* x = xq + f * M1 + (k - j);
            double a = src[0], xk = x[0];
            double r = sqrt(a * a + xk * xk);
            double ri = 1.0 / r;
            double cth = a * ri, sn = xk * ri;
            rq[f * M1 + k - j] = ri;
            dst[0] = r;
            for (Py_ssize_t i = 1; i < n - k; i++) {
                double t = src[i], xi = x[i];
                dst[i] = cth * t + sn * xi;
                x[i] = cth * xi - sn * t;
            }
        }
        for (Py_ssize_t o = 0; o < c; o++) {
            const double* col = Lp + ofac[o] * S + k * M1;
            double* zp = Zp + o * M1;
            double t = zp[k] * rq[ofac[o] * M1 + k - j];
            zp[k] = t;
            for (Py_ssize_t i = k + 1; i < n; i++) zp[i] -= col[i] * t;
        }
        if (rows) {
            for (Py_ssize_t f = 0; f < q; f++) {
                const double* col = Lp + f * S + k * M1;
                double* row = rows + f * M1;
                double v = row[k] * rq[f * M1 + k - j];
                row[k] = v;
                for (Py_ssize_t i = k + 1; i < n; i++) row[i] -= col[i] * v;
            }
        }
    }
}
/* _inaccurate, one output: sum_i sd_i |h_i| with h = L'^{-1} z (m rows), sd_i = sqrt(dg_i + r); the reciprocal
   diagonals and the square roots first (vectorised, off the dependency chain), then the column-oriented
   back-substitution (h_i known, row i of L times h_i leaves h[:i]: independent updates), in h, inv, sd */
RBF_CLONES static double rbf_coef_weight(const double* __restrict L, const double* __restrict z,
                                         const double* __restrict dg, double r, Py_ssize_t M1, Py_ssize_t m,
                                         double* __restrict h, double* __restrict inv, double* __restrict sd) {
    double acc = 0.0;
    for (Py_ssize_t i = 0; i < m; i++) inv[i] = 1.0 / L[i * M1 + i];
    for (Py_ssize_t i = 0; i < m; i++) sd[i] = sqrt(dg[i] + r);
    for (Py_ssize_t i = 0; i < m; i++) h[i] = z[i];
    for (Py_ssize_t i = m - 1; i >= 0; i--) {
        double v = h[i] * inv[i];
        h[i] = v;
        for (Py_ssize_t t = 0; t < i; t++) h[t] -= L[t * M1 + i] * v;
        acc += sd[i] * fabs(v);
    }
    return acc;
}
/* _chol: the Cholesky of G + ridge_f I (m x m, stride M1) for f0 <= f < f1 into Wb + f S by columns. -1, or the
   first factor whose pivot fails the relative test (tol) or the floor (flo (gmax + ridge_f)) */
RBF_CLONES static Py_ssize_t rbf_chol(const double* __restrict G, double* __restrict Wb,
                                      const double* __restrict ridge, Py_ssize_t m, Py_ssize_t f0,
                                      Py_ssize_t f1, Py_ssize_t S, Py_ssize_t M1, double tol, double flo,
                                      double gmax) {
    for (Py_ssize_t f = f0; f < f1; f++) {
        double* W = Wb + f * S;
        for (Py_ssize_t k = 0; k < m; k++) {
            for (Py_ssize_t i = k; i < m; i++) W[k * M1 + i] = G[k * M1 + i];
            W[k * M1 + k] += ridge[f];
        }
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        for (Py_ssize_t f = f0; f < f1; f++) {
            double* col = Wb + f * S + k * M1;
            double r = ridge[f], s = col[k];
            if (!(s > tol * (G[k * M1 + k] + r)) || !(s > flo * (gmax + r))) return f;
            s = sqrt(s);
            col[k] = s;
            double v = 1.0 / s;
            for (Py_ssize_t i = k + 1; i < m; i++) col[i] *= v;
        }
        for (Py_ssize_t f = f0; f < f1; f++) {
            double* W = Wb + f * S;
            const double* col = W + k * M1;
            for (Py_ssize_t t = k + 1; t < m; t++) {
                double v = col[t];
                double* dst = W + t * M1;
                for (Py_ssize_t i = t; i < m; i++) dst[i] -= col[i] * v;
            }
        }
    }
    return -1;
}
#endif
