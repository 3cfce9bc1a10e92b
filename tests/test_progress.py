"""One progress mechanism (rbf_bayes.progress) for every long loop: off by default and silent, on gives a bar on stderr
that reaches the total."""
import numpy as np
import pytest

from rbf_bayes import AnnealedRBFRegressor, BMARSRegressor, RJMCMCRegressor, SMCRegressor

X = np.random.default_rng(0).uniform(-2, 2, (40, 1))
Y = np.sin(2 * X[:, 0]) + 0.1 * np.random.default_rng(1).standard_normal(40)

CASES = [(RJMCMCRegressor, dict(n_iter=300, burn_in=100, n_chains=1), "RJMCMC", "300/300"),
         (AnnealedRBFRegressor, dict(n_iter=300, n_restarts=1), "RJ annealing", "300/300"),
         (BMARSRegressor, dict(n_iter=300, burn_in=100, n_chains=1), "Bayesian MARS", "300/300"),
         (SMCRegressor, dict(n_particles=20), "TD-SMC", "40/40")]

@pytest.mark.parametrize("cls,kw,desc,end", CASES, ids=[c[0].__name__ for c in CASES])
def test_progress_bar(cls, kw, desc, end, capsys):
    cls(**kw, random_state=0).fit(X, Y)
    assert capsys.readouterr().err == ""                       # default: quiet
    cls(**kw, random_state=0, progress=True).fit(X, Y)
    err = capsys.readouterr().err
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith(desc) and end in last and "k=" in last, err

def test_default_chains_show_their_iterations_round_by_round(capsys):
    """The default fit (4 chains, run length chosen by the chains): one bar per round over the iterations of all the
    chains, reaching the round's total, saying how many chains are done; no bar without progress=True (nothing on
    stderr). The claim is the bar's: at max_iter=8000 these chains stop unconverged (they converge at 64,000
    iterations), and the NotConvergedWarning goes through `warnings`, which pytest captures, not to stderr."""
    RJMCMCRegressor(random_state=0, max_iter=8000).fit(X, Y)
    assert capsys.readouterr().err == ""
    m = RJMCMCRegressor(random_state=0, max_iter=8000, progress=True).fit(X, Y)
    lines = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()
    n = m.trace_.meta["auto"]["n_iter"]
    last = lines[-1]
    assert last.startswith(f"RJMCMC chains, round {len(m.trace_.meta['auto']['rounds'])}"), lines
    assert f"{4 * n}/{4 * n}" in last and "chains=4/4 done" in last, last


def test_progress_does_not_change_the_chain():
    a = RJMCMCRegressor(n_iter=500, burn_in=100, random_state=3).fit(X, Y)
    b = RJMCMCRegressor(n_iter=500, burn_in=100, random_state=3, progress=True).fit(X, Y)
    np.testing.assert_array_equal(a.trace_.k, b.trace_.k)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
