"""Adapters to other projects' interfaces: trainer adapters (skyrl, openenv, verifiers, trl, art, on the shared
``common`` layer; they reach envs only through ``agentenvs.make``, see docs/training.md) and OSWorld's
``DesktopEnv`` over the gui family (``osworld``). Each imports its library lazily, behind its own extra."""
