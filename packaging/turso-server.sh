#!/usr/bin/env bash
# Installs the libSQL server that the tests of remote memories start: `tursodb` from the npm package turso 0.6.0
# (packaging/turso/package-lock.json pins it with its sha512), into .venv/turso.
#
#   packaging/turso-server.sh
#
# Already there: prints nothing, exits 0. Otherwise it needs npm:
#   npm present: `npm install` (the lockfile's sha512 checked) into .venv/turso (one line said on stderr).
#   no npm, root, with apt-get: installs Debian's nodejs and npm first (one line said; apt-get's output only if
#     it fails), then as above.
#   no npm, not root: prints the one command that installs nodejs and npm as root, and exits 1.
# The tests find the binary at .venv/turso/node_modules/@tursodatabase/cli-*/tursodb ($OXMEM_TURSODB overrides).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=.venv/turso
found() { compgen -G "$dir/node_modules/@tursodatabase/cli-*/tursodb" >/dev/null; }
found && exit 0

if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "oxmem: installing nodejs and npm (for the libSQL server the tests start)" >&2
    log=$(mktemp)
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; } >"$log" 2>&1; then
      cat "$log" >&2; rm -f "$log"
      echo "oxmem: could not install nodejs and npm" >&2
      exit 1
    fi
    rm -f "$log"
  else
    install="apt-get update && apt-get install -y nodejs npm"
    if command -v sudo >/dev/null; then how="sudo sh -c '$install'"; else how="su -c '$install'"; fi
    echo "oxmem: the tests of remote memories start a libSQL server from npm; install npm as root, then run this again:" >&2
    echo "  $how" >&2
    exit 1
  fi
fi

echo "oxmem: installing the libSQL test server (npm package turso 0.6.0) into $dir" >&2
mkdir -p "$dir"
cp packaging/turso/package.json packaging/turso/package-lock.json "$dir/"
if ! (cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error >/dev/null); then
  echo "oxmem: npm could not install turso 0.6.0" >&2
  exit 1
fi
found || { echo "oxmem: turso 0.6.0 has no tursodb binary for this system" >&2; exit 1; }
