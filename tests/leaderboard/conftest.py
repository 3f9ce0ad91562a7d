from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from lbkit import boards, tamper  # noqa: E402, F401
