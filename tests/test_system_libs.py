"""packaging/qt-system-libs.sh: the check of Qt's system libraries that ./run and ./run test do before using Qt.

The script runs for real against this environment's PySide6 (on a machine that ran ./run test the libraries are
there: exit 0, nothing printed), and against a fake environment (a PATH holding only fake ldd, id and apt-get) for
its decisions: the command printed for a user, the one-line message and the install as root, the list of missing
libraries without apt-get, and the Debian package each library comes from.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "packaging" / "qt-system-libs.sh"
BASH = shutil.which("bash")

OFFSCREEN_FILES = [
    "lib/libQt6Core.so.6",
    "lib/libQt6Gui.so.6",
    "lib/libQt6Widgets.so.6",
    "lib/libQt6Svg.so.6",
    "lib/libQt6DBus.so.6",
    "plugins/platforms/libqoffscreen.so",
]
DISPLAY_FILES = ["plugins/platforms/libqxcb.so", "lib/libQt6XcbQpa.so.6"]

# What a minimal Debian (python3 and python3-venv only) lacks for the offscreen platform.
MINIMAL_DEBIAN_MISSING = "libGL.so.1 libEGL.so.1 libfontconfig.so.1 libglib-2.0.so.0 libgthread-2.0.so.0 libdbus-1.so.3"
MINIMAL_DEBIAN_PACKAGES = "libgl1 libegl1 libglib2.0-0 libfontconfig1 libdbus-1-3"

FAKE_LDD = """#!/bin/sh
# Prints every soname in $FAKE_MISSING as not found (those in $FAKE_MISSING_XCB only for xcb files), unless
# $FAKE_INSTALLED exists and $FAKE_STAYS_MISSING is empty; logs the files it was given to $FAKE_LDD_LOG.
for f in "$@"; do
  echo "$f" >> "$FAKE_LDD_LOG"
  echo "$f:"
  echo "	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0000000000)"
  if [ -e "$FAKE_INSTALLED" ] && [ -z "$FAKE_STAYS_MISSING" ]; then continue; fi
  for s in $FAKE_MISSING; do echo "	$s => not found"; done
  case "$f" in *xcb*|*Xcb*) for s in $FAKE_MISSING_XCB; do echo "	$s => not found"; done ;; esac
done
"""
FAKE_ID = """#!/bin/sh
[ "$1" = "-u" ] && echo "$FAKE_UID"
"""
FAKE_APT_GET = """#!/bin/sh
echo "$*" >> "$FAKE_APT_LOG"
if [ -n "$FAKE_APT_FAILS" ] && [ "$1" = "install" ]; then echo "E: Unable to locate package libgl1"; exit 100; fi
[ "$1" = "install" ] && : > "$FAKE_INSTALLED"
exit 0
"""

pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def script_mapping() -> dict[str, str]:
    """The soname → Debian package table in the script."""
    block = SCRIPT.read_text().split('SONAME_PACKAGES="', 1)[1].split('"', 1)[0]
    return dict(line.split() for line in block.strip().splitlines())


@pytest.fixture
def fake(tmp_path):
    """A fake PySide6 Qt folder and a PATH with fake ldd, id and apt-get; call it to run the script."""
    qt = tmp_path / "Qt"
    for f in OFFSCREEN_FILES + DISPLAY_FILES:
        (qt / f).parent.mkdir(parents=True, exist_ok=True)
        (qt / f).write_bytes(b"")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("ldd", FAKE_LDD), ("id", FAKE_ID), ("apt-get", FAKE_APT_GET)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    logs = {"apt": tmp_path / "apt.log", "ldd": tmp_path / "ldd.log"}

    def run(
        *args, uid=1000, missing="", missing_xcb="", apt=True, apt_fails=False, stays_missing=False, sudo=False, also=""
    ):
        if not apt:
            (bin_dir / "apt-get").unlink(missing_ok=True)
        if sudo:
            (bin_dir / "sudo").write_text("#!/bin/sh\nexit 0\n")
            (bin_dir / "sudo").chmod(0o755)
        env = {
            "PATH": str(bin_dir),
            "OXMEM_QT_DIR": str(qt),
            "FAKE_UID": str(uid),
            "FAKE_MISSING": missing,
            "FAKE_MISSING_XCB": missing_xcb,
            "FAKE_INSTALLED": str(tmp_path / "installed"),
            "FAKE_STAYS_MISSING": "1" if stays_missing else "",
            "FAKE_APT_FAILS": "1" if apt_fails else "",
            "FAKE_APT_LOG": str(logs["apt"]),
            "FAKE_LDD_LOG": str(logs["ldd"]),
            **({"OXMEM_ALSO_PACKAGES": also} if also else {}),
        }
        return subprocess.run([BASH, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)

    run.lines = lambda key: logs[key].read_text().splitlines() if logs[key].exists() else []
    run.qt = qt
    return run


# --- for real, against this environment's PySide6 ---------------------------------------------------------------


def real_qt_dir() -> Path:
    spec = importlib.util.find_spec("PySide6")
    assert spec is not None and spec.submodule_search_locations, "PySide6 is a dependency of the project"
    return Path(spec.submodule_search_locations[0]) / "Qt"


@pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is not installed")
def test_real_offscreen_check_passes_silently():
    """./run test ran this check (and installed what was missing), so Qt's offscreen libraries are all here."""
    env = {**os.environ, "OXMEM_QT_DIR": str(real_qt_dir())}
    proc = subprocess.run([BASH, str(SCRIPT), "offscreen"], env=env, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


@pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is not installed")
def test_real_display_check_names_only_xcb_packages(tmp_path):
    """For a display the real check asks at most for the xcb packages (as a user here: nothing is installed)."""
    fake_id = tmp_path / "id"
    fake_id.write_text(FAKE_ID)
    fake_id.chmod(0o755)
    env = {**os.environ, "OXMEM_QT_DIR": str(real_qt_dir()), "FAKE_UID": "1000"}
    env.pop("OXMEM_ALSO_PACKAGES", None)  # only the libraries' command is looked at here
    env["PATH"] = f"{tmp_path}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run([BASH, str(SCRIPT), "display"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.stdout == ""
    if proc.returncode == 0:
        assert proc.stderr == ""
    else:
        assert proc.returncode == 1
        command = re.search(r"^  (?:sudo sh|su) -c 'apt-get update && apt-get install -y (.+)'$", proc.stderr, re.M)
        assert command, proc.stderr
        xcb_packages = {"libxcb-cursor0", "libxcb-icccm4", "libxcb-util1", "libxcb-image0", "libxcb-keysyms1"}
        xcb_packages |= {"libxcb-randr0", "libxcb-render-util0", "libxcb-render0", "libxcb-shape0", "libxcb-shm0"}
        xcb_packages |= {"libxcb-sync1", "libxcb-xfixes0", "libxcb-xkb1", "libx11-xcb1", "libxkbcommon-x11-0"}
        assert set(command.group(1).split()) <= xcb_packages


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="dpkg-query is not installed (not Debian)")
def test_mapping_agrees_with_dpkg_for_installed_libraries():
    """Every library in the table that this system has installed belongs to the package the table names (or, on
    Debian 13 / Ubuntu 24.04, to its ``t64`` successor, which apt installs for that name)."""
    mapping = script_mapping()
    proc = subprocess.run(
        ["dpkg-query", "-S", *(f"*/{soname}" for soname in mapping)], capture_output=True, text=True, timeout=60
    )
    owners: dict[str, set[str]] = {}
    for line in proc.stdout.splitlines():
        packages, path = line.split(": ", 1)
        for package in packages.split(", "):
            owners.setdefault(path.rsplit("/", 1)[1], set()).add(package.split(":")[0])
    checked = {soname: owners[soname] for soname in mapping if soname in owners}
    assert "libGL.so.1" in checked and "libglib-2.0.so.0" in checked
    # Debian 13 and Ubuntu 24.04 renamed some for the 64-bit time_t move (libglib2.0-0t64, libpng16-16t64); the
    # new package Provides the old name, so `apt-get install libglib2.0-0` installs it: the table keeps the
    # Debian 12 names and is right on both by construction
    assert {soname: {mapping[soname]} for soname in checked} == {
        soname: {name.removesuffix("t64") for name in owners} for soname, owners in checked.items()
    }


# --- decisions, in a fake environment ------------------------------------------------------------------------------


def test_nothing_missing_prints_nothing(fake):
    proc = fake("offscreen", uid=0)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert fake.lines("apt") == []
    assert fake.lines("ldd") == [str(fake.qt / f) for f in OFFSCREEN_FILES]


def installs(packages: str) -> str:
    """The command printed for a user without sudo: root's, through su."""
    return f"  su -c 'apt-get update && apt-get install -y {packages}'"


@pytest.mark.parametrize(("sudo", "prefix"), [(False, "su -c"), (True, "sudo sh -c")])
def test_user_gets_the_root_command_and_a_failure(fake, sudo, prefix):
    """One command a user can paste as it is: the package lists updated first (a fresh system has none), through
    sudo where it is installed, else su (a minimal Debian has no sudo)."""
    proc = fake("offscreen", uid=1000, missing=MINIMAL_DEBIAN_MISSING, sudo=sudo)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == (
        f"oxmem: Qt needs system libraries that are missing ({MINIMAL_DEBIAN_MISSING}); install them as root, "
        "then run this again:\n"
        f"  {prefix} 'apt-get update && apt-get install -y {MINIMAL_DEBIAN_PACKAGES}'\n"
    )
    assert fake.lines("apt") == []


def test_a_user_short_of_npm_too_gets_one_command_for_both(fake):
    """./run test names nodejs and npm (the tests' libSQL server) when they are missing too: one command, not a
    second one after the first."""
    proc = fake("offscreen", uid=1000, missing=MINIMAL_DEBIAN_MISSING, also="nodejs npm")
    assert proc.returncode == 1
    assert proc.stderr == (
        f"oxmem: Qt needs system libraries that are missing ({MINIMAL_DEBIAN_MISSING}) (and nodejs npm, which the "
        "tests need); install them as root, then run this again:\n"
        f"  su -c 'apt-get update && apt-get install -y {MINIMAL_DEBIAN_PACKAGES} nodejs npm'\n"
    )
    root = fake("offscreen", uid=0, missing=MINIMAL_DEBIAN_MISSING, also="nodejs npm")
    assert root.returncode == 0 and fake.lines("apt")[-1].endswith(MINIMAL_DEBIAN_PACKAGES)  # root: npm comes later


def test_root_installs_saying_so_on_one_line(fake):
    proc = fake("offscreen", uid=0, missing=MINIMAL_DEBIAN_MISSING)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == f"oxmem: installing Qt's system libraries: {MINIMAL_DEBIAN_PACKAGES}\n"
    assert fake.lines("apt") == ["update -qq", f"install -y -qq {MINIMAL_DEBIAN_PACKAGES}"]
    # checked before and after installing
    assert fake.lines("ldd") == [str(fake.qt / f) for f in OFFSCREEN_FILES] * 2


def test_root_install_failure_shows_apt_and_fails(fake):
    proc = fake("offscreen", uid=0, missing="libGL.so.1", apt_fails=True)
    assert proc.returncode == 1
    assert proc.stderr == (
        "oxmem: installing Qt's system libraries: libgl1\n"
        "E: Unable to locate package libgl1\n"
        "oxmem: apt-get could not install Qt's system libraries\n"
    )
    assert fake.lines("apt") == ["update -qq", "install -y -qq libgl1"]


def test_root_fails_when_still_missing_after_installing(fake):
    proc = fake("offscreen", uid=0, missing="libGL.so.1", stays_missing=True)
    assert proc.returncode == 1
    assert proc.stderr == (
        "oxmem: installing Qt's system libraries: libgl1\n"
        "oxmem: Qt's system libraries are still missing after installing: libGL.so.1\n"
    )


@pytest.mark.parametrize("uid", [0, 1000])
def test_without_apt_get_the_missing_libraries_are_listed(fake, uid):
    proc = fake("offscreen", uid=uid, missing="libGL.so.1 libEGL.so.1", apt=False)
    assert proc.returncode == 1
    assert proc.stderr == (
        "oxmem: Qt needs these system libraries, which are missing: libGL.so.1 libEGL.so.1\n"
        "  install them with your system's package manager\n"
    )


def test_a_library_without_a_known_package_is_named(fake):
    proc = fake("offscreen", uid=1000, missing="libGL.so.1 libunheard.so.7")
    assert proc.returncode == 1
    assert proc.stderr == (
        "oxmem: Qt needs system libraries that no known Debian package provides: libunheard.so.7\n"
        "oxmem: Qt needs system libraries that are missing (libGL.so.1 libunheard.so.7); install them as root, "
        "then run this again:\n"
        f"{installs('libgl1')}\n"
    )


def test_display_also_checks_the_xcb_plugin(fake):
    xcb_missing = "libxcb-cursor.so.0 libxkbcommon-x11.so.0 libxcb-icccm.so.4 libX11-xcb.so.1"
    offscreen = fake("offscreen", uid=1000, missing_xcb=xcb_missing)
    assert (offscreen.returncode, offscreen.stderr) == (0, "")
    display = fake("display", uid=1000, missing_xcb=xcb_missing)
    assert display.returncode == 1
    assert display.stderr.splitlines()[1] == installs("libxcb-cursor0 libxcb-icccm4 libx11-xcb1 libxkbcommon-x11-0")
    assert fake.lines("ldd")[-len(OFFSCREEN_FILES + DISPLAY_FILES) :] == [
        str(fake.qt / f) for f in OFFSCREEN_FILES + DISPLAY_FILES
    ]


def test_without_pyside6_it_says_so(tmp_path):
    proc = subprocess.run(
        [BASH, str(SCRIPT)],
        env={"PATH": os.environ.get("PATH", ""), "OXMEM_VENV": str(tmp_path / "nothing")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"oxmem: PySide6's Qt libraries are not in {tmp_path / 'nothing'}; is the project installed?\n"
    )


def test_unknown_mode_is_refused(fake):
    proc = fake("wayland")
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: ")


# Every library Qt's checked files link to directly, and the Debian package it comes from (Debian 12).
DIRECT_DEPENDENCIES = {
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11.so.6": "libx11-6",
    "libz.so.1": "zlib1g",
    "libzstd.so.1": "libzstd1",
    "libstdc++.so.6": "libstdc++6",
    "libgcc_s.so.1": "libgcc-s1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
}


@pytest.mark.parametrize(("soname", "package"), sorted(DIRECT_DEPENDENCIES.items()))
def test_each_library_maps_to_its_debian_package(fake, soname, package):
    proc = fake("display", uid=1000, missing=soname)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[1] == installs(package)


def test_readme_names_the_command_a_minimal_debian_needs(fake):
    """The libraries ldd finds missing on Debian 12 with python3 and python3-venv only, and the command
    docs/install.md gives."""
    minimal_debian = (
        "libglib-2.0.so.0 libgthread-2.0.so.0 libEGL.so.1 libfontconfig.so.1 libX11.so.6 libxkbcommon.so.0 "
        "libGL.so.1 libfreetype.so.6 libdbus-1.so.3"
    )
    proc = fake("offscreen", uid=1000, missing=minimal_debian)
    command = proc.stderr.splitlines()[1].strip()
    assert (
        command
        == installs(
            "libgl1 libegl1 libglib2.0-0 libfontconfig1 libfreetype6 libdbus-1-3 libxkbcommon0 libx11-6"
        ).strip()
    )
    assert f"\n{command}\n" in (ROOT / "docs" / "install.md").read_text()
