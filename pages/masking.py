"""Masking: mask the logits before the softmax, and see what the common mistakes do instead."""

import pandas as pd
import streamlit as st

from explorer.attention import MASK_MODES
from explorer.lessons import masking as L
from explorer.ui.control import stop_page
from explorer.ui.controls import lesson_controls
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

C = lesson_controls(L)

TOL = L.LEAK_TOL            # below this a difference is rounding


def verdict(mode: str, r: pd.Series) -> str:
    parts = [tr("mk.v_sdpa") if r.max_diff_vs_sdpa < TOL else tr("mk.v_sdpa_diff", diff=r.max_diff_vs_sdpa)]
    if r.row_sum_error > TOL:
        parts.append(tr("mk.v_rows", mean=r.mean_row_sum, low=r.min_row_sum,
                        correct=r.correct_row_sum))
    if r.mass_on_masked > TOL:
        parts.append(tr("mk.v_mass", mass=r.mass_on_masked))
    channels = [(c, r[f"leak_{c}"]) for c in ("key", "value") if r[f"leak_{c}"] > TOL]
    parts += [tr("mk.v_leak", channel=tr(f"mk.channel_{c}"), leak=v) for c, v in channels] or \
        [tr("mk.v_no_leak")]
    if r.grad_on_masked > TOL:
        parts.append(tr("mk.v_grad", g=r.grad_on_masked))
    return f"- **{tr('modename.' + mode)}**{tr('punct.colon')}" + tr("punct.sep").join(parts) + tr("punct.end")


def _leak_sentence(mask, report) -> str:
    """Which modes leak through which channel on this example (the probe perturbs the last position)."""
    if bool(mask[:, -1].all()):
        return tr("mk.leak_none_masked")
    leaks = L.leak_modes(report.reset_index())
    names = {c: tr("punct.list").join(f"“{tr('modename.' + m)}”" for m in leaks[c]) for c in ("key", "value")}
    key = "mk.leak_which" if leaks["key"] and leaks["value"] else "mk.leak_which_key" if leaks["key"] else \
        "mk.leak_which_value" if leaks["value"] else "mk.leak_which_none"
    return tr(key, key_modes=names["key"], value_modes=names["value"])


with lesson_page(C, question="mk.question"):
    (c1, c2, c3), main = controls_and_figure(3)
    length = C.LENGTH.draw(c1)
    C.D.draw(c1)
    kind = C.KIND.draw(c2)
    C.VALID.draw(c2, hi=length, disabled=kind == "causal")
    wrong = C.WRONG.draw(c3, format_func=lambda m: f"{tr('modename.' + m)}{tr('punct.colon')}{tr('mode.' + m)}")
    C.SEED.draw(c3)
    specs = L.figures(C.values())
    try:
        with main:
            ex = show_spec(specs["masking"], key="pair", main=True,      # the valid length, when a mask has one
                           follow=None if kind == "causal" else Follow(C.VALID, L.figures, C.values(), hi=length))
    except ValueError as err:
        stop_page(say(err))
    mask, report = ex["mask"], ex["report"].set_index("mode")

    sums = ex["post.row_sum"]
    expected, whole = L.row_sums_answer(sums)
    rows_question = [tr(f"mk.rows_{i}") for i in range(3)]
    revealed = prediction("mk.rows", tr("mk.predict_q", kind=tr(f"masktype.{kind}")), rows_question, expected,
                          tr("mk.predict_why", whole=whole, n=length, low=sums.min()))
    st.subheader(tr("mk.rows_header"))          # the charts that answer the question, right under its verdict
    left, right = st.columns(2)
    with left:                          # once revealed, the answer at the post-softmax row that lost the most
        show_spec(specs["row_sums"], ex,
                  answer=tr("fig.answer_is", answer=rows_question[expected]) if revealed.shown else None)
    with right:
        show_spec(specs["output_norms"], ex)
    lost = L.rows_lost(sums, mask)
    if lost["kind"] == "nothing":
        st.markdown(tr("mk.rows_nothing_masked"))
    else:
        early = tr("mk.rows_early" if lost["kind"] == "early" else "mk.rows_early_not", first=lost['first'],
                   last=lost['last'], lo=lost['lo'], hi=lost['hi'])
        st.markdown(tr("mk.rows_text", early=early))

    st.subheader(tr("mk.verdicts"))
    st.caption(tr("mk.sdpa"))
    st.markdown("\n".join(verdict(m, report.loc[m]) for m in MASK_MODES))

    st.subheader(tr("mk.leak_header"))
    show_spec(specs["leak"], ex)
    st.caption(tr("mk.leak_caption", which=_leak_sentence(mask, report)))

    st.subheader(tr("mk.grad_header"))
    st.markdown(tr("mk.grad_text"))
    left, right = st.columns(2)
    with left:
        show_spec(specs["grad_heatmap"], ex)
    with right:
        columns = {tr("mk.grad_masked"): "grad_on_masked", tr("mk.grad_diff"): "grad_diff_vs_pre"}
        table = pd.DataFrame({name: [report.loc[m, col] for m in MASK_MODES] for name, col in columns.items()},
                             index=[tr(f"modename.{m}") for m in MASK_MODES])
        # formatted by the browser (a pandas Styler would cost the rerun 7 ms to render)
        st.dataframe(table, width="stretch",
                     column_config={name: st.column_config.NumberColumn(format="%.2e") for name in columns})
    pre, renorm = L.renorm_demo()
    st.markdown(tr("mk.grad_notes", pre=pre, renorm=renorm))

    with explanation("ui.what_to_notice"):
        st.markdown(tr("mk.notice"))
        st.latex(r"\alpha_{ij} = \frac{\exp(s_{ij})\,[m_{ij}]}{\sum_{l} \exp(s_{il})\,[m_{il}]},\qquad "
                 r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt d},\quad s_{ij} \leftarrow -\infty"
                 r"\text{" + tr("mk.formula_where") + r"} m_{ij} = 0")
