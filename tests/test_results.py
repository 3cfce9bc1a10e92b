"""One result protocol for every sampler (ARCHITECTURE.md): keyword construction, p_k, predict(return_std), select,
save / load without pickle, and the same fitted attributes on every estimator."""
import dataclasses

import numpy as np
import pytest

from rbf_bayes import AnnealedRBFRegressor, BMARSRegressor, RJMCMCRegressor, SMCRegressor
from rbf_bayes.results import SamplerResult

X = np.random.default_rng(0).uniform(-1, 1, size=(40, 2))
Y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * np.random.default_rng(1).normal(size=40)

ESTIMATORS = [
    RJMCMCRegressor(  # the plain model: a products' model's trace takes its model_inputs_ (tests/test_quadratic.py)
        n_iter=600, burn_in=300, random_state=0, prior=__import__("rbf_bayes.priors").priors.RBFPrior(k_max=8),
        quadratic=False,
    ),
    AnnealedRBFRegressor(n_iter=300, k_max=8, random_state=0),
    SMCRegressor(n_particles=30, random_state=0),
    BMARSRegressor(n_iter=600, burn_in=300, random_state=0),
]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_every_sampler_returns_the_protocol(est, tmp_path):
    m = est.fit(X, Y)
    tr = m.trace_
    assert isinstance(tr, SamplerResult)
    assert all(hasattr(m, a) for a in ("trace_", "k_posterior_", "n_features_in_", "n_outputs_"))
    np.testing.assert_allclose(m.k_posterior_, tr.p_k())
    assert abs(m.k_posterior_.sum() - 1) < 1e-12
    mean, sd = tr.predict(X, return_std=True)
    assert mean.shape == (40, 1) and sd.shape == (40, 1) and np.all(sd > 0)
    with pytest.raises(TypeError):
        type(tr)(*[getattr(tr, f.name) for f in dataclasses.fields(tr)])   # keyword construction only
    path = tmp_path / "r.npz"
    tr.save(path)
    back = type(tr).load(path)
    np.testing.assert_array_equal(back.predict(X), tr.predict(X))
    np.testing.assert_array_equal(back.p_k(), tr.p_k())
    assert len(repr(tr)) < 200                                             # a summary, never an array dump
    assert isinstance(tr.select(), type(tr))


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_units_do_not_change_the_answer(est):
    """Inputs and outputs are standardised internally by default: fitting on 1000 X and 1e-3 y with the same seed gives
    the same predictions, rescaled, and standard deviations rescaled."""
    from sklearn.base import clone
    if isinstance(est, AnnealedRBFRegressor):
        # the annealing chain is unit-free to rounding; its final descent (L-BFGS-B, nb 07) is not: a last-bit change of
        # the standardised data can steer a continuous descent to a nearby point of another valley (nb 07 says so)
        est = clone(est).set_params(polish=False)
    a, b = clone(est).fit(X, Y), clone(est).fit(1000 * X, 1e-3 * Y)
    ma, sa = a.predict(X, return_std=True)
    mb, sb = b.predict(1000 * X, return_std=True)
    np.testing.assert_allclose(mb, 1e-3 * ma, rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(sb, 1e-3 * sa, rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_pickle_round_trip_in_a_fresh_process(est, tmp_path):
    """pickle (and so joblib) works for every estimator, SMC included (its C particle states pickle with the sampler):
    a fresh Python process loads the file and predicts exactly what the fitting process predicted."""
    import pickle
    import subprocess
    import sys

    from sklearn.base import clone
    m = clone(est).fit(X, Y)
    (tmp_path / "m.pkl").write_bytes(pickle.dumps(m))
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "want.npy", np.column_stack(m.predict(X, return_std=True)))
    code = ("import pickle, sys, numpy as np; d = sys.argv[1]; m = pickle.load(open(d + '/m.pkl', 'rb')); "
            "got = np.column_stack(m.predict(np.load(d + '/x.npy'), return_std=True)); "
            "assert np.array_equal(got, np.load(d + '/want.npy')), 'predictions differ'")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_save_load_without_pickle_in_a_fresh_process(est, tmp_path):
    """`save` writes one .npz (JSON header + arrays, no pickle); `load` in a fresh process gives the same parameters and
    predictions; a file from a newer format version, or of another estimator class, is refused with a clear message."""
    import json
    import subprocess
    import sys

    from sklearn.base import clone
    m = clone(est).fit(X, Y)
    path = tmp_path / "m.npz"
    m.save(path)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "want.npy", np.column_stack(m.predict(X, return_std=True)))
    name = type(m).__name__
    code = (f"import sys, numpy as np; from rbf_bayes import {name}; d = sys.argv[1]; m = {name}.load(d + '/m.npz'); "
            "got = np.column_stack(m.predict(np.load(d + '/x.npy'), return_std=True)); "
            "assert np.array_equal(got, np.load(d + '/want.npy')), 'predictions differ'")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    h = json.loads(str(arrays["__header__"]))
    h["version"] += 1
    arrays["__header__"] = np.array(json.dumps(h))
    np.savez(tmp_path / "newer.npz", **arrays)
    with pytest.raises(ValueError, match="written by a newer rbf_bayes"):
        type(m).load(tmp_path / "newer.npz")
    other = RJMCMCRegressor if name != "RJMCMCRegressor" else BMARSRegressor
    with pytest.raises(ValueError, match=f"holds a {name}, not a {other.__name__}"):
        other.load(path)


def test_a_loaded_smc_model_refuses_to_continue_its_stream(tmp_path):
    m = SMCRegressor(n_particles=30, random_state=0).fit(X, Y)
    m.save(tmp_path / "s.npz")
    loaded = SMCRegressor.load(tmp_path / "s.npz")
    with pytest.raises(ValueError, match="cannot continue it"):
        loaded.partial_fit(X[:5], Y[:5])
