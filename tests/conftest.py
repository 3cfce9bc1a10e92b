"""Shared test set-up: every test runs under Python's default Ctrl-C handler.

The interrupt tests send SIGINT and expect either the package's deferred handler or Python's default one
(KeyboardInterrupt). A Python started with SIGINT ignored, as a background job of a non-interactive shell is, never
installs the default handler, and a signal sent there is dropped; the tests would then check the environment, not
the package. The fixture installs the default handler for each test run in the main thread and restores what was
there."""
import signal
import threading

import pytest


@pytest.fixture(autouse=True)
def _default_sigint():
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    prev = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, prev)


@pytest.fixture
def no_zoom(monkeypatch):
    """The regressor's default sampler without the learned scales' zooms (`estimators.SCALE_ZOOM` = 0, the default
    until stop 101), for a CLI test whose seed's outcome (which fit is the other one, its weight) was measured on it:
    its claim is about the warnings' wording, which the zooms do not touch. The CLI has no option for the zooms, so it
    cannot ask for `RJMCMCRegressor(scale_zoom=0)` as the library's tests do."""
    import rbf_bayes.estimators as E
    monkeypatch.setattr(E, "SCALE_ZOOM", 0.0)
