"""Issue 15 measurements: learned per-input scales against the fixed basis and an ARD Gaussian process, Boston 300/206.

For each split (seeds 0 .. n_splits - 1, `random_split`, 300 training rows, the other 206 for testing): scikit-learn's
GaussianProcessRegressor with one length scale per input (ARD, ML-II with 2 optimiser restarts, inputs standardised on
the training rows, normalize_y), and RJMCMCRegressor with the chosen basis (width 1 on standardised inputs) with and
without learn_scales. Printed per split: test MSE, seconds per fit, mean k after burn-in, and the learned scales.

    python bench/study_learned_scales.py [n_iter] [basis] [n_splits]     # defaults 20000 gaussian 3
"""
import sys
import time
import warnings

import numpy as np

from rbf_bayes.datasets import load_boston, random_split
from rbf_bayes.estimators import RJMCMCRegressor


def main(n_iter: int, basis: str, n_splits: int):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    from sklearn.gaussian_process.kernels import ConstantKernel as Ck
    warnings.simplefilter("ignore")
    X, y, _ = load_boston()
    res = []
    for split in range(n_splits):
        tr, te = random_split(np.random.default_rng(split), len(y), 300)
        mu, sd = X[tr].mean(0), X[tr].std(0)
        t = time.perf_counter()
        gp = GaussianProcessRegressor(
            Ck(1.0) * RBF(np.ones(X.shape[1]), (1e-2, 1e3)) + WhiteKernel(0.1),
            normalize_y=True,
            random_state=0,
            n_restarts_optimizer=2,
        ).fit((X[tr] - mu) / sd, y[tr])
        tg = time.perf_counter() - t
        mg = np.mean((gp.predict((X[te] - mu) / sd) - y[te]) ** 2)
        out = []
        for learn in (False, True):
            t = time.perf_counter()
            m = RJMCMCRegressor(
                quadratic=False,
                basis=basis,
                width=None,
                n_iter=n_iter,
                burn_in=n_iter // 2,
                thin=10,
                learn_scales=learn,
                random_state=split,
            ).fit(X[tr], y[tr])
            out.append(
                (np.mean((m.predict(X[te]) - y[te]) ** 2), time.perf_counter() - t, m.trace_.k[n_iter // 2 :].mean())
            )
        print(
            f"split {split}: GP ARD {mg:.2f} ({tg:.1f} s); fixed "
            f"{out[0][0]:.2f} ({out[0][1]:.1f} s, k {out[0][2]:.1f}); "
            f"learned {out[1][0]:.2f} ({out[1][1]:.1f} s, k {out[1][2]:.1f}); scales {np.round(m.input_scales_, 2)}",
            flush=True,
        )
        res.append((mg, out[0][0], out[1][0]))
    r = np.array(res)
    print(
        f"mean test MSE over {n_splits} splits: GP ARD {r[:, 0].mean():.2f}, "
        f"fixed {r[:, 1].mean():.2f}, learned {r[:, 2].mean():.2f}"
    )


if __name__ == "__main__":
    a = sys.argv[1:]
    main(int(a[0]) if a else 20000, a[1] if len(a) > 1 else "gaussian", int(a[2]) if len(a) > 2 else 3)
