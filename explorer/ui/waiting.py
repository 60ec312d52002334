"""A change that waits for the server says so: when a viewer moves a slider or presses a button and the server has
not started the rerun 0.4 s later, a small badge over that control says the change is queued;
it goes as soon as the rerun starts (from there Streamlit fades the page's elements while it reruns).

Without it, a saturated server (a class moving sliders faster than two cores rerun pages) leaves a page frozen:
with 120 simulated students moving a slider every 2-4 s, half of a Masking student's length moves waited 4.8-7.9 s
for the rerun to start, with nothing on screen; with the badge, it showed 0.47-0.53 s after the key press
(``make bench``, "saturated server" rows). On a quiet server the rerun starts 0.05-0.23 s after the press, before
the badge would show.

Mounted once by the router (``app.py``) for every page; the badge's listeners are installed once per browser tab.
Sliders (a pointer or arrow-key move that changed the thumb's value), buttons, checkboxes, toggles and radio buttons
count as changes; a selectbox or a number typed in is not watched.
"""

from __future__ import annotations

from importlib.resources import files

import streamlit as st

from .internals import WEB_JSON
from .state import tr

DELAY_MS = 400          # a rerun not started this long after a change: the badge shows
CAP_MS = 30_000         # and goes after this long whatever happens (a change that started no rerun)

_mount = st.components.v2.component(
    "explorer_waiting", js=(files("explorer.ui") / "web" / "waiting.mjs").read_text(encoding="utf-8"))


def badge() -> None:
    """Mount the badge's listeners on this page (nothing is drawn until a change waits)."""
    _mount(key="explorer-waiting", data={"text": tr("ui.waiting"), "delay_ms": DELAY_MS, "cap_ms": CAP_MS,
                                         "internals": WEB_JSON}, height=0)
