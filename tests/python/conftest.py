"""Shared by the pytest suite of the opdispatch package (tests/python, one ctest entry per file,
label python). PYTHONPATH points at the build tree's package."""

import os
import subprocess
import sys
import textwrap

import pytest


def run_python(code, env=None):
    """Runs `code` in a fresh interpreter (the one running the tests) and returns the completed
    process, so that import-time behaviour and interpreter exit are tested as users see them."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def python():
    return run_python
