"""Attention heatmap: the NW weight matrix, one query's weights, entropy, and a bandwidth sweep."""

import math

import numpy as np
import streamlit as st

from explorer.figures.attention import query_row_figure
from explorer.figures.common import MAX_DISPLAY_CELLS, downsample, heatmap, heatmap_grid, lines
from explorer.kernels import KERNELS
from explorer.ui import cache
from explorer.ui.controls import BANDWIDTHS, SHARED_PARAMS, dataset_controls, kernel_bandwidth_controls
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state
from explorer.ui.urlstate import Param, publish, restore

keep_shared_state()
PARAMS = [*SHARED_PARAMS, Param("heat.n_queries", "int", lo=10, hi=1000), Param("heat.query_pos", "float", lo=0, hi=1),
          Param("heat.sweep", "floats", tuple(BANDWIDTHS))]
restore(PARAMS, "attention_heatmap")
st.title("Attention heatmap")
st.markdown(
    "**The question.** Kernel regression is attention with queries = the x where we predict, keys = "
    "the training inputs, values = the training targets. What does the whole attention matrix look "
    "like, and how does the bandwidth shape it?")

ds = dataset_controls()
init_state({"heat.n_queries": 100, "heat.query_pos": 0.5, "heat.sweep": [0.1, 0.2, 0.5, 1.0]})


left, right = st.columns([1, 2])
with left:
    kernel_bandwidth_controls()
    st.slider("Number of queries M", 10, 1000, key="heat.n_queries", step=10,
              help="Evenly spaced query points over the data range (10 to 1000).")
kernel, h = st.session_state["nw.kernel"], st.session_state["nw.bandwidth"]

try:
    data = cache.dataset(*ds)
    res = cache.nw_weight_matrix(*ds, kernel, h, st.session_state["heat.n_queries"])
except ValueError as err:
    st.error(str(err))
    st.stop()

w, xq, xk = res["weights"], res["x_query"], data["x"]
z, rows, cols, factor = downsample(w, xq, xk)
with right:
    show(heatmap(z, np.round(cols, 3), np.round(rows, 3),
                            f"NW weights α(x, xᵢ): {KERNELS[kernel].display}, h = {h:g}",
                            "key: training input xᵢ (sorted)", "query x (sorted)", height=520),
                    key="heatmap")
    note = f"{w.shape[0]} queries × {w.shape[1]} keys = {w.size:,} weights."
    if factor > 1:
        note += (f" The picture is block-averaged {factor}× along each axis to stay under "
                 f"{MAX_DISPLAY_CELLS:,} cells; every number on this page uses the full matrix.")
    st.caption(note)

st.subheader("One query")
lo, hi = float(xq[0]), float(xq[-1])
st.slider("Query position (fraction of the x range, 0 = left end, 1 = right end)", 0.0, 1.0,
          key="heat.query_pos", step=0.01)
qi = round(st.session_state["heat.query_pos"] * (len(xq) - 1))
c1, c2 = st.columns(2)
with c1:
    show(query_row_figure(data["x"], data["y"], w[qi], float(xq[qi]), float(res["estimate"][qi]),
                                     data["x_grid"], data["true"]), key="query_row")
with c2:
    log_n = math.log(len(xk))
    show(lines(xq, {"row entropy H(x)": res["entropy"]}, "Entropy of each query's weights",
                          "query x (input units)", "entropy (nats)",
                          hlines=[(log_n, f"log N = {log_n:.2f} (uniform)"), (0.0, "0 (one-hot)")],
                          vlines=[(float(xq[qi]), "picked query")], height=380), key="entropy")
row = w[qi]
st.markdown(
    f"Query x = {xq[qi]:.3f}: the largest weight is **{row.max():.3f}**, "
    f"{int((row > 0.01).sum())} of {len(row)} training points get more than 1 %, entropy "
    f"**{res['entropy'][qi]:.2f}** nats (uniform would be {math.log(len(row)):.2f}).")

st.subheader("Bandwidth sweep")
st.multiselect("Bandwidths to compare", BANDWIDTHS, key="heat.sweep", format_func=lambda v: f"{v:g}",
               max_selections=6)
sweep = sorted(st.session_state["heat.sweep"]) or [h]
mats, titles = [], []
for b in sweep:
    wb = cache.nw_weight_matrix(*ds, kernel, b, st.session_state["heat.n_queries"])["weights"]
    zb, rb, cb, _ = downsample(wb, xq, xk, MAX_DISPLAY_CELLS // len(sweep))
    mats.append(zb)
    titles.append(f"h = {b:g}")
show(heatmap_grid(mats, titles, np.round(cb, 2), np.round(rb, 2),
                             f"{KERNELS[kernel].display} kernel: one colour scale for all panels",
                             "key xᵢ", "query x", cols=min(4, len(mats))), key="sweep")

with explanation("What to notice"):
    st.markdown(
        "- Each row is one query's attention: non-negative and summing to 1 (or all zero where a compact "
        "kernel finds no training point within h: that query has no estimate).\n"
        "- Keys and queries are both sorted, so a local kernel draws a **diagonal band**: each query "
        "attends to the training inputs near it. The band's width is the bandwidth.\n"
        "- Small h: a thin, bright band (near one-hot rows, entropy near 0, the fit follows the noise). "
        "Large h: a flat, dim matrix (near-uniform rows, entropy near log N, the fit flattens to the mean).\n"
        "- Entropy drops near the ends of the x range: a query there has neighbours on one side only, so "
        "fewer training points share its weight.")
    st.latex(r"\alpha(x, x_i) = \frac{K\left(\frac{x - x_i}{h}\right)}{\sum_j K\left(\frac{x - x_j}{h}\right)}"
             r",\qquad H(x) = -\sum_i \alpha(x, x_i)\,\log \alpha(x, x_i) \in [0, \log N]")

publish(PARAMS)
