"""Files a user gives to load (issue: nothing silent, nothing lost): every damaged or foreign file is one clear error
naming the path, in Python and on the command line; save and load agree on the name; the CLI checks where it will
write before it fits, reads models saved from Python, and refuses what it cannot honour."""
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

from rbf_bayes import RJMCMCRegressor
from rbf_bayes.datasets import sinc_data
from rbf_bayes.results import DamagedFileError, NewerFormatError

D = sinc_data(np.random.default_rng(0))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    t = tmp_path_factory.mktemp("files")
    m = RJMCMCRegressor(n_iter=300, burn_in=100, n_chains=1, random_state=0).fit(D.x, D.y)
    assert m.save(t / "model") == t / "model.npz"                     # numpy's suffix: save says where it wrote
    return t, m


def _craft(t, name, header=None, drop=None, change=None):
    with np.load(t / "model.npz") as z:
        arr = {k: z[k] for k in z.files}
    if header is not None: arr["__header__"] = np.array(header)
    if drop: arr.pop(drop)
    if change: arr.update(change)
    np.savez(t / name, **arr)
    return t / name


def _cases(t):
    good = (t / "model.npz").read_bytes()
    (t / "trunc.npz").write_bytes(good[: len(good) // 2]); (t / "empty.npz").write_bytes(b"")
    (t / "text.csv").write_text("a,b\n1,2\n"); (t / "p.pkl").write_bytes(pickle.dumps({"a": 1}))
    np.save(t / "arr.npy", np.zeros(3))
    h = json.loads(str(np.load(t / "model.npz")["__header__"]))
    return {
        "trunc.npz": (DamagedFileError, "truncated, damaged or another kind of file"),
        "empty.npz": (DamagedFileError, "is empty"),
        "text.csv": (DamagedFileError, "numpy cannot read it as .npz"),
        "p.pkl": (DamagedFileError, "numpy cannot read it as .npz"),
        "arr.npy": (DamagedFileError, "holds one numpy array"),
        _craft(t, "badjson.npz", header="{not json").name: (
            DamagedFileError,
            "header of this rbf_bayes estimator file is damaged",
        ),
        _craft(t, "list.npz", header="[1, 2]").name: (DamagedFileError, "not a JSON object"),
        _craft(t, "nofit.npz", header=json.dumps({k: v for k, v in h.items() if k != "fitted"})).name: (
            DamagedFileError,
            "damaged or foreign rbf_bayes estimator file (KeyError",
        ),
        _craft(t, "version.npz", header=json.dumps({**h, "version": "x"})).name: (
            DamagedFileError,
            "format version is damaged",
        ),
        _craft(t, "newer.npz", header=json.dumps({**h, "version": 99})).name: (NewerFormatError, "upgrade rbf_bayes"),
        _craft(t, "nohead.npz", drop="__header__").name: (DamagedFileError, "has no rbf_bayes header"),
        _craft(t, "scale.npz", change={"x_scale_": np.ones(3)}).name: (DamagedFileError, "x_scale_ has shape (3,)"),
        "missing": (FileNotFoundError, "no such file (nor"),
    }


def test_every_bad_file_is_one_clear_error_naming_it(saved):
    t, m = saved
    np.testing.assert_array_equal(RJMCMCRegressor.load(t / "model").predict(D.x[:5]), m.predict(D.x[:5]))  # either name
    for name, (exc, words) in _cases(t).items():
        with pytest.raises(exc, match=None) as e:
            RJMCMCRegressor.load(t / name)
        assert str(t / name) in str(e.value) and words in str(e.value), (name, str(e.value))


def test_a_result_file_too(saved):
    t, m = saved
    m.trace_.save(t / "trace")
    assert type(m.trace_).load(t / "trace").k.tolist() == m.trace_.k.tolist()
    (t / "t_trunc.npz").write_bytes((t / "trace.npz").read_bytes()[:100])
    with pytest.raises(DamagedFileError, match="t_trunc.npz is not an rbf_bayes result file"):
        type(m.trace_).load(t / "t_trunc.npz")


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "rbf_bayes", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_the_command_line_keeps_the_messages(saved):
    t, _ = saved
    _cases(t)
    (t / "new.csv").write_text("x\n0.5\n1.5\n")
    for name, words in (
        ("trunc.npz", "truncated, damaged"),
        ("newer.npz", "upgrade rbf_bayes"),
        ("empty.npz", "is empty"),
    ):
        r = _cli("predict", t / name, t / "new.csv", cwd=t)
        assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    # a model saved from Python (no column names stored): the CSV's columns are its inputs
    r = _cli("predict", t / "model.npz", t / "new.csv", cwd=t)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "y_mean,y_sd" and len(r.stdout.splitlines()) == 3, r.stderr
    (t / "two.csv").write_text("x,z\n0.5,1\n")
    r = _cli("predict", t / "model.npz", t / "two.csv", cwd=t)
    assert r.returncode == 2 and "saved from Python without column names" in r.stderr, r.stderr


def test_fit_checks_its_output_path_and_options_before_fitting(tmp_path):
    rng = np.random.default_rng(0); x = rng.uniform(-2, 2, 40)
    (tmp_path / "d.csv").write_text("x,y\n" + "".join(f"{a},{np.sin(a)}\n" for a in x))
    (tmp_path / "dup.csv").write_text("x,x,y\n1,2,3\n4,5,6\n")
    (tmp_path / "folder").mkdir()
    quick = ("--n-iter", 300, "--burn-in", 100, "--no-progress")
    for args, words in (((*quick, "--out", tmp_path / "nowhere" / "m.npz"), "does not exist"),
                        ((*quick, "--out", tmp_path / "folder"), "is a folder"),
                        (("--model", "smc", "--n-iter", 100), "--n-iter: the smc model has no iterations")):
        r = _cli("fit", tmp_path / "d.csv", "--target", "y", *args, cwd=tmp_path)
        assert r.returncode == 2 and words in r.stderr and "fitting" not in r.stderr, r.stderr  # refused before the fit
    r = _cli("fit", tmp_path / "dup.csv", "--target", "y", cwd=tmp_path)
    assert r.returncode == 2 and "names column(s) ['x'] more than once" in r.stderr, r.stderr
    r = _cli("fit", tmp_path / "d.csv", "--target", "y", *quick, "--out", tmp_path / "named", cwd=tmp_path)
    assert r.returncode == 0 and f"saved {tmp_path / 'named.npz'}" in r.stdout and (tmp_path / "named.npz").is_file(), (
        r.stdout
    )
