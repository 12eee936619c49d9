#!/usr/bin/env bash
# Set up Thinslice on a fresh Debian/Ubuntu machine, then run the app or the tests.
#   ./install.sh run     install everything and open the app on the bundled sample
#   ./install.sh test    install everything and run the whole test suite
set -euo pipefail
cd "$(dirname "$0")"

SYSTEM_PACKAGES=(
  python3 python3-venv python3-pip
  # a team project's shared server (and the throwaway cluster the team tests start)
  postgresql
  # Qt offscreen and in a real X window (Xvfb)
  libgl1 libegl1 libfontconfig1 libglib2.0-0 libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0 libxcb-xkb1
  libxcb-randr0 libxcb-xinerama0 libxcb-xfixes0 fonts-dejavu-core
  xvfb xauth
  # video (libVLC with its plugin cache) and audio (PortAudio, libsndfile)
  libvlc5 libvlc-bin vlc-plugin-base vlc-plugin-video-output libportaudio2 libsndfile1
  # making synthetic speech and media for the sample and the tests
  espeak-ng sox ffmpeg
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_system() {
  local missing=()
  for pkg in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "Installing system packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

install_python() {
  local python="${PYTHON:-python3}"
  if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
  fi
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]" -c constraints.txt
}

case "${1:-}" in
  run)
    install_system
    install_python
    shift
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      echo "No display: starting the app inside a virtual X server (xvfb-run)."
      exec xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/thinslice "$@"
    fi
    exec .venv/bin/thinslice "$@"
    ;;
  test)
    install_system
    install_python
    shift
    if [ "$#" -gt 0 ]; then
      exec xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python -m pytest -q "$@"
    fi
    # 1. layers point down only (widgets > app > storage; no Qt, pyqtgraph or libVLC below widgets; the
    #    window asks app services and runs no queries)
    .venv/bin/lint-imports
    # 2. the Qt-free tests, in an interpreter where Qt, pyqtgraph and libVLC cannot be imported
    THINSLICE_TEST_PART=core .venv/bin/python -m pytest -q -p no:pytest-qt
    # 3. the tests that drive the window; a virtual X server lets those that need a real window
    #    (embedded video) run, the rest are offscreen
    THINSLICE_TEST_PART=gui exec xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python -m pytest -q
    ;;
  *)
    echo "usage: ./install.sh run|test" >&2
    exit 2
    ;;
esac
