"""The headless lecture figure set: every file the manifest names exists and is valid."""

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from explorer.data import DATASETS
from explorer.export import find_browser
from explorer.lessons import LESSONS
from tests.conftest import ROOT


def chinese_lecture_set(tmp_path) -> dict:
    """The lecture set in Chinese (SVG and CSV), written by the command: every file its manifest names is there and
    valid. Returns the manifest. (Run by tests/e2e/test_layout.py, which then opens the SVGs in the browser: one
    export of the whole set, about 30 s, serves both checks.)"""
    res = subprocess.run([sys.executable, "-m", "explorer.export", "--out", str(tmp_path), "--preset", "lecture",
                          "--seed", "1", "--lang", "zh", "--formats", "svg,csv"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["failed"] == [] and manifest["lang"] == "zh" and manifest["seed"] == 1
    figures = {f["figure"] for f in manifest["files"]}
    fits = {f"fit_h{h:g}" for h in DATASETS["sine_mix"].presets}        # the default dataset's presets
    # every figure a lesson declares, bar the timings of this machine and what the default training task (reverse,
    # one layer, tokens) does not draw (the in-context fit, scores across layers); the fit once per preset bandwidth
    declared = {name for item in LESSONS for name, f in item.module.FIGURES.items() if f.exported}
    assert declared - {"fit", "icl_maps", "icl_fit", "head_scores"} | fits == figures
    for entry in manifest["files"]:
        data = (tmp_path / entry["file"]).read_bytes()
        assert entry["parameters"]
        if entry["format"] == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
        elif entry["format"] == "svg":
            assert ET.fromstring(data).tag.endswith("svg")
            assert re.search("[\u4e00-\u9fff]", data.decode()), entry["file"]      # Chinese titles/axes
        else:
            assert data.decode().startswith("series,kind,") and ",x," not in data.decode().splitlines()[0]
    assert "[" in res.stderr and "done" in res.stderr          # the progress bar
    assert {f["format"] for f in manifest["files"]} == {"svg", "csv"}
    return manifest


@pytest.mark.browser
@pytest.mark.skipif(find_browser() is None, reason="PNG/SVG need Chrome/Chromium")
def test_png_export_of_each_kind_of_figure():
    """PNG through kaleido, once per kind of chart the lessons draw (every lesson's main figure: lines, markers,
    heatmaps, subplots; and bars): the SVG of every figure is the Chinese lecture set's test above."""
    import os

    import kaleido

    from explorer.export import lesson_specs
    from explorer.figures.files import to_bytes

    picked = [(item.name, item.module.MAIN) for item in LESSONS] + [("masking", "leak")]
    os.environ.setdefault("BROWSER_PATH", find_browser())
    kaleido.start_sync_server(silence_warnings=True)           # one browser for all of them, as the export does
    try:
        for lesson_name, figure_name in picked:
            specs = lesson_specs(lesson_name, 0)
            figure_name = next(n for n in specs if n == figure_name or n.startswith(f"{figure_name}_"))
            png = to_bytes(specs[figure_name].figure("en"), "png")
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000, (lesson_name, figure_name)
    finally:
        kaleido.stop_sync_server(silence_warnings=True)


def test_bad_cli_arguments_exit_with_one_line(tmp_path):
    script = str(Path(sys.executable).with_name("explorer-export"))          # the installed console script
    res = subprocess.run([script, "--out", str(tmp_path), "--lang", "fr"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_interactive_export_of_one_lesson_and_a_lesson_it_does_not_have(tmp_path):
    """explorer-export --interactive: one lesson asked alone is one HTML file with plotly.js inside; a lesson with
    name that is no lesson is refused in one line that names the choices."""
    script = str(Path(sys.executable).with_name("explorer-export"))
    res = subprocess.run([script, "--interactive", "--out", str(tmp_path / "one"), "--lesson", "masking"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["masking.html"]
    assert "Plotly" in (tmp_path / "one" / "masking.html").read_text(encoding="utf-8")[:5_000_000]
    for asked in ("positions", "<b>x</b>"):
        res = subprocess.run([script, "--interactive", "--out", str(tmp_path / "no"), "--lesson", asked],
                             capture_output=True, text=True, timeout=60)
        lines = res.stderr.strip().splitlines()
        assert res.returncode != 0 and len(lines) == 1 and "kernel_regression" in lines[0]
        assert "Traceback" not in res.stderr
        assert not (tmp_path / "no").exists()
