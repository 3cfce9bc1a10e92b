"""Time per column operation of the Cython GramFactor vs the dense NumPy reference.

    python bench/bench_kernel.py

    python bench/bench_kernel.py            # also every kept draw's output at new inputs: C loop vs design matrices

Prints, for (N, m) = (200, 20) and (1e5, 50), c = 2 outputs and per-output ridge factors (the ridge
prior, q = 2) and the g-prior (q = 1): microseconds per propose-and-reject of append / delete / replace
(the common MCMC path: most proposals are rejected), per committed replace, and for the reference the
same operations; then the speed ratio. Then the prediction path (05_rjmcmc, "Predicting with every kept draw"): the
seconds to compute every kept draw's output f_s(x) = D_s(x) alpha_s at n new points, by the C loop
(`_kernel.draw_values`) and by forming each draw's design matrix, for P draws of k_s ~ 1 + Poisson(9) centres.
One run, one machine: ratios, not absolute claims.
"""
import argparse
import time

import numpy as np

from rbf_bayes.kernel import GramFactor, GramFactorRef, basis_column
from rbf_bayes.rjmcmc import _DrawValues


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


def draws(basis, n, P, d, learned, seed=0):
    """(C seconds, design seconds, largest difference / largest value) for every kept draw's output at n points: P
    draws of a trace-like object with k_s ~ 1 + Poisson(9) centres (learned: per-draw scales)."""
    from types import SimpleNamespace
    r = np.random.default_rng(seed)
    ks = 1 + r.poisson(9, P)
    co = np.concatenate([[0], np.cumsum(ks)]); cf = np.concatenate([[0], np.cumsum(1 + d + ks)])
    t = SimpleNamespace(meta=SimpleNamespace(d=d, basis=basis, width=0.8), n_samples=P,
                        centres=r.normal(size=(co[-1], d)), centre_offsets=co,
                        coef_draw=r.normal(size=(cf[-1], 1)), coef_offsets=cf, kinds=None,
                        scales=r.uniform(0.2, 2, (P, d)) if learned else None)
    t.sample_centres = lambda s: t.centres[co[s]:co[s + 1]]
    t._checked_inputs = lambda x: _DrawValues._checked_inputs(t, x)
    x = r.normal(size=(n, d))
    t0 = time.perf_counter()
    got = np.concatenate([F for *_, F in _DrawValues._draw_values(t, x, t.coef_draw)])
    t1 = time.perf_counter()
    want = np.stack([D @ t.coef_draw[cf[s]:cf[s + 1]] for s, D in _DrawValues._designs(t, x)])
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, float(np.abs(got - want).max() / np.abs(want).max())


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
    n, P = (200, 100) if args.quick else (6400, 4000)
    print(f"\nevery kept draw's output at n = {n} points, P = {P} draws (k_s ~ 1 + Poisson(9)):")
    print(f"{'basis':>12} {'d':>3} {'scales':>7} {'C s':>8} {'designs s':>10} {'ratio':>6} {'rel. diff':>10}")
    for basis, d, learned in (("gaussian", 2, True), ("thin_plate", 2, False), ("cubic", 8, True)):
        a, b, e = draws(basis, n, P, d, learned)
        print(f"{basis:>12} {d:>3} {'learned' if learned else '-':>7} {a:>8.3f} {b:>10.3f} {b / a:>6.1f} {e:>10.1e}")


if __name__ == "__main__":
    main()
