"""`meta` is a typed record (issue: one user layer, typed records instead of `meta` strings): every key a sampler
writes is a declared field of its kind of `RunInfo`, the record survives a file and a pickle as the same class with
the same content, and a file's key that no field declares (an older or newer writer's, a user's own) is kept and
written back rather than dropped."""
import json
import pickle
import warnings

import numpy as np
import pytest

from rbf_bayes import AnnealedRBFRegressor, BMARSRegressor, RJMCMCClassifier, RJMCMCRegressor, SMCRegressor
from rbf_bayes.annealing import AnnealRunInfo
from rbf_bayes.bmars import BMARSRunInfo
from rbf_bayes.datasets import sinc_data
from rbf_bayes.results import RunInfo
from rbf_bayes.rjmcmc import RJRunInfo
from rbf_bayes.smc import SMCRunInfo

D = sinc_data(np.random.default_rng(0))
RJ = dict(n_iter=1500, burn_in=500, random_state=0)
FITS = {
    "one chain": (lambda: RJMCMCRegressor(n_chains=1, **RJ), RJRunInfo),
    "pooled chains": (lambda: RJMCMCRegressor(n_chains=2, n_jobs=1, **RJ), RJRunInfo),
    "automatic run length": (lambda: RJMCMCRegressor(n_chains=2, n_jobs=1, max_iter=4000, random_state=0), RJRunInfo),
    "tempered": (lambda: RJMCMCRegressor(n_chains=1, n_temps=2, **RJ), RJRunInfo),
    "learned basis type": (lambda: RJMCMCRegressor(n_chains=1, basis="auto", **RJ), RJRunInfo),
    "probit": (lambda: RJMCMCClassifier(n_chains=1, **RJ), RJRunInfo),
    "bmars": (lambda: BMARSRegressor(n_iter=1500, burn_in=500, random_state=0), BMARSRunInfo),
    "smc": (lambda: SMCRegressor(random_state=0), SMCRunInfo),
    "annealing": (lambda: AnnealedRBFRegressor(random_state=0), AnnealRunInfo),
}


@pytest.fixture(scope="module", params=list(FITS))
def fitted(request):
    make, info = FITS[request.param]
    m = make()
    y = (D.y > 0).astype(int) if isinstance(m, RJMCMCClassifier) else D.y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(D.x, y)
    return m, info


def test_every_key_a_sampler_writes_is_a_declared_field(fitted):
    m, info = fitted
    meta = m.trace_.meta
    assert type(meta) is info
    assert meta.extra == {}, f"keys no field of {info.__name__} declares: {sorted(meta.extra)}"
    assert meta.burn_in == meta["burn_in"] and meta.c == 1
    # the estimator records y's scale for the diagnostics of sigma^2; TD-SMC's trace_ is read afresh from the particle
    # system on each access, and has no sigma^2 draws to judge
    assert (meta.y_scale is not None) != (info is SMCRunInfo)
    assert dict(meta) == {k: getattr(meta, k) for k in meta}      # the mapping view is the typed fields


def test_the_record_survives_a_file_and_a_pickle(fitted, tmp_path):
    m, info = fitted
    for back in (type(m.trace_).load(m.trace_.save(tmp_path / "t")).meta, pickle.loads(pickle.dumps(m.trace_)).meta,
                 type(m).load(m.save(tmp_path / "m")).trace_.meta):
        assert type(back) is info
        # JSON turns tuples into lists: compare what the file holds
        assert json.loads(json.dumps(back.to_dict())) == json.loads(json.dumps(m.trace_.meta.to_dict(), default=list))


def test_a_key_no_field_declares_is_kept_through_a_file(tmp_path):
    m = RJMCMCRegressor(n_chains=1, **RJ).fit(D.x, D.y)
    p = m.trace_.save(tmp_path / "t")
    with np.load(p) as z:
        arr = {k: z[k] for k in z.files}
    h = json.loads(str(arr["__header__"]))
    h["fields"]["meta"]["written_by_a_newer_version"] = {"x": [1, 2]}
    del h["fields"]["meta"]["interrupted"]                           # an older writer that did not record it
    arr["__header__"] = np.array(json.dumps(h))
    np.savez(tmp_path / "crafted.npz", **arr)
    t = type(m.trace_).load(tmp_path / "crafted.npz")
    assert t.meta.extra == {"written_by_a_newer_version": {"x": [1, 2]}} and t.meta.interrupted is False
    t2 = type(m.trace_).load(t.save(tmp_path / "again"))
    assert t2.meta["written_by_a_newer_version"] == {"x": [1, 2]}
    np.testing.assert_array_equal(t2.predict(D.x_test[:5]), m.trace_.predict(D.x_test[:5]))


def test_a_misspelt_name_is_an_error_and_a_dict_is_read_into_the_record():
    r = RunInfo.from_mapping(dict(burn_in=10, seconds=1.0))
    with pytest.raises(AttributeError, match="brun_in"):
        _ = r.brun_in
    assert r.get("brun_in") is None and "seconds" in r and "auto" not in r
    with pytest.raises(KeyError):
        r["auto"]
