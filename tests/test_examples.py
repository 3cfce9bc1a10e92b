"""The numpydoc Examples of the estimators run, and print what they say (issue 37 item 3): each estimator's class
docstring carries an Examples section that a user can paste; this runs them all as doctests."""
import doctest
import warnings

import pytest

from rbf_bayes import (
    AnnealedRBFRegressor,
    BMARSRegressor,
    RJMCMCClassifier,
    RJMCMCRegressor,
    SMCRegressor,
    StackedRegressor,
)


@pytest.mark.parametrize("est", [RJMCMCRegressor, RJMCMCClassifier, SMCRegressor, BMARSRegressor, AnnealedRBFRegressor,
                                 StackedRegressor],
                         ids=lambda e: e.__name__)
def test_the_examples_in_the_docstrings_run(est):
    (test,) = doctest.DocTestFinder(recurse=False).find(est, est.__name__, globs={})
    assert "Examples\n    --------" in est.__doc__ and len(test.examples) >= 5
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # a short example run may be told it is short; the output is what counts
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} of {runner.tries} examples of {est.__name__} failed (see above)"
