"""Any registered env over HTTP and WebSocket (``agentenvs serve``), and its client (``agentenvs.remote``).

Modules: ``protocol`` (the messages and their JSON schema), ``codec`` (spaces and
values on the wire, images as PNG/JPEG bytes), ``sessions`` (live sessions: the
bound, idle reaping, one operation at a time per session), ``app`` (the HTTP
routes and the WebSocket over one dispatcher), ``server`` (running it),
``client`` (``RemoteEnv``, a ``gymnasium.Env``).
"""

from agentenvs.serve.client import RemoteClient, RemoteEnv, RemoteEnvError, remote
from agentenvs.serve.server import BackgroundServer, serve_forever

__all__ = ["BackgroundServer", "RemoteClient", "RemoteEnv", "RemoteEnvError", "remote", "serve_forever"]
