"""Peak memory of a fit that runs to its cap (stop 74): the automatic run length keeping only the snapshots a round can
return (`05_rjmcmc`, "Which snapshots a run keeps") against the same chains keeping every snapshot, as until stop 74.

    python bench/bench_memory.py                 # Boston split 0: the default and quadratic=True, max_iter 128,000
    python bench/bench_memory.py --max-iter 512000 --configs default    # the default's cap
    python bench/bench_memory.py --quick         # the CI smoke run: sinc, max_iter 16,000

Each fit runs in its own process (its peak resident set is the process's, `resource.getrusage`), with the convergence
rule made unreachable (bulk ESS >= 10^9) so that every chain runs to max_iter, as an unconverged fit does. Prints per
configuration and mode the peak resident memory, the seconds and whether the two modes' predictions agree to the last
bit (they must: the chains and the returned snapshots are the same). One run on a shared machine: read the memory, and
the seconds only as a ratio.
"""
import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

CONFIGS = {"default": {}, "quadratic": {"quadratic": True}}


def one(mode, case, config, max_iter):
    "One fit in this process: its peak resident memory (MB), seconds, the run's thinning and the predictions."
    from rbf_bayes import RJMCMCRegressor
    from rbf_bayes import chains as ch
    from rbf_bayes.datasets import load_boston, sinc_data
    from rbf_bayes.rjmcmc import _KeptSnapshots
    ch.AUTO_ESS = 10**9   # every chain runs to max_iter
    if mode == "keep_all":   # every snapshot kept (the automatic run's thinning then made at the end, as before)
        _KeptSnapshots.keep_only = lambda self, start, end, at_most=None: 1
    if case == "boston":
        bx, by, _ = load_boston()
        idx = np.random.default_rng(0).permutation(len(by)); tr, te = idx[:300], idx[300:]
        X, y, Xt = bx[tr], by[tr], bx[te]
    else:
        d = sinc_data(np.random.default_rng(0)); X, y, Xt = d.x, d.y, d.x_test
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = RJMCMCRegressor(random_state=0, max_iter=max_iter, **CONFIGS[config]).fit(X, y)
        pred = m.predict(Xt)
    sec = time.perf_counter() - t0
    return dict(peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, seconds=sec,
                thin=m.trace_.meta.auto["snapshot_thin"], n_iter=m.trace_.meta.auto["n_iter"], pred=pred.tolist())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the CI smoke run: sinc, max_iter 16,000")
    ap.add_argument("--max-iter", type=int, default=128_000)
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--one", nargs=4, metavar=("MODE", "CASE", "CONFIG", "MAX_ITER"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        mode, case, config, mi = a.one
        print(json.dumps(one(mode, case, config, int(mi))))
        return
    case, max_iter = ("sinc", 16_000) if a.quick else ("boston", a.max_iter)
    print(f"{case}, every chain run to max_iter = {max_iter:,} (4 chains)")
    print(f"{'config':<10} {'mode':<9} {'peak MB':>9} {'seconds':>8} {'thin':>5}")
    for config in a.configs if not a.quick else ["default"]:
        got = {}
        for mode in ("narrowed", "keep_all"):
            out = subprocess.run([sys.executable, __file__, "--one", mode, case, config, str(max_iter)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{config:<10} {mode:<9} failed (status {out.returncode}): {out.stderr.strip()[-300:]}")
                continue
            r = got[mode] = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{config:<10} {mode:<9} {r['peak_mb']:>9.0f} {r['seconds']:>8.1f} {r['thin']:>5}")
        if len(got) == 2:
            same = got["narrowed"]["pred"] == got["keep_all"]["pred"]
            print(f"{config:<10} peak memory ratio keep_all / narrowed: "
                  f"{got['keep_all']['peak_mb'] / got['narrowed']['peak_mb']:.2f}; predictions identical: {same}")
            if not same:
                raise SystemExit("the two modes' predictions differ: the narrowing changed the returned snapshots")


if __name__ == "__main__":
    main()
