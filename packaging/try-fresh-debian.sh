#!/usr/bin/env bash
# Checks the README's two commands, ./run and ./run test, on a fresh minimal Debian, as a user and as root.
#
#   packaging/try-fresh-debian.sh [bookworm|trixie] [REPO [REV]]
#
# SUITE defaults to trixie, REPO to the checkout this script lives in, REV to HEAD. What is tested is a clean clone
# of the committed REV, made inside the chroot; the working tree's uncommitted changes are never seen.
#
# Run as root on a Debian-like host that reaches deb.debian.org and PyPI; debootstrap is installed with apt-get if
# missing. The base system is debootstrap --variant=minbase SUITE, then apt-get install --no-install-recommends
# python3 python3-venv git ca-certificates and nothing else (its package lists are kept, as on an installed system).
# It is cached as ${XDG_CACHE_HOME:-~/.cache}/oxmem-chroots/SUITE.tar, rebuilt when older than MAX_AGE_DAYS (7) or
# deleted; every run unpacks fresh copies of it. Two copies, without DISPLAY (and without LANG) in either:
#
#   user: a new user, tester, clones the repository and runs ./run test, which must stop with exit 1 and print the
#         command that installs Qt's system libraries with apt-get. Root runs that command exactly as printed, which
#         must succeed; only when it starts with sudo, which minbase lacks, is its outcome just noted, and root runs
#         it again without the sudo, which must succeed. Then tester's ./run test must pass, and ./run must exit 0
#         and write oxmem-demo.png.
#   root: root clones the repository in a second fresh copy (root's installs would hide what the user lacks) and
#         runs ./run test and ./run, which install what they need themselves; both must pass, ./run writing
#         oxmem-demo.png.
#
# Each copy gets /proc, /sys, /dev, /dev/pts, a tmpfs on /dev/shm and the host's resolv.conf mounted, all inside a
# private mount namespace where unshare is available, and unmounted on exit, failure or interruption included.
# Where the host trusts CA certificates that Debian's ca-certificates lacks (a network that intercepts TLS), each
# copy gets them too, with /etc/pip.conf pointing pip at the system's store. Nothing is written outside the work
# folder and the cache.
#
# Environment: CI (passed to ./run test only when set here; CI=true skips the PyInstaller build test), MIRROR
# (default http://deb.debian.org/debian), HOST_CA=0 (add none of the host's CA certificates), WORK (the work folder,
# which must not exist yet; default a new folder under ${TMPDIR:-/var/tmp}), KEEP=1 (keep the chroots in the work
# folder), STEP_TIMEOUT (seconds a step may take, default 3600), MAX_AGE_DAYS.
#
# Each step's full output goes to a log in WORK/logs (each picture written to WORK/logs too). At the end a table
# gives suite, who, command, exit status, minutes and verdict; the exit status is 1 when any step's outcome is not
# the expected one, 2 for wrong usage or a failed setup.
set -euo pipefail

script=$(readlink -f "${BASH_SOURCE[0]}")
usage() { sed -n '4p' "$script" | sed 's/^#  */usage: /' >&2; exit 2; }

suite=${1:-trixie}
case "$suite" in bookworm|trixie) ;; -h|--help) usage ;; *) echo "unknown suite: $suite" >&2; usage ;; esac
repo=${2:-$(git -C "$(dirname "$script")" rev-parse --show-toplevel)}
rev=${3:-HEAD}
[ $# -le 3 ] || usage
[ "$(id -u)" = 0 ] || { echo "try-fresh-debian: run this as root (debootstrap, chroot and mount need it)" >&2; exit 2; }

# All mounts are made in a mount namespace of their own, so that none can reach the host's mount table.
if [ -z "${OXMEM_TRY_PRIVATE_NS:-}" ] && command -v unshare >/dev/null \
   && unshare --mount --propagation private true 2>/dev/null; then
  export OXMEM_TRY_PRIVATE_NS=1
  exec unshare --mount --propagation private "$BASH" "$script" "$@"
fi

mirror=${MIRROR:-http://deb.debian.org/debian}
step_timeout=${STEP_TIMEOUT:-3600}
max_age_days=${MAX_AGE_DAYS:-7}
cache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/oxmem-chroots
base_tar=$cache_dir/$suite.tar
if [ -n "${WORK:-}" ]; then
  mkdir "$WORK"
  work=$(readlink -f "$WORK")
else
  work=$(mktemp -d "${TMPDIR:-/var/tmp}/oxmem-try-$suite.XXXXXX")
fi
case "$work" in
  *[[:space:]]*) echo "try-fresh-debian: the work folder's path must not contain spaces: $work" >&2; exit 2 ;;
esac
logs=$work/logs
mkdir -p "$logs" "$cache_dir"

say() { printf '%s\n' "try-fresh-debian: $*" >&2; }

# --- mounts and cleanup -----------------------------------------------------------------------------------------

mounted=()      # mount points made by this script, in the order they were made
chroots=()      # chroot folders made by this script, removed on exit unless KEEP=1

mount_at() {  # TARGET MOUNT-ARGS…: mounts, remembers it, and keeps it from propagating anywhere
  local target=$1; shift
  mount "$@" "$target"
  mounted+=("$target")
  mount --make-private "$target"
}

mount_chroot() {  # ROOT
  local r=$1
  mount_at "$r/proc" -t proc proc
  mount_at "$r/sys" -t sysfs -o ro sysfs
  mount_at "$r/dev" --bind /dev
  mount_at "$r/dev/pts" --bind /dev/pts
  mount_at "$r/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs
  # A symlink here would make the bind mount follow it onto a path of the host's.
  if [ -L "$r/etc/resolv.conf" ] || [ ! -f "$r/etc/resolv.conf" ]; then
    rm -f "$r/etc/resolv.conf"
    : >"$r/etc/resolv.conf"
  fi
  mount_at "$r/etc/resolv.conf" --bind -o ro "$(readlink -f /etc/resolv.conf)"
}

mounts_under() {  # ROOT: prints the mount points at or below ROOT that are still mounted
  local r=$1 mp
  while read -r _ mp _; do
    case "$mp" in "$r"|"$r"/*) echo "$mp" ;; esac
  done </proc/self/mounts
}

kill_chroot_processes() {  # ROOT: ends the processes (all started by this script) still running in ROOT
  local r=$1 p pid
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$r" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
}

unmount_all() {
  local i r
  for r in "${chroots[@]}"; do kill_chroot_processes "$r"; done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null \
      || say "could not unmount ${mounted[i]}"
  done
  mounted=()
}

remove_chroot() {  # ROOT: removes it, never while anything is mounted below it
  local r=$1 left
  left=$(mounts_under "$r")
  if [ -n "$left" ]; then
    say "still mounted, so $r is kept: $left"
    return 1
  fi
  rm -rf --one-file-system "$r"
}

# shellcheck disable=SC2317  # run by the trap below
cleanup() {
  local status=$? r
  trap - EXIT INT TERM
  unmount_all
  for r in "${chroots[@]}"; do
    if [ "${KEEP:-}" = 1 ]; then say "kept $r"; elif [ -d "$r" ]; then remove_chroot "$r" || true; fi
  done
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the base system ----------------------------------------------------------------------------------------------

build_base() {
  local r=$work/base-build log=$logs/$suite-base-debootstrap.log
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap"
    { apt-get install -y -qq debootstrap || { apt-get update -qq && apt-get install -y -qq debootstrap; }; } \
      >"$logs/host-apt-debootstrap.log" 2>&1
  fi
  say "building the $suite base (debootstrap --variant=minbase; log: $log)"
  SECONDS=0
  chroots+=("$r")
  debootstrap --variant=minbase "$suite" "$r" "$mirror" >"$log" 2>&1 \
    || { tail -n 20 "$log" >&2; say "debootstrap failed"; exit 2; }
  mount_chroot "$r"
  chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive sh -c '
      apt-get update && apt-get install -y --no-install-recommends python3 python3-venv git ca-certificates &&
      apt-get clean' >>"$log" 2>&1 </dev/null \
    || { tail -n 20 "$log" >&2; say "installing the base packages failed"; exit 2; }
  unmount_all
  : >"$r/etc/resolv.conf"
  tar --numeric-owner --xattrs --xattrs-include='*' -C "$r" -cf "$base_tar.tmp.$$" .
  mv "$base_tar.tmp.$$" "$base_tar"
  remove_chroot "$r"
  say "cached $base_tar ($((SECONDS / 60)) min)"
}

if [ -f "$base_tar" ] && [ -z "$(find "$base_tar" -mtime +"$max_age_days")" ]; then
  say "using the cached base $base_tar"
else
  build_base
fi

# --- the sources under test -----------------------------------------------------------------------------------------

git clone --quiet --bare --no-hardlinks "$repo" "$work/src.git"
if ! sha=$(git -C "$work/src.git" rev-parse --verify --quiet "$rev^{commit}"); then
  git -C "$work/src.git" fetch --quiet "$repo" "$rev"
  sha=$(git -C "$work/src.git" rev-parse --verify "FETCH_HEAD^{commit}")
fi
git -C "$work/src.git" update-ref refs/heads/under-test "$sha"
git -C "$work/src.git" symbolic-ref HEAD refs/heads/under-test
if [ "$rev" = "$sha" ]; then at=$sha; else at="$rev = $sha"; fi
say "testing $repo at $at on $suite; work folder $work"

# --- steps ----------------------------------------------------------------------------------------------------------

rows=()         # suite|who|command|status|minutes|verdict|log, one per step
failed=0
step_no=0
step_status=0
step_log=

new_chroot() {  # WHO: unpacks a fresh base into $work/chroot-WHO, mounts it and sets $root
  root=$work/chroot-$1
  mkdir "$root"
  chroots+=("$root")
  tar --numeric-owner --xattrs --xattrs-include='*' -C "$root" -xpf "$base_tar"
  mount_chroot "$root"
  add_host_cas "$1"
  cp -a "$work/src.git" "$root/srv/oxmem.git"
}

# Where the network intercepts TLS, the host trusts CA certificates of its own (in its bundle, but from none of its
# packages' /usr/share/ca-certificates): those that the copy lacks are added to its trust store, and pip (whose older
# versions read only their own) is pointed at that store in /etc/pip.conf.
add_host_cas() {  # WHO
  local host_bundle=/etc/ssl/certs/ca-certificates.crt bundle=$root/etc/ssl/certs/ca-certificates.crt n
  local -a packaged=()
  { [ "${HOST_CA:-1}" = 1 ] && [ -f "$host_bundle" ] && [ -f "$bundle" ]; } || return 0
  mkdir -p "$root/usr/local/share/ca-certificates"
  shopt -s nullglob
  packaged=(/usr/share/ca-certificates/*/*.crt)
  shopt -u nullglob
  n=$(awk -v dir="$root/usr/local/share/ca-certificates" -v host="$host_bundle" '
    { sub(/\r$/, "") }
    /-----BEGIN CERTIFICATE-----/ { block = ""; inside = 1 }
    inside { block = block $0 "\n" }
    /-----END CERTIFICATE-----/ {
      inside = 0
      if (FILENAME != host) known[block] = 1
      else if (!(block in known)) { n++; printf "%s", block > (dir "/host-" n ".crt") }
    }
    END { print n + 0 }' "$bundle" "${packaged[@]}" "$host_bundle")
  [ "$n" != 0 ] || return 0
  chroot "$root" /usr/sbin/update-ca-certificates >"$logs/$suite-$1-host-ca.log" 2>&1
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$root/etc/pip.conf"
  say "added the host's $n CA certificate(s) that $suite lacks to the $1 copy, and /etc/pip.conf (HOST_CA=0: none)"
}

end_chroot() {
  unmount_all
  [ "${KEEP:-}" = 1 ] || remove_chroot "$root"
}

in_chroot() {  # WHO [VAR=VALUE…] -- COMMAND: runs COMMAND with bash in $root as WHO, in WHO's home
  local who=$1; shift
  local -a vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  if [ "$who" = root ]; then
    timeout "$step_timeout" chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${vars[@]}" bash -c "cd && $1" </dev/null
  else
    timeout "$step_timeout" chroot --userspec="$tester_ids" "$root" /usr/bin/env -i HOME=/home/tester USER=tester \
      LOGNAME=tester SHELL=/bin/bash PATH=/usr/local/bin:/usr/bin:/bin:/usr/games "${vars[@]}" \
      bash -c "cd && $1" </dev/null
  fi
}

# step WHO EXPECT LABEL [VAR=VALUE…] -- COMMAND: runs it, logs it, times it and records a row. EXPECT: a status, or
# "any" (the outcome is only noted). Sets $step_status and $step_log.
step() {
  local who=$1 expect=$2 label=$3 slug verdict minutes
  shift 3
  step_no=$((step_no + 1))
  slug=$(printf '%s' "${label//.\//}" | tr -c 'A-Za-z0-9.' '-' | tr -s '-' | cut -c1-40)
  step_log=$(printf '%s/%s-%s-%02d-%s.log' "$logs" "$suite" "$who" "$step_no" "${slug%-}")
  printf '[%s %s] %s … ' "$suite" "$who" "$label" >&2
  SECONDS=0
  step_status=0
  # In the background, so that a signal to this script runs the cleanup at once rather than after the step.
  in_chroot "$who" "$@" >"$step_log" 2>&1 &
  wait "$!" || step_status=$?
  minutes=$(printf '%d.%d' $((SECONDS / 60)) $((SECONDS % 60 * 10 / 60)))
  if [ "$expect" = any ]; then verdict=noted
  elif [ "$step_status" = "$expect" ]; then verdict=ok
  else verdict=FAIL; failed=1
  fi
  printf 'exit %s, %s min, %s (expected %s)\n    log: %s\n' "$step_status" "$minutes" "$verdict" "$expect" \
    "$step_log" >&2
  [ "$verdict" = FAIL ] && tail -n 15 "$step_log" | sed 's/^/    | /' >&2
  rows+=("$suite|$who|$label|$step_status|$minutes|$verdict|$step_log")
}

record() {  # WHO LABEL STATUS VERDICT NOTE: a row for a check made here rather than by a step
  rows+=("$suite|$1|$2|$3|-|$4|$5")
  [ "$4" = FAIL ] && failed=1
  printf '[%s %s] %s: %s %s\n' "$suite" "$1" "$2" "$4" "$5" >&2
}

clone_and_check() {  # WHO HOME-IN-CHROOT
  local who=$1 home=$2 got
  step "$who" 0 "git clone" -- "git clone --quiet /srv/oxmem.git oxmem && git -C oxmem rev-parse HEAD"
  got=$(tail -n 1 "$step_log")
  if [ "$step_status" != 0 ] || [ "$got" != "$sha" ]; then
    record "$who" "clone is $sha" 1 FAIL "(HEAD of the clone: ${got:-none})"
    return 1
  fi
  [ -d "$root$home/oxmem" ]
}

check_picture() {  # WHO HOME-IN-CHROOT
  local who=$1 png=$root$2/oxmem/oxmem-demo.png
  if [ -s "$png" ] && [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
    cp "$png" "$logs/$suite-$who-oxmem-demo.png"
    record "$who" "oxmem-demo.png written" 0 ok "($logs/$suite-$who-oxmem-demo.png)"
  else
    record "$who" "oxmem-demo.png written" 1 FAIL "(no PNG at ${png#"$root"})"
  fi
}

test_env=()
[ -n "${CI+set}" ] && test_env=("CI=$CI")
printed=

# The user, on a bare base.
new_chroot user
chroot "$root" /usr/sbin/useradd --create-home --shell /bin/bash tester
chroot "$root" chown -R tester: /srv/oxmem.git
tester_ids="$(chroot "$root" id -u tester):$(chroot "$root" id -g tester)"
if clone_and_check tester /home/tester; then
  step tester 1 "./run test (before the system libraries)" "${test_env[@]}" -- "cd oxmem && ./run test"
  # The printed command is the first indented line naming apt-get install (sudo …, su -c '…' or apt-get … itself).
  printed=$(sed -n 's/^[[:space:]]\{1,\}\(.*apt-get install .*\)$/\1/p' "$step_log" | head -n 1)
  if [ -z "$printed" ]; then
    record tester "printed an apt-get command" 1 FAIL "(none in $step_log)"
  else
    say "the command it printed: $printed"
    if [[ "$printed" == sudo[[:space:]]* ]]; then
      step root any "printed command, as printed" -- "$printed"
      [ "$step_status" = 0 ] || say "as printed it exits $step_status: $(tail -n 1 "$step_log")"
      step root 0 "printed command, without sudo" -- "${printed#sudo }"
    else
      step root 0 "printed command, as printed" -- "$printed"
    fi
  fi
  step tester 0 "./run test" "${test_env[@]}" -- "cd oxmem && ./run test"
  tail -n 1 "$step_log" | sed 's/^/    pytest: /' >&2
  step tester 0 "./run" -- "cd oxmem && ./run"
  check_picture tester /home/tester
fi
end_chroot

# Root, on another bare base.
new_chroot root
if clone_and_check root /root; then
  step root 0 "./run test" "${test_env[@]}" -- "cd oxmem && ./run test"
  tail -n 1 "$step_log" | sed 's/^/    pytest: /' >&2
  step root 0 "./run" -- "cd oxmem && ./run"
  check_picture root /root
fi
end_chroot

# --- summary --------------------------------------------------------------------------------------------------------

echo
echo "$repo at $sha${CI+ (CI=$CI for ./run test)}"
[ -n "$printed" ] && echo "apt command printed to the user: $printed"
printf '%-9s %-7s %-42s %6s %8s  %s\n' suite who command exit minutes verdict
for row in "${rows[@]}"; do
  IFS='|' read -r s w c st m v _ <<<"$row"
  printf '%-9s %-7s %-42s %6s %8s  %s\n' "$s" "$w" "$c" "$st" "$m" "$v"
done
echo
echo "logs: $logs"
for row in "${rows[@]}"; do
  IFS='|' read -r _ _ _ _ _ _ l <<<"$row"
  case "$l" in /*) echo "  $l" ;; esac
done
exit "$failed"
