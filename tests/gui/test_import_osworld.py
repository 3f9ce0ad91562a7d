"""``agentenvs gui import-osworld`` on a tree of OSWorld task JSON written for this test (not upstream copies)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentenvs
from agentenvs.cli import app
from agentenvs.envs.gui.assets import AmbiguousAsset, AssetIndex

SAVE = {"type": "command", "parameters": {"command": "python -c \"import pyautogui; pyautogui.hotkey('ctrl', 's')\"", "shell": True}}  # fmt: skip


def task(uuid: str, **extra) -> dict:
    return {"id": uuid, "snapshot": "os", "instruction": "Do it.", "source": "test", "config": [], **extra}


def download(url: str, path: str) -> dict:
    return {"type": "download", "parameters": {"files": [{"url": url, "path": path}]}}


EDIT = task(
    "t1-edit",
    instruction="Add the line `hello world` at the end of notes.txt (open in the editor) and save it.",
    config=[
        download("https://a.example.invalid/in/notes.txt", "notes.txt"),
        {"type": "open", "parameters": {"path": "notes.txt"}},
    ],  # fmt: skip
    evaluator={
        "postconfig": [
            {"type": "activate_window", "parameters": {"window_name": "mousepad", "by_class": False}},
            SAVE,
            {"type": "sleep", "parameters": {"seconds": 0.5}},
        ],  # fmt: skip
        "func": ["compare_text_file", "check_list"],
        "conj": "and",
        "result": [
            {"type": "vm_file", "path": "/home/user/notes.txt", "dest": "n.txt"},
            {"type": "list_directory", "path": "/home/user"},
        ],  # fmt: skip
        "expected": [
            {"type": "cloud_file", "path": "https://b.example.invalid/gold/notes.txt", "dest": "g.txt"},
            {"type": "rule", "rules": {"expect": ["^notes\\.txt$"], "unexpect": ["^notes\\.txt~$"]}},
        ],  # fmt: skip
    },
)
COMMAND = task(
    "t7-command",
    instruction="A terminal is open. Use it to create the folder ~/Desktop/done.",
    config=[
        {"type": "launch", "parameters": {"command": "gnome-terminal --maximize", "shell": True}},
        {"type": "sleep", "parameters": {"seconds": 1}},
    ],  # fmt: skip
    evaluator={
        "func": ["check_include_exclude", "check_include_exclude"],
        "result": [
            {"type": "vm_command_line", "command": "ls -d ~/Desktop/done && echo FOUND-$((6*7))", "shell": True},
            {"type": "vm_command_error", "command": ["ls", "/home/user/Desktop/done/missing"]},
        ],  # fmt: skip
        "expected": [
            {"type": "rule", "rules": {"include": ["FOUND-42"], "exclude": []}},
            {"type": "rule", "rules": {"include": ["No such file"], "exclude": []}},
        ],  # fmt: skip
    },
)
PHOTOS = task(
    "t11-photos",
    instruction="A terminal is open. Copy the screenshot b.png from ~/Desktop/shots into a new folder ~/Desktop/picked.",
    config=[
        {"type": "command", "parameters": {"command": ["mkdir", "-p", "/home/user/Desktop/shots"]}},
        download("https://f.example.invalid/shots/a.png", "Desktop/shots/a.png"),
        download("https://f.example.invalid/shots/b.png", "Desktop/shots/b.png"),
        {"type": "launch", "parameters": {"command": "gnome-terminal --maximize", "shell": True}},
        {"type": "sleep", "parameters": {"seconds": 1}},
    ],  # fmt: skip
    evaluator={
        "func": "compare_image_list",
        "result": {"type": "vm_file", "path": ["Desktop/picked/b.png"], "dest": ["b.png"], "multi": True},
        "expected": {
            "type": "cloud_file",
            "path": ["https://f.example.invalid/gold/b.png"],
            "dest": ["b_gold.png"],
            "multi": True,
        },
    },  # fmt: skip
)


def png(seed: int, **params) -> bytes:
    """A small screenshot-like PNG; ``params`` change its bytes (compression), never its pixels."""
    from PIL import Image

    image = Image.new("RGB", (40, 30), (seed * 40 % 256, 90, 200))
    image.putdata([((x * seed) % 256, (y * 7) % 256, seed) for y in range(30) for x in range(40)])
    buf = io.BytesIO()
    image.save(buf, "PNG", **params)
    return buf.getvalue()


LIVE = task(
    "t8-live",
    instruction="Type `hello probe` at the end of notes.txt, open in the editor (no need to save).",
    config=[
        download("https://a.example.invalid/in/notes.txt", "notes.txt"),
        {"type": "open", "parameters": {"path": "notes.txt"}},
    ],  # fmt: skip
    evaluator={
        "func": ["check_accessibility_tree", "check_direct_json_object"],
        "result": [{"type": "accessibility_tree"}, {"type": "vm_window_size", "app_class_name": "mousepad"}],
        "expected": [
            {
                "type": "rule",
                "rules": [
                    {
                        "selectors": ["application[name=mousepad] text[st|editable=true]"],
                        "text": "first\nhello probe",
                        "exact": True,
                    }
                ],
            },
            {"type": "rule", "rules": {"expected": {}}},
        ],  # fmt: skip
    },
)
TERMINAL = task(
    "t9-terminal",
    instruction="Open a terminal and print six times nine with the shell's arithmetic.",
    evaluator={
        "func": "check_include_exclude",
        "result": {"type": "vm_terminal_output"},
        "expected": {"type": "rule", "rules": {"include": ["54"], "exclude": []}},
    },
)
HISTORY = task(
    "t10-history",
    instruction="In the terminal, print forty-two with `echo answer-$((6*7))`.",
    config=[
        {
            "type": "execute",
            "parameters": {
                "command": "echo {CLIENT_PASSWORD} | sudo -S install -m 644 /dev/null ~/Desktop/by-root.txt",
                "shell": True,
            },
        },
        {"type": "launch", "parameters": {"command": ["gnome-terminal", "--working-directory=/home/user/Desktop"]}},
    ],  # fmt: skip
    evaluator={
        "postconfig": [
            {"type": "execute", "parameters": {"command": "killall gnome-terminal-server", "shell": True}},
            {"type": "sleep", "parameters": {"seconds": 1}},
        ],  # fmt: skip
        "func": "check_include_exclude",
        "result": {
            "type": "vm_command_line",
            "command": "grep -xF 'echo answer-$((6*7))' ~/.bash_history; stat -c owner=%U ~/Desktop/by-root.txt",
            "shell": True,
        },
        "expected": {"type": "rule", "rules": {"include": ["echo answer-$((6*7))", "owner=root"], "exclude": []}},
    },
)
TREE = {
    "os/t1-edit.json": EDIT,
    "os/t10-history.json": HISTORY,
    "os/t9-terminal.json": TERMINAL,
    "os/t8-live.json": LIVE,
    "os/t7-command.json": COMMAND,
    "os/t11-photos.json": PHOTOS,
    "os/t2-name.json": task(
        "t2-name",
        config=[download("https://c.example.invalid/x/report%231.csv", "r.csv")],
        evaluator={
            "func": "check_csv",
            "result": {"type": "vm_file", "path": "r.csv"},
            "expected": {"type": "rule", "rules": {"expect": [{"a": "1"}]}},
        },
    ),  # fmt: skip
    "multi_apps/t3-image.json": task(
        "t3-image",
        related_apps=["gimp"],
        evaluator={"func": "compare_videos", "result": {"type": "vm_file", "path": "a.mp4"}},
    ),  # fmt: skip
    "os/t4-web.json": task(
        "t4-web",
        proxy=True,
        evaluator={
            "func": "exact_match",
            "result": {"type": "rule", "rules": {}},
            "expected": {"type": "rule", "rules": {"expected": ""}},
        },
    ),  # fmt: skip
    "os/t5-missing.json": task(
        "t5-missing", config=[download("https://e.example.invalid/none.txt", "n.txt")], evaluator={"func": "infeasible"}
    ),  # fmt: skip
    "os/t6-ambiguous.json": task(
        "t6-ambiguous",
        config=[download("https://d.example.invalid/setup.sh", "s.sh")],
        evaluator={"func": "infeasible"},
    ),  # fmt: skip
}
ASSETS = {
    "a.example.invalid/in/notes.txt": "first\n",
    "b.example.invalid/gold/notes.txt": "first\nhello world\n",
    "loose/report#1.csv": "a,b\n1,2\n",
    "one/setup.sh": "echo 1\n",
    "two/setup.sh": "echo 2\n",
    "f.example.invalid/shots/a.png": png(3),
    "f.example.invalid/shots/b.png": png(5),
    "f.example.invalid/gold/b.png": png(5, compress_level=1),  # the same pixels as shots/b.png, other bytes
}


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    src, assets = tmp_path / "evaluation_examples", tmp_path / "assets"
    for name, data in TREE.items():
        (src / "examples" / name).parent.mkdir(parents=True, exist_ok=True)
        (src / "examples" / name).write_text(json.dumps(data))
    for name, data in ASSETS.items():
        (assets / name).parent.mkdir(parents=True, exist_ok=True)
        (assets / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return src, assets


def test_assets_match_by_whole_url_then_unique_decoded_name(tree):
    index = AssetIndex(tree[1])
    assert index.resolve("https://b.example.invalid/gold/notes.txt").read_text() == "first\nhello world\n"
    assert index.resolve("https://a.example.invalid/in/notes.txt").read_text() == "first\n"
    assert index.resolve("https://z.example.invalid/y/report%231.csv").name == "report#1.csv"
    assert index.resolve("https://z.example.invalid/nothing.txt") is None
    with pytest.raises(AmbiguousAsset, match="one/setup.sh, two/setup.sh"):
        index.resolve("https://d.example.invalid/setup.sh")
    assert index.resolve("https://a.example.invalid/../../etc/passwd") is None


def test_check_reports_coverage_and_out_writes_the_tasks(tree, tmp_path):
    src, assets = tree
    out = tmp_path / "tasks"
    result = CliRunner().invoke(app, ["gui", "import-osworld", str(src), "--out", str(out), "--assets", str(assets), "--check"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "11 tasks: 7 imported, 2 assets, 1 network, 1 unsupported" in result.output
    assert "asset for https://e.example.invalid/none.txt" in result.output
    assert "one/setup.sh, two/setup.sh" in result.output
    assert "network: proxy: true" in result.output
    assert "metric 'compare_videos'" in result.output and "app 'gimp'" in result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "osworld-os-t1-edit",
        "osworld-os-t10-history",
        "osworld-os-t11-photos",
        "osworld-os-t2-name",
        "osworld-os-t7-command",
        "osworld-os-t8-live",
        "osworld-os-t9-terminal",
    ]
    written = out / "osworld-os-t1-edit"
    assert json.loads((written / "task.json").read_text()) == EDIT  # verbatim
    assert (written / "assets/b.example.invalid/gold/notes.txt").read_text() == "first\nhello world\n"
    assert (out / "osworld-os-t2-name/assets/c.example.invalid/x/report#1.csv").is_file()


def run_imported(tree: tuple[Path, Path], tmp_path: Path, task_id: str, actions: list, **make) -> dict:
    """Import the test tree, run one of its tasks with ``actions``, and return the last step's info."""
    src, assets = tree
    CliRunner().invoke(app, ["gui", "import-osworld", str(src), "--out", str(tmp_path / "t"), "--assets", str(assets)])
    env = agentenvs.make(agentenvs.load_task(tmp_path / "t" / task_id), screen_size=(800, 600), **make)
    try:
        env.reset(seed=0)
        info: dict = {}
        for action in actions:
            *_, info = env.step(action)
        return info
    finally:
        env.close()


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["docker", "local"])
@pytest.mark.parametrize("variant", ["scripted", "noop"])
def test_an_imported_task_runs_to_one_by_gui_actions_and_to_zero_by_a_noop(tree, tmp_path, gui_image, variant, backend):
    actions = ["pyautogui.hotkey('ctrl', 'End')", {"action_type": "TYPING", "text": "hello world\n"}, "DONE"]
    chosen = actions if variant == "scripted" else ["DONE"]
    info = run_imported(tree, tmp_path, "osworld-os-t1-edit", chosen, observation_type="screenshot", backend=backend)
    assert info["score"] == (1.0 if variant == "scripted" else 0.0), info["verifier_detail"]


def in_the_terminal(command: str, variant: str) -> list:
    """A click into the terminal the task launched, ``command`` typed and run; the no-op only says DONE."""
    click = {"name": "computer", "arguments": {"action": "left_click", "coordinate": [400, 300]}}
    typing = {"action_type": "TYPING", "text": command + "\n"}
    return [click, typing, "WAIT", "DONE"] if variant == "scripted" else ["DONE"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["docker", "local"])
@pytest.mark.parametrize("variant", ["scripted", "noop"])
def test_the_vms_conventions_sudo_a_named_terminal_and_its_history(tree, tmp_path, gui_image, variant, backend):
    """A config step's ``sudo -S`` with the client password, ``gnome-terminal`` with its flags, and
    ``~/.bash_history`` written when the postconfig kills the terminal (the grader reads it)."""
    chosen = in_the_terminal("echo answer-$((6*7))", variant)
    info = run_imported(tree, tmp_path, "osworld-os-t10-history", chosen, backend=backend)
    assert info["score"] == (1.0 if variant == "scripted" else 0.0), info["verifier_detail"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["docker", "local"])
@pytest.mark.parametrize("variant", ["scripted", "noop"])
def test_command_getters_run_in_the_sealed_verifier(tree, tmp_path, gui_image, variant, backend):
    chosen = in_the_terminal("mkdir ~/Desktop/done", variant)
    info = run_imported(tree, tmp_path, "osworld-os-t7-command", chosen, backend=backend)
    assert info["score"] == (1.0 if variant == "scripted" else 0.0), info["verifier_detail"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["docker", "local"])
@pytest.mark.parametrize("variant", ["scripted", "noop", "wrong"])
def test_an_image_copied_in_a_terminal_is_graded_on_its_pixels(tree, tmp_path, gui_image, variant, backend):
    """``compare_image_list`` in the verifier's checker: the copy has the gold file's pixels (not its bytes);
    the other screenshot under the right name is wrong."""
    assert ASSETS["f.example.invalid/gold/b.png"] != ASSETS["f.example.invalid/shots/b.png"]
    source = "a.png" if variant == "wrong" else "b.png"
    command = f"mkdir ~/Desktop/picked && cp ~/Desktop/shots/{source} ~/Desktop/picked/b.png"
    chosen = in_the_terminal(command, "noop" if variant == "noop" else "scripted")
    info = run_imported(tree, tmp_path, "osworld-os-t11-photos", chosen, backend=backend)
    assert info["score"] == (1.0 if variant == "scripted" else 0.0), info["verifier_detail"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["docker", "local"])
@pytest.mark.parametrize("variant", ["scripted", "noop"])
def test_live_getters_read_the_desktop_after_the_agent_is_gone(tree, tmp_path, gui_image, variant, backend):
    """``accessibility_tree`` and ``vm_window_size`` are read by the probe, not through the agent's daemon."""
    actions = ["pyautogui.hotkey('ctrl', 'End')", {"action_type": "TYPING", "text": "hello probe"}, "DONE"]
    chosen = actions if variant == "scripted" else ["DONE"]
    info = run_imported(tree, tmp_path, "osworld-os-t8-live", chosen, backend=backend)
    assert info["score"] == (1.0 if variant == "scripted" else 0.0), info["verifier_detail"]


FORGE_TERMINAL_LOG = (
    "import os\n"
    "for d in ('/home/user/.cache/agentenvs-terminals', '/tmp/agentenvs-terminals-1001'):\n"
    "    try:\n"
    "        os.makedirs(d, exist_ok=True)\n"
    "        open(os.path.join(d, '9999999999999999999.log'), 'w').write('54\\n')\n"
    "    except OSError:\n"
    "        pass"
)
#: The agent's own wait for the terminal window (a busy machine can take seconds to map it).
WAIT_FOR_TERMINAL = (
    "import subprocess, time\n"
    "for _ in range(150):\n"
    "    if subprocess.run(['xdotool', 'search', '--class', 'Gnome-terminal'], capture_output=True).stdout:\n"
    "        break\n"
    "    time.sleep(0.1)\n"
    "time.sleep(0.5)"
)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["docker", "local"])
@pytest.mark.parametrize("variant", ["scripted", "noop", "forged"])
def test_terminal_output_is_what_the_terminal_opened_by_ctrl_alt_t_showed(tree, tmp_path, gui_image, variant, backend):
    """The agent's own code (``actor``) cannot plant a terminal log where the probe reads one."""
    typing = {"action_type": "TYPING", "text": "echo $((6*9))\n"}
    actions = {
        "scripted": ["pyautogui.hotkey('ctrl', 'alt', 't')", WAIT_FOR_TERMINAL, typing, "WAIT", "DONE"],
        "noop": ["DONE"],
        "forged": [FORGE_TERMINAL_LOG, "DONE"],
    }[variant]
    info = run_imported(tree, tmp_path, "osworld-os-t9-terminal", actions, backend=backend)
    assert info["score"] == (1.0 if variant == "scripted" else 0.0), info["verifier_detail"]


def test_new_getters_import_and_what_we_lack_is_named():
    from agentenvs.envs.gui.osworld_task import problems

    none = AssetIndex(None)
    ok = {"func": "literal_match", "result": {"type": "content_from_vm_file", "path": "a.xlsx", "file_type": "xlsx", "file_content": "last_row"}, "expected": {"type": "rule", "rules": []}}  # fmt: skip
    assert problems(task("a", evaluator=ok), none) == []
    csv = {**ok, "result": {**ok["result"], "file_type": "csv"}}
    assert problems(task("b", evaluator=csv), none) == ["getter 'content_from_vm_file' other than an xlsx's last_row"]
    vm = {"type": "vm_file", "path": "a.xlsx"}
    table = {"func": "compare_table", "result": vm, "options": {"rules": [{"type": "style", "props": ["bgcolor", "border"]}, {"type": "sparkline"}]}}  # fmt: skip
    assert problems(task("e", evaluator=table), none) == ["compare_table style prop 'border'", "compare_table rule 'sparkline'"]  # fmt: skip
    tree = {"func": "check_accessibility_tree", "result": {"type": "accessibility_tree"}, "expected": {"type": "rule", "rules": [{"selectors": ["label:first-child"]}]}}  # fmt: skip
    assert problems(task("f", evaluator=tree), none)[0].startswith("check_accessibility_tree: unsupported CSS selector")
    tree["expected"]["rules"] = [{"selectors": ["panel > label[name*=x]"]}, {"xpath": "//label[@name='x']"}]
    assert problems(task("g", evaluator=tree), none) == []
    zipped = {"func": "compare_archive", "result": vm, "expected": vm, "options": {"file_type": "video"}}
    assert problems(task("h", evaluator=zipped), none) == ["compare_archive file_type 'video'"]


def test_live_getters_become_the_probes_values():
    from agentenvs.envs.gui.osworld_task import OSWorldTask, fill_live, needs_live

    loaded = OSWorldTask.__new__(OSWorldTask)  # the evaluator only: no assets to resolve
    loaded.data = LIVE
    refs = loaded.check_args()
    assert needs_live(refs) == {"a11y": True, "windows": True, "terminal": False}
    fill_live(refs, {"a11y": "<desktop-frame/>", "windows": [{"class": "xterm.XTerm", "width": 1, "height": 2}, {"class": "mousepad.Mousepad", "width": 640, "height": 480}]})  # fmt: skip
    assert [m["result"] for m in refs["metrics"]] == [{"value": "<desktop-frame/>"}, {"value": {"width": 640, "height": 480}}]  # fmt: skip
    assert needs_live(refs) == {}
    refs = loaded.check_args()
    fill_live(refs, {})  # the probe saw nothing: None, which scores 0
    assert [m["result"] for m in refs["metrics"]] == [{"value": None}, {"value": None}]
