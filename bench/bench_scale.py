"""Issue 16's table in one run: robot-arm seconds, the ratio to the NumPy reference, cost per iteration per data point
as N grows, chains per second on 1 and 2 threads, and TD-SMC's cost per observation and memory along a stream.

    python bench/bench_scale.py            # N up to 1e6 for the RJMCMC, a 1e5-row TD-SMC stream (about an hour)
    python bench/bench_scale.py --quick    # smoke test (CI)

1. Robot arm (200/200, cubic), 50,000 iterations with 30,000 burn-in: `RJMCMCRegressor` with its defaults, and the
   paper's model (ridge prior, Poisson truncated given Lambda, k_max = 20); the C loop's iterations per second
   against `sample_rjmcmc_reference` from the same state; the ratio to the 2.8 s the issue measured.
2. N = 1e3 ... 1e6 (robot-arm inputs, paper's model, k_max = 20, after a burn-in that brings k near k_max), the stored
   design and the recomputed one (RJConfig.design): time per iteration per data point, and the fit's own peak resident
   memory (a fresh process per row) against the data's size.
3. Four chains of the default model on 1 and 2 threads: chains per second, the median ratio of alternating pairs.
4. TD-SMC (Friedman #1, d = 10, Gaussian width 2, 250 particles, k_max = 60) along a 1e5-row stream (--smc-rows; about
   an hour: births cost O(t m), so the cost per observation grows with t): ms per observation, mean k, the shared
   column store's columns and bytes, and the peak resident memory of a fresh process running only this section.

One run, one shared machine: ratios and orders of magnitude, not absolute claims.
"""
import argparse
import os
import resource
import time

import numpy as np

from rbf_bayes import RJMCMCRegressor
from rbf_bayes.datasets import friedman, robot_arm
from rbf_bayes.priors import RBFPrior, SMCPrior
from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc, sample_rjmcmc_reference
from rbf_bayes.smc import TDSMC

PAPER = RBFPrior(k_max=20, coef_prior="ridge", k_prior="conditional")
ISSUE_SECONDS = 2.8            # robot arm, 50k iterations, k_max = 20, as measured when issue 16 was written


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024      # Linux: kilobytes


def robot_rows(quick):
    n_iter, burn = (5_000, 3_000) if quick else (50_000, 30_000)
    d = robot_arm(np.random.default_rng(0))
    t0 = time.perf_counter()
    RJMCMCRegressor(n_iter=n_iter, burn_in=burn, random_state=0, quadratic=False).fit(d.x, d.y)
    t_def = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr = sample_rjmcmc(d.x, d.y, prior=PAPER, config=RJConfig(n_iter=n_iter, burn_in=burn, thin=5),
                       rng=np.random.default_rng(1), basis="cubic")
    t_pap = time.perf_counter() - t0
    n_ref = 20 if quick else 200
    init = {"centres": tr.sample_centres(tr.n_samples - 1), "Lambda": float(tr.Lambda[-1]), "delta2": tr.delta2[-1]}
    t0 = time.perf_counter()
    sample_rjmcmc_reference(d.x, d.y, prior=PAPER, config=RJConfig(n_iter=n_ref, burn_in=n_ref - 1),
                            rng=np.random.default_rng(2), basis="cubic", init=init)
    t_ref = (time.perf_counter() - t0) / n_ref
    print(f"1. robot arm, {n_iter:,} iterations ({burn:,} burn-in)")
    print(f"   defaults (g-prior, joint, k_max 100):  {t_def:.2f} s")
    print(f"   paper's model, k_max = 20:             {t_pap:.2f} s" + ("" if quick else
          f"   ({ISSUE_SECONDS / t_pap:.2f}x faster than the issue's {ISSUE_SECONDS} s)"))
    print(f"   NumPy reference at the same state:     {t_ref * 1e3:.1f} ms/iteration = "
          f"{t_ref / (t_pap / n_iter):.0f}x the C loop's time per iteration")


def n_rows(quick):
    """Section 2: each (N, design) in a fresh process, so that its peak resident memory is its own; both designs start
    from the same burned-in state (the stored design's burn-in, saved to a temporary file)."""
    import subprocess
    import sys
    import tempfile
    print("2. cost in N (paper's model, k_max = 20, from a burned-in state; each row a fresh process)")
    print(f"   {'N':>9} {'design':>9} {'k':>4} {'ms/iteration':>13} {'ns/(iteration*N)':>17} {'data MB':>8} "
          f"{'fit peak MB':>11} {'x data':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for N in ((1_000, 10_000) if quick else (1_000, 10_000, 100_000, 1_000_000)):
            f = os.path.join(tmp, f"init_{N}.npz")
            subprocess.run([sys.executable, __file__, "--n-only", str(N), "burn", "0", f], check=True)
            for design in ("stored", "recompute"):
                meas = max(30, min(1000, 10 ** 7 // N // (1 if design == "stored" else 8)))   # 30: every move type
                if quick:
                    meas = max(3, meas // 20)
                subprocess.run([sys.executable, __file__, "--n-only", str(N), design, str(meas), f], check=True)


def n_row(N, design, meas, f):
    d = robot_arm(np.random.default_rng(0), n_train=N, n_test=10)
    if design == "burn":
        burn = 3_000 if N <= 10_000 else (1_500 if N <= 100_000 else 600)
        trb = sample_rjmcmc(d.x, d.y, prior=PAPER, config=RJConfig(n_iter=burn, burn_in=burn - 1, design="stored"),
                            rng=np.random.default_rng(3), basis="cubic")
        np.savez(f, c=trb.sample_centres(trb.n_samples - 1), L=float(trb.Lambda[-1]), d2=trb.delta2[-1])
        return
    z = np.load(f)
    init = {"centres": z["c"], "Lambda": float(z["L"]), "delta2": z["d2"]}
    rss0 = peak_mb()
    t0 = time.perf_counter()
    trm = sample_rjmcmc(d.x, d.y, prior=PAPER, config=RJConfig(n_iter=meas, burn_in=meas - 1, design=design),
                        rng=np.random.default_rng(4), basis="cubic", init=init)
    dt = (time.perf_counter() - t0) / meas
    data_mb = (d.x.nbytes + d.y.nbytes) / 2 ** 20
    add = peak_mb() - rss0
    print(f"   {N:>9,} {design:>9} {trm.k.mean():>4.0f} {dt * 1e3:>13.3f} {dt / N * 1e9:>17.2f} {data_mb:>8.1f} "
          f"{add:>11.1f} {add / data_mb:>7.2f}", flush=True)


def chain_rows(quick):
    n_iter, reps = (2_000, 1) if quick else (20_000, 3)
    d = robot_arm(np.random.default_rng(0))
    ratios, rate = [], {}
    for _ in range(reps):
        t = {}
        for jobs in (1, 2):
            t0 = time.perf_counter()
            RJMCMCRegressor(n_iter=n_iter, burn_in=n_iter // 2, n_chains=4, n_jobs=jobs, random_state=0,
                            quadratic=False).fit(d.x, d.y)
            t[jobs] = time.perf_counter() - t0
            rate[jobs] = 4 / t[jobs]
        ratios.append(t[1] / t[2])
    print(f"3. chains: 4 x {n_iter:,} iterations (defaults): {rate[1]:.1f} chains/s on 1 thread, {rate[2]:.1f} on 2; "
          f"ratio median {np.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f}, {reps} pairs; "
          f"{os.cpu_count()} cores)")


def smc_rows(quick, rows):
    """Section 4 in a fresh process, so that its peak resident memory is the particle system's alone (section 2's
    N = 1e6 fit has already raised this process's peak)."""
    import subprocess
    import sys
    n = 500 if quick else rows
    P = 50 if quick else 250
    subprocess.run([sys.executable, __file__, "--smc-only", str(n), str(P)], check=True)


def smc_stream(n, P, kmax=60):
    d = friedman(np.random.default_rng(0), 1, n=n, p=10, noise_sd=1.0, n_test=100)
    rss0 = peak_mb()
    s = TDSMC(
        P,
        "gaussian",
        2.0,
        prior=SMCPrior(lam=5.0, k_max=kmax),
        capacity=n,
        ess_threshold=0.5,
        rng=np.random.default_rng(0),
    )
    designs = 8.0 * P * (kmax + 2) * n / 2 ** 30  # what per-particle designs (m_max + 1 columns each) held
    print(
        f"4. TD-SMC, {P} particles, k_max {kmax}, Friedman #1 (d = 10), capacity {n:,} rows (the shared column store; "
        f"per-particle designs would hold {designs:.2f} GiB)"
    )
    print(
        f"   {'rows':>8} {'ms/obs':>7} {'mean k':>6} {'columns held':>12} "
        f"{'store GiB':>9} {'peak RSS GiB':>12} {'elapsed s':>9}"
    )
    step, t0 = n // 10, time.perf_counter()
    last = t0
    for i in range(0, n, step):
        s.partial_fit(d.x[i:i + step], d.y[i:i + step])
        now = time.perf_counter()
        held, _, nbytes = s.core.store_columns
        print(f"   {i + step:8,} {(now - last) / step * 1e3:7.2f} {s.weights @ s.ks:6.1f} {held:12,} "
              f"{nbytes / 2 ** 30:9.3f} {peak_mb() / 1024:12.3f} {now - t0:9.0f}", flush=True)
        last = now
    print(f"   the particle system added {(peak_mb() - rss0) / 1024:.3f} GiB to the process's peak (imports and data "
          f"before it: {rss0 / 1024:.2f} GiB; target for 1e5 rows x 250 particles: < 8 GiB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smc-rows", type=int, default=100_000, help="rows of the TD-SMC stream (full run)")
    ap.add_argument("--smc-only", nargs=2, type=int, metavar=("ROWS", "PARTICLES"), help=argparse.SUPPRESS)
    ap.add_argument("--n-only", nargs=4, metavar=("N", "DESIGN", "ITERATIONS", "FILE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.smc_only:
        return smc_stream(*a.smc_only)
    if a.n_only:
        return n_row(int(a.n_only[0]), a.n_only[1], int(a.n_only[2]), a.n_only[3])
    robot_rows(a.quick); n_rows(a.quick); chain_rows(a.quick); smc_rows(a.quick, a.smc_rows)


if __name__ == "__main__":
    main()
