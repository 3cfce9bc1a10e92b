"""The plotting module's numerical helpers (`14_plot`) under warnings as errors."""
import warnings

import numpy as np

from rbf_bayes.plot import roc_auc, roc_convex_hull


def test_roc_convex_hull_is_quiet_and_concave():
    """`roc_convex_hull` on random ROC points: no warning (it called np.cross on 2-vectors, deprecated in NumPy 2,
    whose DeprecationWarning 14_plot's kept outputs showed until stop 83); the hull runs from (0, 0) to (1, 1), rises,
    turns right at every point, and its area is at least the curve's."""
    r = np.random.default_rng(0)
    f, t = np.sort(r.uniform(size=40)), np.sort(r.uniform(size=40))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hf, ht = roc_convex_hull(f, t)
    assert (hf[0], ht[0], hf[-1], ht[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert np.all(np.diff(hf) >= 0) and np.all(np.diff(ht) >= 0)
    d = np.diff(np.c_[hf, ht], axis=0)                  # each segment turns right of (or straight on from) the last
    assert np.all(d[:-1, 0] * d[1:, 1] - d[:-1, 1] * d[1:, 0] <= 1e-12)
    assert roc_auc(hf, ht) >= roc_auc(np.r_[0, f, 1], np.r_[0, t, 1]) - 1e-12
