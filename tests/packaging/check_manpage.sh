#!/usr/bin/env bash
# envelope-cli --help and its man page agree: the same subcommands, and every long option of
# every subcommand's --help is documented in the man page.
# Usage: check_manpage.sh ENVELOPE_CLI MANPAGE
set -euo pipefail
cli=$1
page=$2

# Subcommands as --help lists them (the indented names under "Subcommands:").
help_commands=$("$cli" --help | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1}' | sort)
# Commands as the man page's COMMANDS section names them (".B name ..." after each ".TP").
man_commands=$(awk '/^\.SH COMMANDS/ {on=1; next} /^\.SH/ {on=0} on && prev == ".TP" {print $2} {prev=$0}' "$page" | sort)

status=0
if [ "$help_commands" != "$man_commands" ]; then
  echo "subcommands differ between --help and $page:"
  diff <(echo "$help_commands") <(echo "$man_commands") || true
  status=1
fi
for command in $help_commands; do
  for option in $("$cli" "$command" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
    escaped=$(echo "$option" | sed 's/-/\\\\-/g')
    if ! grep -q -- "$escaped" "$page"; then
      echo "$command $option is not in $page"
      status=1
    fi
  done
done
[ $status -eq 0 ] && echo "$(echo "$help_commands" | wc -l) subcommands and their options agree"
exit $status
