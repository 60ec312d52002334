"""Efficient attention: linear attention, random features and the online softmax, seen as kernels."""

import streamlit as st

from explorer import lessons
from explorer.figures.registry import DENSE_MAX
from explorer.lessons import cost_summary
from explorer.ui import cache
from explorer.ui.control import lesson_page, stop_page
from explorer.ui.controls import dataset_controls
from explorer.ui.figure import show_lesson
from explorer.ui.layout import controls_and_figure, explanation
from explorer.ui.page_controls import EfficientAttention as C
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

with lesson_page("efficient_attention", C.ALL, question="ef.question", file_name=C.FILE_NAME):
    ds = dataset_controls()
    try:
        data = cache.dataset(*ds)
    except ValueError as err:
        stop_page(say(err))

    st.subheader(tr("ef.zoo_header"))
    (c1, c2, c3, c4, c5), main = controls_and_figure(5, [3, 3, 3, 2, 2])
    h, kind, m, orthogonal, seed = C.H.draw(c1), C.KIND.draw(c2), C.M.draw(c3), C.ORTH.draw(c4), C.SEED.draw(c5)
    zoo = cache.lesson_data("efficient_zoo", data=data, h=h, m=m, kind=kind, orthogonal=orthogonal,
                            seed=seed)
    with main:
        show_lesson("efficient_zoo", zoo, main=True)
    st.markdown(tr("ef.zoo_text", w_err=f"{zoo['weight_error']:.3f}", f_err=f"{zoo['fit_error']:.3f}",
                   spread=f"{zoo['elu_spread']:.1e}"))

    st.subheader(tr("ef.error_header"))
    with st.spinner(tr("spin.error")):
        err = cache.lesson_data("efficient_error", data=data, h=h, kind=kind, seed=seed)
    gains = [tr(f"ef.gain_{i}") for i in range(3)]
    feat = lessons.feature_error_summary(err)
    revealed = prediction("ef.gain", tr("ef.predict_q", kind=tr(f"ef.kind_{kind}")), gains, 1,   # σ/√m: halved
                          tr("ef.predict_why", slope=f"{err['slope']:.2f}", factor=f"{feat['factor']:.2f}",
                             caveat=tr("ef.predict_rare") if feat["rare"] else ""))
    show_lesson("efficient_error", err, answer=tr("fig.answer_is", answer=gains[1]) if revealed.shown else None)
    st.markdown(tr("ef.error_text", slope=f"{err['slope']:.2f}", share=f"{err['orth_share']:.2f}",
                   orth_clause=tr("ef.orth_helps" if feat["helps"] else "ef.orth_barely"), n_keys=err["n_keys"],
                   draws=err["draws"]))
    if kind == "positive":
        st.caption(tr("ef.positive_text", reach=f"{err['reach']:.1f}", theory=f"{err['theory'][-1]:.3g}",
                      measured=f"{err['iid'][-1]:.3g}") + (tr("punct.space") + tr("ef.positive_rare")
                                                            if feat["rare"] else ""))

    st.subheader(tr("ef.online_header"))
    c1, c2, c3 = st.columns(3)
    lo, hi = float(data["x_grid"][0]), float(data["x_grid"][-1])
    x0 = lo + C.X0.draw(c1) * (hi - lo)
    block = C.BLOCK.draw(c2)
    row = cache.lesson_data("online_logits", data=data, h=h, x0=x0, block=block)
    n_blocks = len(row["stops"])
    step = C.STEP.draw(c3, hi=n_blocks)
    left, right = st.columns(2)
    with left:
        show_lesson("online_logits", row, step=step)
    with right:
        show_lesson("online_running", row, step=step)
    st.markdown(tr("ef.online_text", k=step, total=n_blocks, m=f"{row['max'][step - 1]:.3g}",
                   rescale=f"{row['rescale'][step - 1]:.3g}", sum=f"{row['sum'][step - 1]:.4g}",
                   partial=f"{row['estimate'][step - 1]:.4f}", diff=f"{abs(row['final'] - row['exact']):.1e}",
                   n_q=row["n_queries"], n=len(row["x"]), dense=f"{row['dense_bytes'] / 2 ** 20:,.1f} MiB",
                   stream=f"{row['stream_bytes'] / 2 ** 20:,.1f} MiB"))

    st.subheader(tr("ef.rnn_header"))
    rnn = cache.lesson_data("rnn_state", length=12, d=4, seed=seed)
    t = C.T.draw()
    show_lesson("rnn_state", rnn, t=t)
    st.markdown(tr("ef.rnn_text", d=rnn["d"], diff=f"{rnn['max_diff']:.1e}", t=len(rnn["states"])))

    st.subheader(tr("ef.cost_header"))
    if st.button(tr("ef.measure"), help=tr("ef.measure_help"), key="ef.measure"):
        st.session_state["ef.cost_shown"] = True
    if st.session_state.get("ef.cost_shown"):
        with st.spinner(tr("spin.cost")):
            cost = cache.attention_cost(64)
        left, right = st.columns(2)
        with left:
            show_lesson("attention_cost", cost)
        with right:
            show_lesson("attention_memory", cost)
        s = cost_summary(cost)
        if s is None:
            st.markdown(tr("ef.cost_never", dense_max=f"{DENSE_MAX:,}"))
        else:
            st.markdown(tr("ef.cost_text", cross=f"{s['cross']:,}", n_max=f"{s['n_max']:,}", dense=f"{s['dense']:.1f}",
                           linear=f"{s['linear']:.1f}", ratio=f"{s['ratio']:.1f}", online=f"{s['online']:.1f}",
                           online_mb=f"{s['online_mb']:.1f}", dense_mb=f"{s['dense_mb']:.0f}",
                           dense_max=f"{DENSE_MAX:,}"))
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
