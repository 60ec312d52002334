"""Attention Explorer: the router. Page config once, navigation over pages/, shared sidebar."""

import streamlit as st

from explorer.device import describe_device
from explorer.ui.state import keep_shared_state

st.set_page_config(page_title="Attention Explorer", page_icon=":material/visibility:", layout="wide")
keep_shared_state()

PAGES = {
    "Kernel regression": [
        st.Page("pages/kernel_regression.py", title="Kernel regression", icon=":material/show_chart:", default=True),
        st.Page("pages/attention_heatmap.py", title="Attention heatmap", icon=":material/grid_on:"),
    ],
    "Attention": [
        st.Page("pages/softmax_kernel.py", title="Softmax is a kernel", icon=":material/functions:"),
        st.Page("pages/masking.py", title="Masking", icon=":material/visibility_off:"),
        st.Page("pages/scaling.py", title="Scaling by √d", icon=":material/straighten:"),
    ],
    "Transformers": [
        st.Page("pages/live_training.py", title="Live training", icon=":material/model_training:"),
    ],
}

nav = st.navigation(PAGES)
with st.sidebar:
    st.toggle("Lecture mode", key="ui.lecture", help="Larger fonts, thicker lines and markers in every figure "
              "(exports too); explanations fold into expanders. Also ?lecture=1 in the URL.")
    try:
        st.caption(f"Compute device: **{describe_device()}**")
    except ValueError as err:
        st.error(str(err))
nav.run()
