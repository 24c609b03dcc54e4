#!/usr/bin/env bash
# Checks that the system libraries PySide6's Qt needs are present, and installs them where it can.
#
#   packaging/qt-system-libs.sh [offscreen|display]
#
# offscreen (the default): what Qt's GUI and widgets need on the offscreen platform, which the tests and a run
#   without a display use: OpenGL and EGL, GLib, fontconfig and FreeType, D-Bus, xkbcommon, the X11 client library.
# display: those and what the xcb platform plugin needs to open windows on an X display (xcb-cursor, xcb-icccm, …).
#
# The check runs ldd on PySide6's own Qt libraries and platform plugins, so it sees exactly the libraries the
# dynamic loader cannot find. PySide6's Qt folder is found in the virtual environment $OXMEM_VENV (default: .venv in
# the folder above this script); $OXMEM_QT_DIR names it directly. The tools come from PATH: ldd, id, apt-get.
#
# Nothing missing: prints nothing and exits 0. Something missing, named as Debian packages:
#   root, with apt-get: says so on one line on stderr ("oxmem: installing Qt's system libraries: libgl1 …"),
#     runs apt-get update and apt-get install -y quietly (their output only if the install fails), checks again;
#     exits 0 when everything is there now, 1 otherwise.
#   not root, with apt-get: prints the one command that installs them as root, with sudo when there is one, else
#     with su ("sudo sh -c 'apt-get update && apt-get install -y libgl1 …'"), and exits 1.
#   no apt-get: prints the missing libraries, exits 1.
# Without PySide6's Qt folder it says so and exits 2; without ldd it says it cannot check and exits 0.
# $OXMEM_ALSO_PACKAGES: more Debian packages for the printed command (./run test's nodejs, npm and faketime), so a user
# is given one command, not two in turn.
# On systems other than Linux it checks nothing and exits 0.
set -uo pipefail
case "${OSTYPE:-}" in linux*) ;; *) exit 0 ;; esac

# soname → Debian package, in the order packages are named. Sonames not listed are reported as they are.
SONAME_PACKAGES="
libGL.so.1 libgl1
libGLX.so.0 libglx0
libGLdispatch.so.0 libglvnd0
libEGL.so.1 libegl1
libglib-2.0.so.0 libglib2.0-0
libgthread-2.0.so.0 libglib2.0-0
libfontconfig.so.1 libfontconfig1
libfreetype.so.6 libfreetype6
libdbus-1.so.3 libdbus-1-3
libxkbcommon.so.0 libxkbcommon0
libX11.so.6 libx11-6
libxcb.so.1 libxcb1
libXau.so.6 libxau6
libXdmcp.so.6 libxdmcp6
libexpat.so.1 libexpat1
libpng16.so.16 libpng16-16
libz.so.1 zlib1g
libzstd.so.1 libzstd1
libpcre2-8.so.0 libpcre2-8-0
libbrotlidec.so.1 libbrotli1
libbrotlicommon.so.1 libbrotli1
libstdc++.so.6 libstdc++6
libgcc_s.so.1 libgcc-s1
libxcb-cursor.so.0 libxcb-cursor0
libxcb-icccm.so.4 libxcb-icccm4
libxcb-util.so.1 libxcb-util1
libxcb-image.so.0 libxcb-image0
libxcb-keysyms.so.1 libxcb-keysyms1
libxcb-randr.so.0 libxcb-randr0
libxcb-render-util.so.0 libxcb-render-util0
libxcb-render.so.0 libxcb-render0
libxcb-shape.so.0 libxcb-shape0
libxcb-shm.so.0 libxcb-shm0
libxcb-sync.so.1 libxcb-sync1
libxcb-xfixes.so.0 libxcb-xfixes0
libxcb-xkb.so.1 libxcb-xkb1
libxcb-xinerama.so.0 libxcb-xinerama0
libxcb-glx.so.0 libxcb-glx0
libX11-xcb.so.1 libx11-xcb1
libxkbcommon-x11.so.0 libxkbcommon-x11-0
"
# PySide6's files to check, relative to its Qt folder.
OFFSCREEN_FILES="lib/libQt6Core.so.6 lib/libQt6Gui.so.6 lib/libQt6Widgets.so.6 lib/libQt6Svg.so.6
lib/libQt6DBus.so.6 plugins/platforms/libqoffscreen.so"
DISPLAY_FILES="plugins/platforms/libqxcb.so lib/libQt6XcbQpa.so.6"

mode=${1:-offscreen}
case "$mode" in
  offscreen) files=$OFFSCREEN_FILES ;;
  display) files="$OFFSCREEN_FILES $DISPLAY_FILES" ;;
  *) echo "usage: $0 [offscreen|display]" >&2; exit 2 ;;
esac

qt=${OXMEM_QT_DIR:-}
if [ -z "$qt" ]; then
  here=$(cd "${0%/*}" && pwd)
  for d in "${OXMEM_VENV:-$here/../.venv}"/lib/python3*/site-packages/PySide6/Qt; do
    [ -d "$d" ] && qt=$d && break
  done
fi
paths=()
for f in $files; do
  [ -n "$qt" ] && [ -e "$qt/$f" ] && paths+=("$qt/$f")
done
if [ "${#paths[@]}" = 0 ]; then
  echo "oxmem: PySide6's Qt libraries are not in ${qt:-${OXMEM_VENV:-.venv}}; is the project installed?" >&2
  exit 2
fi
if ! command -v ldd >/dev/null; then
  echo "oxmem: cannot check Qt's system libraries (no ldd)" >&2
  exit 0
fi

# The sonames the loader cannot find, one per line, each once.
missing_sonames() {
  local name arrow where rest
  declare -A seen=()
  while read -r name arrow where rest; do
    if [ "$arrow" = "=>" ] && [ "$where $rest" = "not found" ] && [ -z "${seen[$name]:-}" ]; then
      seen[$name]=1
      echo "$name"
    fi
  done < <(ldd "${paths[@]}" 2>/dev/null)
}

# Sets $packages (the Debian packages for $missing, in SONAME_PACKAGES order) and $unknown (sonames without one).
to_packages() {
  local soname pkg s known
  packages="" unknown=""
  while read -r soname pkg; do
    [ -n "$soname" ] || continue
    for s in $missing; do
      if [ "$s" = "$soname" ] && [[ " $packages " != *" $pkg "* ]]; then
        packages="${packages:+$packages }$pkg"
      fi
    done
  done <<<"$SONAME_PACKAGES"
  for s in $missing; do
    known=""
    while read -r soname pkg; do [ "$soname" = "$s" ] && known=1; done <<<"$SONAME_PACKAGES"
    [ -n "$known" ] || unknown="${unknown:+$unknown }$s"
  done
}

missing=$(missing_sonames)
missing=${missing//$'\n'/ }
[ -z "$missing" ] && exit 0
to_packages

if ! command -v apt-get >/dev/null; then
  echo "oxmem: Qt needs these system libraries, which are missing: $missing" >&2
  echo "  install them with your system's package manager" >&2
  exit 1
fi
if [ -n "$unknown" ]; then
  echo "oxmem: Qt needs system libraries that no known Debian package provides: $unknown" >&2
fi
if [ "$(id -u)" != 0 ]; then
  if [ -n "$packages" ]; then
    install="apt-get update && apt-get install -y $packages${OXMEM_ALSO_PACKAGES:+ $OXMEM_ALSO_PACKAGES}"
    also=${OXMEM_ALSO_PACKAGES:+ (and $OXMEM_ALSO_PACKAGES, which the tests need)}
    echo "oxmem: Qt needs system libraries that are missing ($missing)$also; install them as root, then run this again:" >&2
    if command -v sudo >/dev/null; then
      echo "  sudo sh -c '$install'" >&2
    else  # a minimal Debian has no sudo; su asks for root's password
      echo "  su -c '$install'" >&2
    fi
  fi
  exit 1
fi
[ -n "$packages" ] || exit 1
echo "oxmem: installing Qt's system libraries: $packages" >&2
# A failed update (one unreachable mirror) need not stop the install; the install's status decides.
if ! out=$(export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq 2>&1
  apt-get install -y -qq $packages 2>&1); then
  echo "$out" >&2
  echo "oxmem: apt-get could not install Qt's system libraries" >&2
  exit 1
fi
missing=$(missing_sonames)
missing=${missing//$'\n'/ }
if [ -n "$missing" ]; then
  echo "oxmem: Qt's system libraries are still missing after installing: $missing" >&2
  exit 1
fi
exit 0
