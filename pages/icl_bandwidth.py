"""Attention learns its bandwidth: softmax attention trained in context finds the Nadaraya-Watson window."""

import streamlit as st

from explorer.lessons import icl_bandwidth as L
from explorer.ui.cache import spec_data
from explorer.ui.control import draw, values
from explorer.ui.figure import show_spec
from explorer.ui.layout import controls_and_figure, explanation, write
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import lecture_mode, say, tr

MODEL = (r"\hat f(x) = \sum_{i=1}^{n} y_i\,\operatorname{softmax}_i\!\left(w\,x_i^\top x\right)"
         r" = \sum_{i=1}^{n} y_i\,\operatorname{softmax}_i\!\left(-\frac{\lVert x - x_i\rVert^2}{2h^2}\right),"
         r"\qquad h = \frac{1}{\sqrt w},\quad \lVert x\rVert = \lVert x_i\rVert = 1")

with lesson_page(L, question="ib.question"):
    if not lecture_mode():
        st.markdown(tr("ib.setting"))
        st.latex(MODEL)
    (c1, c2, c3, c4), main = controls_and_figure(4)
    lip, noise, n, seed = draw(L.L, c1), draw(L.NOISE, c2), draw(L.N, c3), draw(L.SEED, c4)
    specs = L.figures(values(L))
    if L.missing(noise, n, seed):          # trained once per server: the next viewer of this setting waits for none
        bar = st.progress(0.0)
        L.train_missing(noise, n, seed, lambda i, of, point: bar.progress(
            i / of, text=tr("ib.training", l=point, i=i + 1, of=of)))
        bar.empty()
    sweep = spec_data(specs["learned_window"])
    with main:
        question = L.question(sweep, lip, noise)
        revealed = prediction(question)
        show_spec(specs["learned_window"], sweep, main=True, answer=say(question.mark()) if revealed.shown else None)
    write(L.window_text(sweep))
    if lecture_mode():
        st.latex(MODEL)

    st.subheader(tr("ib.error_header"))
    left, right = st.columns(2)
    with left:
        show_spec(specs["icl_error"], sweep)
    with right:
        show_spec(specs["icl_example"])
    write(L.linear_text(sweep))

    st.subheader(tr("ib.direction_header"))
    if not lecture_mode():
        st.markdown(tr("ib.direction_setting"))
    with st.spinner(tr("spin.icl_direction")):
        direction = spec_data(specs["direction_matrix"])
    show_spec(specs["direction_matrix"], direction)
    write(L.direction_text(direction))

    with explanation("ui.what_to_notice"):
        write(L.notice(sweep, direction), join="")
    with explanation("ui.formula"):
        write(L.formula_text())
        st.latex(r"x_i^\top x = 1 - \tfrac12\lVert x - x_i\rVert^2 \;\Rightarrow\;"
                 r"e^{w\,x_i^\top x} = e^{w}\,e^{-w\lVert x - x_i\rVert^2/2}")
