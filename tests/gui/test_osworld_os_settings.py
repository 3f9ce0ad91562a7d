"""OSWorld's ``is_utc_0`` (``timedatectl``) and ``check_gnome_favorite_apps`` (GSettings over dconf): the metrics'
parsing, and tasks written for this test (not upstream copies) imported and run by GUI actions on both backends."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentenvs
from agentenvs.cli import app
from evaluators.osworld_files import gvariant_strings
from tests.gui.test_import_osworld import WAIT_FOR_TERMINAL
from tests.gui.test_osworld_office_metrics import score

BUS = "export DBUS_SESSION_BUS_ADDRESS='unix:path=/run/user/1000/bus'\n"
STATUS = """\
               Local time: Sat 2026-11-28 05:02:20 PST
           Universal time: Sat 2026-11-28 13:02:20 UTC
                 RTC time: n/a
                Time zone: {zone}
System clock synchronized: yes
              NTP service: n/a
          RTC in local TZ: no
"""


def test_is_utc_0_reads_line_index_3_as_upstream():
    assert score("is_utc_0", {"value": STATUS.format(zone="Etc/UTC (UTC, +0000)")}) == 1.0
    assert score("is_utc_0", {"value": STATUS.format(zone="Europe/London (GMT, +0000)")}) == 1.0
    assert score("is_utc_0", {"value": STATUS.format(zone="America/Los_Angeles (PST, -0800)")}) == 0.0
    assert score("is_utc_0", {"value": STATUS.format(zone="Asia/Kolkata (IST, +0530)")}) == 0.0
    # Upstream's convention is the fourth line, not the line that names the zone.
    moved = "Time zone: Etc/UTC (UTC, +0000)\n" + STATUS.format(zone="America/Los_Angeles (PST, -0800)")
    assert score("is_utc_0", {"value": moved}) == 0.0
    assert score("is_utc_0", {"value": "a\nb\nc\nTime zone: Etc/UTC (UTC, +0000)"}) == 1.0
    assert score("is_utc_0", {"value": STATUS.format(zone="Etc/UTC (UTC, +0000) ")}) == 0.0  # ends with it, exactly
    assert score("is_utc_0", {"value": ""}) == 0.0  # no timedatectl: no line 3 (upstream raises)
    assert score("is_utc_0", {"value": "bash: timedatectl: command not found\n"}) == 0.0


def test_favorite_apps_parse_gvariant_text_without_eval():
    assert gvariant_strings("['a.desktop', 'b.desktop']\n") == ["a.desktop", "b.desktop"]
    assert gvariant_strings("@as []\n") == []
    assert gvariant_strings("""['it\\'s.desktop', "q's.desktop"]""") == ["it's.desktop", "q's.desktop"]
    assert gvariant_strings("__import__('os').system('true')") is None
    assert gvariant_strings("['a', 1]") is None and gvariant_strings("'a'") is None and gvariant_strings("") is None
    rules = {"value": {"expected": ["chromium.desktop", "org.gnome.Terminal.desktop"]}}
    both = "['org.gnome.Terminal.desktop', 'chromium.desktop']"
    assert score("check_gnome_favorite_apps", {"value": both + "\n"}, rules) == 1.0  # order is free
    assert score("check_gnome_favorite_apps", {"value": "['chromium.desktop']"}, rules) == 0.0
    extra = "['chromium.desktop', 'org.gnome.Terminal.desktop', 'vim.desktop']"
    assert score("check_gnome_favorite_apps", {"value": extra}, rules) == 0.0
    twice = "['chromium.desktop', 'chromium.desktop']"  # as many, not the same set
    assert score("check_gnome_favorite_apps", {"value": twice}, rules) == 0.0
    assert score("check_gnome_favorite_apps", {"value": "@as []"}, rules) == 0.0
    assert score("check_gnome_favorite_apps", {"value": "@as []"}, {"value": {"expected": []}}) == 1.0
    assert score("check_gnome_favorite_apps", {"value": "No such schema “org.gnome.shell”"}, rules) == 0.0


def task(uuid: str, **extra) -> dict:
    return {"id": uuid, "snapshot": "os", "source": "test", "config": [], **extra}


ZONE = task(
    "z1-utc",
    instruction="Put this computer's clock on a time zone with no offset from UTC.",
    evaluator={
        "func": "is_utc_0",
        "result": {"type": "vm_command_line", "command": "timedatectl status", "shell": True},
    },
)
FAVORITES = task(
    "f1-favorites",
    instruction="Take the vim editor out of the dock's favourite apps, keep the others.",
    config=[
        {
            "type": "execute",
            "parameters": {
                "command": BUS + "gsettings set org.gnome.shell favorite-apps \"['x.desktop']\"",
                "shell": True,
            },
        },
        {
            "type": "execute",
            "parameters": {
                "command": BUS
                + "gsettings set org.gnome.shell favorite-apps \"['chromium.desktop', 'vim.desktop', 'org.gnome.Terminal.desktop']\"",
                "shell": True,
            },
        },
    ],
    evaluator={
        "func": "check_gnome_favorite_apps",
        "result": {
            "type": "vm_command_line",
            "command": BUS + "gsettings get org.gnome.shell favorite-apps",
            "shell": True,
        },
        "expected": {"type": "rule", "rules": {"expected": ["org.gnome.Terminal.desktop", "chromium.desktop"]}},
    },
)
SUDO = "echo password | sudo -S"
#: Programs named like the grader's that print what the metric wants.
FAKES = {
    "timedatectl": "#!/bin/sh\nprintf 'l\\nu\\nr\\n                Time zone: Etc/UTC (UTC, +0000)\\n'\n",
    "gsettings": "#!/bin/sh\necho \"['chromium.desktop', 'org.gnome.Terminal.desktop']\"\n",
}


def plant(name: str) -> str:
    """The fake put in ~/bin (first on the agent's PATH), /usr/local/bin and over the image's own in /usr/bin."""
    fake = f"/tmp/fake-{name}"
    encoded = base64.b64encode(FAKES[name].encode()).decode()
    return (
        f"echo {encoded} | base64 -d > {fake} && chmod +x {fake} && mkdir -p ~/bin && cp {fake} ~/bin/{name}"
        f" && {SUDO} cp {fake} /usr/local/bin/{name} && {SUDO} cp {fake} /usr/bin/{name}"
    )


def test_the_fakes_would_score_if_they_ran(tmp_path):
    """The attacks below are real ones: what each fake prints is what its metric scores 1."""
    outputs = {}
    for name, body in FAKES.items():
        (tmp_path / name).write_text(body)
        outputs[name] = subprocess.run(["sh", str(tmp_path / name)], capture_output=True, text=True).stdout
    assert score("is_utc_0", {"value": outputs["timedatectl"]}) == 1.0
    rules = {"value": FAVORITES["evaluator"]["expected"]["rules"]}
    assert score("check_gnome_favorite_apps", {"value": outputs["gsettings"]}, rules) == 1.0


def run(tmp_path: Path, task_id: str, command: str | None, backend: str) -> dict:
    """Import the two tasks, run one: a terminal opened with Ctrl+Alt+T, ``command`` typed (None: DONE only)."""
    src = tmp_path / "evaluation_examples/examples/os"
    src.mkdir(parents=True)
    for data in (ZONE, FAVORITES):
        (src / f"{data['id']}.json").write_text(json.dumps(data))
    out = tmp_path / "t"
    result = CliRunner().invoke(
        app, ["gui", "import-osworld", str(tmp_path / "evaluation_examples"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    typing = {"action_type": "TYPING", "text": f"{command}\n"}
    actions = ["pyautogui.hotkey('ctrl', 'alt', 't')", WAIT_FOR_TERMINAL, typing, "WAIT", "WAIT", "WAIT", "DONE"]
    env = agentenvs.make(agentenvs.load_task(out / f"osworld-os-{task_id}"), screen_size=(800, 600), backend=backend)
    try:
        env.reset(seed=0)
        info: dict = {}
        for action in actions if command is not None else ["DONE"]:
            *_, info = env.step(action)
        return info
    finally:
        env.close()


ZONE_RUNS = {
    "scripted": (f"{SUDO} timedatectl set-timezone Etc/UTC", 1.0),
    "linked": (f"{SUDO} ln -sf /usr/share/zoneinfo/Africa/Abidjan /etc/localtime", 1.0),  # by hand, no timedatectl
    "noop": (None, 0.0),  # the desktop starts in America/Los_Angeles (START_ZONES)
    "wrong": (f"{SUDO} timedatectl set-timezone Europe/Berlin", 0.0),
    "unprivileged": ("timedatectl set-timezone Etc/UTC", 0.0),  # no root: access denied, as systemd's
    "fake": (plant("timedatectl"), 0.0),
}


FAVORITE_RUNS = {
    "scripted": (
        "gsettings set org.gnome.shell favorite-apps \"['chromium.desktop', 'org.gnome.Terminal.desktop']\"",
        1.0,
    ),
    "noop": (None, 0.0),
    "kept-vim": ("gsettings set org.gnome.shell favorite-apps \"['vim.desktop', 'chromium.desktop']\"", 0.0),
    "lost-one": ("gsettings set org.gnome.shell favorite-apps \"['chromium.desktop']\"", 0.0),
    "fake": (plant("gsettings"), 0.0),
}


#: Every variant runs on docker; on local the scripted run, the no-op and the planted fakes (whose seal differs).
ON_BOTH = ("scripted", "noop", "fake")
CASES = [
    (task, variant, backend)
    for task, runs in (("z1-utc", ZONE_RUNS), ("f1-favorites", FAVORITE_RUNS))
    for variant in runs
    for backend in ("docker", "local")
    if backend == "docker" or variant in ON_BOTH
]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(("task", "variant", "backend"), CASES)
def test_the_zone_and_favourites_set_from_a_terminal_are_what_the_sealed_verifier_reads(
    tmp_path, gui_image, task, variant, backend
):
    """The agent's /etc/localtime and dconf database reach the verifier; its own timedatectl or gsettings
    (planted in ~/bin, /usr/local/bin and over /usr/bin) does not."""
    command, want = (ZONE_RUNS if task == "z1-utc" else FAVORITE_RUNS)[variant]
    info = run(tmp_path, task, command, backend)
    assert info["score"] == want, info["verifier_detail"]
