/* The square-root bases' loops of rbf_bayes/_kernel.pyx (declared there in `cdef extern from "_basis_loops.h"`).
   Included by the generated _kernel.c after Python.h (Py_ssize_t). */
#ifndef RBF_BASIS_LOOPS_H
#define RBF_BASIS_LOOPS_H
/* The square-root bases' loops compiled for AVX-512 and AVX2 as well as the baseline; the loader picks the best
   the processor has (GCC function multiversioning). sqrt and * are correctly rounded in every instruction set,
   so the values are the same bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define RBF_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RBF_CLONES
#endif
#include <math.h>
/* short copy loops stay loops: a call to memcpy per column costs more than the copy (loop nests below) */
#if defined(__GNUC__) && !defined(__clang__)
#define RBF_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define RBF_NO_LIBCALLS
#endif
RBF_CLONES static void rbf_cubic_inplace(double* v, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) v[i] = v[i] * sqrt(v[i]);
}
RBF_CLONES static void rbf_sqrt_inplace(double* v, Py_ssize_t n, double w2) {
    for (Py_ssize_t i = 0; i < n; i++) v[i] = sqrt(v[i] + w2);
}
RBF_CLONES static void rbf_sqdist2(const double* x, Py_ssize_t n, double m0, double m1, double* out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        double t0 = x[2 * i] - m0, t1 = x[2 * i + 1] - m1;
        out[i] = t0 * t0 + t1 * t1;
    }
}
#endif
