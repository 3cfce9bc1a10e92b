/* The bases in C: the registry every C loop evaluates phi from, and the loops of rbf_bayes/_kernel.pyx
   (declared there in `cdef extern from "_basis_loops.h"`). Included by the generated _kernel.c after Python.h
   (Py_ssize_t). */
#ifndef RBF_BASIS_LOOPS_H
#define RBF_BASIS_LOOPS_H
#include <math.h>

/* THE BASIS REGISTRY. One line per basis: its name (as in rbf_bayes.basis.BASES, in the same order: the position
   is the basis code) and phi as an expression of the squared distance r2 >= 0 and the squared width w2. Adding a
   basis is one line here plus its NumPy twin and derivation in nbs/00_basis.ipynb; the scalar function and the
   vector loop below, the codes and the names all follow from this list. `import rbf_bayes` checks the names against
   BASES and every basis's values against `basis.basis_from_sq` (`_kernel._check_basis_dispatch`): a basis on one
   side only is an ImportError, never another basis's values. */
#define RBF_BASES(X)                                                    \
    X(linear,       sqrt(r2))                                           \
    X(cubic,        r2 * sqrt(r2))                                      \
    X(thin_plate,   r2 <= 0.0 ? 0.0 : 0.5 * r2 * log(r2))               \
    X(multiquadric, sqrt(r2 + w2))                                      \
    X(gaussian,     exp(-r2 / w2))
/* thin_plate: rho^2 ln rho = (rho^2 / 2) ln rho^2, and its limit 0 at rho = 0 */

enum {
#define RBF_X(name, expr) RBF_BASIS_##name,
    RBF_BASES(RBF_X)
#undef RBF_X
    RBF_N_BASES
};

static const char* const rbf_basis_names[] = {
#define RBF_X(name, expr) #name,
    RBF_BASES(RBF_X)
#undef RBF_X
};

/* The loops are compiled for AVX-512 and AVX2 as well as the baseline; the loader picks the best the processor has
   (GCC function multiversioning). sqrt, +, * and / are correctly rounded in every instruction set, setup.py turns
   off contraction into FMA, and exp / log are the same libm calls in every clone (no vector math without
   -ffast-math), so the values are the same bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define RBF_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RBF_CLONES
#endif
/* short copy loops stay loops: a call to memcpy per column costs more than the copy (_gram_loops.h's loop nests) */
#if defined(__GNUC__) && !defined(__clang__)
#define RBF_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define RBF_NO_LIBCALLS
#endif

/* phi(r2) for basis `kind`; NaN for a code that is not in the registry. */
static inline double rbf_phi_r2(double r2, int kind, double w2) {
    switch (kind) {
#define RBF_X(name, expr) case RBF_BASIS_##name: return (expr);
    RBF_BASES(RBF_X)
#undef RBF_X
    }
    return NAN;
}

/* v[i] <- phi(v[i]) for basis `kind`, the basis chosen once outside the loop (rbf_phi_r2's formulas exactly). */
RBF_CLONES static void rbf_phi_inplace(double* v, Py_ssize_t n, int kind, double w2) {
    switch (kind) {
#define RBF_X(name, expr) \
    case RBF_BASIS_##name: for (Py_ssize_t i = 0; i < n; i++) { double r2 = v[i]; v[i] = (expr); } return;
    RBF_BASES(RBF_X)
#undef RBF_X
    }
    (void) w2;
    for (Py_ssize_t i = 0; i < n; i++) v[i] = NAN;
}

/* out[i] = ||diag(s)(x_i - mu)||^2 from the transposed inputs xT (d, n), C-contiguous: input by input over all
   rows (every load contiguous, the arithmetic vectorised across rows), each row's sum in input order
   0 + t_0^2 + t_1^2 + ..., the order of a row-wise loop, so the values are those of one bit for bit */
RBF_CLONES static void rbf_sqdist_scaled_t(const double* xT, Py_ssize_t n, Py_ssize_t d, const double* mu,
                                           const double* s, double* out) {
    for (Py_ssize_t i = 0; i < n; i++) out[i] = 0.0;
    for (Py_ssize_t j = 0; j < d; j++) {
        const double* xj = xT + j * n;
        double m = mu[j], sj = s[j];
        for (Py_ssize_t i = 0; i < n; i++) {
            double t = (xj[i] - m) * sj;
            out[i] += t * t;
        }
    }
}

/* squared distances of the rows of a C-contiguous (n, 2) x to the centre (m0, m1) */
RBF_CLONES static void rbf_sqdist2(const double* x, Py_ssize_t n, double m0, double m1, double* out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        double t0 = x[2 * i] - m0, t1 = x[2 * i + 1] - m1;
        out[i] = t0 * t0 + t1 * t1;
    }
}
#endif
