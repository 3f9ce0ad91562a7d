"""Screenshots of every web site for docs/web.md: ``python scripts/web-screenshots.py [OUT_DIR]``.

Each site runs from its snapshot in a real env; the page is the one a task
starts on (signed in as a persona where the site needs it), captured by the
same headless Chromium the agent uses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import agentenvs

PAGES = {
    "shop": ("web/shop-review-0", ["shop:/product/8", "shop:/search?category=kitchen&sort=price_asc"]),
    "forum": ("web/forum-reply-0", ["forum:/f/cycling?sort=top", "forum:/post/12"]),
    "mail": ("web/mail-reply-0", ["mail:/mail/inbox", "mail:/calendar?month=2026-11"]),
    "tracker": ("web/tracker-triage-0", ["tracker:/p/WEB/issues?state=open&label=bug", "tracker:/p/WEB/issues/7"]),
}


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")
    out.mkdir(parents=True, exist_ok=True)
    env = agentenvs.make(PAGES["shop"][0], viewport=(1100, 700)).unwrapped
    try:
        for site, (task_id, refs) in PAGES.items():
            env.reset(seed=0, options={"task_id": task_id})
            for k, ref in enumerate(refs):
                env.step(f"goto({env.site_url(ref)!r})")
                path = out / f"web-{site}-{k + 1}.png"
                png = env._call(lambda b: env._session.page.screenshot(type="png"))
                path.write_bytes(png)
                print(path)
    finally:
        env.close()


if __name__ == "__main__":
    main()
