/* The bases in C: the registry every C loop evaluates phi from, and the loops of rbf_bayes/_kernel.pyx
   (declared there in `cdef extern from "_basis_loops.h"`). Included by the generated _kernel.c after Python.h
   (Py_ssize_t). */
#ifndef RBF_BASIS_LOOPS_H
#define RBF_BASIS_LOOPS_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) in plain IEEE arithmetic, so that the compiler vectorises the Gaussian's loop (a call to libm's exp does not
   vectorise) and every clone computes the same bits (+, -, * and correctly rounded; no FMA: setup.py). Derived in
   nbs/00_basis.ipynb ("The Gaussian's exp in C"): x = n ln 2 + r with n = round(x / ln 2) (the 1.5 * 2^52 shift rounds
   to nearest) and |r| <= ln 2 / 2 (Cody & Waite's two-part ln 2: n * ln2_hi is exact for |n| < 2^11), e^r by its Taylor
   polynomial of degree 13 (truncation below 4e-18 relative) in Horner form, and 2^n built in the exponent bits.
   Within 1 ulp of the correctly rounded value (checked at import against libm's exp, and in 00_basis against
   mpmath). Domain: x <= 709 (every use here is the Gaussian's -r2 / w2 <= 0); below -708 it returns 0 where libm
   gives a subnormal (< 3.3e-308); NaN in, NaN out. */
static inline double rbf_exp(double x) {
    const double log2e = 1.4426950408889634074, shift = 6755399441055744.0;
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    double xc = x < -708.0 ? -708.0 : x;
    double t = xc * log2e + shift;
    double n = t - shift;
    double r = (xc - n * ln2_hi) - n * ln2_lo;
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int64_t tb; memcpy(&tb, &t, sizeof tb);                       /* t = shift + n exactly: its low bits are n */
    int64_t sb = (tb - (int64_t)0x4338000000000000LL + 1023) << 52;  /* the bits of 2^n (n >= -1021 here) */
    double s; memcpy(&s, &sb, sizeof s);
    return x < -708.0 ? 0.0 : p * s;
}

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
    X(gaussian,     rbf_exp(-r2 / w2))
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
   off contraction into FMA, the Gaussian's exp is rbf_exp (plain arithmetic, above) and log is the same libm call in
   every clone (no vector math without -ffast-math), so the values are the same bit for bit. */
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

/* v[i] <- phi(v[i]) for basis `kind`, the basis chosen once outside the loop (rbf_phi_r2's formulas exactly). The
   Gaussian's loop vectorises only with -fno-trapping-math (setup.py): otherwise GCC keeps rbf_exp's x < -708 tests
   as branches (a compare may raise a flag) and runs the loop one element at a time. */
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
   0 + t_0^2 + t_1^2 + ..., the order of a row-wise loop, so the values are those of one bit for bit. An input with
   s_j = 0 (left out by input selection) is skipped: its terms are +0 (finite inputs), and adding +0 to a sum >= 0
   leaves every bit as it is. */
RBF_CLONES static void rbf_sqdist_scaled_t(const double* xT, Py_ssize_t n, Py_ssize_t d, const double* mu,
                                           const double* s, double* out) {
    for (Py_ssize_t i = 0; i < n; i++) out[i] = 0.0;
    for (Py_ssize_t j = 0; j < d; j++) {
        const double* xj = xT + j * n;
        double m = mu[j], sj = s[j];
        if (sj == 0.0) continue;
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
