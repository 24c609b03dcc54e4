#!/usr/bin/env bash
# Runs the test suite again with the system date moved, so that no test passes only on the day it was written:
#
#   packaging/shifted-dates.sh [PYTEST ARGS]
#
#   a year ahead   faketime -f +365d, in the machine's time zone;
#   across DST     TZ=Europe/Berlin, the clock started 3 minutes before its next change of offset
#                  (tests/shifted_dates.py), so the suite runs across it; FAKETIME_DONT_RESET=1 keeps the processes
#                  the tests start (the agent, the libSQL server) on the same moving clock.
#
# Both run at once (each with its own temporary folder), each printing its last lines and its failures; the exit
# status is 0 only when both passed. Needs faketime (packaging/faketime.sh) and .venv with the test extras.
set -uo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen OXMEM_REQUIRE_MODEL=1 OXMEM_REQUIRE_TURSODB=1
# libfaketime (0.9.10) moves the monotonic clock too: time.sleep works, but a timed wait on a condition
# (threading.Timer, Event.wait with a timeout) never wakes under it, and FAKETIME_DONT_FAKE_MONOTONIC=1 makes
# time.sleep fail with EINVAL instead. So oxmem and its tests wait in short sleeps, never on a timed condition.
dst=$(.venv/bin/python -m tests.shifted_dates)
logs=$(mktemp -d)
run() {  # name, then the environment and faketime's arguments
  local name=$1; shift
  env "$@" .venv/bin/python -m pytest -q -rfE -p no:cacheprovider --basetemp="$logs/$name" "${args[@]}" \
    >"$logs/$name.log" 2>&1
}
args=("$@")
run year-ahead faketime -f +365d & ahead=$!
run across-dst TZ=Europe/Berlin FAKETIME_DONT_RESET=1 faketime -f "@$dst" & across=$!
status=0
for name in year-ahead across-dst; do
  if [ "$name" = year-ahead ]; then wait $ahead; else wait $across; fi
  code=$?
  what="a year ahead (+365 days)"
  [ "$name" = across-dst ] && what="across a DST change (Europe/Berlin from $dst)"
  echo "== the tests with the date moved $what: $(tail -n 1 "$logs/$name.log")"
  if [ $code -ne 0 ]; then
    status=1
    grep -E '^(FAILED|ERROR) ' "$logs/$name.log" || tail -n 40 "$logs/$name.log"
  fi
done
rm -rf "$logs"
exit $status
