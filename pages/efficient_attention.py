"""Efficient attention: linear attention, random features and the online softmax, seen as kernels."""

import streamlit as st

from explorer.lessons import efficient_attention as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import stop_page
from explorer.ui.controls import dataset_controls, lesson_controls
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation, on_demand
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

C = lesson_controls(L)

with lesson_page(C, question="ef.question"):
    ds = dataset_controls()
    try:
        data = cache.dataset(*ds)
    except ValueError as err:
        stop_page(say(err))

    st.subheader(tr("ef.zoo_header"))
    (c1, c2, c3, c4, c5), main = controls_and_figure(5, [3, 3, 3, 2, 2])
    h, kind, m, orthogonal, seed = C.H.draw(c1), C.KIND.draw(c2), C.M.draw(c3), C.ORTH.draw(c4), C.SEED.draw(c5)
    specs = L.figures(C.values(), data)
    with main:
        zoo = show_spec(specs["efficient_zoo"], main=True, follow=Follow(C.M, lambda v: L.figures(v, data), C.values()))
    st.markdown(tr("ef.zoo_text", w_err=zoo['weight_error'], f_err=zoo['fit_error'],
                   spread=zoo['elu_spread']))

    st.subheader(tr("ef.error_header"))
    with st.spinner(tr("spin.error")):
        err = spec_data(specs["efficient_error"])
    gains = [tr(f"ef.gain_{i}") for i in range(3)]
    feat = L.feature_error_summary(err)
    revealed = prediction("ef.gain", tr("ef.predict_q", kind=tr(f"ef.kind_{kind}")), gains, 1,   # σ/√m: halved
                          tr("ef.predict_why", slope=err['slope'], factor=feat['factor'],
                             caveat=tr("ef.predict_rare") if feat["rare"] else ""))
    show_spec(specs["efficient_error"], err, answer=tr("fig.answer_is", answer=gains[1]) if revealed.shown else None)
    st.markdown(tr("ef.error_text", slope=err['slope'], share=err['orth_share'],
                   orth_clause=tr("ef.orth_helps" if feat["helps"] else "ef.orth_barely"), n_keys=err["n_keys"],
                   draws=err["draws"]))
    if kind == "positive":
        st.caption(tr("ef.positive_text", reach=err['reach'], theory=err['theory'][-1],
                      measured=err['iid'][-1]) + (tr("punct.space") + tr("ef.positive_rare")
                                                            if feat["rare"] else ""))

    st.subheader(tr("ef.online_header"))
    c1, c2, c3 = st.columns(3)
    C.X0.draw(c1)
    n_blocks = L.n_blocks(data, C.BLOCK.draw(c2))
    step = C.STEP.draw(c3, hi=n_blocks)
    specs = L.figures(C.values(), data)
    row = spec_data(specs["online_logits"])
    left, right = st.columns(2)
    with left:
        show_spec(specs["online_logits"], row)
    with right:
        show_spec(specs["online_running"], row)
    st.markdown(tr("ef.online_text", k=step, total=n_blocks, m=row['max'][step - 1],
                   rescale=row['rescale'][step - 1], sum=row['sum'][step - 1],
                   partial=row['estimate'][step - 1], diff=abs(row['final'] - row['exact']),
                   n_q=row["n_queries"], n=len(row["x"]), dense=row['dense_bytes'] / 2 ** 20,
                   stream=row['stream_bytes'] / 2 ** 20))

    st.subheader(tr("ef.rnn_header"))
    C.T.draw()
    rnn = show_spec(L.figures(C.values(), data)["rnn_state"])
    st.markdown(tr("ef.rnn_text", d=rnn["d"], diff=rnn['max_diff'], t=len(rnn["states"])))

    st.subheader(tr("ef.cost_header"))
    cost = on_demand(tr("ef.measure"), tr("ef.measure_help"), "ef.measure",          # timed once per server
                     lambda: cache.attention_cost(**specs["attention_cost"].inputs))
    if cost is not None:
        left, right = st.columns(2)
        with left:
            show_spec(specs["attention_cost"], cost)
        with right:
            show_spec(specs["attention_memory"], cost)
        s = L.cost_summary(cost)
        if s is None:
            st.markdown(tr("ef.cost_never", dense_max=L.DENSE_MAX))
        else:
            st.markdown(tr("ef.cost_text", cross=s['cross'], n_max=s['n_max'], dense=s['dense'],
                           linear=s['linear'], ratio=s['ratio'], online=s['online'],
                           online_mb=s['online_mb'], dense_mb=s['dense_mb'],
                           dense_max=L.DENSE_MAX))
    else:
        st.caption(tr("ef.cost_pending"))

    with explanation("ui.what_to_notice"):
        st.markdown(tr("ef.notice"))

    with explanation("ui.formula"):
        st.markdown(tr("ef.formula_text"))
        st.latex(r"\operatorname{softmax}(QK^\top)V \approx \frac{\varphi(Q)\,\big(\varphi(K)^\top V\big)}"
                 r"{\varphi(Q)\,\big(\varphi(K)^\top \mathbf 1\big)}\quad O(N m d)\ \text{instead of}\ O(N^2 d)")
        st.latex(r"m_B = \max\!\big(m_{B-1}, \max_{j\in B} s_j\big),\quad "
                 r"\ell_B = e^{m_{B-1}-m_B}\,\ell_{B-1} + \sum_{j\in B} e^{s_j-m_B},\quad "
                 r"a_B = e^{m_{B-1}-m_B}\,a_{B-1} + \sum_{j\in B} e^{s_j-m_B}\,v_j")
