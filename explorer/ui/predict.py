"""Predict, then reveal: a figure that answers a question waits behind it until the viewer has guessed.

Asking learners to predict before they see a result makes them remember it better (Kim, Reinecke & Hullman,
CHI 2017). With "Predict first" on (the sidebar; on by default in lecture mode; ``?predict=1``), ``prediction``
draws the question with its choices instead of the figure, and the page ends there. After "Reveal" the verdict
takes the question's place, above the figure, as the most visible thing on it (right or not, the answer, one
sentence on why), and the page draws the figure with the answer marked on it where the figure can show it. The
right answer is computed by the lesson from the data the figure shows (``<lesson>.question``, a ``Question``), so it
stays right when the settings change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

import streamlit as st

from ..lessons.base import Question
from .control import rerun_whole_page, stop_page
from .figure import ASKED
from .internals import WEB_JSON
from .poll import class_result, is_open, lecturer_panel
from .state import lang, lecture_mode, predict_mode, take_room, tr

VERDICT_ROW = 72      # px: the verdict's row in lecture mode (its buttons and the gap under it)
SCROLL_GAP = 8        # px: kept free above the verdict and under the asked figure's Export when the page is scrolled

# Scrolls, once, the asked figure and its verdict onto the screen after Reveal: explorer/ui/web/reveal.mjs.
_scroll = st.components.v2.component(
    "explorer_reveal", js=(files("explorer.ui") / "web" / "reveal.mjs").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Revealed:
    """What a page knows after its question: whether an answer was revealed (False when predict mode is off,
    so that figures are drawn without the answer's mark) and the index of the right choice."""
    shown: bool
    answer: int


def prediction(q: Question) -> Revealed:
    """Ask the lesson's question ``q``. While the viewer has not answered, the page ends here (``stop_page``: the
    figure stays hidden, the page's links and URL still follow); after Reveal, the verdict is drawn here and the
    page goes on to draw the figure. In lecture mode the lecturer can poll the class on the question
    (``poll.lecturer_panel``), and after the reveal the class's votes are drawn under the verdict."""
    language = lang()
    key, answer, also_right = q.key, q.answer, q.also_right
    question, why = q.asked.in_lang(language), q.why.in_lang(language)
    choices = [c.in_lang(language) for c in q.choices]
    if not predict_mode():
        return Revealed(False, answer)
    state = st.session_state
    picked_key, done_key, guess_key = f"predict.{key}.pick", f"predict.{key}.done", f"predict.{key}.guess"
    if not state.get(done_key):
        polled = lecture_mode() and is_open(key)        # the class answers on their phones: the poll panel asks
        if not polled:
            box = st.container(border=True)
            box.markdown(f"**{tr('ui.predict_first')}**{tr('punct.colon')}{question}")
            picked = box.radio(tr("ui.your_guess"), list(range(len(choices))), format_func=lambda i: choices[i],
                               index=None, key=picked_key, horizontal=True)
            box.button(tr("ui.reveal"), key=f"predict.{key}.reveal", disabled=picked is None, type="primary",
                       on_click=_reveal, args=(picked_key, done_key, guess_key))
        if lecture_mode():
            lecturer_panel(key, q.asked, list(q.choices), answer)
        stop_page()
    verdict(key, choices, answer, why, state.get(guess_key), also_right)
    class_result(key)
    return Revealed(True, answer)


def verdict(key: str, choices: Sequence[str], answer: int, why: str, guess: int | None,
            also_right: Sequence[int] = ()) -> None:
    """The revealed answer, large and coloured (green when the guess was right), its reason, and "Ask again"."""
    right = guess is not None and (guess == answer or guess in also_right)
    headline = tr("ui.guess_right") if right else \
        tr("ui.guess_wrong", guess=choices[guess]) if guess is not None else ""
    colour = "green" if right else "orange"
    space = tr("punct.space")
    said = f":{colour}[{headline}]{space}{tr('ui.answer_is', answer=choices[answer])}".strip()
    again = {"label": tr("ui.ask_again"), "key": f"predict.{key}.again", "icon": ":material/replay:",
             "on_click": _ask_again, "args": (key,)}
    if lecture_mode():                 # one row, so that the figure under it stays on the projector's screen
        take_room("verdict", VERDICT_ROW)
        with st.container(horizontal=True, vertical_alignment="center", gap="small",
                          key=f"verdict-{key.replace('.', '-')}"):
            st.markdown(f"**{said}**", width="content")
            with st.popover(tr("ui.why")):
                st.markdown(why)
            st.button(**again)
            _bring_on_screen(key)
        return
    with st.container(border=True, key=f"verdict-{key.replace('.', '-')}"):
        st.markdown(f"#### {said}")
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(why)
            st.button(**again)
            _bring_on_screen(key)


def _bring_on_screen(key: str) -> None:
    """On the run right after Reveal (in the page or in the class's poll), scroll the asked figure onto the screen
    under its verdict, once (``web/reveal.mjs``; mounted in the verdict's row, so it adds no row of its own)."""
    if st.session_state.pop(f"predict.{key}.scroll", False):
        _scroll(key=f"explorer-reveal-{key.replace('.', '-')}", height=0, width="content",
                data={"verdict": f"verdict-{key.replace('.', '-')}", "asked": ASKED, "gap": SCROLL_GAP,
                      "internals": WEB_JSON})


def _reveal(picked_key: str, done_key: str, guess_key: str) -> None:
    st.session_state[guess_key] = st.session_state.get(picked_key)     # the radio's own state goes when it is not drawn
    st.session_state[done_key] = True
    st.session_state[done_key.replace(".done", ".scroll")] = True
    rerun_whole_page()          # the page goes on past the question (asked inside a part, it would redraw only that)


def _ask_again(key: str) -> None:
    st.session_state.pop(f"predict.{key}.done", None)
    st.session_state.pop(f"predict.{key}.guess", None)
    st.session_state.pop(f"poll.{key}", None)          # a new question gets a new poll (the old one expires)
    rerun_whole_page()          # the page stops at the question again
