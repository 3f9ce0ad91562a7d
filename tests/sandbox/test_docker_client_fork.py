"""The Docker client is per process: forked workers never share their parent's connections to the engine."""

from __future__ import annotations

import multiprocessing

import pytest

from agentenvs.sandbox import docker_engine

pytestmark = pytest.mark.docker


def _child(parent_id: int, out) -> None:
    client = docker_engine.docker_client()
    out.send((id(client) != parent_id, client.ping()))


def test_a_forked_child_gets_its_own_client(docker_client):
    parent = docker_engine.docker_client()
    parent.ping()  # a pooled connection now exists in the parent
    receive, send = multiprocessing.Pipe(duplex=False)
    proc = multiprocessing.get_context("fork").Process(target=_child, args=(id(parent), send))
    proc.start()
    fresh, pinged = receive.recv()
    proc.join(30)
    assert fresh and pinged
    assert docker_engine.docker_client() is parent  # the parent keeps its own
