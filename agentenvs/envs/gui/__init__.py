"""The desktop GUI family: real apps on an X desktop in a container, OSWorld's task format."""

from agentenvs.core.registry import DirectoryTaskSource, Family, register_family

register_family(
    Family(
        name="gui",
        entry_point="agentenvs.envs.gui.env:GuiEnv",
        source=DirectoryTaskSource("gui"),
        description="Desktop tasks (LibreOffice, an editor, a terminal) in OSWorld's task JSON.",
    )
)
