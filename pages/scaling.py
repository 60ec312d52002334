"""Scaling: why attention logits are divided by sqrt(d)."""

import math

import streamlit as st

from explorer.lessons import scaling as L
from explorer.ui.cache import spec_data
from explorer.ui.control import draw, stop_page, values
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation, write
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

with lesson_page(L, question="sc.question"):
    (c1, c2, c3), main = controls_and_figure(3)
    d, n, seed = draw(L.D, c1), draw(L.N, c2), draw(L.SEED, c3)

    specs = L.figures(values(L))
    try:
        tables = spec_data(specs["logit_std"])
    except ValueError as err:
        stop_page(say(err))
    with main:
        question = L.question(tables, d)
        revealed = prediction(question)
        show_spec(specs["logit_std"], tables, key="std", main=True, follow=Follow(L.D, L.figures, values(L)),
                  answer=say(question.mark()) if revealed.shown else None)
    # the number the question is about, only once it is answered
    c1.metric(tr("sc.metric", d=d), f"{L.std_at(tables, d):.2f}", help=tr("sc.metric_help", value=math.sqrt(d)))

    left, right = st.columns(2)
    with left:
        show_spec(specs["max_weight"], tables)
    with right:
        show_spec(specs["softmax_entropy"], tables, key="entropy")

    left, right = st.columns(2)
    with left:
        show_spec(specs["grad_norm"], tables)
    with right:
        show_spec(specs["regime"], tables)
    write(L.grad_text(tables))

    show_spec(specs["logit_histogram"], key="hist")

    with explanation("ui.what_to_notice"):
        write(L.notice(tables, d))
        st.latex(r"\operatorname{Var}(q\cdot k) = \sum_{m=1}^{d}\operatorname{Var}(q_m k_m) = d"
                 r"\quad\Rightarrow\quad \operatorname{std}\left(\frac{q\cdot k}{\sqrt d}\right) = 1")
