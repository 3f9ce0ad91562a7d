"""The lazy registry: every ``@check`` is where ``HOMES`` says, and a checker process loads only what it runs."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import evaluators
from evaluators import _registry
from evaluators.osworld import METRIC_MODULES, METRICS, load_metrics

ROOT = Path(evaluators.__file__).resolve().parent.parent


def test_homes_name_every_registered_checker_and_no_other() -> None:
    for module in pkgutil.iter_modules(evaluators.__path__):
        if module.name != "__main__":
            __import__(f"evaluators.{module.name}")
    assert set(_registry._CHECKS) == set(_registry.HOMES)
    for name, home in _registry.HOMES.items():
        assert _registry._CHECKS[name].__module__ == f"evaluators.{home}", name


def test_metric_modules_are_every_module_that_registers_a_metric() -> None:
    load_metrics()
    assert {fn.__module__.removeprefix("evaluators.") for fn in METRICS.values()} - {"osworld"} == set(METRIC_MODULES)


def _fresh(code: str) -> dict:
    """Run ``code`` in a new isolated interpreter with only the package on its path; it prints JSON."""
    prelude = f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); "
    done = subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_batch_imports_only_the_modules_of_its_checkers() -> None:
    loaded = _fresh(
        "from evaluators import run_batch; "
        "out = run_batch([{'check': 'file_exists', 'args': {'path': '/no/such/file'}}]); "
        "print(json.dumps({'out': out, 'mods': sorted(m for m in sys.modules if m.startswith('evaluators.'))}))"
    )
    assert loaded["out"][0]["passed"] is False, loaded
    assert "evaluators.files" in loaded["mods"]
    assert not {"evaluators.data", "evaluators.osworld", "evaluators.text", "evaluators.procs"} & set(loaded["mods"])


def test_the_osworld_checker_loads_its_metrics_in_a_fresh_process() -> None:
    loaded = _fresh(
        "from evaluators import run_check; "
        "r = run_check('osworld', {'metrics': [{'func': 'compare_pdfs', 'result': {'file': '/no/such.pdf'}, "
        "'expected': {'file': '/no/other.pdf'}}]}); print(json.dumps(r))"
    )
    assert loaded["passed"] is False and loaded["detail"] == "compare_pdfs=0", loaded


def test_names_list_every_checker_before_any_is_loaded() -> None:
    listed = _fresh("from evaluators import names; print(json.dumps(names()))")
    assert set(listed) == set(_registry.HOMES)
