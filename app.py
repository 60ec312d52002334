"""Attention Explorer: the router. Page config once, navigation over pages/, shared sidebar.

It imports nothing of the compute stack (torch): the landing page paints before torch has loaded, and each
lesson page loads what it needs. Once per server it starts the warm-up thread (``explorer.ui.startup``), which
computes every lesson's default figures in the background for the first student to open each page.

Imported rather than run (``streamlit run app.py`` finds ``app`` below and serves it through Streamlit's ASGI
entry), it is the server: the dashboard, the students' vote pages beside it (``explorer.phone``: plain routes, no
Streamlit session per phone), and on every HTTP response the headers of ``explorer.web`` (a
Content-Security-Policy, who may frame the app, ``nosniff``, a referrer policy), on every connection the limits of
``explorer.connections`` (a request's headers and body within 10 s; a forwarded address only from a named balancer).
"""

from importlib.resources import files

import streamlit as st
from starlette.middleware import Middleware

from explorer import connections
from explorer.i18n import LANGUAGES
from explorer.phone import ROUTES as PHONE_ROUTES
from explorer.ui.internals import front_end_inline_scripts
from explorer.ui.layout import page_style
from explorer.ui.memory import BUDGET_ERROR, return_large_blocks
from explorer.ui.navigation import navigation_pages, note_unknown_path, requested_path
from explorer.ui.startup import warm_up_once
from explorer.ui.state import keep_shared_state, lecture_changed, lecture_mode, tr
from explorer.ui.waiting import badge
from explorer.web import NestedPaths, SecurityHeaders, security_headers

ICON = str(files("explorer") / "assets" / "icon.png")        # a causal attention map, 4 x 4


if __name__ != "__main__":         # imported by `streamlit run`: the server, with the headers on every response
    try:
        HEADERS = security_headers(front_end_inline_scripts())
    except ValueError as err:      # a mistyped EXPLORER_FRAME_ANCESTORS: say so and serve nothing
        raise SystemExit(f"error: {err}") from None
    if BUDGET_ERROR:               # a mistyped EXPLORER_CACHE_MB: the same
        raise SystemExit(f"error: {BUDGET_ERROR}")
    connections.install()          # a request arrives within 10 s; forwarded addresses only from named balancers
    return_large_blocks()          # freed arrays go back to the system (the caches' byte budget holds in RSS)
    app = st.App(__file__, routes=PHONE_ROUTES, middleware=[Middleware(SecurityHeaders, headers=HEADERS),
                                                                  Middleware(NestedPaths)])
else:                              # a session's run of the script
    keep_shared_state()
    # the icon is a file served by this server: a Material icon here makes every browser fetch it from fonts.gstatic.com
    st.set_page_config(page_title=tr("app.name"), page_icon=ICON, layout="wide",
                       initial_sidebar_state="collapsed" if lecture_mode() else "auto")
    page_style()
    asked = requested_path()
    nav = st.navigation(navigation_pages())
    note_unknown_path(asked, nav)
    with st.sidebar:
        st.selectbox(tr("ui.language"), list(LANGUAGES), key="ui.lang", format_func=LANGUAGES.get)
        st.toggle(tr("ui.lecture"), key="ui.lecture", help=tr("ui.lecture_help"), on_change=lecture_changed)
        st.toggle(tr("ui.predict"), key="ui.predict", help=tr("ui.predict_help"))
        badge()                        # a change the server has not started on within 0.4 s says so, on every page
    nav.run()
    warm_up_once()                     # after the page: the first viewer's page is sent before the warm-up starts
