"""The landing page: what the app teaches, the lessons in order with a thumbnail each, and where to start.

It imports nothing of the compute stack, so it paints while torch has not been loaded yet.
"""

from importlib.resources import files

import streamlit as st

from explorer.ui.links import publish, restore
from explorer.ui.navigation import LESSONS, page_link
from explorer.ui.state import keep_shared_state, tr

THUMBNAILS = files("explorer") / "assets" / "thumbnails"

keep_shared_state()
st.title(tr("app.name"))
unknown = st.session_state.pop("ui.unknown_path", None)
if unknown:                               # a link to a page that does not exist
    st.warning(tr("home.unknown_path", path=unknown))
restore([], "home")                       # this page has no settings: any other key in its link is said to be unused
st.markdown(tr("home.intro"))
st.subheader(tr("home.start_header"))
st.markdown(tr("home.start"))
page_link(LESSONS[0], tr("home.start_button"), icon=":material/arrow_forward:", icon_position="right")

st.subheader(tr("home.lessons"))
dark = st.context.theme.type == "dark"    # the thumbnails in the viewer's theme (explorer-export --thumbnails)
for row in range(0, len(LESSONS), 3):
    for column, lesson in zip(st.columns(3, gap="medium"), LESSONS[row:row + 3], strict=False):
        with column.container(border=True, key=f"lesson-card-{lesson.name}"):   # the whole card is the link
            thumbnail = THUMBNAILS / f"{lesson.name}{'.dark' if dark else ''}.png"
            if thumbnail.is_file():
                st.image(str(thumbnail), width="stretch", alt=tr("home.thumbnail_alt", page=tr(f"page.{lesson.name}")))
            page_link(lesson, f"{LESSONS.index(lesson) + 1}. {tr(f'page.{lesson.name}')}")
            st.caption(tr(f"home.line.{lesson.name}"))
publish([])                               # lecture mode, predict first and the language stay in the URL
