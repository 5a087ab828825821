#!/usr/bin/env bash
# Envelope's one entry point for people and CI (README "Quick start").
#   ./dev.sh run    install what is missing, build, open the app on the default plan
#   ./dev.sh test   install what is missing, build, run every test (what CI runs)
#   ./dev.sh deps   only install the Debian packages
#   ./dev.sh build  only configure and build (build/)
#   ./dev.sh sanitize  everything and every test under ASan+UBSan (build-sanitize/), run them
#   ./dev.sh fuzz [SECONDS]  build the libFuzzer harnesses (build-fuzz/), run each SECONDS (60)
# Set ENVELOPE_NO_GUI=1 to build core, CLI and their tests without Qt.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

# lintian and mandoc check the package and its man pages (packaging_lintian,
# packaging_manpages_lint), python3-yaml the Kubernetes manifests (cli_export_launchers):
# installed here so that CI runs them instead of skipping them. libcurl4-openssl-dev: import-hf
# by Hub id (hub/).
packages=(cmake ninja-build g++ pkg-config ccache dpkg-dev file
          nlohmann-json3-dev libfmt-dev libcli11-dev libcurl4-openssl-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          appstream lintian mandoc python3-yaml)
# For ./dev.sh sanitize and fuzz: clang-14 with its ASan/UBSan and libFuzzer runtimes.
fuzz_packages=(clang-14 libclang-rt-14-dev)
gui_packages=(qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
              fonts-dejavu-core)

deps() {
  local wanted=("${packages[@]}")
  [ "${ENVELOPE_NO_GUI:-0}" = 1 ] || wanted+=("${gui_packages[@]}")
  [ "${ENVELOPE_WANT_FUZZ:-0}" = 1 ] && wanted+=("${fuzz_packages[@]}")
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

# -fno-sanitize-recover: the first UB report fails the test instead of scrolling past.
SANITIZE_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

# Built with clang-14 (the fuzzers' compiler): gcc 12 takes 2.7x as long to compile a file with
# ASan+UBSan (plan/write.cpp: 32.5 s against 12.1 s), and this is the largest build CI does cold.
sanitize() {
  local dir=build-sanitize gui=ON
  [ "${ENVELOPE_NO_GUI:-0}" = 1 ] && gui=OFF
  # A build folder configured by another compiler keeps it; start that one afresh.
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++-14' "$dir/CMakeCache.txt"; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DENVELOPE_BUILD_GUI=$gui -DENVELOPE_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$SANITIZE_FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
  cmake --build "$dir" -j "$JOBS"
  # packaging_deb_installs and packaging_lintian repackage the normal build; they have nothing to
  # sanitize. The Qt tests
  # run offscreen with LeakSanitizer on and no suppressions: Qt 6.4 and fontconfig on Debian 12
  # report nothing (docs/reliability.md), so any leak report is Envelope's.
  QT_QPA_PLATFORM=offscreen \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$dir" --output-on-failure -j "$JOBS" -E 'packaging_deb_installs|packaging_lintian'
}

fuzz_harnesses=(fuzz_plan fuzz_hf fuzz_presets fuzz_mutate fuzz_engines)

fuzz() {
  local seconds=${1:-60} dir=build-fuzz
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DENVELOPE_FUZZ=ON \
    -DENVELOPE_BUILD_GUI=OFF -DENVELOPE_BUILD_TESTS=OFF -DENVELOPE_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$SANITIZE_FLAGS -fsanitize=fuzzer-no-link"
  cmake --build "$dir" -j "$JOBS" --target "${fuzz_harnesses[@]}"
  # -timeout=60: an instrumented (ASan + coverage) build runs the estimator 20-50x slower, and a
  # pathological accepted plan (micro_batch 1e6 x seq_len 1e8) sends "what makes it fit" through
  # a planner search that takes 19 s there (1.3 s in a release build); a real hang still trips it.
  # One at a time, niced: the machine is shared. New inputs go to $dir/corpus, the committed
  # seeds in fuzz/corpus/ are only read; a crash is written to $dir/ and fails the run.
  local h
  for h in "${fuzz_harnesses[@]}"; do
    mkdir -p "$dir/corpus/$h"
    echo "== $h: ${seconds} s"
    if ! ( cd "$dir" && ASAN_OPTIONS=abort_on_error=1 nice -n 10 "fuzz/$h" \
        -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 "corpus/$h" "../fuzz/corpus/${h#fuzz_}" >"$h.log" 2>&1 ); then
      tail -n 40 "$dir/$h.log"
      echo "$h: finding (input saved as $dir/crash-*)"
      return 1
    fi
    grep -E "^Done [0-9]+ runs|stat::(number_of_executed_units|peak_rss_mb)" "$dir/$h.log" || true
  done
}

case "${1:-}" in
  deps) deps ;;
  build) deps; build ;;
  run)
    deps; build
    shift
    exec "$BUILD_DIR/app/envelope" "${@:-presets/default-plan.json}" ;;
  sanitize) ENVELOPE_WANT_FUZZ=1 deps; sanitize ;;
  fuzz) ENVELOPE_WANT_FUZZ=1 deps; fuzz "${2:-60}" ;;
  test)
    deps; build
    QT_QPA_PLATFORM=offscreen ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" ;;
  *)
    sed -n '2,10p' "$0"; exit 2 ;;
esac
