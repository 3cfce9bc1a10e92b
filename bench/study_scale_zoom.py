"""The learned scales' zoom about a data point (issue 35, stop 98): a study, run by hand.

    python bench/study_scale_zoom.py --splits 4 7 8 --zoom 0 0.3        # Boston's plain fit without and with zooms
    python bench/study_scale_zoom.py --splits 4 --zoom 0.3 --zoom-step 0.5 --out zoom.jsonl
    python bench/study_scale_zoom.py --splits 4 --zoom 0.3 --hot      # zooms only in the replicas at beta < 1
    python bench/study_scale_zoom.py --splits 4 --zoom 0.3 --n-temps 6   # six replicas (the default: four)
    python bench/study_scale_zoom.py --splits 4 --zoom 0 0.3 --seed 104  # another seed of the chains (default: s)
    python bench/study_scale_zoom.py --splits 4 --zoom 0 0.3 --beta-min 0.1   # a hotter ladder, fixed

Boston's plain fit (`RJMCMCRegressor(random_state=s, quadratic=False)`, the fit of the inputs alone that the default
stacks with the products' fit) on bench_defaults' split s, with a share `--zoom` of its scale steps zooms
(`RJConfig.scale_zoom`, `05d_learned_basis`, "A zoom about a data point"; the study sets it, with the zooms' step, the
hot-only switch and the ladder's hottest power, none of which but the share is an estimator argument, in the
configuration the estimator builds, `estimators._rj_config`). Printed per fit: test MSE,
seconds, the zooms' and the scale steps' acceptance, and at the end of the automatic run (the chains' last round):
split-R-hat, bulk ESS and mean of k; split-R-hat of f over the training rows (median, 90 % quantile, worst) and the
bulk ESS that 90 % of the rows reach; split-R-hat of sigma^2; each input's split-R-hat of its log scale (0 while it is
out); the tempered ladder's powers and swap rates (of the last chain); per chain the share of draws with log s >= 0 for
`--watch` (crim, input 0, by default: the input whose two
scale modes the plain walk does not cross, exp8 "Boston's ten splits under the watch's rule of stop 96"). Rows are
appended to --out as JSON lines.
"""
import argparse
import contextlib
import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import bench_defaults as B  # noqa: E402

import rbf_bayes.estimators as E  # noqa: E402
from rbf_bayes.convergence import ess, rhat  # noqa: E402


@contextlib.contextmanager
def configured(**fields):
    """Within it, the reversible-jump estimators build their run settings with these RJConfig fields replaced (the
    estimators have no arguments for them; `estimators._rj_config` is where both fits of the default build theirs)."""
    base = E._rj_config
    E._rj_config = lambda est, auto, progress, **kw: dataclasses.replace(base(est, auto, progress, **kw), **fields)
    try:
        yield
    finally:
        E._rj_config = base


def fit(X, y, seed, zoom, step, hot=False, n_temps=None, beta_min=None):
    """The plain fit with a share `zoom` of its scale steps zooms of sd `step` (hot: only at beta < 1; beta_min: the
    ladder's hottest power, fixed, else adapted), and its seconds."""
    with configured(scale_zoom=zoom, zoom_step=step, zoom_hot=hot and zoom > 0, beta_min=beta_min):
        t0 = time.time()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = E.RJMCMCRegressor(random_state=seed, quadratic=False, n_temps=n_temps).fit(X, y)
        return m, time.time() - t0, [str(x.message) for x in w if issubclass(x.category, UserWarning)]


def measure(m, X, watch):
    "The last round's numbers (module docstring) from the fitted plain model m."
    tr = m.trace_
    F = tr.kept_chains(tr.draw_outputs(m._scale_x(X))[:, :, 0])           # (chains, draws, rows)
    fr = np.array([rhat(F[:, :, i]) for i in range(F.shape[2])])
    fe = np.array([ess(F[:, :, i]) for i in range(F.shape[2])])
    K = tr.kept_chains(np.asarray(tr.k, float)[tr.kept])
    S2 = tr.kept_chains(np.asarray(tr.sigma2, float)[tr.kept][:, 0])
    sc = tr.kept_chains(tr.scales)                                        # (chains, draws, d); 0: the input is out
    th = np.log(np.where(sc > 0, sc, 1.0))
    return dict(k=[rhat(K), ess(K), float(K.mean())], sigma2_rhat=rhat(S2),
                f_rhat=[float(np.nanmedian(fr)), float(np.nanquantile(fr, 0.9)), float(np.nanmax(fr))],
                f_ess90=float(np.nanquantile(fe, 0.1)), log_scale_rhat=[rhat(th[:, :, j]) for j in range(th.shape[2])],
                watch_up=[float(np.mean((sc[c, :, watch] > 0) & (th[c, :, watch] >= 0))) for c in range(len(sc))],
                n_iter=int(tr.meta.n_done), zoom_acceptance=tr.meta.zoom_acceptance,
                betas=(tr.meta.tempering or {}).get("betas"), swap_rate=(tr.meta.tempering or {}).get("swap_rate"),
                scale_acceptance=tr.meta.scale_acceptance)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, nargs="+", default=[4])
    ap.add_argument("--zoom", type=float, nargs="+", default=[0.0, 0.3], help="shares of zooms, one fit each")
    ap.add_argument("--zoom-step", type=float, default=1.0, help="the zooms' sd of the change of log s")
    ap.add_argument("--hot", action="store_true", help="zooms only in the tempered replicas at beta < 1 (zoom_hot)")
    ap.add_argument("--beta-min", type=float, default=None, help="the ladder's hottest power, fixed (None: adapted)")
    ap.add_argument("--seed", type=int, default=None, help="the fits' random_state (None: the split's number)")
    ap.add_argument("--n-temps", type=int, default=None, help="replicas of the tempered ladder (None: the default's)")
    ap.add_argument("--watch", type=int, default=0, help="the input whose share of log s >= 0 is printed per chain")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    boston = {c[1]: c[2:6] for c in B.cases(False, max(a.splits) + 1) if c[0] == "boston"}
    for s in a.splits:
        X, y, Xt, yt = boston[s]
        for z in a.zoom:
            seed = s if a.seed is None else a.seed
            m, sec, warned = fit(X, y, seed, z, a.zoom_step, a.hot, a.n_temps, a.beta_min)
            temps = m._n_temps(True, *X.shape) if a.n_temps is None else a.n_temps
            row = dict(split=s, zoom=z, zoom_step=a.zoom_step, hot=a.hot and z > 0, n_temps=temps, seed=seed,
                       beta_min=a.beta_min, mse=float(np.mean((m.predict(Xt) - yt) ** 2)),
                       seconds=round(sec), warned=warned, **measure(m, X, a.watch))
            print(json.dumps(row, default=lambda v: round(float(v), 4)), flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(row, default=float) + "\n")


if __name__ == "__main__":
    main()
