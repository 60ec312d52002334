"""The pages in lesson order (``explorer.lessons.LESSONS``): the router's navigation, the landing page's list
and Previous / Next.

Nothing here imports torch: the router and the landing page draw before the compute stack is loaded.
"""

from __future__ import annotations

import streamlit as st

from ..lessons import LESSONS, Lesson
from ..outside import Outside
from .internals import requested_page
from .state import tr

HOME = Lesson("home", "", ":material/home:")
_ROUTED = "ui.routed"         # set by the router: page links only resolve when the app's navigation exists


def navigation_pages() -> dict[str, list]:
    """``st.navigation``'s argument: the landing page on its own at the top, then the lessons by group."""
    st.session_state[_ROUTED] = True
    pages: dict[str, list] = {"": [st.Page(HOME.script, title=tr("page.home"), icon=HOME.icon, default=True)]}
    for lesson in LESSONS:
        pages.setdefault(tr(f"nav.{lesson.group}"), []).append(
            st.Page(lesson.script, title=tr(f"page.{lesson.name}"), icon=lesson.icon))
    return pages


def requested_path() -> str:
    """The page path the browser asked for on this run (empty for the app's root and for a click in the app)."""
    return requested_page()


def note_unknown_path(asked: str, page) -> None:
    """Remember a path that names no page (Streamlit then runs the landing page): the landing page says so, in the
    viewer's language."""
    if asked and asked.strip("/") != page.url_path:
        st.session_state["ui.unknown_path"] = Outside(asked.strip("/"))       # said as text, cut


def neighbours(name: str) -> tuple[Lesson | None, Lesson | None]:
    """The lessons before and after ``name`` (the landing page comes before the first)."""
    order = (HOME, *LESSONS)
    i = [lesson.name for lesson in order].index(name)
    return (order[i - 1] if i > 0 else None), (order[i + 1] if i + 1 < len(order) else None)


def page_link(lesson: Lesson, label: str, where=None, **kwargs) -> None:
    """A link to another page; drawn only under the router (a page run on its own has no pages to link to)."""
    if st.session_state.get(_ROUTED):
        (where or st).page_link(lesson.script, label=label, **{"icon": lesson.icon, **kwargs})


def previous_next(name: str, where=None, compact: bool = False) -> None:
    """"Previous" and "Next" links in lesson order, with the page they lead to, and the lesson's number;
    ``compact`` (lecture mode's title row): the page names and arrows only."""
    before, after = neighbours(name)
    position = [lesson.name for lesson in LESSONS].index(name) + 1 if name != HOME.name else 0
    label = (lambda key, lesson: tr(f"page.{lesson.name}")) if compact else \
        (lambda key, lesson: tr(key, page=tr(f"page.{lesson.name}")))
    with (where or st).container(horizontal=True, horizontal_alignment="distribute", vertical_alignment="center"):
        if before is not None:
            page_link(before, label("ui.previous", before), icon=":material/arrow_back:")
        if position:
            st.caption(tr("ui.position_short" if compact else "ui.position", i=position, n=len(LESSONS)),
                       width="content")
        if after is not None:
            page_link(after, label("ui.next", after), icon=":material/arrow_forward:", icon_position="right")
