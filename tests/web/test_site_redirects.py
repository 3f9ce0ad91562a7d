"""A site's sign-in sends the browser on only to its own paths (no open redirect to another host)."""

from __future__ import annotations

import shutil
import urllib.parse

import pytest

from agentenvs.envs.web.sites import site_module, snapshot
from agentenvs.envs.web.sites.framework import Request, connect


@pytest.mark.parametrize("target", ["/\\mail.web.test/", "/\t/mail.web.test/", "//mail.web.test/", "http://x/"])
def test_login_never_redirects_off_the_site(tmp_path, target: str) -> None:
    db_path = tmp_path / "shop.sqlite"
    shutil.copyfile(snapshot("shop"), db_path)
    db = connect(db_path)
    try:
        form = urllib.parse.parse_qs(
            urllib.parse.urlencode({"username": "emma", "password": "emma-pass", "next": target})
        )
        response = site_module("shop").app.handle(Request("POST", "/login", {}, form, {}, db))
    finally:
        db.close()
    assert response.status == 303 and response.headers["Location"] == "/"


def test_login_keeps_a_path_of_the_site(tmp_path) -> None:
    db_path = tmp_path / "shop.sqlite"
    shutil.copyfile(snapshot("shop"), db_path)
    db = connect(db_path)
    try:
        form = {"username": ["emma"], "password": ["emma-pass"], "next": ["/cart?x=1"]}
        response = site_module("shop").app.handle(Request("POST", "/login", {}, form, {}, db))
    finally:
        db.close()
    assert response.headers["Location"] == "/cart?x=1"
