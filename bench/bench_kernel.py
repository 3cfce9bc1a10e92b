"""Time per column operation of the Cython GramFactor vs the dense NumPy reference.

    python bench/bench_kernel.py

Prints, for (N, m) = (200, 20) and (1e5, 50), c = 2 outputs and per-output ridge factors (the ridge
prior, q = 2) and the g-prior (q = 1): microseconds per propose-and-reject of append / delete / replace
(the common MCMC path: most proposals are rejected), per committed replace, and for the reference the
same operations; then the speed ratio. One run, one machine: ratios, not absolute claims.
"""
import argparse
import time

import numpy as np

from rbf_bayes.kernel import GramFactor, GramFactorRef, basis_column


def timeit(fn, min_time=0.3, max_reps=100_000):
    """Median seconds per call over batches totalling at least `min_time`."""
    fn()
    reps, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        t = time.perf_counter() - t0
        if t > 0.05 or reps >= max_reps:
            break
        reps *= 4
    per = [t / reps]
    while sum(per) * reps < min_time and len(per) < 7:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        per.append((time.perf_counter() - t0) / reps)
    return float(np.median(per))


def build(cls, N, m, c, ridge, x, rng):
    g = cls(N, c, m + 5, ridge=ridge)
    g.set_targets(rng.normal(size=(N, c)))
    g.append(np.ones(N))
    g.append(x[:, 0]); g.append(x[:, 1])
    while g.m < m:
        g.append(basis_column(x, rng.uniform(-1, 1, 2), "cubic"))
    return g


def bench(N, m, c, ridge, ref_min_time):
    rng = np.random.default_rng(0)
    x = np.ascontiguousarray(rng.uniform(-1, 1, (N, 2)))
    col = basis_column(x, np.array([0.1, 0.2]), "cubic")
    out = {}
    for name, cls, mt in (("cython", GramFactor, 0.3), ("reference", GramFactorRef, ref_min_time)):
        g = build(cls, N, m, c, ridge, x, rng)
        j = m // 2

        def app(g=g):
            g.propose_append(col); _ = g.proposed_explained; g.reject()

        def dele(g=g, j=j):
            g.propose_delete(j); _ = g.proposed_explained; g.reject()

        def rep(g=g, j=j):
            g.propose_replace(j, col); _ = g.proposed_explained; g.reject()

        def rep_commit(g=g, j=j):
            g.replace(j, col)

        out[name] = {k: timeit(f, mt, 50 if name == "reference" else 100_000)
                     for k, f in (("append", app), ("delete", dele), ("replace", rep), ("replace+commit", rep_commit))}
    out["column"] = timeit(lambda: basis_column(x, np.array([0.1, 0.2]), "cubic"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    args = ap.parse_args()
    sizes = [(200, 20)] if args.quick else [(200, 20), (100_000, 50)]
    print(f"{'N':>7} {'m':>3} {'prior':>6} {'operation':>15} {'cython us':>11} {'reference us':>13} {'ratio':>7}")
    for N, m in sizes:
        for prior, ridge in (("ridge", (0.1, 0.3)), ("g", (0.0,))):
            r = bench(N, m, 2, ridge, 0.3 if N <= 1000 else 1.0)
            for op in ("append", "delete", "replace", "replace+commit"):
                a, b = r["cython"][op] * 1e6, r["reference"][op] * 1e6
                print(f"{N:>7} {m:>3} {prior:>6} {op:>15} {a:>11.2f} {b:>13.1f} {b / a:>7.0f}")
        print(f"{N:>7} {'':>3} {'':>6} {'cubic column':>15} {r['column'] * 1e6:>11.2f}   (d = 2, C column generator)")
        x = np.random.default_rng(0).uniform(-1, 1, (N, 2)); mu = np.array([0.1, -0.2])
        c_col = timeit(lambda x=x, mu=mu: basis_column(x, mu, "gaussian", 0.7))
        np_col = timeit(lambda x=x, mu=mu: np.exp(-np.sum((x - mu) ** 2, axis=1) / 0.49))
        print(f"{N:>7} {'':>3} {'':>6} {'gaussian column':>15} {c_col * 1e6:>11.2f} {np_col * 1e6:>13.1f} "
              f"{np_col / c_col:>7.1f}   (d = 2; reference column: NumPy's exp)")


if __name__ == "__main__":
    main()
