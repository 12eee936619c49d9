"""An installed copy works like a clone: the wheel carries the sample and the label sets, and a fresh virtual
environment with that wheel (not an editable install) opens the sample and renders the window."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=300,
                           cwd=out)
    assert built.returncode == 0, built.stderr
    return next(out.glob("thinslice-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment holding the wheel; its dependencies come from this environment's
    site-packages through a path file, so nothing is downloaded and nothing of the clone is on its path."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return venv


def run_installed(venv: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "THINSLICE"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"), QT_QPA_PLATFORM="offscreen")
    return subprocess.run([str(venv / "bin" / "thinslice"), *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=home)


def test_the_wheel_carries_the_sample_label_sets_and_presets(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "resources/sample/friendbench/validation/data/metadata.csv" in names
    assert "resources/label_sets/echomind_vocal_attributes.json" in names
    assert "resources/presets/agentviss_mapping.json" in names
    assert not [n for n in names if n.startswith("tests/")]


def test_an_installed_copy_opens_the_sample_on_an_empty_home(installed, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    where = subprocess.run([str(installed / "bin" / "python"), "-c", "import app, resources; print(app.__file__);"
                            " print(resources.__file__)"], capture_output=True, text=True, cwd=home, check=True)
    assert str(ROOT) not in where.stdout and str(installed) in where.stdout
    info = run_installed(installed, home, "info")
    assert info.returncode == 0, info.stderr
    summary = json.loads(info.stdout)
    names = {d["name"] for d in summary["datasets"]}
    assert {"FriendBench (sample)", "EchoMind (sample)", "AgentViSS (sample)"} <= names
    assert all(d["counts"]["stimuli"] > 0 for d in summary["datasets"])
    label_sets = subprocess.run(
        [str(installed / "bin" / "python"), "-c",
         "import duckdb, pathlib; print(duckdb.connect(str(next(pathlib.Path('.local/share').rglob('*.duckdb'))),"
         " read_only=True).execute('SELECT count(*) FROM label_set').fetchone()[0])"],
        capture_output=True, text=True, cwd=home)
    assert label_sets.returncode == 0, label_sets.stderr
    assert int(label_sets.stdout) >= 5


def test_an_installed_copy_renders_the_window(installed, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    shot = tmp_path / "window.png"
    done = run_installed(installed, home, "--screenshot", str(shot), "--stimulus", "fb_001")
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 10_000
