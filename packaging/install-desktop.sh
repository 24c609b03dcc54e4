#!/usr/bin/env bash
# Adds oxmem-gui to the desktop's application menu for the current user (no root), or takes it out again.
#
#   packaging/install-desktop.sh [PROGRAM]        # PROGRAM: the oxmem-gui to start (default: oxmem-gui on PATH,
#                                                 #   else this checkout's .venv/bin/oxmem-gui)
#   packaging/install-desktop.sh --uninstall
#
# Writes into ${XDG_DATA_HOME:-~/.local/share}: applications/io.github.oxmem.oxmem_gui.desktop (its Exec and TryExec
# naming PROGRAM by its absolute path, so it works when PROGRAM's folder is not on PATH), metainfo/ its AppStream
# file, and the icon as icons/hicolor/NxN/apps/oxmem.png (16 to 256) and icons/hicolor/scalable/apps/oxmem.svg.
# Then refreshes the desktop and icon caches when their tools are there. Prints each file written or removed.
# Exits 1 naming the problem when PROGRAM is not an executable file or its path holds a character a desktop
# entry cannot quote (" ` $ \ % or a newline).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
app_id=io.github.oxmem.oxmem_gui
data=${XDG_DATA_HOME:-$HOME/.local/share}
sizes="16 32 48 64 128 256"
files=("applications/$app_id.desktop" "metainfo/$app_id.metainfo.xml" "icons/hicolor/scalable/apps/oxmem.svg")
for size in $sizes; do files+=("icons/hicolor/${size}x${size}/apps/oxmem.png"); done

refresh() {
  if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$data/applications" || true; fi
  if command -v gtk-update-icon-cache >/dev/null && [ -f "$data/icons/hicolor/index.theme" ]; then
    gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
  fi
}

if [ "${1:-}" = "--uninstall" ]; then
  for f in "${files[@]}"; do
    if [ -e "$data/$f" ]; then rm -f "$data/$f" && echo "removed $data/$f"; fi
  done
  refresh
  exit 0
fi

prog=${1:-}
if [ -z "$prog" ]; then
  prog=$(command -v oxmem-gui || true)
  [ -n "$prog" ] || prog="$root/.venv/bin/oxmem-gui"
fi
if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then
  echo "install-desktop: $prog is not an executable file; name the oxmem-gui to start" >&2
  exit 1
fi
prog=$(cd "$(dirname "$prog")" && pwd)/$(basename "$prog")
case "$prog" in
  *[\"\`\$\\%]* | *$'\n'*)
    echo "install-desktop: a desktop entry cannot start $prog (its path holds one of \" \` \$ \\ %)" >&2
    exit 1 ;;
esac

mkdir -p "$data/applications" "$data/metainfo" "$data/icons/hicolor/scalable/apps"
while IFS= read -r line; do
  case "$line" in
    Exec=*)    printf 'Exec="%s" %%f\n' "$prog" ;;
    TryExec=*) printf 'TryExec=%s\n' "$prog" ;;
    *)         printf '%s\n' "$line" ;;
  esac
done <"$here/$app_id.desktop" >"$data/applications/$app_id.desktop"
cp "$here/$app_id.metainfo.xml" "$data/metainfo/$app_id.metainfo.xml"
cp "$root/resources/icons/oxmem.svg" "$data/icons/hicolor/scalable/apps/oxmem.svg"
for size in $sizes; do
  mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
  cp "$root/resources/icons/oxmem-$size.png" "$data/icons/hicolor/${size}x${size}/apps/oxmem.png"
done
for f in "${files[@]}"; do echo "wrote $data/$f"; done
refresh
