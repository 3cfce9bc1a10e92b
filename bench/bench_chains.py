"""Chains in parallel: the throughput of independent reversible-jump chains on 1 and 2 threads (nb 05b_chains).

    python bench/bench_chains.py           # robot arm (200 points, cubic, default prior), 4 chains x 20,000 iterations
    python bench/bench_chains.py --quick   # 4 chains x 2,000 iterations
    python bench/bench_chains.py --model ladder   # RJMCMCRegressor(n_temps=4): tempered ladders of four replicas
    python bench/bench_chains.py --model bmars    # BMARSRegressor(): its default ladders of four replicas

The chains are the same in both runs (same seeds, tested bit for bit in tests/test_chains.py), so the ratio of the
two wall times is the speed-up from running the C loops on two cores at once (target: >= 1.8 on 2 cores).
The machine is shared and a single ratio swings (1.5x to 2.2x seen back to back), so the 1- and 2-thread fits
alternate `--repeat` times (default 5; --quick: 1) and the median and range of the ratios are printed.
With --model ladder or bmars each chain is a tempered ladder whose rounds run in C: a ladder that took the GIL back
between its replicas' short stretches of C made the other thread's chains wait (the C ladder loops hold no GIL for a
whole span since stop 90).
Ratios, not absolute claims.
"""
import argparse
import os
import time

import numpy as np

from rbf_bayes import BMARSRegressor, RJMCMCRegressor
from rbf_bayes.datasets import robot_arm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--model", choices=("rj", "ladder", "bmars"), default="rj")
    a = ap.parse_args()
    n_iter = 2_000 if a.quick else 20_000
    reps = a.repeat or (1 if a.quick else 5)
    d = robot_arm(np.random.default_rng(0))
    ratios = []
    for r in range(reps):
        times = {}
        for jobs in (1, 2):
            kw = dict(n_iter=n_iter, burn_in=n_iter // 2, n_chains=a.chains, n_jobs=jobs, random_state=0)
            if a.model == "bmars":
                # iterations ~10x cheaper; thin 100: about 1,000 snapshots a chain, as the automatic run keeps
                m = BMARSRegressor(**{**kw, "n_iter": 10 * n_iter, "burn_in": 5 * n_iter}, thin=100)
            else:
                m = RJMCMCRegressor(**kw, quadratic=False, **({"n_temps": 4} if a.model == "ladder" else {}))
            t0 = time.perf_counter(); m.fit(d.x, d.y); times[jobs] = time.perf_counter() - t0
            print(
                f"[{r + 1}/{reps}] {a.model}: {a.chains} chains x {m.n_iter:,} iterations on {jobs} thread(s): "
                f"{times[jobs]:.2f} s, {a.chains / times[jobs]:.2f} chains/s, "
                f"{a.chains * m.n_iter / times[jobs]:,.0f} it/s"
            )
        ratios.append(times[1] / times[2])
    print(
        f"throughput 2 threads / 1 thread: median {np.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f}x "
        f"over {reps} alternating pairs (cores: {os.cpu_count()})"
    )
    print(m.summary())


if __name__ == "__main__":
    main()
