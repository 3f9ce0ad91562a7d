"""Harbor-format tasks written for the tests, each in a folder not named after a family.

Each exercises one feature of Harbor's format the way public tasks use it;
none is copied from a public repository.
"""

from __future__ import annotations

from pathlib import Path

#: Our base stage: Debian with python3 and `python`, as Harbor's usual images have it.
BASE = "FROM agentenvs/base:latest\n"

#: A test.sh in the style Harbor's template writes: python, /logs/verifier, reward.txt.
PYTHON_TEST = """#!/bin/bash
python - <<'PY'
import pathlib
ok = pathlib.Path("answer.txt").is_file() and pathlib.Path("answer.txt").read_text().strip() == "42"
pathlib.Path("/logs/verifier/reward.txt").write_text("1" if ok else "0")
PY
"""


def write_task(
    root: Path,
    *,
    toml: str = 'version = "1.0"\n[agent]\ntimeout_sec = 120.0\n',
    instruction: str = "Write 42 into answer.txt in the working directory.",
    dockerfile: str | None = BASE + "WORKDIR /workspace\n",
    test_sh: str | None = PYTHON_TEST,
    solve_sh: str | None = "echo 42 > answer.txt\n",
    files: dict[str, str] | None = None,
) -> Path:
    """A Harbor task directory; ``files`` maps relative paths to extra contents."""
    root.mkdir(parents=True)
    (root / "task.toml").write_text(toml)
    if instruction is not None:
        (root / "instruction.md").write_text(instruction + "\n")
    contents = dict(files or {})
    if dockerfile is not None:
        contents["environment/Dockerfile"] = dockerfile
    if test_sh is not None:
        contents["tests/test.sh"] = test_sh
    if solve_sh is not None:
        contents["solution/solve.sh"] = "#!/bin/bash\nset -e\n" + solve_sh
    for rel, text in contents.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
