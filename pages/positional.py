"""Position is a kernel: what each position scheme puts on i − j, and which still works past the training length."""

import streamlit as st

from explorer.lessons import lesson
from explorer.lessons import positional as L
from explorer.ui.cache import spec_data
from explorer.ui.control import draw, stop_page, values
from explorer.ui.figure import show_spec
from explorer.ui.layout import controls_and_figure, explanation, write
from explorer.ui.navigation import page_link
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

with lesson_page(L, question="ps.question"):
    (c1, c2, c3), main = controls_and_figure(3)
    scheme = draw(L.SCHEME, c1)
    draw(L.LENGTH, c1)
    draw(L.D, c2)
    draw(L.BASE, c2)
    draw(L.FACTOR, c3)
    draw(L.HEADS, c3)
    specs = L.figures(values(L))
    try:
        kernel = spec_data(specs["position_kernel"])
    except ValueError as err:
        stop_page(say(err))
    with main:
        show_spec(specs["position_kernel"], kernel, key="kernel", main=True)
    write(L.kernel_text(kernel))
    if scheme == "alibi":
        page_link(lesson("kernel_regression"), tr("ps.link_kr"), icon=":material/show_chart:")

    st.subheader(tr("ps.maps_header"))
    maps = spec_data(specs["position_maps"])
    show_spec(specs["position_maps"], maps, key="maps")
    st.caption(tr("ps.maps_caption"))
    for line in L.map_text(maps):
        write(line)
    write(L.alibi_text(maps))

    st.subheader(tr("ps.lengths_header"))
    st.caption(tr("ps.lengths_caption"))
    lengths = spec_data(specs["lengths"])
    question = L.question(lengths)
    revealed = prediction(question)
    show_spec(specs["lengths"], lengths, key="lengths", answer=say(question.mark()) if revealed.shown else None)
    write(L.lengths_text(lengths))

    draw(L.EVAL)
    trained = spec_data(specs["trained_maps"])
    show_spec(specs["trained_maps"], trained, key="trained")
    if trained["length"] > L.TRAIN_LENGTH:
        st.caption(tr("ps.trained_caption"))
    for line in L.trained_text(trained):
        write(line)

    with explanation("ui.what_to_notice"):
        write(L.notice())
        st.latex(r"\text{RoPE: } \langle R_{i\theta}\,q,\; R_{j\theta}\,k\rangle"
                 r" = \langle q,\; R_{(j-i)\theta}\,k\rangle\qquad"
                 r"\text{ALiBi: } \alpha_{ij} \propto \exp\!\big(q_i\cdot k_j/\sqrt d\big)\,e^{-m\,(i-j)}")
