"""One browser for the whole session (the process's shared Chromium) and envs reused per module."""

from __future__ import annotations

import os
import shutil

import pytest

import agentenvs


@pytest.fixture(scope="session", autouse=True)
def chromium() -> None:
    if shutil.which("chromium") is None and not os.path.exists("/usr/bin/chromium"):
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail("Chromium is missing: run `make install`", pytrace=False)
        pytest.skip("Chromium is missing: run `make install`")


@pytest.fixture(scope="module")
def web_env():
    """A web env whose site processes live for the module (each reset copies the snapshot again)."""
    env = agentenvs.make("web/shop-price-0")
    yield env.unwrapped
    env.close()
