# Sandbox images for agentenvs. Stages: system -> base, system -> terminal, system -> swe.
#
# No registry is needed: BASE_IMAGE defaults to a local debootstrap import
# (scripts/install-system.sh makes it). Build one stage with:
#   docker build --network host --build-arg BASE_IMAGE=agentenvs/debian-base:bookworm \
#       --target terminal -t agentenvs/terminal:latest .
# The checkers (evaluators/) are not baked in: every sandbox bind-mounts the
# repository's copy read-only at /opt/agentenvs/evaluators, so the agent can
# neither break nor fake them. Keep the package lists in sync with
# scripts/apt-packages.txt.

ARG BASE_IMAGE=agentenvs/debian-base:bookworm

FROM ${BASE_IMAGE} AS system
ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONPATH=/opt/agentenvs
RUN apt-get update \
    && apt-get install -y --no-install-recommends bash coreutils procps python3 python-is-python3 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# An unprivileged user for tasks that run the agent as non-root; root stays the default.
RUN useradd --create-home --uid 1000 --shell /bin/bash agent \
    && mkdir -p /app /logs /tests /opt/agentenvs \
    && chown agent:agent /app /logs
WORKDIR /app
CMD ["sleep", "infinity"]

FROM system AS base

FROM system AS terminal
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        sqlite3 jq zip unzip file xz-utils bzip2 tmux git patch \
    && rm -rf /var/lib/apt/lists/*

FROM system AS swe
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        git patch python3-pytest python3-pip python3-venv \
    && rm -rf /var/lib/apt/lists/*
RUN git config --system user.email agent@agentenvs.local \
    && git config --system user.name agent \
    && git config --system init.defaultBranch main
