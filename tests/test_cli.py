"""The console script runs end to end and refuses bad arguments."""
import subprocess

import pytest

from rbf_bayes.cli import main


def test_cli_runs_and_reports(capsys):
    assert main(["--k", "0", "5", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "robot arm: 200 training / 200 test points" in out
    assert "test MSE" in out and "done in" in out


def test_cli_rejects_bad_k(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--k", "500"])
    assert e.value.code == 2
    assert "--k values must be in [0, 197]" in capsys.readouterr().err


def test_console_script_installed():
    r2 = subprocess.run(["rbf-bayes", "--k", "0"], capture_output=True, text=True)
    assert r2.returncode == 0, r2.stderr
    assert "log posterior" in r2.stdout
