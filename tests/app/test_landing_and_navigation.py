"""The landing page (drawn without torch), the navigation's names, and Previous / Next in lesson order."""

import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from explorer.i18n import t
from explorer.ui.navigation import LESSONS
from tests.app.helpers import ROOT, assert_clean

NAMES = [lesson.name for lesson in LESSONS]


def test_the_landing_page_draws_without_importing_torch():
    """A fresh interpreter runs the router and the landing page: torch, pandas and the compute modules stay unloaded
    (pandas comes with the first page that draws a figure, ``explorer.ui.figure``: plotly must never find it
    half-imported by another thread)."""
    code = ("import sys; from streamlit.testing.v1 import AppTest; "
            f"at = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=120).run(); "
            "assert not at.exception, at.exception; assert at.title[0].value == 'Attention Explorer'; "
            "loaded = sorted(m for m in sys.modules if m in ('torch', 'pandas') "
            "or m.startswith(('explorer.regression', 'explorer.kernels', 'explorer.figures'))); print(loaded)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_landing_page_lists_every_lesson_in_order_with_a_thumbnail(lang):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    assert_clean(at)
    links = [p.proto.label for p in at.get("page_link")]
    assert links[0] == t("home.start_button", lang)
    assert links[1:] == [f"{i}. {t(f'page.{name}', lang)}" for i, name in enumerate(NAMES, 1)]
    assert len(at.get("image")) == len(LESSONS)
    captions = [c.value for c in at.caption]
    assert all(t(f"home.line.{name}", lang) in captions for name in NAMES)


def test_every_lesson_page_has_a_committed_thumbnail_of_the_right_size_light_and_dark():
    """Each lesson's thumbnail, light and dark (a dark page showed white cards): a PNG of the right size whose corner
    pixel (the figure's background) is light in one, dark in the other."""
    import io

    from PIL import Image

    from explorer.export import THUMBNAIL_SIZE
    from explorer.lessons import lesson

    assert all(lesson(name).module.MAIN in lesson(name).module.FIGURES for name in NAMES)
    for name in NAMES:
        for suffix, light in (("", True), (".dark", False)):
            png = (ROOT / "explorer" / "assets" / "thumbnails" / f"{name}{suffix}.png").read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
            image = Image.open(io.BytesIO(png)).convert("L")
            assert image.size == THUMBNAIL_SIZE
            assert (image.getpixel((2, 2)) > 200) == light, (name, suffix, image.getpixel((2, 2)))


def test_the_landing_page_shows_the_thumbnails_of_the_viewers_theme():
    def shown(theme: str) -> set[str]:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.context["theme"] = theme
        return {i.proto.imgs[0].url for i in at.run().get("image")}

    light, dark = shown("light"), shown("dark")
    assert len(light) == len(dark) == len(LESSONS) and not light & dark


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_navigation_group_is_named_like_a_page(lang):
    groups = {t(f"nav.{lesson.group}", lang) for lesson in LESSONS}
    titles = {t(f"page.{name}", lang) for name in [*NAMES, "home"]}
    assert not groups & titles


@pytest.mark.parametrize("lecture", [False, True])
def test_previous_and_next_walk_the_lessons_in_order(lecture):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    if lecture:
        at.query_params["lecture"] = "1"
    at.run()
    order = ["home", *NAMES]
    for i, name in enumerate(NAMES, 1):
        at.switch_page(f"pages/{name}.py").run()
        assert_clean(at)
        links = [p.proto.label for p in at.get("page_link")]
        label = (lambda key, page: t(f"page.{page}", "en")) if lecture else \
            (lambda key, page: t(key, "en", page=t(f"page.{page}", "en")))
        expected = [label("ui.previous", order[i - 1])]
        if i < len(order) - 1:
            expected.append(label("ui.next", order[i + 1]))
        assert links == expected, name
        position = t("ui.position_short" if lecture else "ui.position", "en", i=i, n=len(NAMES))
        assert position in [c.value for c in at.caption]
