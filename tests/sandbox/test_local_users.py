"""A local sandbox with several users (``SandboxSpec(users=True)``), as the desktop runs on.

The image's accounts are real uids in the sandbox, ``sudo`` works between them, and none of it
reaches the host: every id is an unprivileged host id, root has a container's capabilities (it
cannot mount or unmount), no nested user namespace can be made, and a sandbox without ``users``
keeps one uid and no set-user-ID programs.
"""

from __future__ import annotations

import os

import pytest

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.local_system import sandbox_ids
from agentenvs.sandbox.local_userns import MAPPED_BASE, host_ids

pytestmark = [pytest.mark.docker]
HOME = "/home/user"


@pytest.fixture(scope="module")
def users(gui_image):
    sandbox = create_sandbox("local", SandboxSpec(workdir=HOME, users=True), image=gui_image)
    sandbox.exec(["chown", "-R", "user:user", HOME], timeout=60)
    yield sandbox
    sandbox.close()


def run(sandbox, command: str, user: str | None = None) -> str:
    done = sandbox.exec(["sh", "-c", command], timeout=60, user=user, cwd="/")
    return done.stdout.strip()


def test_the_images_users_are_real_and_sudo_works_with_the_password(users):
    assert run(users, "id -un; id -u", user="user").splitlines() == ["user", "1001"]
    assert run(users, "echo password | sudo -S -k id -u 2>/dev/null", user="user") == "0"
    assert run(users, "echo wrong | sudo -S -k id -u 2>/dev/null; echo rc=$?", user="user") == "rc=1"
    assert run(users, "sudo -n -u actor id -un", user="user") == "actor"


def test_the_users_files_are_unprivileged_host_ids(users):
    run(users, f"touch {HOME}/mine", user="user")
    run(users, "touch /tmp/roots")
    st = os.stat(users.root / "home/user/mine")
    assert (st.st_uid, st.st_gid) == (MAPPED_BASE + 1000, MAPPED_BASE + 1000) == host_ids(1001, 1001, sandbox_ids())
    assert os.stat(users.root / "tmp/roots").st_uid == sandbox_ids()[0] != 0


def test_the_actor_cannot_read_the_users_home(users):
    run(users, f"echo secret > {HOME}/note; chmod 600 {HOME}/note", user="user")
    assert "Permission denied" in users.exec(["cat", f"{HOME}/note"], timeout=20, user="actor", cwd="/").output


def test_root_cannot_mount_unmount_or_nest_a_user_namespace(users):
    done = users.exec(
        ["sh", "-c", "umount /opt/agentenvs/evaluators; mount -t tmpfs x /mnt; unshare --user true; echo end"],
        timeout=20,
        cwd="/",
    )
    assert "must be superuser to unmount" in done.stderr and "/mnt: permission denied" in done.stderr
    assert "unshare failed" in done.stderr and done.stdout.strip() == "end"
    assert run(users, "grep -c ' /opt/agentenvs/evaluators ' /proc/self/mountinfo") == "1"
    effective = int(run(users, "awk '/CapEff/{print $2}' /proc/self/status"), 16)
    assert effective & (1 << 1) and not effective & (1 << 21)  # dac_override, as in a container; no sys_admin


def test_the_state_checker_reads_a_users_private_files(users):
    run(users, f"printf 'hello' > {HOME}/private.txt; chmod 600 {HOME}/private.txt", user="user")
    [result] = users.state_checker().run(
        [{"check": "file_contains", "args": {"path": f"{HOME}/private.txt", "text": "hello"}}]
    )
    assert result["passed"] is True, result


def test_a_one_user_sandbox_refuses_other_users_and_runs_no_setuid(gui_image):
    sandbox = create_sandbox("local", SandboxSpec(workdir=HOME), image=gui_image)
    try:
        with pytest.raises(SandboxError, match="users=True"):
            sandbox.exec(["id"], timeout=20, user="user")
        done = sandbox.exec(["sh", "-c", "ls -l /usr/bin/sudo; setpriv --reuid=1001 sudo -n true"], timeout=20, cwd="/")
        assert done.stdout.startswith("-rwsr-xr-x")  # the layer keeps the bit; the mount ignores it
        assert done.exit_code != 0
    finally:
        sandbox.close()


def test_users_need_an_image():
    with pytest.raises(SandboxError, match="over an image"):
        create_sandbox("local", SandboxSpec(users=True))
