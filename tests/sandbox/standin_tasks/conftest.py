"""The task folders here are data for the tests above, not tests: pytest must not collect their
``tests/test_outputs.py`` (the verifier runs it inside the sandbox)."""

collect_ignore_glob = ["*/tests/*"]
