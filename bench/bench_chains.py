"""Chains in parallel: the throughput of independent reversible-jump chains on 1 and 2 threads (nb 05b_chains).

    python bench/bench_chains.py           # robot arm (200 points, cubic, default prior), 4 chains x 20,000 iterations
    python bench/bench_chains.py --quick   # 4 chains x 2,000 iterations

The chains are the same in both runs (same seeds, tested bit for bit in tests/test_chains.py), so the ratio of the
two wall times is the speed-up from running the C loops on two cores at once (target: >= 1.8 on 2 cores).
The machine is shared and a single ratio swings (1.5x to 2.2x seen back to back), so the 1- and 2-thread fits
alternate `--repeat` times (default 5; --quick: 1) and the median and range of the ratios are printed.
Ratios, not absolute claims.
"""
import argparse
import os
import time

import numpy as np

from rbf_bayes import RJMCMCRegressor
from rbf_bayes.datasets import robot_arm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=None)
    a = ap.parse_args()
    n_iter = 2_000 if a.quick else 20_000
    reps = a.repeat or (1 if a.quick else 5)
    d = robot_arm(np.random.default_rng(0))
    ratios = []
    for r in range(reps):
        times = {}
        for jobs in (1, 2):
            m = RJMCMCRegressor(n_iter=n_iter, burn_in=n_iter // 2, n_chains=a.chains, n_jobs=jobs, random_state=0,
                                quadratic=False)
            t0 = time.perf_counter(); m.fit(d.x, d.y); times[jobs] = time.perf_counter() - t0
            print(
                f"[{r + 1}/{reps}] {a.chains} chains x {n_iter:,} iterations on {jobs} thread(s): {times[jobs]:.2f} s, "
                f"{a.chains / times[jobs]:.2f} chains/s, {a.chains * n_iter / times[jobs]:,.0f} it/s"
            )
        ratios.append(times[1] / times[2])
    print(
        f"throughput 2 threads / 1 thread: median {np.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f}x "
        f"over {reps} alternating pairs (cores: {os.cpu_count()})"
    )
    print(m.summary())


if __name__ == "__main__":
    main()
