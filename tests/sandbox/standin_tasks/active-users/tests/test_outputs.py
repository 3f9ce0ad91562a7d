from pathlib import Path


def test_the_build_ran_its_pip_step():
    import six

    assert six.__version__ == "1.16.0"


def test_the_active_accounts_sorted():
    # Not read from /app/users.json, which the agent can change.
    assert Path("/app/active.txt").read_text().split() == ["adil", "ines", "mara"]
    assert Path("/app/active.txt").read_text().endswith("\n")
