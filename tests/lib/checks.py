"""check(): the assertion of the process tests, kept under `python -O`.

    from checks import check
    check(n == 2532, f"n = {n}")

A bare `assert` is removed by `python -O` (and PYTHONOPTIMIZE), so a test written with it passes
whatever the server does when run that way. check() raises CheckFailed (an AssertionError, so a
test's traceback and exit status are as before) whatever the interpreter's flags.
"""
import time


class CheckFailed(AssertionError):
    pass


def check(condition, message=None):
    """Raises CheckFailed(message) unless `condition` is true."""
    if not condition:
        raise CheckFailed(message) if message is not None else CheckFailed()


def eventually(condition, timeout, what, interval=0.05):
    """Polls `condition` every `interval` seconds until it returns a true value, and returns it;
    raises CheckFailed naming `what` after `timeout` seconds. Tests wait for the state they need
    this way, never by sleeping for a guessed time and then asserting."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckFailed(f"not within {timeout} s: {what}")
        time.sleep(interval)
