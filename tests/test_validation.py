"""Bad input gets a clear error that names the argument (ARCHITECTURE.md, conventions)."""
import numpy as np
import pytest

from rbf_bayes._validation import as_inputs, as_targets
from rbf_bayes.basis import CentreSpace, basis_function, check_k_max, design_matrix
from rbf_bayes.datasets import friedman, hwang, load_tremor, robot_arm, signal_detection, sinc_data
from rbf_bayes.kernel import GramFactor, basis_column, rbf_state
from rbf_bayes.posterior import log_posterior
from rbf_bayes.priors import RBFPrior

X = np.random.default_rng(0).uniform(size=(20, 2))
Y = np.random.default_rng(1).normal(size=20)


@pytest.mark.parametrize("x, msg", [
    (np.full((3, 2), np.nan), "x contains NaN or inf"),
    (np.array([[1.0, np.inf]]), "x contains NaN or inf"),
    (np.zeros((2, 2, 2)), r"x must have shape \(N, d\)"),
    (np.zeros((0, 2)), "x must be non-empty"),
    ([["a", "b"]], "x must be a numeric"),
])
def test_bad_inputs(x, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        as_inputs(x)


def test_shape_mismatch_names_both():
    with pytest.raises(ValueError, match="y has 19 rows but x has 20"):
        log_posterior(X, Y[:19], X[:2], 1.0, 1.0)


def test_nan_targets():
    y = Y.copy()
    y[4] = np.nan
    with pytest.raises(ValueError, match="y contains NaN or inf"):
        log_posterior(X, y, X[:2], 1.0, 1.0)
    with pytest.raises(ValueError, match="Y must have shape"):
        as_targets(np.zeros((20, 2, 1)), 20, name="Y")


def test_too_few_points_and_k_max():
    with pytest.raises(ValueError, match="too few points for d=2"):
        check_k_max(None, 2, 2)
    with pytest.raises(ValueError, match=r"k_max must be in \[0, N - \(d \+ 1\)\] = \[0, 17\]"):
        log_posterior(X, Y, X[:2], 1.0, 1.0, prior=RBFPrior(k_max=18))
    with pytest.raises(TypeError, match="k_max must be an integer"):
        check_k_max(2.5, 20, 2)
    assert check_k_max(None, 20, 2) == 16          # the default min(N - (d + 2), 100): D never square
    assert check_k_max(None, 500, 2) == 100 and check_k_max(None, 4, 2) == 0


@pytest.mark.parametrize("kw, msg", [
    (dict(alpha_delta2=0), "alpha_delta2 must be a finite number > 0"),
    (dict(beta_delta2=-1.0), "beta_delta2 must be a finite number > 0"),
    (dict(beta_delta2=float("inf")), "beta_delta2 must be a finite number > 0"),
    (dict(eps2=0.0), "eps2 must be a finite number > 0"),
    (dict(eps1=-0.6), "eps1 must be a finite number > -1/2"),
    (dict(v0=-1.0, gamma0=-1.0), "v0 must be a finite number >= 0"),
    (dict(v0=2.0), "v0 and gamma0 must be both 0"),
    (dict(iota=-0.1), "iota must be a finite number >= 0"),
    (dict(coef_prior="lasso"), "coef_prior must be one of"),
    (dict(k_max=-3), "k_max must be None or an integer >= 0"),
    (dict(alpha_delta2="2"), "alpha_delta2 must be a real number"),
])
def test_bad_hyperparameters(kw, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        RBFPrior(**kw)


def test_bad_basis_and_width():
    with pytest.raises(ValueError, match="basis must be one of"):
        design_matrix(X, X[:2], "sigmoid")
    with pytest.raises(ValueError, match="width must be a finite number > 0"):
        basis_function(np.ones(3), "gaussian", 0.0)
    with pytest.raises(ValueError, match="basis must be one of"):
        basis_column(X, X[0].copy(), "sigmoid")
    with pytest.raises(ValueError, match="mu has 3 coordinates but x has d=2"):
        basis_column(X, np.zeros(3), "cubic")


def test_constant_input_column():
    x = X.copy()
    x[:, 1] = 3.0
    with pytest.raises(ValueError, match=r"zero spread in column\(s\) \[1\]"):
        CentreSpace.from_data(x)


def test_centres_outside_omega_have_zero_prior():
    assert log_posterior(X, Y, np.array([[5.0, 5.0]]), 1.0, 1.0) == -np.inf


def test_rank_deficient_initial_design_is_an_error_not_a_crash():
    with pytest.raises(np.linalg.LinAlgError, match="rank deficient"):
        rbf_state(X, Y, np.vstack([X[:1], X[:1]]), "cubic", 1.0, 1.0, RBFPrior(coef_prior="g"))


def test_kernel_constructor_errors():
    with pytest.raises(ValueError, match="N must be >= 1"):
        GramFactor(0, 1, 3)
    with pytest.raises(ValueError, match="m_max must be >= 1"):
        GramFactor(5, 1, 0)


@pytest.mark.parametrize("fn, kw, msg", [
    (signal_detection, dict(noise_var=-1), "noise_var must be"),
    (robot_arm, dict(n_train=0), "n_train must be an integer >= 1"),
    (sinc_data, dict(n=1), "n must be an integer >= 2"),
    (hwang, dict(which=7), "which must be 1, 2, 3, 4 or 5"),
    (friedman, dict(which=4), "which must be 1, 2 or 3"),
])
def test_dataset_argument_errors(fn, kw, msg):
    with pytest.raises(ValueError, match=msg):
        fn(np.random.default_rng(0), **kw)


def test_tremor_missing_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("RBF_BAYES_TREMOR_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="tremor data is not shipped"):
        load_tremor()
    with pytest.raises(FileNotFoundError, match="tremor data not found"):
        load_tremor(tmp_path)


def test_same_seed_same_data():
    a, b = robot_arm(np.random.default_rng(42)), robot_arm(np.random.default_rng(42))
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.x_test, b.x_test)


def test_top_level_api_and_one_error_policy():
    """The estimators are importable from the package; a wrong type is a TypeError, a wrong value a ValueError,
    and both name the argument."""
    import rbf_bayes
    from rbf_bayes import BMARSRegressor, RJMCMCRegressor, SMCRegressor
    from rbf_bayes._validation import check_int
    assert rbf_bayes.__all__ == ["RJMCMCRegressor", "AnnealedRBFRegressor", "SMCRegressor", "BMARSRegressor",
                                "RJMCMCClassifier", "StackedRegressor", "ExtrapolationWarning", "NotConvergedWarning",
                                "explore"]
    assert issubclass(rbf_bayes.NotConvergedWarning, rbf_bayes.convergence.ConvergenceWarning)   # since stop 70
    with pytest.raises(TypeError, match="n_particles must be an integer"):
        SMCRegressor(n_particles=2.5).fit(X, Y)
    with pytest.raises(ValueError, match="n_particles must be an integer >= 1, got 0"):
        SMCRegressor(n_particles=0).fit(X, Y)
    with pytest.raises(TypeError, match="record_every"):
        check_int("record_every", "3")
    with pytest.raises(ValueError, match="[Cc]omplex data not supported"):
        RJMCMCRegressor(n_iter=10, burn_in=5).fit(X + 1j, Y)
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError, match="not fitted yet"):
        BMARSRegressor().predict(X)
    m = RJMCMCRegressor(n_iter=200, burn_in=100, prior=RBFPrior(k_max=5), random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="X has 3 features, but RJMCMCRegressor is expecting 2 features"):
        m.predict(np.zeros((4, 3)))


def test_validated_arrays_are_read_only_and_checked_once():
    """A validator returns a read-only view and gives the same object back in O(1); other arrays are checked."""
    x = as_inputs(X, "X")
    assert as_inputs(x, "X") is x and not x.flags.writeable
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        as_inputs(bad, "X")
