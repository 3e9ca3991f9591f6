"""What a process test does when a real component it needs (Chromium, PostgreSQL) is absent.

    from components import absent
    if not os.path.exists(CHROMIUM):
        absent("chromium or chromedriver")   # exits 77 (CTest: skipped), or 1 in CI

A developer's machine without the component skips the test (exit 77, SKIP_RETURN_CODE). CI
installs every component, so there a missing one is a broken install, not a reason to pass:
with DENIABLE_REQUIRE_COMPONENTS=1 (set by .ci/run) the test fails instead (exit 1).
"""
import os
import sys

SKIP = 77


def required():
    """True when a missing component must fail the test (CI), not skip it."""
    return os.environ.get("DENIABLE_REQUIRE_COMPONENTS", "") not in ("", "0")


def absent(what):
    """Ends the test for a missing component: skipped (77), or failed (1) when required()."""
    if required():
        print(f"{what} is absent, and DENIABLE_REQUIRE_COMPONENTS is set: failing, not skipping")
        sys.exit(1)
    print(f"{what} is absent: skipped")
    sys.exit(SKIP)
