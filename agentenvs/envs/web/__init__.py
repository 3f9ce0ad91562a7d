"""The web family: our own sites and MiniWoB++ in Chromium, with BrowserGym's actions.

Importing this registers the ``web`` family; nothing starts (no browser, no
site) until an env resets.
"""

from agentenvs.core.registry import Family, register_family
from agentenvs.envs.web.catalog import WebTaskSource

register_family(
    Family(
        name="web",
        entry_point="agentenvs.envs.web.env:WebEnv",
        source=WebTaskSource(),
        description="Web apps of our own (shop, forum) and MiniWoB++ in Chromium, BrowserGym's action strings.",
    )
)
