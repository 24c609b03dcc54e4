#!/usr/bin/env bash
# Installs Debian's faketime (libfaketime), with which `./run test` runs the suite again under other system dates.
#
#   packaging/faketime.sh
#
# Already there: prints nothing, exits 0.
#   root, with apt-get: installs it (one line said; apt-get's output only if it fails).
#   not root: prints the one command that installs it as root, and exits 1.
set -uo pipefail
command -v faketime >/dev/null && exit 0
install="apt-get update && apt-get install -y faketime"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "oxmem: installing faketime (the tests run again under other system dates)" >&2
  log=$(mktemp)
  if ! { apt-get install -y -qq faketime || { apt-get update -qq && apt-get install -y -qq faketime; }; } >"$log" 2>&1
  then
    cat "$log" >&2; rm -f "$log"
    echo "oxmem: could not install faketime" >&2
    exit 1
  fi
  rm -f "$log"
  exit 0
fi
if command -v sudo >/dev/null; then how="sudo sh -c '$install'"; else how="su -c '$install'"; fi
echo "oxmem: the tests run again under other system dates with faketime; install it as root, then run this again:" >&2
echo "  $how" >&2
exit 1
