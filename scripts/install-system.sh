#!/usr/bin/env bash
# System setup for agentenvs on Debian 12, run as root (or with sudo). Idempotent and
# quick when everything is present:
#   1. apt packages from scripts/apt-packages.txt (apt-get update only if one is missing)
#   2. a Docker engine (dockerd started in the background if `docker info` fails)
#   3. the local base image agentenvs/debian-base:bookworm (debootstrap + docker import;
#      nothing is ever pulled from a registry), also tagged debian:bookworm-slim
#   4. the Dockerfile's sandbox stages, agentenvs/{base,terminal,swe,gui,web}:latest (the gui stage's
#      pure-Python wheels are fetched first with the host's pip into .cache/gui-wheels, the web
#      stage's wheels, platform-specific ones for the image's Python, into .cache/web-wheels)
#   5. the unprivileged user agentenvs-sandbox, whom the local sandbox's root is on the host
#      (agentenvs also makes it on first use; making it here keeps /etc/passwd edits out of test runs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE_IMAGE="agentenvs/debian-base:bookworm"
STAGES=(base terminal swe gui web)
DOCKERD_LOG="${AGENTENVS_DOCKERD_LOG:-/var/log/agentenvs-dockerd.log}"
DOCKERD_WAIT_SEC="${AGENTENVS_DOCKERD_WAIT_SEC:-60}"
MIRROR="${AGENTENVS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-system.sh: run as root (or install sudo)" >&2; exit 1; }
  SUDO=(sudo)
fi
log() { printf '[install-system] %s\n' "$*" >&2; }

install_apt_packages() {
  local wanted missing=()
  mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$ROOT/scripts/apt-packages.txt" | grep -v '^$' | sort -u)
  for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "apt: all ${#wanted[@]} packages present"
    return
  fi
  log "apt: installing ${missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

start_docker() {
  if docker info >/dev/null 2>&1; then
    log "docker: engine running"
    return
  fi
  if ! pgrep -x dockerd >/dev/null; then
    log "docker: starting dockerd (log: $DOCKERD_LOG)"
    "${SUDO[@]}" mkdir -p "$(dirname "$DOCKERD_LOG")"
    "${SUDO[@]}" bash -c "nohup setsid dockerd --iptables=false --bridge=none >>'$DOCKERD_LOG' 2>&1 </dev/null &"
  fi
  local waited=0
  until docker info >/dev/null 2>&1; do
    if [ "$waited" -ge "$DOCKERD_WAIT_SEC" ]; then
      echo "install-system.sh: the Docker engine did not answer within ${DOCKERD_WAIT_SEC}s." >&2
      echo "Last lines of $DOCKERD_LOG:" >&2
      tail -n 20 "$DOCKERD_LOG" >&2 || true
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  log "docker: engine up after ${waited}s"
}

build_base_image() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    log "image: $BASE_IMAGE present"
  else
    local dir
    dir="$(mktemp -d /tmp/agentenvs-debootstrap.XXXXXX)"
    trap '"${SUDO[@]}" rm -rf "$dir"' RETURN
    log "image: debootstrap bookworm into $dir (about a minute)"
    "${SUDO[@]}" debootstrap --variant=minbase --include=python3,git,ca-certificates,procps,patch,tmux \
      bookworm "$dir" "$MIRROR" >/dev/null
    "${SUDO[@]}" tar -C "$dir" -c . | docker import - "$BASE_IMAGE" >/dev/null
    log "image: imported $BASE_IMAGE"
  fi
  # Harbor task Dockerfiles say FROM debian:bookworm-slim; never shadow a real one.
  if ! docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
    docker tag "$BASE_IMAGE" debian:bookworm-slim
    log "image: tagged $BASE_IMAGE as debian:bookworm-slim"
  fi
}

fetch_gui_wheels() {
  local dir="$ROOT/.cache/gui-wheels" python="${AGENTENVS_PYTHON:-$ROOT/.venv/bin/python}"
  [ -x "$python" ] || python=python3
  mkdir -p "$dir"
  "$python" -m pip wheel -q --no-deps -w "$dir" pyautogui==0.9.54 pymsgbox==2.0.1 pytweening==1.2.0 \
    pyscreeze==1.0.1 mouseinfo==0.1.3 pygetwindow==0.0.9 pyrect==0.2.0 pyperclip==1.11.0 mss==10.2.0 >/dev/null
}

# Playwright (its node driver inside), greenlet, numpy, pydantic-core, MarkupSafe and Pillow are
# platform-specific: fetched for the image's Python (bookworm's 3.11) on x86_64, with --no-deps
# and the closure listed, as for the gui stage. Keep the versions in step with the host's venv.
fetch_web_wheels() {
  local dir="$ROOT/.cache/web-wheels" python="${AGENTENVS_PYTHON:-$ROOT/.venv/bin/python}"
  [ -x "$python" ] || python=python3
  mkdir -p "$dir"
  "$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux1_x86_64 \
    -d "$dir" playwright==1.65.2 greenlet==3.5.6 typing_extensions==4.16.0 pydantic==2.14.3 \
    pydantic_core==2.50.4 annotated-types==0.8.0 typing-inspection==0.4.5 gymnasium==1.4.0 numpy==2.4.6 \
    cloudpickle==3.1.2 Farama-Notifications==0.0.6 Jinja2==3.1.6 MarkupSafe==3.0.4 miniwob==1.1.0 \
    pillow==13.0.0 >/dev/null
}

# The host's CA bundle goes into every image (the system stage), so that pip, npm and curl in a
# task's build trust what the host trusts (a TLS-inspecting proxy included). An empty file if none.
copy_host_ca_bundle() {
  local bundle="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" dest="$ROOT/.cache/host-ca-certificates.crt"
  mkdir -p "$ROOT/.cache"
  if [ -f "$bundle" ]; then
    cmp -s "$bundle" "$dest" || cp "$bundle" "$dest"
  else
    : >"$dest"
  fi
}

build_stages() {
  local stage
  for stage in "${STAGES[@]}"; do
    docker build -q --network host --build-arg "BASE_IMAGE=$BASE_IMAGE" --target "$stage" \
      -t "agentenvs/$stage:latest" "$ROOT" >/dev/null 2>"/tmp/agentenvs-build-$stage.log" || {
        echo "install-system.sh: building agentenvs/$stage:latest failed:" >&2
        tail -n 30 "/tmp/agentenvs-build-$stage.log" >&2
        exit 1
      }
    log "image: agentenvs/$stage:latest built (cached layers reused)"
  done
}

create_sandbox_user() {
  if id -u agentenvs-sandbox >/dev/null 2>&1; then
    log "user: agentenvs-sandbox present"
    return
  fi
  "${SUDO[@]}" useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin agentenvs-sandbox
  log "user: agentenvs-sandbox created (uid $(id -u agentenvs-sandbox))"
}

install_apt_packages
start_docker
build_base_image
fetch_gui_wheels
fetch_web_wheels
copy_host_ca_bundle
build_stages
create_sandbox_user
