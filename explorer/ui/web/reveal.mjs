// After Reveal, the asked figure on screen with its verdict (explorer/ui/predict.py says when): once the page's run
// has finished, the page is scrolled just far enough that the asked figure and its Export end inside the window,
// and never past the verdict's top (which stays under Streamlit's header). A viewer who scrolls, clicks or presses
// a key first keeps their own place. Names internal to Streamlit arrive in data.internals, as JSON
// (explorer/ui/internals.py lists them).
export default function (component) {
  const { data } = component;
  const I = JSON.parse(data.internals);
  const find = (key) => document.querySelector(`.st-key-${key}`);
  const app = () => document.querySelector('[data-testid="stApp"]');
  const running = () => { const a = app(); return a && a.dataset[I.script_state] === 'running'; };
  let moved = false;
  const own = () => { moved = true; };
  const events = ['wheel', 'touchstart', 'keydown', 'mousedown'];
  events.forEach((e) => window.addEventListener(e, own, { capture: true, passive: true }));
  const scroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const y = getComputedStyle(p).overflowY;
      if ((y === 'auto' || y === 'scroll') && p.scrollHeight > p.clientHeight + 1) return p;
    }
    return document.scrollingElement;
  };
  const fit = () => {
    const verdict = find(data.verdict);
    if (!verdict) return;
    const asked = find(data.asked) || verdict;
    const header = document.querySelector(`[data-testid="${I.header}"]`);
    const top = header ? header.getBoundingClientRect().bottom : 0;
    const v = verdict.getBoundingClientRect(), a = asked.getBoundingClientRect();
    const by = Math.min(v.top - top - data.gap, a.bottom - (window.innerHeight - data.gap));
    if (Math.abs(by) > 1) scroller(verdict).scrollBy({ top: by, behavior: 'instant' });
  };
  let tries = 0, settled = 0;
  const step = () => {
    if (moved || tries++ > 60) return done();            // at most 60 × 150 ms
    const asked = find(data.asked);
    const drawn = asked && asked.querySelector('svg.main-svg');
    if (!running() && (drawn || !asked && find(data.verdict))) {
      fit();
      if (++settled >= 3) return done();                 // again as late figures above it finish drawing
    }
    setTimeout(step, 150);
  };
  const done = () => events.forEach((e) => window.removeEventListener(e, own, { capture: true }));
  setTimeout(step, 50);
}
