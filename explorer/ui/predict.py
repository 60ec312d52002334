"""Predict, then reveal: a figure that answers a question waits behind it until the viewer has guessed.

Asking learners to predict before they see a result makes them remember it better (Kim, Reinecke & Hullman,
CHI 2017). With "Predict first" on (the sidebar; on by default in lecture mode; ``?predict=1``), ``prediction``
draws the question with its choices instead of the figure; after "Reveal" the figure appears with the right
answer marked and one sentence on why. The right answer is computed by the page from the data the figure
shows, so it stays right when the settings change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from .state import predict_mode, tr


def prediction(key: str, question: str, choices: Sequence[str], answer: int, why: str) -> Callable[[], None] | None:
    """Ask ``question`` (choices, the index of the right one, the sentence that explains it). Returns None while
    the viewer has not answered (the page stops there: the figure stays hidden); else a function that draws the
    verdict and the right answer, which the page calls under the figure (nothing when predict mode is off)."""
    if not predict_mode():
        return lambda: None
    state = st.session_state
    picked_key, done_key, guess_key = f"predict.{key}.pick", f"predict.{key}.done", f"predict.{key}.guess"
    if not state.get(done_key):
        box = st.container(border=True)
        box.markdown(f"**{tr('ui.predict_first')}** {question}")
        picked = box.radio(tr("ui.your_guess"), list(range(len(choices))), format_func=lambda i: choices[i],
                           index=None, key=picked_key, horizontal=True)
        box.button(tr("ui.reveal"), key=f"predict.{key}.reveal", disabled=picked is None, type="primary",
                   on_click=_reveal, args=(picked_key, done_key, guess_key))
        return None

    def mark() -> None:
        picked = state.get(guess_key)
        verdict = tr("ui.guess_right") if picked == answer else \
            tr("ui.guess_wrong", guess=choices[picked]) if picked is not None else ""
        with st.container(border=True, horizontal=True, vertical_alignment="center"):
            st.markdown(f"{verdict} {tr('ui.answer_is', answer=choices[answer])} {why}".strip())
            st.button(tr("ui.ask_again"), key=f"predict.{key}.again", icon=":material/replay:",
                      on_click=lambda: (state.pop(done_key, None), state.pop(guess_key, None)))
    return mark


def _reveal(picked_key: str, done_key: str, guess_key: str) -> None:
    st.session_state[guess_key] = st.session_state.get(picked_key)     # the radio's own state goes when it is not drawn
    st.session_state[done_key] = True
