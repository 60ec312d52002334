"""The headless lecture figure set: every lesson's figures at its defaults, as files.

``explorer-export --out DIR [--preset lecture] [--seed N] [--lang en|zh]`` (also ``python -m explorer.export``)
renders every lecture figure as PNG + SVG + CSV and writes ``manifest.json`` listing each file with the
inputs that made it. The figures are the lessons' own (``explorer.lessons``: what the pages draw), at each lesson's
defaults; nothing here imports streamlit or ``explorer.ui``. Files are made by ``explorer.figures.files``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import kaleido

from .cli import Parser, fail, progress
from .figures.dark import dark
from .figures.describe import with_description
from .figures.files import EXPORT_WIDTH, FORMATS, MIME, figure_csv, find_browser, image_formats_available, to_bytes
from .figures.placement import X_TITLE
from .figures.style import LECTURE, NORMAL, prepared
from .i18n import LANGUAGES
from .lessons import LESSONS
from .lessons.live_training import TrainedAtDefaults
from .lessons.params import defaults
from .offline import RECIPES, check_size, export_interactive

__all__ = [
    "EXPORT_WIDTH",
    "FORMATS",
    "MIME",
    "export_lecture_set",
    "figure_csv",
    "find_browser",
    "image_formats_available",
    "lecture_figures",
    "main",
    "thumbnail_figures",
    "to_bytes",
    "write_thumbnails",
]
EXPORT_TITLE_WIDTH = 80      # the longest title line of an exported figure (Latin letters; a CJK character is 2)

# --------------------------------------------------------------------------- the lecture figure set
def lesson_specs(name: str, seed: int = 0) -> dict:
    """The exported figures of the lesson ``name`` (name -> ``Spec``): its ``lecture_set`` when it has one, else
    every figure it draws that is not a timing of this machine, at its defaults with ``seed`` for every seed."""
    mod = next(item for item in LESSONS if item.name == name).module
    values = defaults(mod.PARAMS, seed)
    if hasattr(mod, "lecture_set"):
        return mod.lecture_set(values)
    return {key: spec for key, spec in mod.figures(values).items() if spec.figure_def.exported}


def _manifest_value(value):
    """How an input reads in manifest.json (arrays are named by their shape, not written out)."""
    if isinstance(value, dict) and "x" in value:
        return f"dataset arrays, n = {len(value['x'])}"
    if isinstance(value, TrainedAtDefaults):
        return repr(value)
    return list(value) if isinstance(value, tuple) else value


def lecture_figures(seed: int = 0, lang: str = "en", lecture: bool = True) -> list[tuple[str, dict, Callable]]:
    """(name, inputs as recorded, builder) of every figure of the lecture set, lesson by lesson; builders run
    lazily, so one failure does not stop the others.

    Parameters
    ----------
    seed : int
        Every lesson's seeds.
    lang : {"en", "zh"}
    lecture : bool
        Lecture style (large type, thick lines) or the normal one.

    Returns
    -------
    list of (str, dict, callable)

    Examples
    --------
    >>> figures = lecture_figures()
    >>> name, inputs, build = figures[0]
    >>> name, build().layout.xaxis.title.text
    ('kernel_shapes', 'u = (x − xᵢ) / h (bandwidths)')
    """
    style = LECTURE if lecture else NORMAL

    def builder(spec) -> Callable:
        def build():
            return with_description(prepared(spec.figure(lang), style, EXPORT_TITLE_WIDTH), lang)
        return build

    out = []
    for item in LESSONS:
        for name, spec in lesson_specs(item.name, seed).items():
            recorded = {k: _manifest_value(v) for k, v in {**spec.inputs, **spec.marks}.items()}
            out.append((name, recorded, builder(spec)))
    return out


def export_lecture_set(out_dir: Path, seed: int = 0, lang: str = "en", lecture: bool = True,
                       formats: tuple[str, ...] = ("png", "svg", "csv")) -> dict:
    """Write every lecture figure in ``formats`` plus ``manifest.json``; return the manifest.

    Parameters
    ----------
    out_dir : pathlib.Path
    seed : int
    lang : {"en", "zh"}
    lecture : bool
    formats : tuple of str
        Any of ``FORMATS``; PNG and SVG need Chromium (``find_browser``).

    Returns
    -------
    dict
        ``seed``, ``lang``, ``preset``, ``files`` (one entry per file with the inputs that made it) and ``failed``.

    Examples
    --------
    The whole set trains the Live training model at its defaults and draws 46 figures (about a minute; the
    ``explorer-export`` command runs it; ``tests/e2e/test_layout.py`` checks what it writes, SVGs in the browser):

    >>> manifest = export_lecture_set(Path("slides"), formats=("png", "csv"))      # doctest: +SKIP
    >>> sorted({f["format"] for f in manifest["files"]}), manifest["failed"]        # doctest: +SKIP
    (['csv', 'png'], [])
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = lecture_figures(seed, lang, lecture)
    manifest = {"seed": seed, "lang": lang, "preset": "lecture" if lecture else "normal", "files": [],
                "failed": []}
    server = False
    if any(f in ("png", "svg") for f in formats) and find_browser():
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
                kaleido.stop_sync_server(silence_warnings=True)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    return manifest


THUMBNAIL_SIZE = (480, 270)


def thumbnail_figures(lang: str = "en") -> dict[str, Callable]:
    """Builders of each lesson page's thumbnail: its main figure (the lesson's ``MAIN``) at the defaults, without
    title or legend.

    Parameters
    ----------
    lang : {"en", "zh"}

    Returns
    -------
    dict
        Lesson name -> a function that draws its thumbnail.

    Examples
    --------
    >>> thumbnail = thumbnail_figures()["scaling"]()
    >>> thumbnail.layout.width, thumbnail.layout.showlegend
    (480, False)
    """
    def main_figure(name: str) -> Callable:
        mod = next(item for item in LESSONS if item.name == name).module
        values = defaults(mod.PARAMS)
        specs = mod.figures(values, TrainedAtDefaults(values[mod.TASK.key], 0, mod.TRAINING_STEPS)) \
            if name == "live_training" else mod.figures(values)
        spec = specs[mod.MAIN]
        return lambda: prepared(spec.draw(spec.data(), lang), NORMAL,
                                EXPORT_TITLE_WIDTH)

    def thumbnail(build: Callable) -> Callable:
        def make():
            fig = build()
            # a grid's panel titles stay (one line of 9 px each, with room above them); the grid's shared x title
            # and the reference lines' labels go with the axis titles; four ticks an axis, so small panels' labels
            # do not run together
            panel_titles = [a for a in fig.layout.annotations if a.yref == "paper" and a.xref == "paper"
                            and a.yanchor == "bottom" and a.name != X_TITLE]
            for a in panel_titles:
                a.update(text=a.text.split("<br>")[0], font={"size": 10})
            fig.update_layout(title=None, showlegend=False, width=THUMBNAIL_SIZE[0], height=THUMBNAIL_SIZE[1],
                              margin={"l": 10, "r": 10, "t": 22 if panel_titles else 10, "b": 10},
                              font={"size": 10})
            fig.layout.annotations = panel_titles        # (update_layout would merge them into the old ones)
            fig.update_xaxes(title=None, nticks=4, automargin=True)
            fig.update_yaxes(title=None, nticks=4, automargin=True)
            return fig
        return make

    return {item.name: thumbnail(main_figure(item.name)) for item in LESSONS}


def write_thumbnails(out_dir: Path) -> list[Path]:
    """Render the landing page's thumbnails, light (``<page>.png``) and dark (``<page>.dark.png``, for a viewer
    whose page is dark); ``explorer/assets/thumbnails`` holds the committed ones.

    Parameters
    ----------
    out_dir : pathlib.Path

    Returns
    -------
    list of pathlib.Path
        Two files per lesson.

    Examples
    --------
    Needs Chromium (``find_browser``); ``explorer-export --out explorer/assets/thumbnails --thumbnails`` runs it:

    >>> [p.name for p in write_thumbnails(Path("thumbnails"))][:2]         # doctest: +SKIP
    ['kernel_regression.png', 'kernel_regression.dark.png']
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    browser = find_browser()
    if browser is None:
        fail("the thumbnails are PNGs: they need Chrome or Chromium (set BROWSER_PATH).")
    os.environ.setdefault("BROWSER_PATH", browser)
    written = []
    for page, make in thumbnail_figures().items():
        fig = make()
        for path, drawn in ((out_dir / f"{page}.png", fig), (out_dir / f"{page}.dark.png", dark(fig))):
            path.write_bytes(drawn.to_image(format="png", width=THUMBNAIL_SIZE[0], height=THUMBNAIL_SIZE[1],
                                            scale=1))
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """The ``explorer-export`` command.

    Parameters
    ----------
    argv : list of str, optional
        The command's arguments (default: ``sys.argv[1:]``): ``--out DIR``, ``--preset lecture|normal``, ``--seed``,
        ``--lang en|zh``, ``--formats png,svg,csv,html``, ``--thumbnails``; ``--interactive`` (with ``--lesson NAME``
        and ``--lecture``) writes the offline lesson files instead (``explorer.offline``).

    Returns
    -------
    int
        The exit status: 0 when every figure was written.

    Examples
    --------
    >>> main(["--out", "slides", "--formats", "csv", "--lang", "zh"])      # doctest: +SKIP
    0
    """
    p = Parser(prog="explorer-export", description="Render the lecture figure set headless.")
    p.add_argument("--out", required=True, help="folder to write into")
    p.add_argument("--thumbnails", action="store_true",
                   help="write the landing page's thumbnails (one PNG per lesson page) instead of the lecture set")
    p.add_argument("--preset", choices=["lecture", "normal"], default="lecture")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lang", choices=list(LANGUAGES), default="en")
    p.add_argument("--interactive", action="store_true",
                   help="write the lessons as HTML files that open offline and still move (explorer.offline): "
                        "index.html, one file per lesson, plotly.min.js")
    p.add_argument("--lesson", action="append", default=None, metavar="NAME",
                   help="with --interactive: only this lesson (repeat for more); one lesson is one file")
    p.add_argument("--lecture", action="store_true", help="with --interactive: large type for a projector")
    p.add_argument("--formats", default="png,svg,csv",
                   help="the files to write for each figure, comma-separated (png, svg, csv; default all three)")
    args = p.parse_args(argv)
    if args.seed < 0:
        fail("--seed must be 0 or more.")
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    if not formats or any(f not in ("png", "svg", "csv") for f in formats):
        fail(f"--formats takes png, svg and csv, comma-separated, not {args.formats[:40]!r}.")
    if args.interactive:
        return _interactive(args)
    if args.thumbnails:
        written = write_thumbnails(Path(args.out))
        print(f"wrote {len(written)} thumbnails to {args.out}", file=sys.stderr)
        return 0
    manifest = export_lecture_set(Path(args.out), args.seed, args.lang, args.preset == "lecture", formats)
    for f in manifest["failed"]:
        print(f"could not render {f['figure']} {f.get('format', '')}: {f['error']}", file=sys.stderr)
    print(f"wrote {len(manifest['files'])} files to {args.out}", file=sys.stderr)
    return 1 if manifest["failed"] else 0


def _interactive(args) -> int:
    unknown = [n for n in args.lesson or () if n not in RECIPES]
    if unknown:
        fail(f"--lesson takes {', '.join(RECIPES)}, not {unknown[0][:40]!r}.")
    report = export_interactive(Path(args.out), args.lang, args.lecture, tuple(args.lesson or ()) or None, args.seed)
    for name, size in report["files"].items():
        print(f"{name}: {size / 2**20:.2f} MB", file=sys.stderr)
    over = check_size(report)
    if over:
        print(f"over the 3 MB a lesson file may take: {', '.join(over)}", file=sys.stderr)
    print(f"wrote {len(report['files'])} files to {args.out} in {sum(report['seconds'].values()):.1f} s",
          file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
