__version__ = "0.1.0"
"""Bayesian regression with an unknown number of basis functions: reversible-jump MCMC, RJ simulated annealing,
trans-dimensional SMC and Bayesian MARS, and probit classification (see ARCHITECTURE.md for the layers)."""
from ._base import ExtrapolationWarning
from .annealing import AnnealedRBFRegressor
from .bmars import BMARSRegressor
from .convergence import NotConvergedWarning
from .estimators import RJMCMCClassifier, RJMCMCRegressor, StackedRegressor
from .smc import SMCRegressor

__all__ = ["RJMCMCRegressor", "AnnealedRBFRegressor", "SMCRegressor", "BMARSRegressor", "RJMCMCClassifier", "StackedRegressor",
           "ExtrapolationWarning",
           "NotConvergedWarning", "explore"]


def __getattr__(name):
    "`rbf_bayes.explore` (the interactive explorer, `rbf_bayes.plot`) without importing matplotlib at `import rbf_bayes`."
    if name == "explore":
        from .plot import explore
        return explore
    raise AttributeError(f"module 'rbf_bayes' has no attribute {name!r}")
