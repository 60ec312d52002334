"""Scaling: why attention logits are divided by sqrt(d)."""

import math

import streamlit as st

from explorer.lessons import scaling as L
from explorer.scaling import scaling_summary
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import stop_page
from explorer.ui.controls import lesson_controls
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

C = lesson_controls(L)

with lesson_page(C, question="sc.question"):
    (c1, c2, c3), main = controls_and_figure(3)
    d, n, seed = C.D.draw(c1), C.N.draw(c2), C.SEED.draw(c3)

    specs = L.figures(C.values())
    try:
        tables = spec_data(specs["logit_std"])
    except ValueError as err:
        stop_page(say(err))
    un, sc = tables["unscaled"], tables["scaled"]
    std_d = un.set_index("d").loc[d, "logit_std"]
    with main:
        laws = [tr(f"sc.law_{i}") for i in range(3)]
        law = L.growth_law(un["d"], un["logit_std"])
        revealed = prediction("sc.growth", tr("sc.predict_q"), laws, law,
                              tr("sc.predict_why", d=d, std=std_d, root=math.sqrt(d)))
        show_spec(specs["logit_std"], tables, key="std", main=True, follow=Follow(C.D, L.figures, C.values()),
                  answer=tr("fig.answer_is", answer=laws[law]) if revealed.shown else None)
    # the number the question is about, only once it is answered
    c1.metric(tr("sc.metric", d=d), f"{std_d:.2f}", help=tr("sc.metric_help", value=math.sqrt(d)))

    ds = un["d"].to_numpy()
    left, right = st.columns(2)
    with left:
        show_spec(specs["max_weight"], tables)
    with right:
        show_spec(specs["softmax_entropy"], tables, key="entropy")

    summary = scaling_summary(un, sc)
    left, right = st.columns(2)
    with left:
        show_spec(specs["grad_norm"], tables)
    with right:
        show_spec(specs["regime"], tables)
    (u64, s64), (u128, s128) = summary["usual"][64], summary["usual"][128]
    more = [x for x, (u, s_) in summary["usual"].items() if u > s_]
    usual = "sc.usual_more" if len(more) == 2 else "sc.usual_less" if not more else "sc.usual_mixed"
    st.markdown(tr("sc.grad_text", inv_sqrt_n=1 / math.sqrt(n), peak=summary['peak'],
                   d_peak=summary["d_peak"],
                   cross=tr("sc.cross_from", d_cross=summary["d_cross"]) if summary["d_cross"] else
                   tr("sc.cross_never", d_max=int(ds[-1])),
                   usual=tr(usual, u64=u64, s64=s64, u128=u128, s128=s128,
                            more_d=more[0] if more else "", less_d=next((x for x in (64, 128) if x not in more), "")),
                   ent_lo=summary['scaled_entropy'][0], ent_hi=summary['scaled_entropy'][1],
                   mw_lo=summary['scaled_maxw'][0], mw_hi=summary['scaled_maxw'][1],
                   ent_1=summary['unscaled_entropy'][0], ent_big=summary['unscaled_entropy'][1],
                   d_max=int(ds[-1]), g_last=summary['last'][0], g_last_sc=summary['last'][1]))

    show_spec(specs["logit_histogram"], key="hist")

    with explanation("ui.what_to_notice"):
        norms = cache.scaling_key_norms(d, seed)
        sharpen = tr("sc.sharpen_from", d_half=summary["d_half"], mw=summary['mw_half']) \
            if summary["d_half"] else tr("sc.sharpen_never", d_max=int(ds[-1]))
        st.markdown(tr("sc.notice", std128=un.set_index('d').loc[128, 'logit_std'],
                       lo=summary['scaled_std'][0], hi=summary['scaled_std'][1], sharpen=sharpen,
                       mw_lo=summary['scaled_maxw'][0], mw_hi=summary['scaled_maxw'][1],
                       d=d, kmin=norms[0], kmax=norms[1], sqrt_d=math.sqrt(d)))
        st.latex(r"\operatorname{Var}(q\cdot k) = \sum_{m=1}^{d}\operatorname{Var}(q_m k_m) = d"
                 r"\quad\Rightarrow\quad \operatorname{std}\left(\frac{q\cdot k}{\sqrt d}\right) = 1")
