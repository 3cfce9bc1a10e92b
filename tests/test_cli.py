"""The console script runs end to end and refuses bad arguments."""
import subprocess

import pytest

from rbf_bayes.cli import main


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
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert msg in capsys.readouterr().err


def test_console_script_installed():
    r = subprocess.run(["rbf-bayes", "--n-iter", "500", "--burn-in", "100"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "test MSE" in r.stdout
