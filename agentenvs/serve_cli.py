"""``agentenvs serve``: every registered env over HTTP and WebSocket, behind a token."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on; loopback unless you mean otherwise.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    token: Annotated[
        Optional[str],
        typer.Option(help="The token clients must send (default: $AGENTENVS_SERVE_TOKEN, else a new one, printed)."),
    ] = None,
    max_sessions: Annotated[int, typer.Option(min=1, help="Live sessions (envs) at most; more are refused.")] = 16,
    idle_timeout: Annotated[float, typer.Option(min=1, help="Seconds before an unused session is closed.")] = 600.0,
    schema: Annotated[bool, typer.Option("--schema", help="Print the protocol's JSON schema and exit.")] = False,
) -> None:
    """Serve any registered env: one session per episode, images as PNG bytes. See docs/serve.md."""
    if schema:
        from agentenvs.serve.protocol import schema_text

        typer.echo(schema_text(), nl=False)
        return
    from agentenvs.serve.server import is_loopback, new_token, serve_forever

    chosen = token or os.environ.get("AGENTENVS_SERVE_TOKEN") or new_token()
    if not is_loopback(host):
        typer.secho(f"warning: listening on {host}, beyond this machine; anyone with the token can run envs", err=True)
    typer.echo(
        f"agentenvs env server on http://{host}:{port} (ws: ws://{host}:{port}/v1/ws), {max_sessions} sessions at most"
    )
    if not token and not os.environ.get("AGENTENVS_SERVE_TOKEN"):
        typer.echo(f"token: {chosen}")
    serve_forever(host, port, token=chosen, max_sessions=max_sessions, idle_timeout=idle_timeout)
