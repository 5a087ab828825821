#!/usr/bin/env bash
# Envelope's one entry point for people and CI (README "Quick start").
#   ./dev.sh run    install what is missing, build, open the app on the default plan
#   ./dev.sh test   install what is missing, build, run every test (what CI runs)
#   ./dev.sh deps   only install the Debian packages
#   ./dev.sh build  only configure and build (build/)
# Set ENVELOPE_NO_GUI=1 to build core, CLI and their tests without Qt.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

packages=(cmake ninja-build g++ pkg-config ccache dpkg-dev file
          nlohmann-json3-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
          appstream)
gui_packages=(qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
              fonts-dejavu-core)

deps() {
  local wanted=("${packages[@]}")
  [ "${ENVELOPE_NO_GUI:-0}" = 1 ] || wanted+=("${gui_packages[@]}")
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
  local gui=ON
  [ "${ENVELOPE_NO_GUI:-0}" = 1 ] && gui=OFF
  cmake -S . -B "$BUILD_DIR" -G Ninja -DENVELOPE_BUILD_GUI=$gui -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

case "${1:-}" in
  deps) deps ;;
  build) deps; build ;;
  run)
    deps; build
    shift
    exec "$BUILD_DIR/app/envelope" "${@:-presets/default-plan.json}" ;;
  test)
    deps; build
    QT_QPA_PLATFORM=offscreen ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" ;;
  *)
    sed -n '2,8p' "$0"; exit 2 ;;
esac
