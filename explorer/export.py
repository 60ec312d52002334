"""Figures to files: PNG, SVG, self-contained HTML and CSV; and the headless lecture figure set.

``explorer-export --out DIR (or python -m explorer.export) [--preset lecture] [--seed N] [--lang en|zh]`` renders every
lecture figure as PNG + SVG + CSV and writes ``manifest.json`` listing each file with the parameters
that made it.

Plotly figures become PNG/SVG through kaleido, which drives a local Chrome/Chromium (``BROWSER_PATH``,
or one found on PATH). Altair charts go through vl-convert, which needs no browser. HTML embeds the
plotting library, so the file opens offline.
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


def _is_altair(fig) -> bool:
    return type(fig).__module__.startswith("altair")


def image_formats_available(fig) -> bool:
    """Whether PNG/SVG can be made for this figure here (always for altair; plotly needs a browser)."""
    return _is_altair(fig) or find_browser() is not None


def to_bytes(fig, fmt: str, scale: float = 2.0) -> bytes:
    """The figure as ``fmt`` (one of ``FORMATS``)."""
    one_of(fmt, FORMATS, "format")
    if fmt == "csv":
        return figure_csv(fig).encode("utf-8")
    if _is_altair(fig):
        import vl_convert as vlc

        spec = fig.to_json()
        if fmt == "png":
            return vlc.vegalite_to_png(spec, scale=scale)
        if fmt == "svg":
            return vlc.vegalite_to_svg(spec).encode("utf-8")
        return vlc.vegalite_to_html(spec, bundle=True).encode("utf-8")
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

    Columns: ``trace`` (name), ``kind``, ``x``, ``y`` and, for heatmaps, ``z`` (``x``/``y`` are then
    the cell's column and row coordinates).
    """
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["trace", "kind", "x", "y", "z"])
    if _is_altair(fig):
        for name, rows in (fig.to_dict().get("datasets") or {}).items():
            for r in rows:
                writer.writerow([name, "altair", r.get("x"), r.get("y"), r.get("z", "")])
        return out.getvalue()
    for i, trace in enumerate(fig.data):
        name = trace.name or f"trace {i}"
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
                writer.writerow([name, trace.type, _fmt(x), _fmt(y), ""])
    return out.getvalue()


def _fmt(v) -> str:
    if v is None or v == "":
        return ""
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else repr(float(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return str(v)


# --------------------------------------------------------------------------- the lecture figure set
def lecture_figures(seed: int = 0, lang: str = "en", lecture: bool = True) -> list[tuple[str, dict, Callable]]:
    """(name, parameters, builder) of every figure of the lecture set. Builders are called lazily so
    that one failure does not stop the others."""
    from . import bridge, masking, scaling
    from .data import make_dataset, query_grid
    from .figures import common
    from .figures import masking as mfig
    from .figures import regression as rfig
    from .figures import scaling as sfig
    from .figures import training as tfig
    from .figures.style import LECTURE, NORMAL
    from .i18n import t
    from .kernels import KERNELS
    from .regression import loo_cv_scores, nadaraya_watson, nw_weights, select_bandwidth, silverman_bandwidth

    style = LECTURE if lecture else NORMAL
    d = make_dataset("d2l", seed=seed)
    grid = query_grid(d)
    bws = np.logspace(-2, np.log10(20), 41)
    out: list[tuple[str, dict, Callable]] = []

    gauss = t("kernel.gaussian", lang)
    out.append(("kernel_shapes", {"kernels": list(KERNELS)},
                lambda: rfig.kernel_shapes_figure(list(KERNELS), style=style, lang=lang)))
    for h in (0.05, 0.5, 10.0):
        out.append((f"fit_h{h:g}", {"dataset": "d2l", "seed": seed, "kernel": "gaussian", "bandwidth": h},
                    lambda h=h: rfig.fit_figure(d.x, d.y, grid, d.true_fn(grid),
                                                {f"{gauss}, h = {h:g}": nadaraya_watson(grid, d.x, d.y, "gaussian", h)
                                                 .numpy()},
                                                title=t("kr.fit_title", lang, dataset=t("dataset.d2l", lang))
                                                + f", h = {h:g}", style=style, lang=lang)))
    out.append(("loo_cv", {"dataset": "d2l", "seed": seed, "kernel": "gaussian"},
                lambda: rfig.loo_cv_figure(bws, {gauss: loo_cv_scores(d.x, d.y, "gaussian", bws).numpy()}, 0.5,
                                           select_bandwidth(d.x, d.y), silverman_bandwidth(d.x), style=style,
                                           lang=lang)))
    xq = np.linspace(0, 5, 100)
    out.append(("weights_heatmap", {"dataset": "d2l", "seed": seed, "bandwidth": 0.5},
                lambda: common.heatmap(nw_weights(xq, d.x, "gaussian", 0.5).numpy(), np.round(d.x, 2),
                                       np.round(xq, 2), t("ah.heat_title", lang, kernel=gauss, h="0.5"),
                                       t("ah.key_short", lang), t("ah.query_short", lang), style=style,
                                       colorbar_title=t("fig.weight", lang))))
    sigmas = [0.1, 0.2, 0.5, 1.0]
    out.append(("sigma_sweep", {"dataset": "d2l", "seed": seed, "sigmas": sigmas},
                lambda: common.heatmap_grid([nw_weights(xq, d.x, "gaussian", s).numpy() for s in sigmas],
                                            [f"h = {s:g}" for s in sigmas], np.round(d.x, 2), np.round(xq, 2),
                                            t("ah.sweep_title", lang, kernel=gauss), t("ah.key_short", lang),
                                            t("ah.query_short", lang), cols=4, style=style,
                                            colorbar_title=t("fig.weight", lang))))

    def softmax_vs_kernel():
        q, k, v = bridge.random_qkv(16, 16, 24, 0.5, seed)
        c = bridge.compare(q, k, v, 4.0)
        return common.heatmap_grid([c["dot"].numpy(), c["gauss"].numpy(), c["biased"].numpy()],
                                   [t("sk.dot_title", lang, tau="4"), t("sk.gauss_title", lang, sigma="2"),
                                    t("sk.max_diff_corrected", lang)], None, None, t("sk.side_title", lang),
                                   t("sk.key_j", lang), t("sk.query_i", lang), cols=3, style=style,
                                   colorbar_title=t("fig.weight", lang))
    out.append(("softmax_vs_kernel", {"d": 16, "n_keys": 24, "norm_spread": 0.5, "tau": 4.0, "seed": seed},
                softmax_vs_kernel))

    def masking_pair():
        q, k, v = masking.example(10, 16, seed)
        m = masking.make_mask("causal", 10)
        res = masking.all_modes(q, k, v, m)
        return mfig.masked_pair(res["pre"]["weights"].numpy(), res["post"]["weights"].numpy(), m.numpy(),
                                (t("mk.pre_correct", lang), "post"), style=style, lang=lang)
    out.append(("masking", {"length": 10, "d": 16, "mask": "causal", "seed": seed}, masking_pair))

    def logit_std():
        ds = [2**i for i in range(11)]
        un, sc = scaling.logit_stats(ds, seed=seed), scaling.logit_stats(ds, scaled=True, seed=seed)
        theory = t("sc.theory_sqrt", lang)
        return common.lines(ds, {t("fig.unscaled", lang): un["logit_std"], t("fig.scaled", lang): sc["logit_std"],
                                 theory: np.sqrt(ds)}, t("sc.std_title", lang), t("sc.d_axis", lang),
                            t("sc.std_axis", lang), log_x=True, log_y=True, mode="lines+markers", style=style,
                            dashes={theory: "dot"})
    out.append(("logit_std", {"d": "1..1024", "n": scaling.DEFAULT_N, "seed": seed}, logit_std))
    out.append(("logit_histogram", {"d": 128, "seed": seed},
                lambda: sfig.logit_histogram(scaling.logit_samples(128, 64, False, seed).numpy(),
                                             scaling.logit_samples(128, 64, True, seed).numpy(), 128, style=style,
                                             lang=lang)))

    run = {}

    def trained():
        if not run:
            from .training import Trainer, make_task
            task = make_task("reverse")
            trainer = Trainer(task.model_config(n_heads=2, d_model=64), task, seed=seed)
            trainer.step(150)
            run["trainer"] = trainer
        return run["trainer"]

    def entropy_curves():
        import pandas as pd
        tr_ = trained()
        return tfig.entropy_figure(pd.DataFrame(tr_.history), tr_.config.n_layers, tr_.config.n_heads,
                                   tr_.task.entropy_ceiling(), style=style, lang=lang)
    out.append(("training_entropy", {"task": "reverse", "steps": 150, "heads": 2, "d_model": 64, "seed": seed},
                entropy_curves))
    out.append(("training_head_maps", {"task": "reverse", "steps": 150, "heads": 2, "d_model": 64, "seed": seed},
                lambda: tfig.attention_maps_figure([m.numpy() for m in trained().attention_maps()], style=style,
                                                   lang=lang)))
    return out


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


def main(argv: list[str] | None = None) -> int:
    p = Parser(prog="explorer-export", description="Render the lecture figure set headless.")
    p.add_argument("--out", required=True, help="folder to write into")
    p.add_argument("--preset", choices=["lecture", "normal"], default="lecture")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lang", choices=["en", "zh"], default="en")
    args = p.parse_args(argv)
    if args.seed < 0:
        fail("--seed must be 0 or more.")
    manifest = export_lecture_set(Path(args.out), args.seed, args.lang, args.preset == "lecture")
    for f in manifest["failed"]:
        print(f"could not render {f['figure']} {f.get('format', '')}: {f['error']}", file=sys.stderr)
    print(f"wrote {len(manifest['files'])} files to {args.out}", file=sys.stderr)
    return 1 if manifest["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
