"""Attention heatmap: the NW weight matrix, one query's weights, entropy, and a bandwidth sweep."""

import math

import numpy as np
import streamlit as st

from explorer.figures.attention import query_row_figure
from explorer.figures.common import MAX_DISPLAY_CELLS, downsample, heatmap, heatmap_grid, lines
from explorer.ui import cache
from explorer.ui.controls import BANDWIDTHS, SHARED_PARAMS, dataset_controls, kernel_bandwidth_controls
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state, lang, say, tr
from explorer.ui.urlstate import Param, publish, restore

keep_shared_state()
PARAMS = [*SHARED_PARAMS, Param("heat.n_queries", "int", lo=10, hi=1000), Param("heat.query_pos", "float", lo=0, hi=1),
          Param("heat.sweep", "floats", tuple(BANDWIDTHS))]
restore(PARAMS, "attention_heatmap")
st.title(tr("page.attention_heatmap"))
st.markdown(tr("ah.question"))

ds = dataset_controls()
init_state({"heat.n_queries": 100, "heat.query_pos": 0.5, "heat.sweep": [0.1, 0.2, 0.5, 1.0]})


left, right = st.columns([1, 2])
with left:
    kernel_bandwidth_controls(ds)
    st.slider(tr("ah.n_queries"), 10, 1000, key="heat.n_queries", step=10, help=tr("ah.n_queries_help"))
kernel, h = st.session_state["nw.kernel"], st.session_state["nw.bandwidth"]

try:
    data = cache.dataset(*ds)
    res = cache.nw_weight_matrix(*ds, kernel, h, st.session_state["heat.n_queries"])
except ValueError as err:
    st.error(say(err))
    st.stop()

w, xq, xk = res["weights"], res["x_query"], data["x"]
z, rows, cols, factor = downsample(w, xq, xk)
with right:
    title = tr("ah.heat_title", kernel=tr(f"kernel.{kernel}"), h=f"{h:g}")
    show(heatmap(z, np.round(cols, 3), np.round(rows, 3), title,
                 tr("ah.key_axis"), tr("ah.query_axis"), height=520, colorbar_title=tr("fig.weight")), key="heatmap")
    note = tr("ah.size", m=w.shape[0], n=w.shape[1], cells=f"{w.size:,}")
    if factor > 1:
        note += tr("ah.downsampled", factor=factor, limit=f"{MAX_DISPLAY_CELLS:,}")
    st.caption(note)

st.subheader(tr("ah.one_query"))
lo, hi = float(xq[0]), float(xq[-1])
st.slider(tr("ah.query_pos"), 0.0, 1.0, key="heat.query_pos", step=0.01)
qi = round(st.session_state["heat.query_pos"] * (len(xq) - 1))
c1, c2 = st.columns(2)
with c1:
    show(query_row_figure(data["x"], data["y"], w[qi], float(xq[qi]), float(res["estimate"][qi]),
                          data["x_grid"], data["true"], lang=lang()), key="query_row")
with c2:
    log_n = math.log(len(xk))
    show(lines(xq, {tr("ah.entropy_series"): res["entropy"]}, tr("ah.entropy_title"), tr("ah.query_x"),
               tr("fig.entropy_nats"), hlines=[(log_n, tr("ah.log_n", value=f"{log_n:.2f}")), (0.0, tr("ah.one_hot"))],
               vlines=[(float(xq[qi]), tr("ah.picked"))], height=380), key="entropy")
row = w[qi]
unsupported = int(np.isnan(res["entropy"]).sum())
if unsupported:
    st.caption(tr("ah.no_support_caption", n=unsupported, m=len(xq), kernel=tr(f"kernel.{kernel}")))
if row.sum() > 0:
    st.markdown(tr("ah.row_text", x=f"{xq[qi]:.3f}", wmax=f"{row.max():.3f}", n_big=int((row > 0.01).sum()),
                    n=len(row), h=f"{res['entropy'][qi]:.2f}", log_n=f"{math.log(len(row)):.2f}"))
else:
    st.markdown(tr("ah.row_none_text", x=f"{xq[qi]:.3f}", kernel=tr(f"kernel.{kernel}")))

st.subheader(tr("ah.sweep"))
st.multiselect(tr("ah.sweep_pick"), BANDWIDTHS, key="heat.sweep", format_func=lambda v: f"{v:g}",
               placeholder=tr("ui.choose"), max_selections=6)
sweep = sorted(st.session_state["heat.sweep"]) or [h]
mats, titles = [], []
for b in sweep:
    wb = cache.nw_weight_matrix(*ds, kernel, b, st.session_state["heat.n_queries"])["weights"]
    zb, rb, cb, _ = downsample(wb, xq, xk, MAX_DISPLAY_CELLS // len(sweep))
    mats.append(zb)
    titles.append(f"h = {b:g}")
show(heatmap_grid(mats, titles, np.round(cb, 2), np.round(rb, 2), tr("ah.sweep_title", kernel=tr(f"kernel.{kernel}")),
                  tr("ah.key_short"), tr("ah.query_short"), cols=min(4, len(mats)), colorbar_title=tr("fig.weight")),
     key="sweep")

with explanation("ui.what_to_notice"):
    ends = cache.heatmap_regimes(*ds, kernel, st.session_state["heat.n_queries"])
    st.markdown(tr("ah.notice", kernel=tr(f"kernel.{kernel}"), small=f"{ends['small_h']:g}",
                   large=f"{ends['large_h']:g}", ent_small=f"{ends['entropy_small']:.2f}",
                   ent_large=f"{ends['entropy_large']:.2f}", log_n=f"{math.log(len(data['x'])):.2f}",
                   inv_n=f"{1 / len(data['x']):.2g}", ratio=f"{ends['row_ratio_large']:.2f}"))
    st.latex(r"\alpha(x, x_i) = \frac{K\left(\frac{x - x_i}{h}\right)}{\sum_j K\left(\frac{x - x_j}{h}\right)}"
             r",\qquad H(x) = -\sum_i \alpha(x, x_i)\,\log \alpha(x, x_i) \in [0, \log N]")

publish(PARAMS)
