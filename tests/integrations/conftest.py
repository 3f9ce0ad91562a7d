"""Web cases need Debian's Chromium: skipped without it, failed in CI."""

from __future__ import annotations

import os
import shutil

import pytest


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


@pytest.fixture(autouse=True)
def _chromium_for_web(request) -> None:
    if request.node.get_closest_marker("web") and shutil.which("chromium") is None:
        if not os.path.exists("/usr/bin/chromium"):
            if _in_ci():
                pytest.fail("Chromium is missing: run `make install`", pytrace=False)
            pytest.skip("Chromium is missing: run `make install`")
