#!/usr/bin/env bash
# Retake the README's pictures of the inspector on a fresh demo store, at a laptop's 1024x640 and at 1300x720:
#   resources/screenshots/retake.sh        (from the repository, after ./run has installed .venv)
set -euo pipefail
cd "$(dirname "$0")/../.."
export QT_QPA_PLATFORM=offscreen
shot() {  # shot NAME SIZE ARGS…
  local name=$1 size=$2; shift 2
  .venv/bin/oxmem-gui --demo --embedding deterministic --size "$size" --screenshot "resources/screenshots/$name.png" "$@"
}
for size in 1300x720 1024x640; do
  suffix=$([ "$size" = 1300x720 ] && echo "" || echo "-$size")
  shot "sessions$suffix" "$size" --panel sessions
  shot "notes$suffix" "$size" --panel notes
  shot "search$suffix" "$size" --panel search --session telegram:alice:lisbon-trip --query "which seat on the flight"
  shot "search-all$suffix" "$size" --panel search --session "(all sessions)" --query "invoice rounding"
  for view in month week agenda; do
    shot "schedules-$view$suffix" "$size" --panel schedules --calendar "$view"
  done
done
.venv/bin/python resources/screenshots/compare_shot.py resources/screenshots/compare-with-backup.png
.venv/bin/python resources/screenshots/sql_shot.py resources/screenshots/sql-console-1024x640.png
.venv/bin/python resources/screenshots/update_shot.py resources/screenshots/search-update-1024x640.png
.venv/bin/python resources/screenshots/why_shot.py resources/screenshots/why-not-1024x640.png
.venv/bin/python resources/screenshots/remote_shot.py resources/screenshots/remote-1024x640.png
