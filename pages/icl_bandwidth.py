"""Attention learns its bandwidth: softmax attention trained in context finds the Nadaraya-Watson window."""

import streamlit as st

from explorer.lessons import icl_bandwidth as L
from explorer.ui.cache import spec_data
from explorer.ui.controls import lesson_controls
from explorer.ui.figure import show_spec
from explorer.ui.layout import controls_and_figure, explanation
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import lecture_mode, tr

C = lesson_controls(L)
MODEL = (r"\hat f(x) = \sum_{i=1}^{n} y_i\,\operatorname{softmax}_i\!\left(w\,x_i^\top x\right)"
         r" = \sum_{i=1}^{n} y_i\,\operatorname{softmax}_i\!\left(-\frac{\lVert x - x_i\rVert^2}{2h^2}\right),"
         r"\qquad h = \frac{1}{\sqrt w},\quad \lVert x\rVert = \lVert x_i\rVert = 1")

with lesson_page(C, question="ib.question"):
    if not lecture_mode():
        st.markdown(tr("ib.setting"))
        st.latex(MODEL)
    (c1, c2, c3, c4), main = controls_and_figure(4)
    lip, noise, n, seed = C.L.draw(c1), C.NOISE.draw(c2), C.N.draw(c3), C.SEED.draw(c4)
    specs = L.figures(C.values())
    todo = L.missing(noise, n, seed)
    if todo:                               # trained once per server: the next viewer of this setting waits for none
        bar = st.progress(0.0)
        for i, point in enumerate(todo):
            bar.progress(i / len(todo), text=tr("ib.training", l=point, i=i + 1, of=len(todo)))
            L.grid_point(point, noise, n, seed)
        bar.empty()
    sweep = spec_data(specs["learned_window"])
    step = L.next_step(sweep, lip)
    trends = [tr(f"ib.trend_{s}") for s in L.TRENDS]
    with main:
        revealed = prediction("ib.next", tr("ib.predict_q", a=step["from_l"], b=step["to_l"]), trends,
                              step["answer"], tr(L.why_sentence(step, noise), a=step["from_l"], b=step["to_l"],
                                                 before=step["before"], after=step["after"]))
        show_spec(specs["learned_window"], sweep, main=True,
                  answer=tr("fig.answer_is", answer=trends[step["answer"]]) if revealed.shown else None)
    s = L.summary(sweep)
    st.markdown(tr(L.window_sentence(sweep), factor=s["factor"], h=sweep["window"][0], lo=L.LIPSCHITZ[0],
                   hi=L.LIPSCHITZ[-1]) + tr("punct.space") +
                tr("ib.oracle_near" if s["near"] else "ib.oracle_far", lo=s["ratio_lo"], hi=s["ratio_hi"],
                   pct=L.NEAR - 1) + tr("punct.space") +
                tr("ib.loo_text", lo=s["loo_ratio_lo"], hi=s["loo_ratio_hi"]))
    if lecture_mode():
        st.latex(MODEL)

    st.subheader(tr("ib.error_header"))
    left, right = st.columns(2)
    with left:
        show_spec(specs["icl_error"], sweep)
    with right:
        show_spec(specs["icl_example"])
    st.markdown(tr("ib.linear_always" if s["linear_always_worse"] else
                   "ib.linear_from" if s["linear_worse_from"] else "ib.linear_never", l=s["linear_worse_from"]))

    st.subheader(tr("ib.direction_header"))
    if not lecture_mode():
        st.markdown(tr("ib.direction_setting"))
    with st.spinner(tr("spin.icl_direction")):
        direction = spec_data(specs["direction_matrix"])
    show_spec(specs["direction_matrix"], direction)
    a = L.direction_summary(direction)
    st.markdown(tr("ib.direction_aligned" if a["aligned"] else "ib.direction_not", alignment=a["alignment"],
                   isotropic=a["isotropic"], level=L.ALIGNED) + tr("punct.space") +
                tr("ib.direction_better" if a["better"] else "ib.direction_worse", error=a["error"],
                   iso=a["isotropic_error"]))

    with explanation("ui.what_to_notice"):
        st.markdown(tr("ib.notice"))
    with explanation("ui.formula"):
        st.markdown(tr("ib.formula_text"))
        st.latex(r"x_i^\top x = 1 - \tfrac12\lVert x - x_i\rVert^2 \;\Rightarrow\;"
                 r"e^{w\,x_i^\top x} = e^{w}\,e^{-w\lVert x - x_i\rVert^2/2}")
