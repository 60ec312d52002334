"""Figures to files: PNG, SVG, self-contained HTML and CSV; and the headless lecture figure set.

``explorer-export --out DIR [--preset lecture] [--seed N] [--lang en|zh]`` (also ``python -m explorer.export``)
renders every lecture figure as PNG + SVG + CSV and writes ``manifest.json`` listing each file with the
parameters that made it. The figures are the pages' own (``explorer.figures.registry``) at each page's defaults.

Plotly figures become PNG/SVG through kaleido, which drives a local Chrome/Chromium (``BROWSER_PATH``,
or one found on PATH). HTML embeds plotly.js, so the file opens offline.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ._checks import one_of
from .cli import Parser, fail, progress

FORMATS = ("png", "svg", "html", "csv")
EXPORT_WIDTH = 1000          # CSS pixels; PNGs are rendered at twice this
EXPORT_TITLE_WIDTH = 80      # the longest title line of an exported figure (Latin letters; a CJK character is 2)
MIME = {"png": "image/png", "svg": "image/svg+xml", "html": "text/html", "csv": "text/csv"}
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    """Path of a Chrome/Chromium for kaleido: ``BROWSER_PATH`` if set and present, else one on PATH."""
    return _find_browser(os.environ.get("BROWSER_PATH"), os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _find_browser(path: str | None, _search_path: str) -> str | None:   # cached per environment
    if path and Path(path).exists():
        return path
    for name in _BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def image_formats_available(fig) -> bool:
    """Whether PNG/SVG can be made for this figure here (kaleido needs a browser)."""
    return find_browser() is not None


def to_bytes(fig, fmt: str, scale: float = 2.0) -> bytes:
    """The figure as ``fmt`` (one of ``FORMATS``)."""
    one_of(fmt, FORMATS, "format")
    if fmt == "csv":
        return figure_csv(fig).encode("utf-8")
    if fmt == "html":
        return fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8")
    browser = find_browser()
    if browser is None:
        raise ValueError("PNG and SVG export need Chrome or Chromium (set BROWSER_PATH to one); HTML and CSV "
                         "work without it.")
    os.environ.setdefault("BROWSER_PATH", browser)
    return fig.to_image(format=fmt, width=EXPORT_WIDTH, scale=scale if fmt == "png" else 1.0)


def figure_csv(fig) -> str:
    """The data behind a figure as one tidy table: a row per point (or per heatmap cell).

    Columns: ``series`` (the trace's name: its legend entry or panel title), ``kind``, then the x, y and (heatmaps)
    colour values, each headed by its axis or colour-bar title with its units (``x (input, arbitrary units)``,
    ``weight``; the colour column only when there is a heatmap). For a heatmap, x and y are the cell's column and
    row coordinates.
    """
    out = io.StringIO()
    writer = csv.writer(out)
    has_z = any(t.type == "heatmap" for t in fig.data)
    writer.writerow(["series", "kind", *_value_titles(fig)[:3 if has_z else 2]])
    for i, trace in enumerate(fig.data):
        name = trace.name or f"{trace.type} {i + 1}"
        if trace.type == "heatmap":
            z = np.asarray(trace.z, dtype=float)
            xs = np.arange(z.shape[1]) if trace.x is None else np.asarray(trace.x)
            ys = np.arange(z.shape[0]) if trace.y is None else np.asarray(trace.y)
            for r in range(z.shape[0]):
                for c in range(z.shape[1]):
                    writer.writerow([name, "heatmap", _fmt(xs[c]), _fmt(ys[r]), _fmt(z[r, c])])
        elif trace.type in ("scatter", "bar", "histogram"):
            xs = [] if trace.x is None else list(trace.x)
            ys = [] if trace.y is None else list(trace.y)
            if trace.type == "histogram":
                ys = [""] * len(xs)
            for x, y in zip(xs, ys, strict=False):
                if x is None and (y is None or y == ""):
                    continue                                  # legend-only traces
                writer.writerow([name, trace.type, _fmt(x), _fmt(y), *([""] if has_z else [])])
    return out.getvalue()


def _value_titles(fig) -> list[str]:
    """Headers of the x, y and colour columns: the first axis titles that say something, and the colour bar's."""
    def first(prefix: str, fallback: str) -> str:
        for key in sorted(k for k in fig.layout if k.startswith(prefix)):
            text = fig.layout[key].title.text
            if text:
                return text.replace("<br>", " ")
        return fallback

    colour = fig.layout.coloraxis.colorbar.title.text or next(
        (t.colorbar.title.text for t in fig.data if t.type == "heatmap" and t.colorbar.title.text), None)
    return [first("xaxis", "x"), first("yaxis", "y"), colour or "z"]


def _fmt(v) -> str:
    if v is None or v == "":
        return ""
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else repr(float(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return str(v)


# --------------------------------------------------------------------------- the lecture figure set
TRAINING_STEPS = 150        # the exported training figures show a model this far into training


def lecture_parameters(seed: int = 0) -> list[tuple[str, str, dict]]:
    """(file name, registry figure, parameters) of the lecture set: each page's figures at the defaults of its
    controls (``explorer.ui.page_controls``), with ``seed`` for every seed; the fit at each of the default
    dataset's three preset bandwidths."""
    from .data import dataset_arrays
    from .kernels import KERNELS
    from .ui import live
    from .ui.controls import BANDWIDTH, DATASET, KERNEL, NOISE, N, presets
    from .ui.page_controls import AttentionHeatmap as AH
    from .ui.page_controls import EfficientAttention as EF
    from .ui.page_controls import Masking as MK
    from .ui.page_controls import Scaling as SC
    from .ui.page_controls import SoftmaxKernel as SK

    name, kernel, h = DATASET.default, KERNEL.default, BANDWIDTH.default
    data = dataset_arrays(name, N.default, NOISE.default, seed)
    out = [("kernel_shapes", "kernel_shapes", {"kernels": tuple(KERNELS)})]
    for value in presets(name).values():
        out.append((f"fit_h{value:g}", "fit", {"data": data, "dataset": name, "kernels": (kernel,),
                                               "bandwidths": (value,), "same_width": True}))
    out += [("loo_cv", "loo_cv", {"data": data, "kernels": (kernel,), "same_width": True, "current": h}),
            ("weights_heatmap", "weights_heatmap", {"data": data, "kernel": kernel, "h": h,
                                                    "n_queries": AH.N_QUERIES.default}),
            ("sigma_sweep", "sigma_sweep", {"data": data, "kernel": kernel, "bandwidths": tuple(AH.SWEEP.default),
                                            "n_queries": AH.N_QUERIES.default})]
    tau = SK.D.default ** 0.5 if SK.TAU_SQRT_D.default else SK.TAU.default
    out.append(("softmax_vs_kernel", "softmax_vs_kernel", {"d": SK.D.default, "n_keys": SK.N_KEYS.default,
                                                            "spread": SK.SPREAD.default, "tau": tau, "seed": seed}))
    valid = MK.LENGTH.default if MK.KIND.default == "causal" else MK.VALID.default
    out.append(("masking", "masking", {"length": MK.LENGTH.default, "d": MK.D.default, "kind": MK.KIND.default,
                                        "valid": valid, "seed": seed, "wrong": MK.WRONG.default}))
    out += [("logit_std", "logit_std", {"n": SC.N.default, "seed": seed, "d": SC.D.default}),
            ("logit_histogram", "logit_histogram", {"d": SC.D.default, "seed": seed})]
    task = live.TASK.default
    out += [(entry, entry, {"trainer": _Trained(task, seed, TRAINING_STEPS)})
            for entry in ("training_entropy", "training_head_maps")]
    # Efficient attention (the measured cost is of the machine it runs on: drawn on the page, not exported)
    h, lo, hi = EF.H.default, float(data["x_grid"][0]), float(data["x_grid"][-1])
    out += [("efficient_zoo", "efficient_zoo", {"data": data, "h": h, "m": EF.M.default, "kind": EF.KIND.default,
                                                 "orthogonal": EF.ORTH.default, "seed": seed}),
            ("efficient_error", "efficient_error", {"data": data, "h": h, "kind": EF.KIND.default, "seed": seed})]
    online = {"data": data, "h": h, "x0": lo + EF.X0.default * (hi - lo), "block": EF.BLOCK.default,
              "step": EF.STEP.default}
    out += [("online_logits", "online_logits", online), ("online_running", "online_running", online),
            ("rnn_state", "rnn_state", {"length": 12, "d": 4, "seed": seed, "t": EF.T.default})]
    return out


_TRAINED: dict = {}                 # (task, seed, steps) -> the trainer, once trained


class _Trained:
    """A trainer for ``task`` at its defaults after ``steps`` steps, trained once on first use."""

    def __init__(self, task: str, seed: int, steps: int):
        self.key = (task, seed, steps)

    def get(self):
        if self.key not in _TRAINED:
            from .training import Trainer

            trainer = Trainer.for_task(self.key[0], seed=self.key[1])
            trainer.step(self.key[2])
            _TRAINED[self.key] = trainer
        return _TRAINED[self.key]

    def __repr__(self) -> str:
        task, seed, steps = self.key
        return f"{task} at its defaults, seed {seed}, {steps} steps"


def _manifest_value(value):
    """How a parameter reads in manifest.json (arrays are named by their shape, not written out)."""
    if isinstance(value, dict) and "x" in value:
        return f"dataset arrays, n = {len(value['x'])}"
    if isinstance(value, _Trained):
        return repr(value)
    return list(value) if isinstance(value, tuple) else value


def lecture_figures(seed: int = 0, lang: str = "en", lecture: bool = True) -> list[tuple[str, dict, Callable]]:
    """(name, parameters as recorded, builder) of every figure of the lecture set, drawn from the same
    registry entries as the pages (``explorer.figures.registry``); builders run lazily, so one failure
    does not stop the others."""
    from .figures.registry import FIGURES
    from .figures.style import LECTURE, NORMAL, prepared

    style = LECTURE if lecture else NORMAL

    def builder(entry: str, params: dict) -> Callable:
        def build():
            given = {k: v.get() if isinstance(v, _Trained) else v for k, v in params.items()}
            return prepared(FIGURES[entry].figure(lang, **given), style, EXPORT_TITLE_WIDTH)
        return build

    return [(name, {k: _manifest_value(v) for k, v in params.items()}, builder(entry, params))
            for name, entry, params in lecture_parameters(seed)]


def export_lecture_set(out_dir: Path, seed: int = 0, lang: str = "en", lecture: bool = True,
                       formats: tuple[str, ...] = ("png", "svg", "csv")) -> dict:
    """Write every lecture figure in ``formats`` plus ``manifest.json``; return the manifest."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = lecture_figures(seed, lang, lecture)
    manifest = {"seed": seed, "lang": lang, "preset": "lecture" if lecture else "normal", "files": [],
                "failed": []}
    server = False
    if any(f in ("png", "svg") for f in formats) and find_browser():
        import kaleido

        os.environ.setdefault("BROWSER_PATH", find_browser())
        kaleido.start_sync_server(silence_warnings=True)
        server = True
    try:
        for i, (name, params, build) in enumerate(figures):
            progress(i, len(figures), f"{name:<24}")
            try:
                fig = build()
            except Exception as err:                        # report, and go on with the rest
                manifest["failed"].append({"figure": name, "error": f"{type(err).__name__}: {err}"})
                continue
            for fmt in formats:
                path = out_dir / f"{name}.{fmt}"
                try:
                    path.write_bytes(to_bytes(fig, fmt))
                except Exception as err:
                    manifest["failed"].append({"figure": name, "format": fmt,
                                               "error": f"{type(err).__name__}: {err}"})
                    continue
                manifest["files"].append({"file": path.name, "figure": name, "format": fmt, "parameters": params})
        progress(len(figures), len(figures), f"{'done':<24}")
        sys.stderr.write("\n")
    finally:
        if server:
            import kaleido

            kaleido.stop_sync_server(silence_warnings=True)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    return manifest


# each lesson page's main figure (a lecture-set entry): the landing page shows it as the page's thumbnail
MAIN_FIGURES = {"kernel_regression": "fit_h0.2", "attention_heatmap": "weights_heatmap",
                "softmax_kernel": "softmax_vs_kernel", "masking": "masking", "scaling": "logit_std",
                "efficient_attention": "efficient_zoo", "live_training": "training_entropy"}
THUMBNAIL_SIZE = (480, 270)


def thumbnail_figures(lang: str = "en") -> dict[str, Callable]:
    """Builders of each lesson page's thumbnail: its main figure at the defaults, without title or legend."""
    built = {name: build for name, _, build in lecture_figures(0, lang, lecture=False)}

    def thumbnail(build: Callable) -> Callable:
        def make():
            fig = build()
            fig.update_layout(title=None, showlegend=False, width=THUMBNAIL_SIZE[0], height=THUMBNAIL_SIZE[1],
                              margin={"l": 10, "r": 10, "t": 26, "b": 10}, font={"size": 9})
            fig.update_xaxes(title=None)
            fig.update_yaxes(title=None)
            return fig
        return make

    return {page: thumbnail(built[entry]) for page, entry in MAIN_FIGURES.items()}


def write_thumbnails(out_dir: Path) -> list[Path]:
    """Render the landing page's thumbnails (``explorer/assets/thumbnails`` holds the committed ones)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    browser = find_browser()
    if browser is None:
        fail("the thumbnails are PNGs: they need Chrome or Chromium (set BROWSER_PATH).")
    os.environ.setdefault("BROWSER_PATH", browser)
    written = []
    for page, make in thumbnail_figures().items():
        path = out_dir / f"{page}.png"
        path.write_bytes(make().to_image(format="png", width=THUMBNAIL_SIZE[0], height=THUMBNAIL_SIZE[1], scale=1))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    p = Parser(prog="explorer-export", description="Render the lecture figure set headless.")
    p.add_argument("--out", required=True, help="folder to write into")
    p.add_argument("--thumbnails", action="store_true",
                   help="write the landing page's thumbnails (one PNG per lesson page) instead of the lecture set")
    p.add_argument("--preset", choices=["lecture", "normal"], default="lecture")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lang", choices=["en", "zh"], default="en")
    args = p.parse_args(argv)
    if args.seed < 0:
        fail("--seed must be 0 or more.")
    if args.thumbnails:
        written = write_thumbnails(Path(args.out))
        print(f"wrote {len(written)} thumbnails to {args.out}", file=sys.stderr)
        return 0
    manifest = export_lecture_set(Path(args.out), args.seed, args.lang, args.preset == "lecture")
    for f in manifest["failed"]:
        print(f"could not render {f['figure']} {f.get('format', '')}: {f['error']}", file=sys.stderr)
    print(f"wrote {len(manifest['files'])} files to {args.out}", file=sys.stderr)
    return 1 if manifest["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
