"""Efficient attention: linear attention, random features and the online softmax, seen as kernels."""

import streamlit as st

from explorer.lessons import efficient_attention as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import draw, stop_page, values
from explorer.ui.controls import dataset_controls
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation, heading_over_main, on_demand, write
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

with lesson_page(L, question="ef.question"):
    ds = dataset_controls()
    try:
        data = cache.dataset(*ds)
    except ValueError as err:
        stop_page(say(err))

    heading_over_main(tr("ef.zoo_header"))
    (c1, c2, c3, c4), main = controls_and_figure(4, [3, 3, 3, 2])     # (the switch under m: its label whole)
    h, kind, m, orthogonal, seed = (draw(L.H, c1), draw(L.KIND, c2), draw(L.M, c3), draw(L.ORTH, c3),
                                    draw(L.SEED, c4))
    specs = L.figures(values(L), data)
    with main:
        zoo = show_spec(specs["efficient_zoo"], main=True, follow=Follow(L.M, lambda v: L.figures(v, data), values(L)))
    write(L.zoo_text(zoo))

    st.subheader(tr("ef.error_header"))
    with st.spinner(tr("spin.error")):
        err = spec_data(specs["efficient_error"])
    question = L.question(err, kind)
    revealed = prediction(question)
    show_spec(specs["efficient_error"], err, answer=say(question.mark()) if revealed.shown else None)
    write(L.error_text(err))
    write(L.positive_text(err, kind))

    st.subheader(tr("ef.online_header"))
    c1, c2, c3 = st.columns(3)
    draw(L.X0, c1)
    n_blocks = L.n_blocks(data, draw(L.BLOCK, c2))
    step = draw(L.STEP, c3, hi=n_blocks)
    specs = L.figures(values(L), data)
    row = spec_data(specs["online_logits"])
    left, right = st.columns(2)
    with left:
        show_spec(specs["online_logits"], row)
    with right:
        show_spec(specs["online_running"], row)
    write(L.online_text(row, step, n_blocks))

    st.subheader(tr("ef.rnn_header"))
    draw(L.T)
    rnn = show_spec(L.figures(values(L), data)["rnn_state"])
    write(L.rnn_text(rnn))

    st.subheader(tr("ef.cost_header"))
    cost = on_demand(tr("ef.measure"), say(L.measure_help()), "ef.measure",          # timed once per server
                     lambda: cache.attention_cost(**specs["attention_cost"].inputs))
    if cost is not None:
        left, right = st.columns(2)
        with left:
            show_spec(specs["attention_cost"], cost)
        with right:
            show_spec(specs["attention_memory"], cost)
        write(L.cost_text(cost))
    else:
        st.caption(tr("ef.cost_pending"))

    with explanation("ui.what_to_notice"):
        write(L.notice())

    with explanation("ui.formula"):
        write(L.formula_text())
        st.latex(r"\operatorname{softmax}(QK^\top)V \approx \frac{\varphi(Q)\,\big(\varphi(K)^\top V\big)}"
                 r"{\varphi(Q)\,\big(\varphi(K)^\top \mathbf 1\big)}\quad O(N m d)\ \text{instead of}\ O(N^2 d)")
        st.latex(r"m_B = \max\!\big(m_{B-1}, \max_{j\in B} s_j\big),\quad "
                 r"\ell_B = e^{m_{B-1}-m_B}\,\ell_{B-1} + \sum_{j\in B} e^{s_j-m_B},\quad "
                 r"a_B = e^{m_{B-1}-m_B}\,a_{B-1} + \sum_{j\in B} e^{s_j-m_B}\,v_j")
