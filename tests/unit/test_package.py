"""The explorer package installs on its own: a wheel built from the checkout carries its code, text catalogs
and example data, and works from outside the repository."""

import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


def read_only_checkout(folder: Path) -> Path:
    """A copy of what a source distribution holds, every file and folder made read-only (as a course's shared
    folder is). Root ignores the permission bits, so the tests also compare the tree before and after."""
    for name in ("pyproject.toml", "README.md", "requirements.txt", "requirements-dev.txt"):
        shutil.copy(ROOT / name, folder / name)
    shutil.copytree(ROOT / "explorer", folder / "explorer", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [*folder.rglob("*"), folder]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return folder


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``folder`` with its size and modification time (ns)."""
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def pip(*args: str) -> subprocess.CompletedProcess:
    """This interpreter's pip, offline (the build backend comes from the test extra, not from a download)."""
    return subprocess.run([sys.executable, "-m", "pip", *args, "-q", "--no-deps", "--no-build-isolation",
                           "--no-index"], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built from a read-only copy of the checkout; the build writes nothing into it."""
    src, out = read_only_checkout(tmp_path_factory.mktemp("src")), tmp_path_factory.mktemp("wheel")
    before = tree(src)
    res = pip("wheel", "-w", str(out), str(src))
    assert res.returncode == 0, res.stderr
    assert tree(src) == before                       # no build/, no *.egg-info, no file touched
    (path,) = out.glob("attention_explorer-*.whl")
    return path


def test_pip_install_of_a_read_only_checkout_works_and_writes_nothing_into_it(tmp_path):
    (tmp_path / "checkout").mkdir()
    src = read_only_checkout(tmp_path / "checkout")
    before = tree(src)
    res = pip("install", "--target", str(tmp_path / "site"), str(src))
    assert res.returncode == 0, res.stderr
    assert tree(src) == before
    assert (tmp_path / "site" / "explorer" / "training" / "saved.py").exists()
    assert list((tmp_path / "site").glob("attention_explorer-*.dist-info"))


def test_wheel_holds_the_package_and_its_data_only(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"explorer"}                      # not tests/, bench/ or pages/
    assert "explorer/assets/noisy_sine.csv" in names
    catalogs = {n for n in names if n.startswith("explorer/text/") and n.endswith(".toml")}
    assert len(catalogs) >= 6
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "explorer-train = explorer.training.cli:main" in entry_points
    assert "explorer-export = explorer.export:main" in entry_points


def test_wheel_carries_every_asset_and_catalog_of_the_checkout(wheel):
    """Every file under explorer/assets (the example data, each lesson's thumbnail, recursively) and every text
    catalog: what the landing page and the export read."""
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {p.relative_to(ROOT).as_posix() for p in (ROOT / "explorer" / "assets").rglob("*") if p.is_file()}
    wanted |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "explorer" / "text").glob("*.toml")}
    assert any("/thumbnails/" in n for n in wanted)
    assert wanted - names == set()


def _run_unpacked(wheel, tmp_path, code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter that sees only the unpacked wheel (not the checkout); returns the run."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    res = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    return res


def test_unpacked_wheel_has_what_the_landing_page_and_the_export_read(wheel, tmp_path):
    code = ("from importlib.resources import files; from explorer.lessons import LESSONS; import explorer.i18n as i;"
            "thumbs = files('explorer') / 'assets' / 'thumbnails';"
            "print(all((thumbs / f'{item.name}.png').is_file() for item in LESSONS));"
            "print(all(i.t(f'page.{item.name}', lang) for item in LESSONS for lang in i.LANGUAGES))")
    assert _run_unpacked(wheel, tmp_path, code).stdout.split() == ["True", "True"]


def test_unpacked_wheel_imports_and_runs_outside_the_checkout(wheel, tmp_path):
    code = ("import explorer, explorer.data as d, explorer.i18n as i, explorer.regression as r;"
            "print(explorer.__file__); print(d.EXAMPLE_CSV.exists());"
            "print(i.t('page.kernel_regression', 'zh'));"
            "print(float(r.nadaraya_watson([0.0], [0.0, 1.0], [1.0, 3.0], 'gaussian', 1e-3)[0]))")
    where, has_csv, title, estimate = _run_unpacked(wheel, tmp_path, code).stdout.split("\n")[:4]
    assert where.startswith(str(tmp_path / "site"))
    assert has_csv == "True" and title == "核回归" and float(estimate) == 1.0


def test_wheel_requires_exactly_the_pinned_requirements(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    required = {line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")}
    runtime = {line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    test_extra = {line.strip() for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
                  if line.strip() and not line.startswith("#")}
    assert {r for r in required if "extra ==" not in r} == runtime
    marker = {r.split(";")[0].strip(): r.partition(";")[2].replace("'", '"').strip() for r in required}
    marked = {r for r, m in marker.items() if m == 'extra == "test"'}
    assert marked == test_extra
    assert "torch==2.13.0" in runtime
