#!/usr/bin/env bash
# Builds the .deb, unpacks it into a temporary root (dpkg -x) and runs the installed programs.
# Usage: install_deb.sh BUILD_DIR WITH_GUI(ON|OFF)
set -euo pipefail
build=$1
gui=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

cd "$build"
cpack -G DEB -B "$root/pkg" >/dev/null
deb=$(ls "$root"/pkg/envelope_*.deb)
echo "built $(basename "$deb")"
dpkg-deb --info "$deb" | grep -E 'Package|Version|Depends' || true
dpkg -x "$deb" "$root/install"

cli="$root/install/usr/bin/envelope-cli"
[ -x "$cli" ] || { echo "envelope-cli not installed"; exit 1; }
"$cli" presets models | grep -q llama-2-7b || { echo "installed envelope-cli presets lacks llama-2-7b"; exit 1; }
for f in models gpus recipes default-plan; do
  [ -f "$root/install/usr/share/envelope/presets/$f.json" ] || { echo "missing presets/$f.json"; exit 1; }
done

for f in man/man1/envelope-cli.1.gz bash-completion/completions/envelope-cli \
         zsh/vendor-completions/_envelope-cli fish/vendor_completions.d/envelope-cli.fish \
         doc/envelope/copyright doc/envelope/changelog.gz; do
  [ -f "$root/install/usr/share/$f" ] || { echo "missing /usr/share/$f"; exit 1; }
done
# The completion script loads and completes a subcommand.
bash -c "source /usr/share/bash-completion/bash_completion 2>/dev/null || true
         source '$root/install/usr/share/bash-completion/completions/envelope-cli'
         complete -p envelope-cli" >/dev/null || { echo "the bash completion does not load"; exit 1; }

if [ "$gui" = ON ]; then
  for f in man/man1/envelope.1.gz bash-completion/completions/envelope; do
    [ -f "$root/install/usr/share/$f" ] || { echo "missing /usr/share/$f"; exit 1; }
  done
  for f in applications/io.envelope.Envelope.desktop \
           icons/hicolor/scalable/apps/io.envelope.Envelope.svg \
           metainfo/io.envelope.Envelope.metainfo.xml; do
    [ -f "$root/install/usr/share/$f" ] || { echo "missing /usr/share/$f"; exit 1; }
  done
  app="$root/install/usr/bin/envelope"
  [ -x "$app" ] || { echo "envelope not installed"; exit 1; }
  QT_QPA_PLATFORM=offscreen "$app" "$root/install/usr/share/envelope/presets/default-plan.json" \
      --screenshot "$root/shot.png" --size 800x600
  info=$(file -b "$root/shot.png")
  echo "screenshot: $info"
  case "$info" in
    "PNG image data, 800 x 600"*) ;;
    *) echo "installed envelope --screenshot did not write an 800x600 PNG"; exit 1 ;;
  esac
fi
echo "installed package OK"
