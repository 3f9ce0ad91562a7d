"""A one-shot job: write the episode's word to the shared volume, then exit 0."""

import secrets
from pathlib import Path

Path("/shared/word.txt").write_text("".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10)))
