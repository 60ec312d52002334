"""Attention Explorer: the router. Page config once, navigation over pages/, shared sidebar."""

import streamlit as st

from explorer.device import describe_device
from explorer.i18n import LANGUAGES
from explorer.ui.state import keep_shared_state, tr

keep_shared_state()
st.set_page_config(page_title=tr("app.name"), page_icon=":material/visibility:", layout="wide")

PAGES = {
    tr("nav.kernels"): [
        st.Page("pages/kernel_regression.py", title=tr("page.kernel_regression"), icon=":material/show_chart:",
                default=True),
        st.Page("pages/attention_heatmap.py", title=tr("page.attention_heatmap"), icon=":material/grid_on:"),
    ],
    tr("nav.attention"): [
        st.Page("pages/softmax_kernel.py", title=tr("page.softmax_kernel"), icon=":material/functions:"),
        st.Page("pages/masking.py", title=tr("page.masking"), icon=":material/visibility_off:"),
        st.Page("pages/scaling.py", title=tr("page.scaling"), icon=":material/straighten:"),
        st.Page("pages/efficient_attention.py", title=tr("page.efficient_attention"), icon=":material/speed:"),
    ],
    tr("nav.transformers"): [
        st.Page("pages/live_training.py", title=tr("page.live_training"), icon=":material/model_training:"),
    ],
}

nav = st.navigation(PAGES)
with st.sidebar:
    st.selectbox(tr("ui.language"), list(LANGUAGES), key="ui.lang", format_func=LANGUAGES.get)
    st.toggle(tr("ui.lecture"), key="ui.lecture", help=tr("ui.lecture_help"))
    try:
        st.caption(tr("ui.device", device=describe_device()))
    except ValueError as err:
        st.error(str(err))
nav.run()
