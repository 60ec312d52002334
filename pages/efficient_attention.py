"""Efficient attention: linear attention, random features and the online softmax, seen as kernels."""

import streamlit as st

from explorer.lessons import efficient_attention as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import stop_page
from explorer.ui.controls import dataset_controls, lesson_controls
from explorer.ui.figure import show_spec
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
        zoo = show_spec(specs["efficient_zoo"], main=True)
    st.markdown(tr("ef.zoo_text", w_err=f"{zoo['weight_error']:.3f}", f_err=f"{zoo['fit_error']:.3f}",
                   spread=f"{zoo['elu_spread']:.1e}"))

    st.subheader(tr("ef.error_header"))
    with st.spinner(tr("spin.error")):
        err = spec_data(specs["efficient_error"])
    gains = [tr(f"ef.gain_{i}") for i in range(3)]
    feat = L.feature_error_summary(err)
    revealed = prediction("ef.gain", tr("ef.predict_q", kind=tr(f"ef.kind_{kind}")), gains, 1,   # σ/√m: halved
                          tr("ef.predict_why", slope=f"{err['slope']:.2f}", factor=f"{feat['factor']:.2f}",
                             caveat=tr("ef.predict_rare") if feat["rare"] else ""))
    show_spec(specs["efficient_error"], err, answer=tr("fig.answer_is", answer=gains[1]) if revealed.shown else None)
    st.markdown(tr("ef.error_text", slope=f"{err['slope']:.2f}", share=f"{err['orth_share']:.2f}",
                   orth_clause=tr("ef.orth_helps" if feat["helps"] else "ef.orth_barely"), n_keys=err["n_keys"],
                   draws=err["draws"]))
    if kind == "positive":
        st.caption(tr("ef.positive_text", reach=f"{err['reach']:.1f}", theory=f"{err['theory'][-1]:.3g}",
                      measured=f"{err['iid'][-1]:.3g}") + (tr("punct.space") + tr("ef.positive_rare")
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
    st.markdown(tr("ef.online_text", k=step, total=n_blocks, m=f"{row['max'][step - 1]:.3g}",
                   rescale=f"{row['rescale'][step - 1]:.3g}", sum=f"{row['sum'][step - 1]:.4g}",
                   partial=f"{row['estimate'][step - 1]:.4f}", diff=f"{abs(row['final'] - row['exact']):.1e}",
                   n_q=row["n_queries"], n=len(row["x"]), dense=f"{row['dense_bytes'] / 2 ** 20:,.1f} MiB",
                   stream=f"{row['stream_bytes'] / 2 ** 20:,.1f} MiB"))

    st.subheader(tr("ef.rnn_header"))
    C.T.draw()
    rnn = show_spec(L.figures(C.values(), data)["rnn_state"])
    st.markdown(tr("ef.rnn_text", d=rnn["d"], diff=f"{rnn['max_diff']:.1e}", t=len(rnn["states"])))

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
            st.markdown(tr("ef.cost_never", dense_max=f"{L.DENSE_MAX:,}"))
        else:
            st.markdown(tr("ef.cost_text", cross=f"{s['cross']:,}", n_max=f"{s['n_max']:,}", dense=f"{s['dense']:.1f}",
                           linear=f"{s['linear']:.1f}", ratio=f"{s['ratio']:.1f}", online=f"{s['online']:.1f}",
                           online_mb=f"{s['online_mb']:.1f}", dense_mb=f"{s['dense_mb']:.0f}",
                           dense_max=f"{L.DENSE_MAX:,}"))
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
