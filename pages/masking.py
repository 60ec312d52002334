"""Masking: mask the logits before the softmax, and see what the common mistakes do instead."""

import numpy as np
import pandas as pd
import streamlit as st

from explorer.attention import MASK_MODES
from explorer.figures.common import lines
from explorer.figures.masking import gradient_heatmap, leak_bars, masked_pair
from explorer.masking import MASK_TYPES, renorm_underflow
from explorer.ui import cache
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state, lang, say, tr
from explorer.ui.urlstate import Param, publish, restore

TOL = 1e-9
WRONG_MODES = [m for m in MASK_MODES if m != "pre"]
# "pre" is drawn last, thick and solid, so that the modes equal to it (dashed, dotted) never hide it
DRAW_ORDER = [*WRONG_MODES, "pre"]
DASHES = {"post": "solid", "post_renorm": "dash", "multiply_logits": "dot", "pre": "solid"}
COLOURS = {"pre": "#2ca02c", "post": "#d62728", "post_renorm": "#1f77b4", "multiply_logits": "#ff7f0e"}

keep_shared_state()
PARAMS = [Param("mask.length", "int", lo=2, hi=32), Param("mask.d", "int", lo=1, hi=256),
          Param("mask.kind", "str", MASK_TYPES), Param("mask.valid", "int", lo=0, hi=32),
          Param("mask.seed", "int", lo=0, hi=9999), Param("mask.wrong", "str", tuple(WRONG_MODES))]
restore(PARAMS, "masking")
st.title(tr("page.masking"))
st.markdown(tr("mk.question"))

init_state({"mask.length": 8, "mask.d": 16, "mask.kind": "causal", "mask.valid": 6, "mask.seed": 0,
            "mask.wrong": "post"})

c1, c2, c3 = st.columns(3)
with c1:
    st.slider(tr("mk.length"), 2, 32, key="mask.length", help=tr("mk.length_help"))
    st.slider(tr("mk.d"), 1, 256, key="mask.d", help=tr("mk.d_help"))
with c2:
    st.selectbox(tr("mk.mask"), MASK_TYPES, key="mask.kind", format_func=lambda k: tr(f"masktype.{k}"))
    length = st.session_state["mask.length"]
    st.session_state["mask.valid"] = min(st.session_state["mask.valid"], length)
    st.slider(tr("mk.valid"), 0, length, key="mask.valid", disabled=st.session_state["mask.kind"] == "causal",
              help=tr("mk.valid_help", n=length))
with c3:
    st.selectbox(tr("mk.wrong"), WRONG_MODES, key="mask.wrong", format_func=lambda m: f"{m}: {tr('mode.' + m)}")
    st.number_input(tr("ui.seed"), 0, 9999, key="mask.seed", step=1, help=tr("ui.seed_help"))

kind, wrong = st.session_state["mask.kind"], st.session_state["mask.wrong"]
valid = st.session_state["mask.valid"] if kind != "causal" else length
try:
    ex = cache.masking_example(length, st.session_state["mask.d"], kind, valid, st.session_state["mask.seed"])
except ValueError as err:
    st.error(say(err))
    st.stop()
mask, report = ex["mask"], ex["report"].set_index("mode")

show(masked_pair(ex["pre.weights"], ex[f"{wrong}.weights"], mask, (tr("mk.pre_correct"), wrong), lang=lang()),
     key="pair")


def verdict(mode: str, r: pd.Series) -> str:
    parts = [tr("mk.v_sdpa") if r.max_diff_vs_sdpa < TOL else tr("mk.v_sdpa_diff", diff=f"{r.max_diff_vs_sdpa:.2f}")]
    if r.row_sum_error > TOL:
        parts.append(tr("mk.v_rows", mean=f"{r.mean_row_sum:.2f}", low=f"{r.min_row_sum:.2f}",
                        correct=f"{r.correct_row_sum:.2f}"))
    if r.mass_on_masked > TOL:
        parts.append(tr("mk.v_mass", mass=f"{r.mass_on_masked:.2f}"))
    channels = [(c, r[f"leak_{c}"]) for c in ("key", "value") if r[f"leak_{c}"] > TOL]
    parts += [tr("mk.v_leak", channel=tr(f"mk.channel_{c}"), leak=f"{v:.2g}") for c, v in channels] or \
        [tr("mk.v_no_leak")]
    if r.grad_on_masked > TOL:
        parts.append(tr("mk.v_grad", g=f"{r.grad_on_masked:.2g}"))
    return f"- **{mode}**: " + "; ".join(parts) + "."


st.subheader(tr("mk.verdicts"))
st.markdown("\n".join(verdict(m, report.loc[m]) for m in MASK_MODES))

st.subheader(tr("mk.rows_header"))
pos = np.arange(length)
left, right = st.columns(2)
with left:
    show(lines(pos, {m: ex[f"{m}.row_sum"] for m in DRAW_ORDER}, tr("mk.rows_title"), tr("fig.query_pos"),
               tr("mk.rows_y"), mode="lines+markers", height=360, dashes=DASHES, colors=COLOURS), key="row_sums")
with right:
    show(lines(pos, {m: ex[f"{m}.output_norm"] for m in DRAW_ORDER}, tr("mk.norm_title"), tr("fig.query_pos"),
               tr("mk.norm_y"), mode="lines+markers", height=360, dashes=DASHES, colors=COLOURS), key="output_norms")
st.markdown(tr("mk.rows_text"))

st.subheader(tr("mk.leak_header"))
show(leak_bars(list(MASK_MODES), {c: [report.loc[m, f"leak_{c}"] for m in MASK_MODES] for c in ("key", "value")},
              TOL, lang=lang()), key="leak")
st.caption(tr("mk.leak_caption"))

st.subheader(tr("mk.grad_header"))
grads = ex["grads"]
st.markdown(tr("mk.grad_text"))
left, right = st.columns(2)
with left:
    show(gradient_heatmap(grads[wrong], mask, tr("mk.grad_title", mode=wrong), lang=lang()), key="grad_heatmap")
with right:
    table = pd.DataFrame({
        tr("mk.grad_masked"): [report.loc[m, "grad_on_masked"] for m in MASK_MODES],
        tr("mk.grad_diff"): [report.loc[m, "grad_diff_vs_pre"] for m in MASK_MODES],
    }, index=list(MASK_MODES))
    st.dataframe(table.style.format("{:.2e}"), width="stretch")
demo = renorm_underflow()
st.markdown(tr("mk.grad_notes", pre=f"{demo['pre']:.0f}", renorm=f"{demo['post_renorm']:.0f}"))

with explanation("ui.what_to_notice"):
    st.markdown(tr("mk.notice"))
    st.latex(r"\alpha_{ij} = \frac{\exp(s_{ij})\,[m_{ij}]}{\sum_{l} \exp(s_{il})\,[m_{il}]},\qquad "
             r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt d},\quad s_{ij} \leftarrow -\infty \text{ where } m_{ij} = 0")

publish(PARAMS)
