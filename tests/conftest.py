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
