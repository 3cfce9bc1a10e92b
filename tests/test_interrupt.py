"""The Ctrl-C contract (issue 13, `04b_progress`), per estimator, with real SIGINTs.

1. Ctrl-C stops the fit at the next safe point, with exactly one InterruptedWarning, and sets `interrupted_`;
2. the interrupted model keeps what was computed (it predicts, or says it stopped in burn-in);
3. `continue_fit()` finishes the same run: every array of the result equals the uninterrupted fit's, bit for bit;
4. a model whose run is gone (pickled, saved and loaded) says so instead of continuing; a finished fit has nothing to
   continue;
5. the CLI saves the incomplete model and exits with 130.

The signal is sent with `os.kill(os.getpid(), SIGINT)` - what a terminal's Ctrl-C does - from inside the progress
update of the n-th chunk (deterministic: the chunk in which it arrives is known), and in one test from a timer thread
while the fit runs (the asynchronous case).
"""
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

from rbf_bayes import AnnealedRBFRegressor, BMARSRegressor, RJMCMCRegressor, SMCRegressor
from rbf_bayes import progress as progress_mod
from rbf_bayes.priors import SMCPrior
from rbf_bayes.progress import DeferredInterrupt, InterruptedWarning


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, 2))
    return X, np.sin(2 * X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.normal(size=n)


@pytest.fixture
def sigint_at(monkeypatch):
    "sigint_at(j): the j-th progress update of the next fit sends SIGINT to this process (as Ctrl-C does)."
    state = {}
    real = progress_mod.Progress.update

    def update(self, n=1, **status):
        state["calls"] = state.get("calls", 0) + 1
        if state["calls"] == state.get("at"):
            signal.raise_signal(signal.SIGINT)
        return real(self, n, **status)

    monkeypatch.setattr(progress_mod.Progress, "update", update)

    def arm(j):
        state.update(calls=0, at=j)
    return arm


def _fit_interrupted(model, X, y, arm, at):
    arm(at)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model.fit(X, y)
    arm(None)
    caught = [x for x in w if issubclass(x.category, InterruptedWarning)]
    assert len(caught) == 1, [str(x.message) for x in w]
    assert model.interrupted_
    return str(caught[0].message)


def _same_result(a, b):
    "Every array and list of two results equal (meta apart from timings)."
    import dataclasses
    for f in dataclasses.fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if f.name == "meta":
            drop = {"seconds"}
            assert {k: v for k, v in va.items() if k not in drop} == {k: v for k, v in vb.items() if k not in drop}
        elif isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=f.name)
        elif isinstance(va, list) and va and isinstance(va[0], np.ndarray):
            assert len(va) == len(vb), f.name
            for x, z in zip(va, vb, strict=True):
                np.testing.assert_array_equal(x, z, err_msg=f.name)
        elif f.name != "seconds":
            assert va == vb, f.name


CASES = {  # estimator factory, progress update at which Ctrl-C arrives (after burn-in)
    # RJMCMC takes its snapshots inside C: one update per chunk of 2,000 iterations, so the third ends after burn-in
    "rjmcmc": (lambda: RJMCMCRegressor(n_iter=12_000, burn_in=4_000, thin=4, random_state=1, n_chains=1), 3),
    "rjsa": (
        lambda: AnnealedRBFRegressor(n_iter=1000, n_restarts=1, random_state=1),
        20,
    ),  # one run; restarts: test_chains
    "bmars": (lambda: BMARSRegressor(n_iter=1500, burn_in=500, thin=5, random_state=1, n_chains=1), 80),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ctrl_c_then_continue_fit_equals_the_uninterrupted_fit(name, sigint_at):
    make, at = CASES[name]
    X, y = _data()
    full = make().fit(X, y)
    assert not full.interrupted_
    m = make()
    msg = _fit_interrupted(m, X, y, sigint_at, at)
    assert "continue_fit()" in msg and "kept: " in msg
    n_done = len(m.trace_.k)
    assert 0 < n_done < len(full.trace_.k)
    assert m.trace_.interrupted and m.trace_.meta["n_done"] == n_done
    assert m.predict(X[:5]).shape == (5,)                           # the work so far is a usable model
    assert any(n.startswith("interrupted") and "continue_fit()" in n for n in m.summary().notes)
    partial_k = m.trace_.k.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")                               # finishing warns about nothing
        m.continue_fit()
    assert not m.interrupted_ and not m.trace_.interrupted
    np.testing.assert_array_equal(m.trace_.k[:n_done], partial_k)
    _same_result(m.trace_, full.trace_)
    np.testing.assert_array_equal(m.predict(X), full.predict(X))
    np.testing.assert_array_equal(m.predict(X, return_std=True)[1], full.predict(X, return_std=True)[1])
    with pytest.raises(ValueError, match="ran to the end: there is nothing to continue"):
        m.continue_fit()


def test_annealing_restarts_ctrl_c_then_continue_fit(sigint_at):
    """Ctrl-C in the second of three restarts: the model holds the best so far (the interrupted run while it is the one
    in memory); continue_fit finishes that restart and runs the third: the same restarts, the same best network."""
    make = lambda: AnnealedRBFRegressor(
        n_iter=1000, n_restarts=3, n_jobs=1, restart_tol=1e9, random_state=1
    )  # one after another
    X, y = _data()
    full = make().fit(X, y)
    m = make()
    _fit_interrupted(m, X, y, sigint_at, 70)                        # 50 progress updates per restart: in the second
    assert len(m.restart_criteria_) == 2 and m.trace_.interrupted
    assert m.predict(X[:5]).shape == (5,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.continue_fit()
    assert not m.interrupted_
    np.testing.assert_array_equal(m.restart_criteria_, full.restart_criteria_)
    np.testing.assert_array_equal(m.restart_k_, full.restart_k_)
    _same_result(m.trace_, full.trace_)
    np.testing.assert_array_equal(m.predict(X), full.predict(X))


def test_ctrl_c_during_the_final_descent_then_continue_fit(monkeypatch):
    """Issue 36: a Ctrl-C while the annealer polishes its best network (after the schedule) used to escape as a
    KeyboardInterrupt and lose the run. Now it ends the descent at once: one InterruptedWarning that says so, the model
    holds the annealed network, and continue_fit does the descent again: the uninterrupted fit, bit for bit."""
    from rbf_bayes import annealing
    make = lambda: AnnealedRBFRegressor(n_iter=400, n_restarts=1, polish=True, random_state=3)   # noqa: E731
    X, y = _data()
    full = make().fit(X, y)
    assert full.criterion_ < full.trace_.meta["criterion_annealed"] - 1   # the descent ran and gained (71.6 < 81.4)
    real, calls = annealing._varpro, []

    def varpro(*a, **kw):
        calls.append(1)
        if len(calls) == 3: signal.raise_signal(signal.SIGINT)   # inside the descent's first round
        return real(*a, **kw)

    monkeypatch.setattr(annealing, "_varpro", varpro)
    m = make()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.fit(X, y)
    caught = [x for x in w if issubclass(x.category, InterruptedWarning)]
    assert len(caught) == 1 and "during the final descent of the centres" in str(caught[0].message)
    assert m.interrupted_ and m.trace_.interrupted and "criterion_annealed" not in m.trace_.meta
    assert m.trace_.meta["n_done"] == 400 and m.predict(X[:5]).shape == (5,)
    assert m.criterion_ >= full.criterion_ - 1e-9                  # the annealed network, not yet polished
    monkeypatch.setattr(annealing, "_varpro", real)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.continue_fit()
    assert not m.interrupted_
    _same_result(m.trace_, full.trace_)
    np.testing.assert_array_equal(m.predict(X), full.predict(X))


def test_ctrl_c_while_a_restart_assembles_its_result(monkeypatch):
    """A Ctrl-C that lands while a finished restart assembles its result (least squares on all rows) is held, not
    raised: the restarts stop after that one, with one warning, and continue_fit runs the rest: the same restarts and
    the same network as the uninterrupted fit."""
    from rbf_bayes import annealing
    make = lambda: AnnealedRBFRegressor(n_iter=300, n_restarts=3, n_jobs=1, restart_tol=1e9, random_state=1)   # noqa: E731
    X, y = _data()
    full = make().fit(X, y)
    real, calls = annealing._AnnealRun._result, []

    def result(self):
        calls.append(1)
        if len(calls) == 1: signal.raise_signal(signal.SIGINT)   # the first restart's assembly
        return real(self)

    monkeypatch.setattr(annealing._AnnealRun, "_result", result)
    m = make()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.fit(X, y)
    caught = [x for x in w if issubclass(x.category, InterruptedWarning)]
    assert len(caught) == 1 and "after 1 of 3 restarts" in str(caught[0].message), [str(x.message) for x in w]
    assert m.interrupted_ and len(m.restart_criteria_) == 1 and not m.trace_.interrupted
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.continue_fit()
    assert not m.interrupted_
    np.testing.assert_array_equal(m.restart_criteria_, full.restart_criteria_)
    _same_result(m.trace_, full.trace_)


# burn-in longer than one chunk (RJMCMC 2,000, BMARS 5,000 iterations), so the first chunk ends inside it
BURN_IN_CASES = {
    "rjmcmc": lambda: RJMCMCRegressor(n_iter=12_000, burn_in=11_000, thin=20, random_state=2, n_chains=1),
    "bmars": lambda: BMARSRegressor(n_iter=12_000, burn_in=11_000, thin=20, random_state=2, n_chains=1),
}


def test_quadratic_auto_ctrl_c_in_either_fit_then_continue_fit(sigint_at):
    """quadratic="auto" (12_estimators, `_QuadraticChoice`) runs two fits: Ctrl-C in the plain one (update 3) or in the
    products' one (update 9; six updates of 2,000 iterations make the first fit) leaves that fit's state, interrupted_;
    continue_fit finishes it and the rest, and the result is the uninterrupted choice's, bit for bit."""
    def make():
        return RJMCMCRegressor(quadratic="auto", n_iter=12_000, burn_in=4_000, thin=4, random_state=1, n_chains=1)
    X, y = _data()
    full = make().fit(X, y)
    for at, products in ((3, False), (9, True)):
        m = make()
        _fit_interrupted(m, X, y, sigint_at, at)
        assert m.quadratic_ is products and not hasattr(m, "quadratic_choice_")
        assert m.predict(X[:5]).shape == (5,)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.continue_fit()
        assert not m.interrupted_ and m.quadratic_ is full.quadratic_
        def choice(e):   # each fit's seconds are the wall clock's, the rest the fits' results
            return {k: v for k, v in e.quadratic_choice_.items() if k != "seconds"}
        assert choice(m) == choice(full) and "_auto_run" not in vars(m)
        _same_result(m.trace_, full.trace_)
        np.testing.assert_array_equal(m.predict(X), full.predict(X))


@pytest.mark.parametrize("name", list(BURN_IN_CASES))
def test_ctrl_c_in_burn_in(name, sigint_at):
    "Stopped before burn-in ends: no samples; predict says why and how to go on; continue_fit still gives the full fit."
    make = BURN_IN_CASES[name]
    X, y = _data()
    m = make()
    msg = _fit_interrupted(m, X, y, sigint_at, 1)
    assert re.search(r"after [0-9,]+ of 12,000 iterations, still in burn-in \(11,000\): no \w+ are kept yet", msg), msg
    with pytest.raises(ValueError, match=r"after [0-9]+ iterations, in burn-in \(11000\); resume\(\) \(continue_fit"):
        m.predict(X)
    m.continue_fit()
    _same_result(m.trace_, make().fit(X, y).trace_)


def test_smc_ctrl_c_then_continue_fit(sigint_at):
    "TD-SMC: the shuffled rows not yet processed are kept; continue_fit feeds them in the same order."
    X, y = _data(80)
    make = lambda: SMCRegressor(n_particles=40, prior=SMCPrior(k_max=10), random_state=3)   # noqa: E731
    full = make().fit(X, y)
    m = make()
    msg = _fit_interrupted(m, X, y, sigint_at, 30)
    assert (
        "after 30 of 80 rows" in msg
        and "rows_processed_ = [" in msg
        and "continue_fit() (the remaining 50 rows, in the same order)" in msg
    )
    assert m.smc_.t == 30 and m.trace_.meta["n_done"] == 30 and m.predict(X[:3]).shape == (3,)
    order = np.random.default_rng(3).permutation(80)           # the shuffle fit makes with random_state=3
    np.testing.assert_array_equal(m.rows_processed_, np.sort(order[:30]))   # rows of the user's X, not of the shuffle
    assert any("continue_fit()" in n for n in m.summary().notes)
    with pytest.raises(ValueError, match="50 rows not yet processed: call continue_fit"):
        m.partial_fit(X[:5], y[:5])
    m.continue_fit()
    assert not m.interrupted_ and m.smc_.t == 80
    np.testing.assert_array_equal(m.rows_processed_, np.arange(80))
    np.testing.assert_array_equal(m.smc_.logw, full.smc_.logw)
    np.testing.assert_array_equal(m.predict(X), full.predict(X))


@pytest.mark.parametrize("name", list(CASES))
def test_a_model_without_its_run_says_so(name, sigint_at, tmp_path):
    "Pickled, or saved and loaded: still predicts, still `interrupted_`, but continue_fit asks for a new fit."
    make, at = CASES[name]
    X, y = _data()
    m = make()
    _fit_interrupted(m, X, y, sigint_at, at)
    p = pickle.loads(pickle.dumps(m))
    m.save(tmp_path / "m.npz")
    q = type(m).load(tmp_path / "m.npz")
    for other in (p, q):
        assert other.interrupted_
        np.testing.assert_array_equal(other.predict(X), m.predict(X))
        with pytest.raises(ValueError, match="its run is no longer in memory"):
            other.continue_fit()
        assert any("fit again" in n for n in other.summary().notes)
    with pytest.raises(ValueError, match="no longer holds its sampler"):
        p.trace_.resume()
    m.continue_fit()                                   # the original still holds its run


def test_ctrl_c_from_another_thread_while_fitting():
    "The asynchronous case: SIGINT from a timer thread at an "
    "arbitrary moment of a running fit; continue_fit = full fit."
    X, y = _data(120)
    # 100k iterations of the default model take seconds on any machine we run: the signal, 50 ms after the handler is
    # in place, lands mid-run (the check below says so if it ever does not)
    make = lambda: RJMCMCRegressor(n_iter=100_000, burn_in=1000, thin=50, random_state=5, n_chains=1)   # noqa: E731

    def send_when_running():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:        # wait until the fit's handler is installed
            h = signal.getsignal(signal.SIGINT)
            if isinstance(getattr(h, "__self__", None), DeferredInterrupt):
                time.sleep(0.05)
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.001)

    m = make()
    th = threading.Thread(target=send_when_running, daemon=True)
    th.start()
    with pytest.warns(InterruptedWarning):
        m.fit(X, y)
    th.join()
    assert m.interrupted_ and 0 < len(m.trace_.k) < 100_000
    m.continue_fit()
    _same_result(m.trace_, make().fit(X, y).trace_)


def test_exhaustive_search_stops_after_the_k_in_progress(monkeypatch):
    from rbf_bayes import annealing
    from rbf_bayes.calibration import CalibratedPrior
    X, y = _data(40)
    real, calls = annealing.anneal_rbf, []

    def anneal(*a, **kw):
        calls.append(1)
        assert kw["interruptible"] is False
        if len(calls) == 2:
            signal.raise_signal(signal.SIGINT)
        return real(*a, **kw)

    monkeypatch.setattr(annealing, "anneal_rbf", anneal)
    with pytest.warns(InterruptedWarning, match=r"after 2 of 4 values of k: the result covers k in \[1, 2\]"):
        r = annealing.exhaustive_search(X, y, [1, 2, 3, 4], calibration=CalibratedPrior("mdl"), n_iter=50,
                                        rng=np.random.default_rng(0))
    assert r["interrupted"] and sorted(r["per_k"]) == [1, 2]


def _csv(path, n=150):
    X, y = _data(n)
    with open(path, "w") as f:
        f.write("a,b,y\n")
        for (a, b), t in zip(X, y, strict=True):
            f.write(f"{a},{b},{t}\n")


def _run_and_interrupt(args, tmp_path):
    "Start the CLI, send SIGINT once the fit is under way (its progress bar has drawn), return (code, stdout, stderr)."
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "rbf_bayes", *args], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    err = ""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ch = p.stderr.read(1)
        if not ch:
            break
        err += ch
        # a bar is drawn (of iterations, or of the chains): running
        if "it/s" in err or "s/it" in err or "chains:" in err:
            p.send_signal(signal.SIGINT)
            break
    out, rest = p.communicate(timeout=120)
    return p.returncode, out, err + rest


def test_cli_fit_interrupted_saves_the_partial_model_and_exits_130(tmp_path):
    _csv(tmp_path / "d.csv")
    code, out, err = _run_and_interrupt(["fit", "d.csv", "--target", "y", "--n-iter", "2000000", "--out", "m.npz"],
                                        tmp_path)
    assert code == 130, err
    assert "interrupted after" in err and "saved to m.npz" in err and "Traceback" not in err
    assert "InterruptedWarning" not in err and "continue_fit" not in err     # the CLI speaks for itself
    m = RJMCMCRegressor.load(tmp_path / "m.npz")
    assert m.interrupted_ and m.metadata_["interrupted"] is True and 0 < len(m.trace_.k) < 2_000_000
    s = subprocess.run([sys.executable, "-m", "rbf_bayes", "summary", "m.npz"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert s.returncode == 0 and "interrupted by the user" in s.stdout


def test_cli_robot_arm_interrupted_reports_what_it_did(tmp_path):
    code, out, err = _run_and_interrupt(["robot-arm", "--n-iter", "5000000", "--burn-in", "1000"], tmp_path)
    assert code == 130, err
    assert "interrupted (Ctrl-C) after" in out and "of 5000000 iterations" in out
    assert "5000000 iterations (1000 burn-in)" not in out       # it does not claim the iterations it did not run
    assert "Traceback" not in err


def test_stacked_ctrl_c_in_either_fit_then_continue_fit(sigint_at):
    """StackedRegressor (12_estimators) fits its parts in turn: Ctrl-C in the first (update 3 of its six) or in the
    second stops the stack there, predictions are refused with a message naming continue_fit, and continue_fit
    finishes that fit and the rest: the weights and predictions are the uninterrupted stack's, bit for bit."""
    from sklearn.exceptions import NotFittedError

    from rbf_bayes import StackedRegressor

    def make():
        return StackedRegressor(estimators=[
            ("rbf", RJMCMCRegressor(n_iter=12_000, burn_in=4_000, thin=4, n_chains=1, quadratic=False)),
            ("mars", BMARSRegressor(n_iter=1500, burn_in=500, thin=5, n_chains=1))], random_state=1)
    X, y = _data()
    full = make().fit(X, y)
    for at, part in ((3, "rbf"), (90, "mars")):
        m = make()
        _fit_interrupted(m, X, y, sigint_at, at)
        fits = dict(m._run["fits"])
        assert fits[part].interrupted_ and all(not e.interrupted_ for n, e in fits.items() if n != part and
                                               hasattr(e, "trace_"))
        with pytest.raises(NotFittedError, match=r"interrupted \(Ctrl-C\): continue_fit\(\) finishes it"):
            m.predict(X)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.continue_fit()
        assert not m.interrupted_ and "_run" not in vars(m)
        np.testing.assert_array_equal(m.weights_, full.weights_)
        np.testing.assert_array_equal(m.predict(X), full.predict(X))


def test_cli_fit_stacked_interrupted_exits_130_and_writes_nothing(tmp_path):
    """Ctrl-C in `fit --model stacked`: exit 130 and one line saying that nothing was written (a stack's weights need
    every fit), no traceback, no file."""
    _csv(tmp_path / "d.csv")
    code, out, err = _run_and_interrupt(["fit", "d.csv", "--target", "y", "--model", "stacked", "--out", "s.npz"],
                                        tmp_path)
    assert code == 130, err
    assert "a stacked model is saved only once all its fits are done (nothing written to s.npz)" in err, err
    assert "Traceback" not in err and "continue_fit" not in err and not (tmp_path / "s.npz").exists()
