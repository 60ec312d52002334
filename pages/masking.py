"""Masking: mask the logits before the softmax, and see what the common mistakes do instead."""

import pandas as pd
import streamlit as st

from explorer.attention import MASK_MODES
from explorer.lessons import masking as L
from explorer.ui.control import draw, stop_page, values
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation, write
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

with lesson_page(L, question="mk.question"):
    (c1, c2, c3), main = controls_and_figure(3)
    length = draw(L.LENGTH, c1)
    draw(L.D, c1)
    kind = draw(L.KIND, c2)
    draw(L.VALID, c2, hi=length, disabled=kind == "causal")
    wrong = draw(L.WRONG, c3)           # the short name in the box (as the legend has it), what it does under it
    c3.caption(tr(f"mode.{wrong}"))
    draw(L.SEED, c3)
    specs = L.figures(values(L))
    try:
        with main:
            ex = show_spec(specs["masking"], key="pair", main=True,      # the valid length, when a mask has one
                           follow=None if kind == "causal" else Follow(L.VALID, L.figures, values(L), hi=length))
    except ValueError as err:
        stop_page(say(err))

    st.subheader(tr("mk.rows_header"))          # the question, then the charts that answer it right under its verdict
    question = L.question(ex, kind)
    revealed = prediction(question)
    left, right = st.columns(2)
    with left:                          # once revealed, the answer at the post-softmax row that lost the most
        show_spec(specs["row_sums"], ex, answer=say(question.mark()) if revealed.shown else None)
    with right:
        show_spec(specs["output_norms"], ex)
    write(L.rows_text(ex))

    st.subheader(tr("mk.verdicts"))
    st.caption(tr("mk.sdpa"))
    write(L.verdicts(ex), join="\n")

    st.subheader(tr("mk.leak_header"))
    show_spec(specs["leak"], ex)
    write(L.leak_caption(ex))

    st.subheader(tr("mk.grad_header"))
    write(L.grad_text())
    left, right = st.columns(2)
    with left:
        show_spec(specs["grad_heatmap"], ex)
    with right:
        report = ex["report"].set_index("mode")
        columns = {tr("mk.grad_masked"): "grad_on_masked", tr("mk.grad_diff"): "grad_diff_vs_pre"}
        table = pd.DataFrame({name: [report.loc[m, col] for m in MASK_MODES] for name, col in columns.items()},
                             index=[tr(f"modename.{m}") for m in MASK_MODES])
        # formatted by the browser (a pandas Styler would cost the rerun 7 ms to render)
        st.dataframe(table, width="stretch",
                     column_config={name: st.column_config.NumberColumn(format="%.2e") for name in columns})
    write(L.grad_notes())

    with explanation("ui.what_to_notice"):
        write(L.notice())
        st.latex(r"\alpha_{ij} = \frac{\exp(s_{ij})\,[m_{ij}]}{\sum_{l} \exp(s_{il})\,[m_{il}]},\qquad "
                 r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt d},\quad s_{ij} \leftarrow -\infty"
                 r"\text{" + tr("mk.formula_where") + r"} m_{ij} = 0")
