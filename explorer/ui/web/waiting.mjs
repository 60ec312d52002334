// A change that waits for the server says so (explorer/ui/waiting.py says how). Names internal to Streamlit arrive
// in data.internals, as JSON (explorer/ui/internals.py lists them, each with the versions it was written for).
export default function (component) {
  const { data } = component;
  const I = JSON.parse(data.internals);
  const w = window.__explorerWaiting = window.__explorerWaiting || {};
  w.text = data.text; w.delay = data.delay_ms; w.cap = data.cap_ms;
  if (w.installed) return;
  w.installed = true;
  // (the badge's look: .explorer-waiting in base.css)
  const app = () => document.querySelector('[data-testid="stApp"]');
  const running = () => { const a = app(); return a && a.dataset[I.script_state] === 'running'; };
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
  // any change of the script's state, on whichever app element Streamlit has drawn by then (one it draws anew is
  // watched too): the server has the change
  new MutationObserver(() => { if (pending) clear(); })
    .observe(document.documentElement, { attributes: true, attributeFilter: [I.script_state_attribute],
                                         subtree: true });
  const slider = (t) => t && t.closest && t.closest('[data-testid="stSlider"]');
  const shown = (s) => [...s.querySelectorAll(`[data-testid="${I.slider_thumb_value}"]`)]
    .map(e => e.textContent).join('|');
  let before = null;
  const grab = (e) => { const s = slider(e.target); before = s ? [s, shown(s)] : null; };
  const release = () => {
    if (!before) return;
    const [s, was] = before;
    before = null;
    setTimeout(() => { if (s.isConnected && shown(s) !== was) changed(s); }, 30);
  };
  document.addEventListener('pointerdown', grab, true);
  document.addEventListener('pointerup', release, true);
  document.addEventListener('keydown', (e) => { if (!before) grab(e); }, true);
  document.addEventListener('keyup', release, true);
  document.addEventListener('click', (e) => {
    const t = e.target && e.target.closest && e.target.closest(
      '[data-testid="stButton"] button, [data-testid="stCheckbox"] label, [data-testid="stRadio"] label');
    if (t) changed(t);
  }, true);
}
