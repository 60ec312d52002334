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

import streamlit as st

from .state import tr

DELAY_MS = 400          # a rerun not started this long after a change: the badge shows
CAP_MS = 30_000         # and goes after this long whatever happens (a change that started no rerun)

_JS = """
export default function (component) {
  const { data } = component;
  const w = window.__explorerWaiting = window.__explorerWaiting || {};
  w.text = data.text; w.delay = data.delay_ms; w.cap = data.cap_ms;
  if (w.installed) return;
  w.installed = true;
  const style = document.createElement('style');
  style.textContent = `.explorer-waiting { position: absolute; z-index: 1000; transform: translateY(-100%);
    background: #ffbd45; color: #262730; padding: 0.1rem 0.5rem; border-radius: 0.3rem; font-size: 0.85rem;
    pointer-events: none; box-shadow: 0 1px 3px rgba(0, 0, 0, 0.3);
    animation: explorer-waiting 1.2s ease-in-out infinite alternate; }
    @keyframes explorer-waiting { from { opacity: 1; } to { opacity: 0.55; } }`;
  document.head.appendChild(style);
  const app = () => document.querySelector('[data-testid="stApp"]');
  const running = () => { const a = app(); return a && a.dataset.testScriptState === 'running'; };
  let badge = null, timer = null, cap = null, pending = false;
  const clear = () => {
    pending = false; clearTimeout(timer); clearTimeout(cap);
    if (badge) { badge.remove(); badge = null; }
  };
  const show = (el) => {
    if (!pending || !el.isConnected) return;
    const r = el.getBoundingClientRect();
    badge = document.createElement('div');
    badge.className = 'explorer-waiting';
    badge.setAttribute('role', 'status');
    badge.textContent = w.text;
    badge.style.top = (r.top + window.scrollY - 2) + 'px';
    badge.style.left = (r.left + window.scrollX) + 'px';
    document.body.appendChild(badge);
  };
  const changed = (el) => {
    if (running()) return;                 // Streamlit already shows that the page is updating
    clear();
    pending = true;
    timer = setTimeout(() => show(el), w.delay);
    cap = setTimeout(clear, w.cap);
  };
  let watched = null;
  const watch = () => {                    // any change of the script's state: the server has the change
    const a = app();
    if (a && a !== watched) {
      watched = a;
      new MutationObserver(() => { if (pending) clear(); })
        .observe(a, { attributes: true, attributeFilter: ['data-test-script-state'] });
    }
  };
  watch();
  const slider = (t) => t && t.closest && t.closest('[data-testid="stSlider"]');
  const shown = (s) => [...s.querySelectorAll('[data-testid="stSliderThumbValue"]')].map(e => e.textContent).join('|');
  let before = null;
  const grab = (e) => { const s = slider(e.target); before = s ? [s, shown(s)] : null; };
  const release = () => {
    if (!before) return;
    const [s, was] = before;
    before = null;
    setTimeout(() => { if (s.isConnected && shown(s) !== was) { watch(); changed(s); } }, 30);
  };
  document.addEventListener('pointerdown', grab, true);
  document.addEventListener('pointerup', release, true);
  document.addEventListener('keydown', (e) => { if (!before) grab(e); }, true);
  document.addEventListener('keyup', release, true);
  document.addEventListener('click', (e) => {
    const t = e.target && e.target.closest && e.target.closest(
      '[data-testid="stButton"] button, [data-testid="stCheckbox"] label, [data-testid="stRadio"] label');
    if (t) { watch(); changed(t); }
  }, true);
}
"""

_mount = st.components.v2.component("explorer_waiting", js=_JS)


def badge() -> None:
    """Mount the badge's listeners on this page (nothing is drawn until a change waits)."""
    _mount(key="explorer-waiting", data={"text": tr("ui.waiting"), "delay_ms": DELAY_MS, "cap_ms": CAP_MS},
           height=0)
