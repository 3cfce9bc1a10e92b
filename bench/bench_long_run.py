"""Long-run check of the reversible-jump and Bayesian MARS samplers (issue 13, item 6).

    python bench/bench_long_run.py            # 10^6 iterations of each (a few minutes)
    python bench/bench_long_run.py --quick    # 20,000 iterations of each (the CI smoke run)

For each sampler, every `check_every` iterations (between chunks of the C loop, on the live GramFactor that the
incremental updates maintain) it measures

- the factor's drift against a fresh factorisation of the current design: the backward error
  ||L L' - (D'D + r I)||_F / ||D'D + r I||_F of the stored Cholesky factor L (D recomputed from the stored columns), and
  the relative differences of the explained sums e = y'D (D'D + r I)^{-1} D'y and of log det(D'D + r I) against a
  fresh solve. The backward error is the quantity that accumulates if rank-one updates and deletions drift; the
  forward differences also carry the conditioning of D'D, so they are reported, not asserted;
- for the RJ sampler, that the stored columns are the basis functions of the current centres (max |difference|);

and at the end that no recorded quantity (k, log posterior, Lambda, delta^2, sigma^2, kept centres and coefficients;
BMARS: k, log marginal likelihood, lambda, kept coefficients and sigma^2) is NaN or infinite, and the peak resident
memory of each run (VmHWM, reset before each) against the sampler's own estimate (`rjmcmc.rj_memory`, the BMARS guard's
formula).

The script exits with an error if a check fails: backward error above 1e-8, a non-finite value, columns that do not
match the centres, or a peak memory increase above twice the estimate plus 200 MiB. Timings are reported, never
asserted.
"""
import argparse
import resource
import sys
import time

import numpy as np

from rbf_bayes import bmars, rjmcmc
from rbf_bayes.basis import design_matrix
from rbf_bayes.bmars import BMARSPrior, sample_bmars
from rbf_bayes.datasets import robot_arm
from rbf_bayes.priors import RBFPrior
from rbf_bayes.rjmcmc import RJConfig, rj_memory, sample_rjmcmc

TOL = 1e-8


def _status_mib(key: str) -> float | None:
    "A memory line of /proc/self/status (VmHWM: peak since the last reset, VmRSS: now) in MiB; None elsewhere."
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024.0
    except (OSError, StopIteration):
        return None


def peak_mib() -> float:
    "Peak resident memory of this process (MiB) since the last `reset_peak()`."
    v = _status_mib("VmHWM")
    return v if v is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_mib() -> float:
    "Resident memory now (MiB)."
    v = _status_mib("VmRSS")
    return v if v is not None else peak_mib()


def reset_peak() -> float:
    "Reset the peak (Linux: write 5 to /proc/self/clear_refs) so each sampler's own peak is measured; return RSS now."
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass                      # elsewhere the peak is the process's: the later samplers' figures are upper bounds
    return current_mib()


def factor_drift(st, Y) -> dict:
    "Backward error of every stored factor and forward errors of e and log det against a fresh factorisation."
    D = st.columns()
    G = D.T @ D
    out = dict(backward=0.0, explained=0.0, logdet=0.0, m=D.shape[1])
    ridges, ofac = st.ridges, st.out_factor
    for f, r in enumerate(ridges):
        A = G + r * np.eye(len(G))
        L = st.factor(f)
        out["backward"] = max(out["backward"], np.linalg.norm(L @ L.T - A) / np.linalg.norm(A))
        Lf = np.linalg.cholesky(A)
        ld = 2 * np.sum(np.log(np.diag(Lf)))
        out["logdet"] = max(out["logdet"], abs(st.logdet[f] - ld) / max(abs(ld), 1.0))
        for o in np.flatnonzero(ofac == f):
            z = np.linalg.solve(Lf, D.T @ Y[:, o])
            e = z @ z
            out["explained"] = max(out["explained"], abs(st.explained[o] - e) / max(abs(e), 1e-300))
    return out


class Watch:
    "Wraps a run class's _chunk: after every chunk that crosses a multiple of `every`, record the drift."
    def __init__(self, cls, every, Y, extra=None):
        self.cls, self.every, self.Y, self.extra, self.rows = cls, every, Y, extra, []
        self.orig = cls._chunk

    def __enter__(self):
        watch = self

        def chunk(run):
            before = run.done
            out = watch.orig(run)
            after = before + out[0]
            if after // watch.every > before // watch.every or after == run.total:
                row = dict(iteration=after, **factor_drift(run.st, watch.Y))
                if watch.extra: row.update(watch.extra(run))
                watch.rows.append(row)
            return out
        self.cls._chunk = chunk
        return self

    def __exit__(self, *exc):
        self.cls._chunk = self.orig
        return False


def finite(name, a, failures):
    a = np.asarray(a, dtype=float)
    if a.size and not np.isfinite(a).all():
        failures.append(f"{name}: {np.size(a) - np.isfinite(a).sum()} non-finite values")


def report(title, rows, secs, n_iter, peak_delta, estimate, failures):
    print(f"\n{title}: {n_iter:,} iterations in {secs:.1f} s ({n_iter / secs:,.0f} it/s)")
    print(f"{'iteration':>10} {'m':>4} {'backward err':>13} {'rel. err e':>11} {'rel. err logdet':>16}"
          + ("  max |column - basis(centre)|" if "columns" in rows[0] else ""))
    for r in rows:
        print(f"{r['iteration']:>10,} {r['m']:>4} {r['backward']:>13.2e} {r['explained']:>11.2e} {r['logdet']:>16.2e}"
              + (f"  {r['columns']:.2e}" if "columns" in r else ""))
    worst = max(r["backward"] for r in rows)
    print(f"worst backward error {worst:.2e} (tolerance {TOL:g}); peak RSS grew {peak_delta:.0f} MiB, "
          f"the sampler's estimate is {estimate / 2**20:.0f} MiB")
    if worst > TOL: failures.append(f"{title}: backward error {worst:.2e} > {TOL:g}")
    if any(r.get("columns", 0.0) > 1e-12 for r in rows): failures.append(f"{title}: columns differ from the centres")
    if peak_delta > 2 * estimate / 2**20 + 200:
        failures.append(f"{title}: peak memory {peak_delta:.0f} MiB above 2x estimate")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n_iter = 20_000 if args.quick else 1_000_000
    every = n_iter // 10
    failures = []
    d = robot_arm(np.random.default_rng(0))
    X = (d.x - d.x.mean(0)) / d.x.std(0); Y = (d.y - d.y.mean(0)) / d.y.std(0)   # as the estimators standardise
    N, dim = X.shape; c = Y.shape[1]
    print(f"machine peak RSS before: {peak_mib():.0f} MiB; data: robot arm, N = {N}, d = {dim}, c = {c} (standardised)")

    # 1. reversible jump, the estimator's default prior (g-prior, joint hierarchy, k_max = min(N - (d + 2), 100)):
    #    the factor is never rebuilt from scratch, so drift would accumulate here if anywhere
    for prior, label in ((RBFPrior(), "RJMCMC, default g-prior"),
                         (RBFPrior(coef_prior="ridge", k_prior="conditional", k_max=40), "RJMCMC, ridge prior")):
        cfg = RJConfig(n_iter=n_iter, burn_in=n_iter // 2, thin=100, chunk_size=10_000)

        def cols(run):
            C = run.core.centres
            D = design_matrix(X, C, "cubic", 1.0)
            return dict(columns=float(np.max(np.abs(run.st.columns() - D))) if D.size else 0.0)
        base = reset_peak(); t0 = time.perf_counter()
        with Watch(rjmcmc._RJRun, every, Y, cols) as w:
            tr = sample_rjmcmc(X, Y, prior=prior, config=cfg, rng=np.random.default_rng(1), basis="cubic")
        secs = time.perf_counter() - t0
        for name in ("k", "log_posterior", "Lambda", "delta2", "sigma2", "centres", "coef_mean", "coef_draw"):
            finite(f"{label}: {name}", getattr(tr, name), failures)
        k_max = tr.meta.k_max
        est, _ = rj_memory(n_iter, tr.n_samples, k_max, N, dim, c)
        report(label + f" (k_max = {k_max}; k at the end {tr.k[-1]}, mean after burn-in "
               f"{tr.k[n_iter // 2:].mean():.1f})", w.rows, secs, n_iter, peak_mib() - base, est, failures)

    # 2. Bayesian MARS, the estimator's defaults (max_interaction = 2, k_max = 50), on the same data
    pr = BMARSPrior()
    base = reset_peak(); t0 = time.perf_counter()
    with Watch(bmars._BMARSRun, every, Y) as w:
        bt = sample_bmars(X, Y, prior=pr, n_iter=n_iter, burn_in=n_iter // 2, thin=100, rng=np.random.default_rng(2))
    secs = time.perf_counter() - t0
    for name in ("k", "log_marginal_likelihood", "lam", "sigma2"):
        finite(f"BMARS: {name}", getattr(bt, name), failures)
    for s in range(len(bt.kept)):
        finite("BMARS: coef_mean", bt.coef_mean[s], failures); finite("BMARS: coef_draw", bt.coef_draw[s], failures)
    k_max = bt.meta.k_max; n_kept = len(bt.kept)
    est = 26.0 * n_iter + n_kept * (k_max * (24.0 * pr.max_interaction + 200) + 16.0 * (k_max + 1) * c) \
        + 8.0 * (3 * N * (k_max + 1) + 3 * (k_max + 1) ** 2)
    report(
        f"Bayesian MARS (k_max = {k_max}; k at the end {bt.k[-1]}, "
        f"mean after burn-in {bt.k[n_iter // 2 :].mean():.1f})",
        w.rows,
        secs,
        n_iter,
        peak_mib() - base,
        est,
        failures,
    )

    print(f"\npeak RSS of the whole process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    print("all checks passed: no NaN/inf, factor backward error below 1e-8, memory within the estimate")


if __name__ == "__main__":
    main()
