# Sandbox images for agentenvs. Stages: system -> base, terminal, swe, gui, web.
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
# What the host trusts, the images trust (scripts/install-system.sh copies the host's CA bundle):
# builds of task images on these bases then reach PyPI and npm through a TLS-inspecting proxy.
COPY .cache/host-ca-certificates.crt /usr/local/share/ca-certificates/agentenvs-host.crt
RUN update-ca-certificates >/dev/null
# A pip a task installs itself (`pip install --upgrade pip`) and uv carry their own CA roots: point them at
# the system bundle, as Debian's pip is, so every image built on ours trusts what the host trusts.
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    UV_NATIVE_TLS=1 \
    UV_SYSTEM_CERTS=1
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

# The desktop: Xvfb, openbox, D-Bus and AT-SPI, LibreOffice, an editor and a terminal, run by
# the control daemon (agentenvs/envs/gui/daemon.py, bind-mounted read-only) as the user `user`.
FROM system AS gui
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        xvfb openbox dbus dbus-x11 at-spi2-core python3-pyatspi gir1.2-atspi-2.0 python3-gi \
        python3-tk python3-xlib python3-pil python3-pip xdotool wmctrl x11-utils xterm psmisc \
        libglib2.0-bin sudo fonts-dejavu-core mousepad \
        libreoffice-calc libreoffice-writer libreoffice-impress libreoffice-gtk3 \
    && rm -rf /var/lib/apt/lists/*
COPY .cache/gui-wheels /tmp/gui-wheels
# --no-deps: Debian's python3-xlib (0.33) serves pyautogui; PyPI's python3-xlib 0.15 would shadow it.
RUN pip3 install --no-cache-dir --break-system-packages --no-index --no-deps /tmp/gui-wheels/*.whl \
    && rm -rf /tmp/gui-wheels && ln -sf /usr/bin/python3 /usr/local/bin/python
# OSWorld's desktop: user `user`, home /home/user with Desktop and Downloads, sudo with the
# client password; GTK cursor blink and animations off so the screen settles.
RUN useradd --create-home --uid 1001 --shell /bin/bash user \
    && echo 'user:password' | chpasswd \
    && echo 'user ALL=(ALL:ALL) ALL' > /etc/sudoers.d/user && chmod 440 /etc/sudoers.d/user \
    && install -d -o user -g user /home/user/Desktop /home/user/Downloads \
    && mkdir -p /etc/gtk-3.0 \
    && printf '[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\ngtk-font-name=DejaVu Sans 10\n' \
        > /etc/gtk-3.0/settings.ini
# The agent's pyautogui code runs as `actor` (its own uid, no sudo, no access to /home/user): it
# can drive the apps through the X display but cannot write the files the graders read behind them.
RUN useradd --no-create-home --home-dir /tmp --uid 1002 --shell /usr/sbin/nologin actor \
    && echo 'user ALL=(actor) NOPASSWD: ALL' > /etc/sudoers.d/zz-actor && chmod 440 /etc/sudoers.d/zz-actor \
    && chmod 700 /home/user
COPY scripts/gui/gnome-terminal /usr/local/bin/gnome-terminal
RUN ln -s /usr/bin/xterm /usr/local/bin/gnome-terminal-server
COPY --chown=user:user scripts/gui/registrymodifications.xcu /home/user/.config/libreoffice/4/user/registrymodifications.xcu
# A browser and a file manager. Chromium's own sandbox needs user namespaces the container does
# not give, so the wrapper turns it off (the container is the sandbox, network off); it also keeps
# first-run dialogs and background traffic away and exposes the accessibility tree. The profile is
# in the home, fresh with every container. `google-chrome` is the name OSWorld's tasks call.
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium pcmanfm \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/gui/chromium /usr/local/bin/chromium
RUN ln -s /usr/local/bin/chromium /usr/local/bin/google-chrome
# OSWorld's os tasks: GNOME Shell's settings schema (org.gnome.shell, 7 MB, for favorite-apps; not the
# shell) read and written through GSettings' dconf backend (dconf-gsettings-backend, dconf-service,
# already here); /run/user/1000 for the session bus where upstream's commands look for it
# (guest/session.py); and timedatectl for a desktop without systemd (scripts/gui/timedatectl), in
# /usr/bin, so the sealed verifier always runs the image's copy. GStreamer's base and good plugins: Impress
# plays and inserts audio and video through them (Insert > Audio or Video did nothing with the core alone).
RUN apt-get update \
    && apt-get install -y --no-install-recommends gnome-shell-common \
        gstreamer1.0-plugins-base gstreamer1.0-plugins-good \
    && rm -rf /var/lib/apt/lists/* \
    && install -d -m 700 -o user -g user /run/user/1000
COPY scripts/gui/timedatectl /usr/bin/timedatectl
ENV LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC
WORKDIR /home/user

# The web family: Debian's Chromium driven by Playwright inside the container, with our sites on its
# loopback, run by the control daemon (agentenvs/envs/web/daemon.py; the agentenvs package is
# bind-mounted read-only at /opt/agentenvs). libatomic1 is for Playwright's node driver. The Python
# wheels (Playwright's is platform-specific, as are greenlet, numpy, pydantic-core, MarkupSafe and
# Pillow) are fetched on the host into .cache/web-wheels for this image's Python (3.11, x86_64) by
# scripts/install-system.sh: pip cannot reach PyPI inside docker build.
FROM system AS web
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium fonts-dejavu-core libatomic1 python3-pip \
    && rm -rf /var/lib/apt/lists/*
COPY .cache/web-wheels /tmp/web-wheels
RUN pip3 install --no-cache-dir --break-system-packages --no-index --no-deps /tmp/web-wheels/*.whl \
    && rm -rf /tmp/web-wheels
ENV LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC
