"""Chains in parallel at the estimator level (nb 05b_chains): threads do not change the draws, an executor (a Dask
LocalCluster of worker processes) gives the same fit as threads, Ctrl-C during parallel chains keeps the work and
continue_fit() finishes it bit for bit, and bad arguments are named."""
import os
import signal
import threading
import time
import warnings

import numpy as np
import numpy.testing as npt
import pytest

from rbf_bayes import RJMCMCRegressor
from rbf_bayes.datasets import sinc_data
from rbf_bayes.progress import InterruptedWarning

D = sinc_data(np.random.default_rng(2))
FAST = dict(n_iter=2000, burn_in=500, thin=5, random_state=11)


def _same(a, b):
    for f in ("k", "log_posterior", "sigma2", "centres", "coef_mean", "coef_draw", "kept"):
        npt.assert_array_equal(getattr(a.trace_, f), getattr(b.trace_, f))
    npt.assert_array_equal(a.predict(D.x_test), b.predict(D.x_test))


def test_threads_do_not_change_the_draws():
    m1 = RJMCMCRegressor(n_chains=3, n_jobs=1, **FAST).fit(D.x, D.y)
    m2 = RJMCMCRegressor(n_chains=3, n_jobs=2, **FAST).fit(D.x, D.y)
    _same(m1, m2)
    assert m2.trace_.n_chains == 3 and m2.trace_.meta["chain_lengths"] == [2000] * 3
    rows = dict(m2.summary().rows)
    assert "split R-hat" in rows and "3 independent chains" in rows["chains"]
    # one chain (n_chains=1; the default is 4) is the old behaviour, unchanged: the estimator's own generator drives it
    one = RJMCMCRegressor(n_chains=1, **FAST).fit(D.x, D.y)
    assert one.trace_.n_chains == 1 and "chain_lengths" not in one.trace_.meta


def test_chains_use_independent_streams():
    m = RJMCMCRegressor(n_chains=2, **FAST).fit(D.x, D.y)
    a, b = m.trace_.chain_series(m.trace_.log_posterior)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("kw,exc,word", [(dict(n_chains=0), ValueError, "n_chains"),
                                         (dict(n_chains=1.5), TypeError, "n_chains"),
                                         (dict(n_jobs=0), ValueError, "n_jobs"),
                                         (dict(n_jobs=-2), ValueError, "n_jobs"),
                                         (dict(executor="dask"), TypeError, "executor")])
def test_bad_parallel_arguments(kw, exc, word):
    with pytest.raises(exc, match=word):
        RJMCMCRegressor(**{**FAST, **kw}).fit(D.x, D.y)


def _fit_with_sigint(model, monkeypatch):
    """Fit with a real SIGINT (as Ctrl-C sends it), sent mid-run whatever the machine's speed: every chain's worker
    thread, after its first chunk, waits for its stop flag, and a helper thread sends SIGINT once a first chunk is done
    (a fixed delay was not mid-run on a faster machine: the fit had ended before the signal). Exactly one
    InterruptedWarning must say so. Returns the interrupted model."""
    from rbf_bayes import progress
    started, update = threading.Event(), progress.Progress.update

    def update_then_hold(self, n=1, **status):
        update(self, n, **status)
        flag = progress.stop_flag()
        if flag is not None and n > 0 and not getattr(self, "_held", False):   # a chain in a worker thread
            self._held = True
            started.set()
            assert flag.wait(60), "the stop flag was never set"

    def send():
        if started.wait(60): time.sleep(0.05); os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(progress.Progress, "update", update_then_hold)
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model.fit(D.x, D.y)
    sender.join()
    monkeypatch.undo()
    assert sum(issubclass(x.category, InterruptedWarning) for x in w) == 1, [str(x.message) for x in w]
    assert model.interrupted_
    return model


def test_ctrl_c_during_parallel_chains_then_continue_fit(monkeypatch):
    # the chains are held after their first chunk (2,000 iterations) until the signal: any length beyond is mid-run
    kw = dict(n_iter=40_000, burn_in=10_000, thin=100, random_state=4, n_chains=4, n_jobs=2)
    m = _fit_with_sigint(RJMCMCRegressor(**kw), monkeypatch)
    assert m.interrupted_ and sum(m.trace_.meta["chain_lengths"]) < 4 * 40_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.continue_fit()
    assert not m.interrupted_
    _same(m, RJMCMCRegressor(**kw).fit(D.x, D.y))


def test_ctrl_c_during_the_automatic_run_length_then_continue_fit(monkeypatch):
    """The default fit (n_iter="auto", 4 chains): Ctrl-C in a round keeps the work; continue_fit() finishes that round
    and goes on with the rounds, to the same chains, rounds and result as the uninterrupted fit, bit for bit."""
    kw = dict(random_state=4, n_jobs=2, max_iter=16_000)
    m = _fit_with_sigint(RJMCMCRegressor(**kw), monkeypatch)
    assert m.interrupted_ and "auto" not in m.trace_.meta
    # no warning but the one the uninterrupted fit gives too: these chains stop at the cap of 16,000 unconverged
    # (NotConvergedWarning, since stop 70; until then continue_fit was checked to raise no warning at all)
    with warnings.catch_warnings(record=True) as resumed:
        warnings.simplefilter("always")
        m.continue_fit()
    assert not m.interrupted_
    with warnings.catch_warnings(record=True) as straight:
        warnings.simplefilter("always")
        full = RJMCMCRegressor(**kw).fit(D.x, D.y)
    from rbf_bayes.convergence import NotConvergedWarning
    assert [(w.category, str(w.message)) for w in resumed] == [(w.category, str(w.message)) for w in straight]
    assert [w.category for w in resumed] == [NotConvergedWarning]
    assert m.trace_.meta["auto"]["rounds"] == full.trace_.meta["auto"]["rounds"] and m.n_iter_ == full.n_iter_
    _same(m, full)


def test_dask_executor_matches_threads(tmp_path):
    distributed = pytest.importorskip("distributed") if not os.environ.get("CI") else __import__("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        on_dask = RJMCMCRegressor(n_chains=3, executor=client.get_executor(), **FAST).fit(D.x, D.y)
    _same(on_dask, RJMCMCRegressor(n_chains=3, n_jobs=2, **FAST).fit(D.x, D.y))
    assert on_dask.get_params()["executor"] is not None
    on_dask.save(tmp_path / "m.npz")               # the executor is not part of the saved model
    assert RJMCMCRegressor.load(tmp_path / "m.npz").get_params()["executor"] is None


def test_annealing_restarts_in_parallel_equal_sequential():
    from rbf_bayes import AnnealedRBFRegressor
    kw = dict(criterion="mdl", n_iter=1500, n_restarts=4, random_state=3, restart_tol=1e9)
    seq = AnnealedRBFRegressor(**kw).fit(D.x, D.y)
    par = AnnealedRBFRegressor(n_jobs=2, **kw).fit(D.x, D.y)
    npt.assert_array_equal(seq.restart_criteria_, par.restart_criteria_)
    npt.assert_array_equal(seq.restart_k_, par.restart_k_)
    npt.assert_array_equal(seq.predict(D.x_test), par.predict(D.x_test))


def test_annealing_parallel_ctrl_c_then_continue_fit(monkeypatch):
    from rbf_bayes import AnnealedRBFRegressor
    kw = dict(criterion="mdl", n_iter=150_000, n_restarts=4, n_jobs=2, random_state=5, restart_tol=1e9)
    m = _fit_with_sigint(AnnealedRBFRegressor(**kw), monkeypatch)
    m.predict(D.x_test)                               # the best finished (or the best partial) network meanwhile
    m.continue_fit()
    assert not m.interrupted_
    ref = AnnealedRBFRegressor(**kw).fit(D.x, D.y)
    npt.assert_array_equal(m.restart_criteria_, ref.restart_criteria_)
    npt.assert_array_equal(m.predict(D.x_test), ref.predict(D.x_test))


@pytest.mark.parametrize(
    "kw,exc,word",
    [
        (dict(n_jobs=0), ValueError, "n_jobs"),
        (dict(n_jobs="2"), TypeError, "n_jobs"),
        (dict(executor=object()), TypeError, "executor"),
    ],
)
def test_annealing_bad_parallel_arguments(kw, exc, word):
    from rbf_bayes import AnnealedRBFRegressor
    with pytest.raises(exc, match=word):
        AnnealedRBFRegressor(n_iter=200, n_restarts=2, random_state=0, **kw).fit(D.x, D.y)


def test_bmars_chains():
    from rbf_bayes import BMARSRegressor
    from rbf_bayes.datasets import friedman
    d = friedman(np.random.default_rng(0))
    kw = dict(n_iter=3000, burn_in=1000, thin=10, random_state=2, n_chains=3)
    a = BMARSRegressor(n_jobs=1, **kw).fit(d.x, d.y)
    b = BMARSRegressor(n_jobs=2, **kw).fit(d.x, d.y)
    npt.assert_array_equal(a.trace_.k, b.trace_.k); npt.assert_array_equal(a.predict(d.x[:20]), b.predict(d.x[:20]))
    assert b.trace_.n_chains == 3 and len(b.trace_.kept) == 3 * 200
    rows = dict(b.summary().rows)
    assert "split R-hat" in rows and "log posterior" in rows["split R-hat"]
    assert set(b.term_probabilities_) and 0 <= min(b.variable_importance_) <= max(b.variable_importance_) <= 1
    sel = b.trace_.select(2000)
    assert (b.trace_.chain_position(sel.kept) >= 2000).all() and len(sel.kept) == 3 * 100



def test_select_thins_each_chain_from_its_first():
    """Trace.select(burn_in, thin) on pooled chains takes every thin-th snapshot of each chain from that chain's first
    at or after burn_in (since stop 74; before, every thin-th of the pooled snapshots, so the phase carried over from
    chain to chain: with 3 chains of 50 snapshots after burn-in and thin 3, chains 1 and 2 started 1 and 2 in and
    kept 17, 17 and 16: measured on this fit)."""
    from rbf_bayes import RJMCMCRegressor
    x, y = sinc_data(np.random.default_rng(0)).x, sinc_data(np.random.default_rng(0)).y
    tr = RJMCMCRegressor(n_iter=600, burn_in=100, thin=10, random_state=0, n_chains=3, n_jobs=1).fit(x, y).trace_
    per = tr.kept_by_chain(100)
    assert [len(i) for i in per] == [50, 50, 50]
    sel = tr.select(burn_in=100, thin=3)
    want = np.concatenate([tr.kept[i[::3]] for i in per])
    npt.assert_array_equal(sel.kept, want)
    assert len(sel.kept) == 3 * 17 and (tr.chain_position(want[[0, 17, 34]]) == 100).all()

@pytest.mark.parametrize("link", ["probit", "discriminant"])
def test_classifier_chains(link):
    from rbf_bayes import RJMCMCClassifier
    from rbf_bayes.datasets import load_ripley
    x, y, xt, yt = load_ripley()
    kw = dict(link=link, n_iter=1500, burn_in=500, random_state=1, n_chains=2)
    a = RJMCMCClassifier(n_jobs=1, **kw).fit(x, y)
    b = RJMCMCClassifier(n_jobs=2, **kw).fit(x, y)
    npt.assert_array_equal(a.predict_proba(xt[:50]), b.predict_proba(xt[:50]))
    assert b.trace_.n_chains == 2 and type(b.trace_) is type(a.trace_)
    assert np.mean(b.predict(xt) != yt) < 0.15


def test_the_cap_note_says_what_to_try():
    """A run stopped at max_iter says so, in a NotConvergedWarning at fit time and in the summary, and what to try: a
    tempered ladder and tries for the reversible-jump regressor, and more replicas when the run was tempered (the
    default with input selection, 12_estimators); tries for the classifier (both links: neither takes a ladder, and
    the discriminant was told to use one until stop 70); BMARS, which has neither, is told to raise max_iter only."""
    from rbf_bayes import BMARSRegressor, RJMCMCClassifier, RJMCMCRegressor
    from rbf_bayes.convergence import ConvergenceWarning, NotConvergedWarning
    assert issubclass(NotConvergedWarning, ConvergenceWarning)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)); y = X[:, 0] + 0.1 * rng.normal(size=40)
    labels = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)

    def note(make):
        with pytest.warns(NotConvergedWarning, match=r"max_iter = 200 iterations without converging") as rec:
            est = make()
        said = [str(w.message) for w in rec if w.category is NotConvergedWarning]
        n = 1 + hasattr(est, "other_fit_")   # the stacked default (quadratic="auto"): one per fit in the predictive,
        assert len(said) == n and "at the cap, split R-hat and bulk ESS: k " in said[0]   # the own fit's first
        # it names the user's line (this file), not a line of the package
        assert [w.filename for w in rec if w.category is NotConvergedWarning] == [__file__] * n
        ns = [n for n in est.summary().notes if "reached max_iter" in n]
        assert len(ns) == 1 and "max_iter = 200 iterations without converging" in ns[0] and said[0].startswith(ns[0])
        return est, ns[0]
    sel, said = note(lambda: RJMCMCRegressor(max_iter=200, random_state=0).fit(X, y))  # 3 inputs: selection, 4 replicas
    assert sel.trace_.meta["config"]["n_temps"] == 4
    assert "add replicas to the tempered ladder (n_temps, 4 in this run)" in said
    _, plain = note(lambda: RJMCMCRegressor(max_iter=200, select_inputs=False, random_state=0).fit(X, y))
    assert "use a tempered ladder (n_temps)" in plain and "in this run" not in plain
    for link in ("probit", "discriminant"):
        cl, said = note(lambda link=link: RJMCMCClassifier(link=link, max_iter=200, random_state=0).fit(X, labels))
        assert said.endswith("raise max_iter, or use multiple tries (n_tries)") and "n_temps" not in said
        assert cl.trace_.meta["link"] == link
    _, bm = note(lambda: BMARSRegressor(max_iter=200, random_state=0).fit(X, y))   # BMARS's ladder (stop 89)
    assert bm.endswith("raise max_iter, or add replicas to the tempered ladder (n_temps, 4 in this run)")
    _, bm1 = note(lambda: BMARSRegressor(max_iter=200, n_temps=1, random_state=0).fit(X, y))
    assert bm1.endswith("raise max_iter, or use a tempered ladder (n_temps)") and "n_tries" not in bm1


def test_the_cap_warning_in_other_words():
    """NotConvergedWarning.in_words: the same warning with the arguments it advises named another way (the CLI's
    options, 15_cli), built from the run's record rather than by rewriting the text; with no names it is the text."""
    from rbf_bayes import RJMCMCRegressor
    from rbf_bayes.convergence import NotConvergedWarning
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)); y = X[:, 0] + 0.1 * rng.normal(size=40)
    with pytest.warns(NotConvergedWarning) as rec:
        RJMCMCRegressor(max_iter=200, random_state=0).fit(X, y)
    w = [r.message for r in rec if r.category is NotConvergedWarning][0]
    assert w.in_words({}) == str(w) and "n_temps, 4 in this run" in str(w)
    said = w.in_words({"max_iter": "MAXI", "n_temps": "TEMPS", "n_tries": "TRIES"})
    assert said.startswith("the chains reached MAXI = 200 iterations") and "raise MAXI, or add replicas" in said
    assert "(TEMPS, 4 in this run)" in said and "(TRIES)" in said
    assert said.replace("MAXI", "max_iter").replace("TEMPS", "n_temps").replace("TRIES", "n_tries") == str(w)
    assert NotConvergedWarning("plain").in_words({"max_iter": "MAXI"}) == "plain"



def test_the_cap_warning_does_not_keep_the_model():
    """A recorded NotConvergedWarning holds the run's meta, not its result (stop 73's leftover: its closure held the
    whole result, every draw, for as long as a caller kept the warning); it still says itself in other words."""
    import gc
    import weakref

    from rbf_bayes import RJMCMCRegressor
    from rbf_bayes.convergence import NotConvergedWarning
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)); y = X[:, 0] + 0.1 * rng.normal(size=40)
    with pytest.warns(NotConvergedWarning) as rec:
        m = RJMCMCRegressor(max_iter=200, random_state=0).fit(X, y)
    w = [r.message for r in rec if r.category is NotConvergedWarning][0]
    gone = weakref.ref(m.trace_)
    del m
    gc.collect()
    assert gone() is None
    assert w.in_words({"max_iter": "MAXI"}).startswith("the chains reached MAXI = 200 iterations")


@pytest.mark.parametrize("kind, max_iter, thin", [("plain", 16_000, 1), ("plain", 12_000, 1), ("plain", 24_000, 1),
                                                  ("plain", 32_000, 3), ("tempered", 12_000, 1), ("probit", 12_000, 1)])
def test_an_automatic_run_keeps_only_what_it_can_return(monkeypatch, kind, max_iter, thin):
    """An automatic run narrows each chain's snapshots to those its round can return (05_rjmcmc, "Which snapshots a
    run keeps"; stop 74, after a Boston fit with quadratic=True was killed at 24 GB): through doubling rounds, a
    shorter last round at the cap (12,000 = 4,000 + 4,000 + 4,000) and one after a narrowed round (24,000), the fit's
    draws, snapshot for snapshot, and its reported thinning are those of the same chains keeping every snapshot; a
    chain ends holding at most 2 AUTO_KEEP (its last two rounds', 1,000 each) when the rounds double, and under a third
    of its snapshots otherwise, against all of them after the first round's burn-in without the narrowing. With thin 3
    and 32,000 the last round's 5,333 snapshots per chain are thinned by 6, not evenly: the pooled thinning before stop
    74 would have started the second chain a few snapshots in. The plain and tempered runs take their snapshots in C,
    the probit's from Python."""
    import dataclasses

    from rbf_bayes import chains as ch
    from rbf_bayes.convergence import NotConvergedWarning
    from rbf_bayes.probit import probit_run
    from rbf_bayes.rjmcmc import RJConfig, _KeptSnapshots, rjmcmc_run
    monkeypatch.setattr(ch, "AUTO_ESS", 10**9)   # never converges: every round up to the cap
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, size=(40, 1))
    y = np.sin(2 * x[:, 0]) + 0.1 * rng.normal(size=40) if kind != "probit" else (x[:, 0] > 0).astype(int)
    cfg = RJConfig(n_iter=4000, burn_in=2000, thin=thin, n_temps=2 if kind == "tempered" else 1)
    start = probit_run if kind == "probit" else rjmcmc_run

    def fit():
        runs = []
        def make_run(r, n):
            runs.append(start(x, y, config=dataclasses.replace(cfg, n_iter=n), rng=r, basis="gaussian"))
            return runs[-1]
        with pytest.warns(NotConvergedWarning):
            out = ch.auto_chains(make_run, ch.chain_generators(np.random.default_rng(0), 2), max_iter=max_iter)
        return out, [r.n_kept for r in runs]

    narrowed, held = fit()
    monkeypatch.setattr(_KeptSnapshots, "keep_only", lambda self, start, end, at_most=None: 1)
    full, held_all = fit()
    assert narrowed.meta.auto["n_iter"] == full.meta.auto["n_iter"] == max_iter
    assert narrowed.meta.auto["snapshot_thin"] == full.meta.auto["snapshot_thin"] > 1
    for f in ("kept", "centres", "centre_offsets", "coef_mean", "coef_draw", "k", "log_posterior"):
        assert np.array_equal(getattr(narrowed, f), getattr(full, f)), f
    assert min(held_all) == -(-(max_iter - 2000) // thin) and max(held) < min(held_all) / 3
    assert max_iter not in (16_000, 32_000) or max(held) <= 2 * ch.AUTO_KEEP
    # the previous round's returned snapshots stay (a run stopped early in a round still holds them): 1,000 of
    # [4,000, 8,000) and 1,000 of [8,000, 16,000)
    assert max_iter != 16_000 or held == [2 * ch.AUTO_KEEP] * 2

def test_a_converged_default_is_quiet():
    """The other side of the warning: a default fit whose chains converge raises none (Ripley, the discriminant, whose
    chains need 256,000 iterations with random_state=0: over the cap of 128,000, every estimator's default until stop
    70, where they stopped at ESS(k) 315 with only a note)."""
    from rbf_bayes import RJMCMCClassifier
    from rbf_bayes.datasets import load_ripley
    x, y, xt, yt = load_ripley()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = RJMCMCClassifier(link="discriminant", random_state=0).fit(x, y)
    au = m.trace_.meta["auto"]
    assert au["converged"] and au["n_iter"] == 256_000
    assert np.mean(m.predict(xt) != yt) < 0.1


def test_the_cap_advice_comes_from_the_caller():
    """auto_chains names in its note at the cap only what its caller said the user can change (`advice`, since stop
    72; before, the summary guessed it from the run's config and a link marker): called directly with no advice, a
    tempered run is told to raise max_iter only; an unknown name is refused, naming the argument."""
    import dataclasses

    from rbf_bayes.chains import auto_chains, chain_generators
    from rbf_bayes.convergence import NotConvergedWarning
    from rbf_bayes.rjmcmc import RJConfig, rjmcmc_run
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2)); y = X[:, 0] + 0.1 * rng.normal(size=30)
    cfg = RJConfig(n_iter=8, burn_in=0, n_temps=2, n_tries=2)
    mk = lambda r, n: rjmcmc_run(X, y, config=dataclasses.replace(cfg, n_iter=n), rng=r)  # noqa: E731
    for advice, end in (((), "raise max_iter"), (("n_tries",), "raise max_iter, or use multiple tries (n_tries)")):
        with pytest.warns(NotConvergedWarning):
            out = auto_chains(mk, chain_generators(np.random.default_rng(1), 2), max_iter=200, advice=advice)
        note = [n for n in out.summary().notes if "reached max_iter" in n]
        assert len(note) == 1 and note[0].endswith(end) and out.meta.auto["advice"] == list(advice)
    with pytest.raises(ValueError, match="advice"):
        auto_chains(mk, chain_generators(np.random.default_rng(1), 2), max_iter=200, advice=("n_temp",))


def test_the_regressors_rule_watches_the_predictions(monkeypatch):
    """n_iter="auto" judges f at the training rows too (stop 80, `outputs_at`; "The predictions too" in 05b): the
    regressor's run records it (meta.auto "watched", the last round's split-R-hat and ESS of f's rows, within the
    thresholds when converged), its summary has the row, and without the watch (outputs_at stubbed out) the same chains
    stop no later, round for round the same k and log posterior. Fails without the watch (no "watched", no row)."""
    from rbf_bayes import estimators as est
    from rbf_bayes.chains import AUTO_ESS, AUTO_RHAT
    rng = np.random.default_rng(5)
    X = rng.uniform(-3, 3, size=(60, 1)); y = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=60)
    f = "f at the training rows"
    m = RJMCMCRegressor(random_state=2, n_jobs=2, quadratic=False).fit(X, y)
    au = m.trace_.meta.auto
    assert au["converged"] and au["watched"] == [f]
    r, e = au["rounds"][-1][f]
    assert r <= AUTO_RHAT and e >= AUTO_ESS
    row = [v for k, v in m.summary().rows if k == f]
    assert len(row) == 1 and row[0].startswith(f"split R-hat <= {r:.3f} on half of them (90 % within 1.02, none above "
                                               f"1.05) and bulk ESS >= {e:.0f} on 90 %")   # the rule since stop 96
    assert any("for k, the log posterior and f at the training rows" in str(v) for _, v in m.summary().rows)
    monkeypatch.setattr(est, "outputs_at", lambda X: None)
    u = RJMCMCRegressor(random_state=2, n_jobs=2, quadratic=False).fit(X, y).trace_.meta.auto
    assert u["watched"] == [] and u["n_iter"] <= au["n_iter"]
    for a, b in zip(u["rounds"], au["rounds"], strict=False):
        assert (a["k"], a["log posterior"]) == (b["k"], b["log posterior"])


@pytest.mark.parametrize("link,f", [("probit", "the latent f at the training rows"),
                                    ("discriminant", "f at the training rows")])
def test_the_classifiers_rule_watches_the_predictions(link, f):
    """The classifier's n_iter="auto" judges f at the training rows too (stop 81; the probit's latent f, the
    discriminant's regression f): recorded in meta.auto, within the thresholds when converged, and said in the summary.
    Fails without the watch (no "watched", no row)."""
    from rbf_bayes import RJMCMCClassifier
    from rbf_bayes.chains import AUTO_ESS, AUTO_RHAT
    from rbf_bayes.datasets import load_pima
    x, y = load_pima()[:2]
    m = RJMCMCClassifier(link=link, random_state=0, n_jobs=2).fit(x, y)
    au = m.trace_.meta.auto
    assert au["converged"] and au["watched"] == [f]
    r, e = au["rounds"][-1][f]
    assert r <= AUTO_RHAT and e >= AUTO_ESS
    assert [k for k, _ in m.summary().rows].count(f) == 1


def test_a_watch_needs_names_and_kept_chains_splits_as_the_diagnostics_do():
    """auto_chains refuses a watch without `names` (what it gives, said in meta.auto and the summary), naming the
    argument; `kept_chains` splits a per-kept-draw quantity by chain exactly as `chain_diagnostics` splits k (each
    chain cut to the shortest), so the watch's R-hat of k itself is the diagnostics' R-hat of k."""
    from rbf_bayes.chains import auto_chains, chain_generators
    from rbf_bayes.convergence import NotConvergedWarning, ess, rhat
    from rbf_bayes.rjmcmc import RJConfig, rjmcmc_run
    mk = lambda rng, n: rjmcmc_run(X, y, config=RJConfig(n_iter=n, burn_in=n // 2), rng=rng)  # noqa: E731
    rng = np.random.default_rng(3)
    X = rng.uniform(-3, 3, size=(40, 1)); y = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=40)
    with pytest.raises(TypeError, match="watch"):
        auto_chains(mk, chain_generators(np.random.default_rng(1), 2), max_iter=200, watch=lambda out: {})
    with pytest.warns(NotConvergedWarning):  # 800 iterations: not converged, which does not matter here
        out = auto_chains(mk, chain_generators(np.random.default_rng(1), 3), max_iter=800)
    a = out.kept_chains(np.asarray(out.k, float)[out.kept])
    assert a.shape[0] == 3 and (rhat(a), ess(a)) == out.chain_diagnostics()["k"]
    assert out.kept_chains(np.asarray(out.k, float)[out.kept], burn_in=10**9) is None  # under 4 draws a chain


def test_outputs_at_takes_evenly_spaced_rows():
    """outputs_at(X, most=m): f at m evenly spaced rows of X (the first and the last among them), every output, one row
    per kept draw, as the trace's draw_outputs gives them; all rows when there are no more than m; its names said."""
    import dataclasses

    from rbf_bayes.chains import outputs_at
    from rbf_bayes.rjmcmc import RJConfig, sample_rjmcmc
    rng = np.random.default_rng(0)
    X = rng.normal(size=(23, 2)); Y = np.c_[X[:, 0], X[:, 1] ** 2] + 0.1 * rng.normal(size=(23, 2))
    tr = sample_rjmcmc(X, Y, config=dataclasses.replace(RJConfig(n_iter=400, burn_in=0, thin=10)), rng=rng)
    w = outputs_at(X, most=5)
    assert w.names == ("f at the training rows",)
    got = w(tr)["f at the training rows"]
    rows = [0, 5, 11, 16, 22]
    assert got.shape == (tr.n_samples, 10)
    npt.assert_array_equal(got, tr.draw_outputs(X[rows]).reshape(tr.n_samples, -1))
    assert outputs_at(X, "g", most=50)(tr)["g"].shape == (tr.n_samples, 46)


def test_a_run_from_before_the_watch_says_what_it_judged():
    """A result whose meta.auto has no "watched" (saved before stop 80) says its rule judged k and the log posterior
    only, and has no row for f."""
    import dataclasses

    from rbf_bayes.chains import auto_chains, chain_generators
    from rbf_bayes.rjmcmc import RJConfig, rjmcmc_run
    d = sinc_data(np.random.default_rng(1))
    mk = lambda r, n: rjmcmc_run(d.x, d.y, config=dataclasses.replace(RJConfig(n_iter=8, burn_in=0), n_iter=n), rng=r)  # noqa: E731
    out = auto_chains(mk, chain_generators(np.random.default_rng(4), 4), max_iter=128_000)
    del out.meta.auto["watched"]
    rows = dict(out.summary().rows)
    assert "for k and the log posterior)" in rows["run length"] and "f at the training rows" not in rows


def test_a_short_fixed_run_needs_no_burn_in_of_its_own():
    """Stop 88: RJMCMCRegressor(n_iter=2000) was refused ("burn_in (2500) must be < n_iter (2000)"): the default
    burn-in, a number, exceeded the run the user asked for. burn_in=None (the default) discards the estimator's
    customary burn-in or half the run if that is less (`fixed_burn_in`): a run of 2,000 keeps its second half, a run
    of 6,000 still discards 2,500 (BMARS: 5,000 of 12,000), and a burn_in given is used or refused as before."""
    from rbf_bayes import BMARSRegressor, RJMCMCClassifier
    from rbf_bayes.chains import fixed_burn_in
    x = np.linspace(-1, 1, 40)[:, None]
    y = np.sin(3 * x[:, 0])
    for est, n, want in ((RJMCMCRegressor, 2000, 1000), (RJMCMCRegressor, 6000, 2500),
                         (BMARSRegressor, 2000, 1000), (BMARSRegressor, 12_000, 5000)):
        m = est(n_iter=n, n_chains=1, random_state=0).fit(x, y)
        assert m.trace_.meta.burn_in == want, (est.__name__, n)
    c = RJMCMCClassifier(n_iter=2000, n_chains=1, random_state=0).fit(x, (y > 0).astype(int))
    assert c.trace_.meta.burn_in == 1000
    assert RJMCMCRegressor(n_iter=2000, burn_in=300, n_chains=1, random_state=0).fit(x, y).trace_.meta.burn_in == 300
    with pytest.raises(ValueError, match="burn_in"):
        RJMCMCRegressor(n_iter=2000, burn_in=2000, n_chains=1, random_state=0).fit(x, y)
    with pytest.raises(TypeError, match="n_iter"):
        fixed_burn_in(None, 2.5, 2500)
