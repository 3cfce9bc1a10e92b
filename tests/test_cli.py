"""The console script runs end to end and refuses bad arguments."""
import json
import subprocess
import sys

import numpy as np
import pytest

from rbf_bayes.cli import load_model, main
from rbf_bayes.estimators import run_converged


def test_demo_runs_and_reports(capsys):
    assert main(["demo", "--k", "0", "5", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "robot arm: 200 training / 200 test points" in out
    assert "test MSE" in out and "done in" in out


def test_robot_arm_experiment_short(capsys):
    assert main(["--n-iter", "2000", "--burn-in", "1000", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "test MSE (summed over both outputs)" in out
    assert "posterior over k" in out and "iterations/s" in out


@pytest.mark.parametrize("argv, msg", [
    (["demo", "--k", "500"], "--k values must be in [0, 197]"),
    (["--n-iter", "10", "--burn-in", "10"], "need --n-iter >= 1 and 0 <= --burn-in < --n-iter"),
    (["--k-max", "300"], "--k-max must be in [0, 197]"),
])
def test_cli_rejects_bad_arguments(argv, msg, capsys):
    assert main(argv) == 2                      # one line on stderr, exit code 2, no traceback
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and err.startswith("rbf-bayes: error:")


def test_console_script_installed():
    r = subprocess.run(["rbf-bayes", "--n-iter", "500", "--burn-in", "100"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "test MSE" in r.stdout


def _csv(path, n=60, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, 2))
    y = np.sin(x[:, 0]) + 0.3 * x[:, 1] + 0.05 * rng.normal(size=n)
    with open(path, "w") as f:
        f.write("a,b,noise,y\n")
        for i in range(n):
            f.write(f"{x[i, 0]},{x[i, 1]},{rng.normal()},{y[i]}\n")
    return x, y


def _run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "rbf_bayes", *map(str, args)], capture_output=True, text=True, **kw)


@pytest.mark.parametrize("model", ["rjmcmc", "rjsa", "smc", "bmars"])
def test_fit_predict_summary_plot_on_a_csv(model, tmp_path):
    """The user's path: fit on a CSV (options before and after the command), predict a new CSV with mean and sd columns,
    summary, plot -- through `python -m rbf_bayes`."""
    x, y = _csv(tmp_path / "train.csv")
    _csv(tmp_path / "new.csv", n=7, seed=1)
    r = _run("--seed", 3, "fit", tmp_path / "train.csv", "--target", "y", "--features", "a,b", "--model", model,
             "--out", tmp_path / "m.npz", *([] if model == "smc" else ["--n-iter", 600]),
             *(["--burn-in", 300] if model in ("rjmcmc", "bmars") else []))
    assert r.returncode == 0, r.stderr
    assert "saved" in r.stdout and "fitting" in r.stderr            # progress on stderr, result on stdout
    assert "100%" in r.stderr and "100%" not in r.stdout  # the progress bar is on by default, on stderr
    r = _run(
        "fit", tmp_path / "train.csv", "--target", "y", "--model", model, "--no-progress", "--out", tmp_path / "m2.npz"
    )
    assert r.returncode == 0 and "%|" not in r.stderr, r.stderr     # --no-progress: no bar; the model's own defaults
    if model in ("rjmcmc", "bmars"):                                 # --n-iter below the default burn-in: half of it
        r = _run("fit", tmp_path / "train.csv", "--target", "y", "--model", model, "--n-iter", 200,
                 "--out", tmp_path / "m3.npz")
        assert r.returncode == 0, r.stderr
    r = _run("predict", tmp_path / "m.npz", tmp_path / "new.csv", "-o", tmp_path / "p.csv")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0] == "y_mean,y_sd" and len(lines) == 8
    vals = np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])
    assert np.all(np.isfinite(vals)) and np.all(vals[:, 1] > 0)
    r = _run("predict", tmp_path / "m.npz", tmp_path / "new.csv", "--interval", "0.9", "-o", tmp_path / "q.csv")
    assert r.returncode == 0, r.stderr                                # the predictive interval: two more columns
    lines = (tmp_path / "q.csv").read_text().splitlines()
    assert lines[0] == "y_mean,y_sd,y_lower,y_upper" and len(lines) == 8
    q = np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])
    np.testing.assert_array_equal(q[:, :2], vals)
    assert np.all((q[:, 2] < q[:, 0]) & (q[:, 0] < q[:, 3]))
    r = _run("predict", tmp_path / "m.npz", tmp_path / "new.csv", "--interval", "95")
    assert r.returncode == 2 and "--interval must be a probability in (0, 1)" in r.stderr, r.stderr
    r = _run("summary", tmp_path / "m.npz")
    assert (
        r.returncode == 0
        and ("best network" if model == "rjsa" else "p(k | y)") in r.stdout
        and "fitted to" in r.stdout
    ), r.stderr
    r = _run("summary", tmp_path / "m.npz", "--json")                # for scripts: one JSON object, no NaN
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert js["model"] == type(load_model(tmp_path / "m.npz")).__name__ and js["fitted_to"]["targets"] == ["y"]
    assert abs(sum(js["p_k"]) - 1) < 1e-9 and js["rows"]["fitted to"].startswith(str(tmp_path / "train.csv"))
    if model == "rjmcmc":     # 4 chains by default: split R-hat and ESS per quantity
        assert set(js["diagnostics"]["k"]) == {"rhat", "ess"} and js["diagnostics"]["k"]["ess"] > 0
    r = _run("plot", tmp_path / "m.npz", "--output", tmp_path / "f.png")
    assert r.returncode == 0 and (tmp_path / "f.png").stat().st_size > 1000, r.stderr
    r = _run("plot", tmp_path / "m.npz", "--data", tmp_path / "new.csv", "--output", tmp_path / "g.png")
    assert r.returncode == 0 and (tmp_path / "g.png").stat().st_size > 1000, r.stderr     # with the predictive panel
    r = _run("plot", tmp_path / "m.npz", "--data", tmp_path / "missing.csv")
    assert r.returncode == 2 and "missing.csv: no such file" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "args, msg",
    [
        (["fit", "{d}/train.csv"], "fit needs --target"),
        (["fit", "{d}/train.csv", "--target", "z"], "no column(s) ['z']"),
        (["fit", "{d}/missing.csv", "--target", "y"], "missing.csv: no such file"),
        (["fit", "{d}/bad.csv", "--target", "y"], "line 3, column 'a': 'x' is not a number"),
        (
            ["fit", "{d}/train.csv", "--target", "y", "--n-iter", "0", "--out", "{d}/m.npz"],
            "n_iter must be an integer >= 1",
        ),
        (["predict", "{d}/train.csv", "{d}/train.csv"], "not an rbf_bayes estimator file"),
        (["summary", "{d}/nothing.npz"], "no such file"),
        (["--model", "smc", "demo"], "do not apply to demo"),
        (["fit", "{d}/train.csv", "--target", "y", "--bogus", "1"], "unrecognized arguments: --bogus"),
        (["--n-iter", "x"], "--n-iter: must be a whole number or 'auto', got 'x'"),
        (["fit", "{d}/train.csv", "--target", "y", "--model", "smc", "--chains", "2"], "runs one particle system"),
        (["fit", "{d}/train.csv", "--target", "y", "--chains", "0"], "--chains must be >= 1"),
        (["fit", "{d}/train.csv", "--target", "y", "--chains", "2", "--jobs", "0"], "--jobs must be >= 1 or -1"),
    ],
)
def test_bad_values_and_files_are_one_line_errors(args, msg, tmp_path):
    _csv(tmp_path / "train.csv")
    (tmp_path / "bad.csv").write_text("a,b,y\n1,2,3\nx,2,3\n")
    r = _run(*[a.format(d=tmp_path) for a in args])
    assert r.returncode == 2, (r.returncode, r.stderr)
    last = r.stderr.strip().splitlines()[-1]          # a progress line may come first; the error is one line
    assert msg in last and last.startswith("rbf-bayes: error:") and "Traceback" not in r.stderr, r.stderr


def test_version_and_closed_pipe(tmp_path):
    r = _run("--version")
    assert r.returncode == 0 and r.stdout.startswith("rbf-bayes ")
    r = subprocess.run(f"{sys.executable} -m rbf_bayes demo --k 0 5 10 20 | head -1", shell=True, capture_output=True,
                       text=True)
    assert r.returncode == 0 and "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr


@pytest.mark.parametrize("model, word", [("rjmcmc", "3 independent chains"), ("bmars", "3 independent chains"),
                                         ("rjsa", "")])
def test_fit_with_chains(model, word, tmp_path):
    _csv(tmp_path / "train.csv")
    r = _run("fit", tmp_path / "train.csv", "--target", "y", "--features", "a,b", "--model", model, "--chains", "3",
             "--jobs", "2", "--n-iter", "1000", "--no-progress", "--out", tmp_path / "m.npz")
    assert r.returncode == 0, r.stderr
    s = _run("summary", tmp_path / "m.npz")
    assert s.returncode == 0 and word in s.stdout, s.stdout
    if model == "rjsa":                                  # three restarts, the best kept
        from rbf_bayes.cli import load_model
        assert len(load_model(tmp_path / "m.npz").restart_criteria_) == 3


def test_fit_with_automatic_length_tempering_and_tries(tmp_path):
    """--n-iter auto --temps --tries reach RJMCMCRegressor; the saved model's summary says the length the chains chose;
    options that do not apply to a model are one-line errors."""
    _csv(tmp_path / "train.csv")
    r = _run("fit", tmp_path / "train.csv", "--target", "y", "--features", "a,b", "--chains", "2", "--n-iter", "auto",
             "--temps", "3", "--tries", "2", "--no-progress", "--out", tmp_path / "m.npz")
    assert r.returncode == 0, r.stderr
    from rbf_bayes.cli import load_model
    m = load_model(tmp_path / "m.npz")
    assert m.n_temps == 3 and m.n_tries == 2 and m.trace_.meta["tempering"]["betas"][0] == 1.0
    s = _run("summary", tmp_path / "m.npz")
    assert s.returncode == 0 and "chosen by the chains" in s.stdout, s.stdout
    r = _run("fit", tmp_path / "train.csv", "--target", "y", "--model", "bmars", "--chains", "2", "--n-iter", "2000",
             "--temps", "2", "--no-progress", "--out", tmp_path / "b.npz")   # BMARS's ladder (stop 89)
    assert r.returncode == 0, r.stderr
    b = load_model(tmp_path / "b.npz")
    assert b.n_temps == 2 and len(b.trace_.meta["tempering"]["betas"]) == 2
    for args, msg in (
        (("--model", "smc", "--n-iter", "auto"), "does not choose its run length"),
        (("--model", "smc", "--temps", "2"), "has no n_temps (rjmcmc and bmars have)"),
        (
            (
                "--tries",
                "0",
            ),
            "--tries must be >= 1",
        ),
        (("--n-iter", "long"), "whole number or 'auto'"),
    ):
        r = _run("fit", tmp_path / "train.csv", "--target", "y", "--no-progress", "--out", tmp_path / "x.npz", *args)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_predict_far_out_holds_and_warns_unless_extrapolate(tmp_path):
    """A row 20 training sd out in input a: by default predicted as at the training range's edge, with the
    ExtrapolationWarning on stderr (stdout keeps only the CSV); --extrapolate evaluates the fitted network there."""
    x, _ = _csv(tmp_path / "train.csv")
    r = _run("fit", tmp_path / "train.csv", "--target", "y", "--features", "a,b", "--n-iter", 600, "--burn-in", 300,
             "--chains", 1, "--no-progress", "--out", tmp_path / "m.npz")
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "far.csv", "w") as f:
        f.write("a,b\n")
        f.write(f"{x[:, 0].max()},0.0\n{x[:, 0].max() + 20 * x[:, 0].std()},0.0\n")
    r = _run("predict", tmp_path / "m.npz", tmp_path / "far.csv")
    assert r.returncode == 0 and "ExtrapolationWarning" in r.stderr and "in a" in r.stderr, r.stderr
    held = np.array([[float(v) for v in ln.split(",")] for ln in r.stdout.splitlines()[1:]])
    np.testing.assert_allclose(held[1], held[0], rtol=1e-10)
    r = _run("predict", tmp_path / "m.npz", tmp_path / "far.csv", "--extrapolate")
    assert r.returncode == 0 and "ExtrapolationWarning" not in r.stderr, r.stderr
    free = np.array([[float(v) for v in ln.split(",")] for ln in r.stdout.splitlines()[1:]])
    np.testing.assert_allclose(free[0], held[0], rtol=1e-10)
    assert abs(free[1, 0] - held[1, 0]) > 0.1


@pytest.mark.usefixtures("no_zoom")  # measured without the zooms (conftest)
def test_fit_stopped_at_the_cap_says_so_in_the_clis_words(tmp_path, capsys):
    """--max-iter reaches the model; chains stopped there unconverged are said once per fit in the predictive on stderr
    as a NotConvergedWarning with the CLI's option names (--max-iter, --temps, --tries, not the library's), and the
    model is still saved; --max-iter with a fixed --n-iter, with a model that does not choose its length, or below 8
    is a one-line error.
    (In process: the round trips of the subprocess tests cost CI a quarter of a minute each.)"""
    _csv(tmp_path / "train.csv")
    out = tmp_path / "m.npz"
    assert main(["fit", str(tmp_path / "train.csv"), "--target", "y", "--features", "a,b", "--chains", "2",
                 "--jobs", "2", "--max-iter", "200", "--no-progress", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("rbf-bayes: warning (NotConvergedWarning):")]
    m = load_model(out)
    assert m.max_iter == 200 and not m.trace_.meta["auto"]["converged"]
    # quadratic="auto" stacks two fits here (measured: both in the predictive, the products' weight 0.31; before stop
    # 84's pair jumps the other fit was the plain model's, weight 0.25), and each stopped at the cap: one line for
    # each, the other fit's naming it
    assert hasattr(m, "other_fit_") and len(said) == 2, err
    assert said[1].startswith('rbf-bayes: warning (NotConvergedWarning): quadratic="auto", the products\' fit ('
                              "weight 0.31 in the predictive): ")
    for line in said:
        assert "--max-iter = 200 iterations without converging" in line and "raise --max-iter" in line
        assert "(--temps" in line and "(--tries)" in line and "n_temps" not in line and "max_iter" not in line
    for args, msg in (
        (("--n-iter", "500", "--max-iter", "1000"), "--max-iter bounds the run length the chains choose"),
        (("--model", "smc", "--max-iter", "1000"), "--max-iter: the smc model does not choose its run length"),
        (("--max-iter", "4"), "--max-iter must be >= 8, got 4"),
    ):
        assert main(["fit", str(tmp_path / "train.csv"), "--target", "y", "--no-progress", "--out",
                     str(tmp_path / "x.npz"), *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("rbf-bayes: error:") and msg in err[0], err


def test_fit_quadratic_reaches_the_model(tmp_path, capsys):
    """--quadratic false / true / auto reach RJMCMCRegressor's quadratic: false fits the inputs alone (one fit, no
    choice recorded), true the model with the products (the saved model's inputs: the two columns, their product and
    squares), auto (the default, as the class's) both, the choice saved and obeyed; without --quadratic the model's
    own default.
    A model without products, or a word other than the three, is a one-line error. (In process, as above.)"""
    _csv(tmp_path / "train.csv")
    fit = ["fit", str(tmp_path / "train.csv"), "--target", "y", "--features", "a,b", "--chains", "2", "--jobs", "2",
           "--n-iter", "600", "--burn-in", "300", "--no-progress"]
    for word, q in (("false", False), ("true", True), ("auto", "auto"), (None, "auto")):
        out = tmp_path / f"m_{word}.npz"
        assert main([*fit, "--out", str(out), *(("--quadratic", word) if word else ())]) == 0, capsys.readouterr().err
        m = load_model(out)
        assert m.quadratic == q
        if q == "auto":
            assert m.quadratic_choice_ is not None and m.quadratic_ == (m.quadratic_choice_["weight_plain"] < 0.5)
        else:
            assert m.quadratic_ is q and getattr(m, "quadratic_choice_", None) is None
        if q is True:
            assert len(m.model_inputs_) == 5, m.model_inputs_
    capsys.readouterr()
    for args, msg in (
        (("--model", "smc", "--quadratic", "false"), "--quadratic: the smc model has no quadratic inputs"),
        (("--quadratic", "maybe"), "invalid choice: 'maybe'"),
    ):
        assert main([*fit[:6], "--no-progress", "--out", str(tmp_path / "x.npz"), *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("rbf-bayes: error:") and msg in err[0], err


def test_fit_stacked_predict_summary_plot_and_refusals(tmp_path, capsys):
    """--model stacked: StackedRegressor() of the two defaults, seeded by --seed, saved in one file; predict (mean, sd,
    interval; --extrapolate reaching each fit), summary (text; --json with each fit's weight and PSIS-LOO) and plot (a
    row per fit; with --data the stack's predictive) read it as the stack in Python predicts; a sampler or run-length
    option with it is a one-line error.
    (In process, one input: the default fits take a few seconds.)"""
    x, _ = _csv(tmp_path / "train.csv")
    _csv(tmp_path / "new.csv", n=7, seed=1)
    out, new = tmp_path / "s.npz", tmp_path / "new.csv"
    assert main(["fit", str(tmp_path / "train.csv"), "--target", "y", "--features", "a", "--model", "stacked",
                 "--seed", "2", "--no-progress", "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert "stacking weights: rbf " in said.out and ", mars " in said.out, said
    m = load_model(out)
    assert type(m).__name__ == "StackedRegressor" and list(m.named_estimators_) == ["rbf", "mars"]
    assert [e.random_state for e in m.estimators_] == [2, 2] and abs(m.weights_.sum() - 1) < 1e-12
    assert main(["predict", str(out), str(new), "--interval", "0.9", "-o", str(tmp_path / "p.csv")]) == 0
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0] == "y_mean,y_sd,y_lower,y_upper" and len(lines) == 8
    got = np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])
    xn = np.loadtxt(new, delimiter=",", skiprows=1)[:, :1]
    mean, sd = m.predict(xn, return_std=True)
    np.testing.assert_allclose(got[:, 0], mean, rtol=1e-8)
    np.testing.assert_allclose(got[:, 1], sd, rtol=1e-8)
    assert np.all((got[:, 2] < got[:, 0]) & (got[:, 0] < got[:, 3]))
    with open(tmp_path / "far.csv", "w") as f:     # 20 training sd beyond the range in a: held, unless --extrapolate
        f.write(f"a\n{x[:, 0].max()}\n{x[:, 0].max() + 20 * x[:, 0].std()}\n")
    capsys.readouterr()
    assert main(["predict", str(out), str(tmp_path / "far.csv"), "-o", str(tmp_path / "h.csv")]) == 0
    assert "ExtrapolationWarning" in capsys.readouterr().err
    held = np.loadtxt(tmp_path / "h.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(held[1], held[0], rtol=1e-10)
    assert main(["predict", str(out), str(tmp_path / "far.csv"), "--extrapolate", "-o", str(tmp_path / "e.csv")]) == 0
    assert "ExtrapolationWarning" not in capsys.readouterr().err
    free = np.loadtxt(tmp_path / "e.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(free[0], held[0], rtol=1e-10)
    assert abs(free[1, 0] - held[1, 0]) > 1e-3
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "StackedRegressor of 2 fits" in text and "fitted to" in text and "PSIS-LOO elpd" in text
    assert main(["summary", str(out), "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["model"] == "StackedRegressor" and js["fitted_to"]["features"] == ["a"]
    assert set(js["parts"]) == {"rbf", "mars"} and js["parts"]["mars"]["model"] == "BMARSRegressor"
    assert abs(sum(p["weight"] for p in js["parts"].values()) - 1) < 1e-12
    assert js["parts"]["rbf"]["elpd_loo"] == pytest.approx(m.loo_["rbf"].elpd)
    # stop 95: each part says whether its automatic run length converged, as the loaded fit's own meta says
    for n, part in m.named_estimators_.items():
        assert isinstance(js["parts"][n]["converged"], bool) and js["parts"][n]["converged"] == run_converged(part)
        assert ("; converged" if run_converged(part) else "; stopped at max_iter unconverged") in text
    for png, more in (("f.png", []), ("g.png", ["--data", str(tmp_path / "train.csv")])):   # stop 94: no refusal
        assert main(["plot", str(out), "--output", str(tmp_path / png), *more]) == 0
        assert (tmp_path / png).stat().st_size > 1000 and f"wrote {tmp_path / png}" in capsys.readouterr().out
    for args, msg in ((["fit", str(tmp_path / "train.csv"), "--target", "y", "--model", "stacked", "--chains", "2"],
                       "--chains: the stacked model fits StackedRegressor()'s default parts (RJMCMCRegressor(), "
                       "BMARSRegressor(prior=BMARSPrior()))"),
                      (["fit", str(tmp_path / "train.csv"), "--target", "y", "--model", "stacked", "--n-iter", "500"],
                       "--n-iter: the stacked model")):
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("rbf-bayes: error:") and msg in err[0], err
