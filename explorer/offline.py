"""A lesson in a file: each lesson's main figure over its main control, as HTML that opens from disk.

``explorer-export --interactive --out DIR [--lang zh] [--lecture]`` writes ``DIR/index.html`` (the lessons in
order, as on the landing page), one ``<lesson>.html`` per lesson and ``plotly.min.js`` once for all of them. A file
needs no server and makes no network request: plotly.js sits beside it (or inside it, for one lesson asked alone),
the text is plain HTML, and the page's Content-Security-Policy refuses every connection.

What moves: the lesson's main control is a slider over precomputed states (its ``Recipe`` in ``RECIPES``). At
each state the file holds the main figure as the page draws it and the sentences the page says with it, computed by
the lesson's own ``@says`` functions, and the lesson's question with its answer behind Reveal. A few lines of the
package's own script (``explorer/ui/web/offline.mjs``) swap them when the slider moves. Numbers are stored as
float32 (about 7 significant digits), which the file says. Each lesson page's "Download this lesson for offline
use" button makes the same file for one lesson.

Live training's file is a recorded run: the default task trained at its defaults, its step the slider
(``RECORDED_STEPS``), with the entropy, the attention maps and the loss as they were at each step.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path

import numpy as np
import plotly.io as pio
from plotly.offline import get_plotlyjs

from .figures.describe import description, with_description
from .figures.style import LECTURE, NORMAL, prepared
from .i18n import LANGUAGES, in_lang, marks_as_html, t
from .lessons import LESSONS, lesson
from .lessons.base import Question, flatten
from .lessons.offline import RECIPES, RECORDED_STEPS, computed_once
from .lessons.params import defaults

__all__ = ["RECIPES", "RECORDED_STEPS", "export_interactive", "lesson_html", "lesson_states"]

MAX_LESSON_BYTES = 3 * 2**20         # one lesson's file without plotly.js
WEB = files("explorer") / "ui" / "web"


# --------------------------------------------------------------------------- one lesson's states
def _figure_json(fig) -> dict:
    """The figure as plotly.js reads it, its float arrays stored as float32 (plotly's base64 typed arrays)."""
    def small(obj):
        if isinstance(obj, np.ndarray) and obj.dtype == np.float64:
            return obj.astype(np.float32)
        if isinstance(obj, dict):
            return {k: small(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [small(v) for v in obj]
        return obj
    return json.loads(pio.to_json(small(fig.to_plotly_json()), validate=False, engine="json"))


def _question(q: Question | None, lang: str) -> dict | None:
    if q is None:
        return None
    return {"asked": inline(in_lang(q.asked, lang)), "choices": [inline(in_lang(c, lang)) for c in q.choices],
            "answer": q.answer, "also": list(q.also_right), "why": inline(in_lang(q.why, lang))}


def lesson_states(name: str, lang: str = "en", lecture: bool = False, seed: int = 0) -> dict:
    """Every precomputed state of the lesson ``name``: the control's label and values, and per state the figures
    (plotly JSON, the main one first; Live training's recorded run also has its maps and loss) with their text
    alternatives, the sentences and the question (their text as HTML, ``inline``).

    Parameters
    ----------
    name : str
        A lesson with a recipe (``RECIPES``).
    lang : {"en", "zh"}
    lecture : bool
        Lecture style (large type, thick lines) or the normal one.
    seed : int
        Every seed of the lesson's settings.

    Returns
    -------
    dict
        ``control`` (label, values as text, the default's index), ``second`` (the same, or None), ``states``:
        a list per value of ``second`` (one list when there is none) of one dict per control value, and
        ``inert``: per value of ``second``, whether the control changes nothing there.

    Examples
    --------
    >>> s = lesson_states("scaling")
    >>> s["control"]["label"], len(s["states"][0]), s["states"][0][0]["sentences"][0][:30]
    ('Head dimension d for the histogram', 11, '<ul><li>Unscaled, the std foll')
    """
    if name not in RECIPES:
        raise ValueError(f"no offline recipe for {name!r}: pick one of {', '.join(RECIPES)}.")
    recipe, mod = RECIPES[name], lesson(name).module
    base = defaults(mod.PARAMS, seed)
    style = LECTURE if lecture else NORMAL

    def state(drawn, said, question) -> dict:
        """One state: its figures ((spec, data) pairs, the main one first), its sentences and its question."""
        figures = [with_description(prepared(spec.draw(data, lang), style), lang) for spec, data in drawn]
        blocks = [flatten(block) for block in said if flatten(block)]     # one block as the page writes one
        return {"figures": [{"figure": _figure_json(f), "alt": description(f)} for f in figures],
                "sentences": [inline(_joined([s.in_lang(lang) for s in block], lang)) for block in blocks],
                "tones": [block[0].tone for block in blocks], "question": _question(question, lang)}

    def described(param, options, default):
        return {"label": t(param.label, lang), "key": param.key,
                "values": [param.option_text(o, lang) for o in options],
                "start": list(options).index(default) if default in options else 0}

    if recipe.control == "step":                  # a recorded run: the step is the slider
        steps, row = [], []
        for step, drawn, said, question in recipe.view(mod, base):
            steps.append(step)
            row.append(state(drawn, said, question))
        control = {"label": t("off.step", lang), "key": "step", "values": [str(s) for s in steps],
                   "start": len(steps) - 1}
        return {"control": control, "second": None, "inert": [False], "states": [row]}

    control = getattr(mod, recipe.control)
    second = getattr(mod, recipe.second) if recipe.second else None
    values = recipe.states(control)
    seconds = second.options if second else (None,)
    table, computed = [], computed_once()
    for other in seconds:
        row = []
        for v in values:
            settings = {**base, control.key: v, **({second.key: other} if second else {})}
            spec, data, said, question = recipe.view(mod, settings, computed)
            row.append(state([(spec, data)], said, question))
        table.append(row)
    # a row where the control changes nothing (Masking's causal mask has no valid length): the slider is disabled
    # there, and the file opens on a row where it moves
    inert = [all(json.dumps(s) == json.dumps(row[0]) for s in row) for row in table]
    picked = described(second, seconds, base[second.key]) if second else None
    if picked and inert[picked["start"]] and not all(inert):
        picked["start"] = inert.index(False)
    return {"control": described(control, values, base[control.key]), "second": picked, "inert": inert,
            "states": table}


def _joined(lines: list[str], lang: str) -> str:
    """One block's sentences as the page writes them: list items one per line, else one paragraph."""
    return "\n".join(lines) if all(line.startswith("- ") for line in lines) else t("punct.space", lang).join(lines)


# --------------------------------------------------------------------------- HTML
def inline(text: str) -> str:
    r"""The app's sentence as HTML: escaped, its **bold** and `code` marks drawn (``marks_as_html``), its $maths$
    delimiters dropped and its "- " lines a list (the sentences are the app's own text; what they quote is escaped
    like the rest).

    >>> inline("**Var(q·k) = d** and $h$ < 1")
    '<strong>Var(q·k) = d</strong> and h &lt; 1'
    >>> inline("- one\n- two")
    '<ul><li>one</li><li>two</li></ul>'
    """
    escaped = marks_as_html(html.escape(text, quote=False).replace("$", ""))
    out, items = [], []
    for line in escaped.split("\n"):
        if line.startswith("- "):
            items.append(f"<li>{line[2:]}</li>")
            continue
        if items:
            out.append(f"<ul>{''.join(items)}</ul>")
            items = []
        out.append(line)
    if items:
        out.append(f"<ul>{''.join(items)}</ul>")
    return "<br>".join(part for part in out if part)


CSP = ("default-src 'none'; script-src 'unsafe-inline' file:; style-src 'unsafe-inline'; "
       "img-src data: blob:; font-src data:; connect-src 'none'")


def lesson_html(name: str, lang: str = "en", lecture: bool = False, plotly_js: str = "plotly.min.js",
                seed: int = 0) -> str:
    """One lesson's file: its title, its question, the slider, the figure, the sentences and Reveal.

    Parameters
    ----------
    name : str
    lang : {"en", "zh"}
    lecture : bool
    plotly_js : str
        ``"inline"`` puts plotly.js inside the file; else the file name of plotly.js beside it.
    seed : int

    Returns
    -------
    str
        The HTML.

    Examples
    --------
    >>> text = lesson_html("scaling", lang="zh")
    >>> "<title>除以 √d</title>" in text, '<script src="plotly.min.js"></script>' in text
    (True, True)
    """
    states = lesson_states(name, lang, lecture, seed)
    title = t(f"page.{name}", lang)
    intro = t(RECIPES[name].intro, lang)
    order = [item.name for item in LESSONS if item.name in RECIPES]
    i = order.index(name)
    nav = [f'<a href="index.html">{html.escape(t("off.all", lang))}</a>']
    if i > 0:
        nav.append(f'<a href="{order[i - 1]}.html">← {html.escape(t(f"page.{order[i - 1]}", lang))}</a>')
    if i + 1 < len(order):
        nav.append(f'<a href="{order[i + 1]}.html">{html.escape(t(f"page.{order[i + 1]}", lang))} →</a>')
    script = (f"<script>{_plotly_source()}</script>" if plotly_js == "inline"
              else f'<script src="{html.escape(plotly_js)}"></script>')      # (PLOTLY_BESIDE by default)
    second = states["second"]
    picker = ""
    if second:
        options = "".join(f'<option value="{k}"{" selected" if k == second["start"] else ""}>{html.escape(v)}'
                          f"</option>" for k, v in enumerate(second["values"]))
        picker = (f'<label class="control">{html.escape(second["label"])} '
                  f'<select id="second">{options}</select></label>')
    control = states["control"]
    extra = len(states["states"][0][0]["figures"]) - 1          # Live training: the maps and the loss beside
    divs = "".join(f'<div id="figure-{i}"></div>' for i in range(1, extra + 1))
    more = f'<div class="more">{divs}</div>' if extra else ""
    body = f"""<!doctype html>
<html lang="{'zh-CN' if lang == 'zh' else 'en'}"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{(WEB / "offline.css").read_text(encoding="utf-8")}</style>
{script}
</head><body class="{'lecture' if lecture else ''}">
<nav>{' · '.join(nav)}</nav>
<main>
<h1>{html.escape(title)}</h1>
<p class="intro">{inline(intro)}</p>
<div class="controls"><label class="control" for="state">{html.escape(control["label"])}</label>
<input type="range" id="state" min="0" max="{len(control["values"]) - 1}" step="1" value="{control["start"]}">
<output id="value" for="state"></output>{picker}</div>
<p id="alt" class="alt"></p>
<div id="figure"></div>{more}
<div id="sentences"></div>
<section id="question"><h2>{html.escape(t("off.predict", lang))}</h2><p id="asked"></p><ol id="choices"></ol>
<details id="reveal"><summary>{html.escape(t("off.reveal", lang))}</summary><p id="verdict"></p><p id="why"></p>
</details></section>
</main>
<footer>{html.escape(t("off.footer", lang, n=sum(len(r) for r in states["states"])))}</footer>
<script type="application/json" id="states">{_json_in_html(states)}</script>
<script type="application/json" id="words">{_json_in_html({"answer": t("off.answer", lang)})}</script>
<script>{(WEB / "offline.mjs").read_text(encoding="utf-8")}</script>
</body></html>
"""
    return body


def _json_in_html(obj) -> str:
    """JSON inside a <script> element: no "</" can end it early, and HTML's own characters are escaped."""
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _plotly_source() -> str:
    return get_plotlyjs()


PLOTLY_BESIDE = '<script src="plotly.min.js"></script>'


def with_plotly_inside(text: str) -> str:
    """A lesson's file written with plotly.js beside it (``lesson_html``'s default) as one file with plotly.js
    inside (what ``plotly_js="inline"`` writes).

    >>> with_plotly_inside(lesson_html("scaling")) == lesson_html("scaling", plotly_js="inline")
    True
    """
    return text.replace(PLOTLY_BESIDE, f"<script>{_plotly_source()}</script>", 1)


def index_html(lang: str, lecture: bool) -> str:
    """The folder's first page: the lessons in order, each with its line from the landing page."""
    items = "".join(f'<li><a href="{n}.html">{html.escape(t(f"page.{n}", lang))}</a>'
                    f'<p>{inline(t(f"home.line.{n}", lang))}</p></li>' for n in (item.name for item in LESSONS)
                    if n in RECIPES)
    return f"""<!doctype html>
<html lang="{'zh-CN' if lang == 'zh' else 'en'}"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(t("app.name", lang))}</title>
<style>{(WEB / "offline.css").read_text(encoding="utf-8")}</style>
</head><body class="{'lecture' if lecture else ''}">
<main>
<h1>{html.escape(t("app.name", lang))}</h1>
<p class="intro">{inline(t("home.intro", lang))}</p>
<ol class="lessons">{items}</ol>
</main>
<footer>{html.escape(t("off.index_footer", lang))}</footer>
</body></html>
"""


def export_interactive(out: Path, lang: str = "en", lecture: bool = False, lessons: tuple[str, ...] | None = None,
                       seed: int = 0) -> dict:
    """Write the offline lessons into ``out``: ``index.html``, one HTML file per lesson and ``plotly.min.js``
    (inlined instead when one lesson is asked for).

    Parameters
    ----------
    out : pathlib.Path
    lang : {"en", "zh"}
    lecture : bool
    lessons : tuple of str, optional
        The lessons to write (default: every lesson with a recipe, ``RECIPES``).
    seed : int

    Returns
    -------
    dict
        ``files`` (file name -> bytes written), ``lesson_bytes`` (lesson -> bytes of its file without plotly.js)
        and ``seconds`` (lesson -> seconds to compute and write).

    Examples
    --------
    >>> report = export_interactive(Path("lesson"), lessons=("scaling",))      # doctest: +SKIP
    >>> sorted(report["files"])                                                  # doctest: +SKIP
    ['scaling.html']
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, not {lang!r}.")
    names = tuple(lessons or RECIPES)
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        raise ValueError(f"no offline lesson {unknown[0]!r}: pick from {', '.join(RECIPES)}.")
    out.mkdir(parents=True, exist_ok=True)
    single = len(names) == 1
    report: dict[str, dict] = {"files": {}, "lesson_bytes": {}, "seconds": {}}
    inlined = len(_plotly_source().encode()) if single else 0
    for name in names:
        start = time.perf_counter()
        text = lesson_html(name, lang, lecture, "inline" if single else "plotly.min.js", seed)
        (out / f"{name}.html").write_text(text, encoding="utf-8")
        report["files"][f"{name}.html"] = len(text.encode())
        report["lesson_bytes"][name] = len(text.encode()) - inlined
        report["seconds"][name] = time.perf_counter() - start
    if not single:
        (out / "index.html").write_text(index_html(lang, lecture), encoding="utf-8")
        (out / "plotly.min.js").write_text(_plotly_source(), encoding="utf-8")
        for extra in ("index.html", "plotly.min.js"):
            report["files"][extra] = (out / extra).stat().st_size
    return report


def check_size(report: Mapping) -> list[str]:
    """The lessons whose file is over ``MAX_LESSON_BYTES`` without plotly.js (``export_interactive``'s report).

    >>> check_size({"lesson_bytes": {"scaling": 62_000, "masking": 4 * 2**20}})
    ['masking']
    """
    return [name for name, size in report["lesson_bytes"].items() if size > MAX_LESSON_BYTES]
