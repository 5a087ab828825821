#!/usr/bin/env bash
# Builds the .deb and runs lintian on it: no errors allowed (warnings are printed).
# Usage: lintian_deb.sh BUILD_DIR. Exit 77 (skipped) when lintian is not installed.
set -euo pipefail
command -v lintian >/dev/null || { echo "lintian not installed: skipped"; exit 77; }
build=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
cd "$build"
cpack -G DEB -B "$root/pkg" >/dev/null
deb=$(ls "$root"/pkg/envelope_*.deb)
# --fail-on error: the exit status reflects errors only; tags are printed for the log.
lintian --fail-on error --allow-root "$deb"
echo "lintian: no errors in $(basename "$deb")"
