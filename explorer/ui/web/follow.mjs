// The main figure follows the thumb (explorer/ui/follow.py says how): plays the figure's frames as the page's own
// slider, or the slider under the figure, moves; draws the frames that need a whole redraw ahead, off screen.
// Names internal to plotly.js and Streamlit arrive in data.internals, as JSON (explorer/ui/internals.py lists them, each
// with the versions it was written for and a test that fails when an upgrade removes it).
export default function (component) {
  const { data, setTriggerValue } = component;
  const I = JSON.parse(data.internals);
  const frameHash = (gd) => gd[I.transition_data] && gd[I.transition_data][I.frame_hash];
  const fullLayout = (gd) => gd[I.full_layout];
  const followed = (gd, index) => gd.dispatchEvent(new CustomEvent('explorer_followed', { detail: { index } }));
  const figure = () => [...document.querySelectorAll('.js-plotly-plot')]
    .find(gd => gd.layout && gd.layout.meta && gd.layout.meta.follow === data.key);
  let rest = null;
  const settle = (gd, quick) => {
    clearTimeout(rest);
    if (quick && window.Plotly) rest = setTimeout(() => window.Plotly.redraw(gd), 150);
  };
  const play = (text) => {
    const gd = figure();
    if (!gd || !window.Plotly) return;
    const meta = gd.layout.meta;
    let i = meta.labels.indexOf(text.trim());
    if (i < 0) {                       // between two frames: the nearest (on a log scale when all are positive)
      const x = parseFloat(text.replace(/[^0-9eE.+-]/g, ''));
      if (!isFinite(x)) return;
      const log = x > 0 && meta.values.every(v => v > 0);
      const d = meta.values.map(v => log ? Math.abs(Math.log(v / x)) : Math.abs(v - x));
      i = d.indexOf(Math.min(...d));
    }
    show(gd, i);
  };
  // traces and layout of frame k: the figure's traces with the frame's changes, the layout with the frame's entries
  const frameOf = (gd, k, extra) => {
    const meta = gd.layout.meta, f = frameHash(gd) && frameHash(gd)[meta.frames[k]];
    if (!f) return null;
    const traces = gd.data.map(t => ({ ...t }));
    (f.traces || []).forEach((t, j) => { if (f.data && f.data[j]) Object.assign(traces[t], f.data[j]); });
    const layout = { ...gd.layout, ...(f.layout || {}), ...(extra || {}) };
    if (layout.sliders && layout.sliders.length) layout.sliders = [{ ...layout.sliders[0], active: k }];
    return [traces, layout];
  };
  // Frames drawn ahead: once the figure is drawn, each frame that needs a whole redraw is drawn off screen, one
  // per turn of the event loop, by plotly into a figure of the same size, and kept as a picture (an SVG of the
  // plot, its axes, legend and colour bar, without the slider). A drag shows a frame by laying its picture over
  // the figure (a millisecond, where plotly takes 30-70 ms to redraw a pair of heatmaps); when the thumb rests the
  // figure itself is redrawn at that frame and the picture taken away, so hover and zoom act on what is shown.
  const SVG = 'http://www.w3.org/2000/svg', REST_MS = 400;
  let prepared = null;                  // the figure whose frames are drawn ahead (one followed figure a page)
  // (while a picture is shown, plotly's own drawing is hidden but for its background and the slider: base.css)
  const signature = (gd) => [frameHash(gd) && frameHash(gd)[gd.layout.meta.frames[0]],
                             fullLayout(gd).width, fullLayout(gd).height];
  const current = (a, gd) => a && signature(gd).every((x, i) => x === a.sig[i]);
  const picture = (hidden, width, height) => {
    const [paper, top] = hidden.querySelectorAll('.main-svg');
    const pic = document.createElementNS(SVG, 'svg');
    pic.setAttribute('class', 'explorer-ahead');
    pic.setAttribute('width', width);
    pic.setAttribute('height', height);
    pic.setAttribute('style', 'position:absolute;pointer-events:none');     // over the figure's own background
    for (const c of paper.children) if (!c.classList.contains('draglayer')) pic.appendChild(c.cloneNode(true));
    for (const c of top.children) {
      const g = c.cloneNode(true);
      g.querySelectorAll('.slider-container').forEach(x => x.remove());
      pic.appendChild(g);
    }
    return pic;
  };
  const unshow = (gd) => {              // the figure as plotly drew it, again
    const a = gd.__explorerAhead;
    if (a && a.shown !== null) { a.pictures[a.shown].remove(); a.shown = null; }
    gd.classList.remove('explorer-ahead-shown');
  };
  const teardown = (gd) => {
    const a = gd.__explorerAhead;
    if (!a) return;
    unshow(gd);
    clearTimeout(a.timer);
    if (a.hidden) { window.Plotly.purge(a.hidden); a.hidden.remove(); }
    gd.__explorerAhead = undefined;
    delete gd.dataset.framesAhead;
  };
  const ahead = (gd) => {
    if (!window.Plotly || !fullLayout(gd) || !gd.layout.meta.redraw || current(gd.__explorerAhead, gd)) return;
    if (prepared && prepared !== gd) teardown(prepared);
    const old = gd.__explorerAhead;
    if (old) { unshow(gd); clearTimeout(old.timer); }
    prepared = gd;
    const sig = signature(gd), n = gd.layout.meta.frames.length;
    let hidden = old && old.hidden;
    if (!hidden) {
      hidden = document.createElement('div');
      hidden.setAttribute('aria-hidden', 'true');
      document.body.appendChild(hidden);
    }
    hidden.style.cssText = `position:fixed;left:-100000px;top:0;width:${sig[1]}px;height:${sig[2]}px;` +
                           'pointer-events:none';           // off screen (not hidden: its clip paths must clip)
    const a = gd.__explorerAhead = { sig, hidden, pictures: [], shown: null, token: 0, own: false, timer: null };
    delete gd.dataset.framesAhead;
    const step = async (k) => {
      if (gd.__explorerAhead !== a || !current(a, gd)) return;          // redrawn meanwhile: started again
      if (k === n) { gd.dataset.framesAhead = String(n); return; }
      const fr = frameOf(gd, k, { width: sig[1], height: sig[2], meta: undefined });
      if (!fr) return;
      await window.Plotly.react(hidden, fr[0], fr[1], { staticPlot: true, displayModeBar: false });
      if (gd.__explorerAhead !== a) return;
      a.pictures[k] = picture(hidden, sig[1], sig[2]);
      setTimeout(() => step(k + 1), 0);
    };
    setTimeout(() => step(0), 200);
  };
  const nextPaint = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const showAhead = (gd, i) => {
    const a = gd.__explorerAhead;
    if (!current(a, gd) || !a.pictures[i]) return false;
    const pic = a.pictures[i];
    // beside the figure, not in it (plotly styles every element of its kind it finds in the figure), exactly over
    // the figure's drawing (to the fraction of a pixel: thin lines would blur)
    if (a.shown !== null) a.pictures[a.shown].replaceWith(pic);
    else gd.after(pic);
    const there = gd.querySelector('.svg-container').getBoundingClientRect(), here = pic.getBoundingClientRect();
    if (here.left !== there.left || here.top !== there.top) {
      pic.style.left = `${(parseFloat(pic.style.left) || 0) + there.left - here.left}px`;
      pic.style.top = `${(parseFloat(pic.style.top) || 0) + there.top - here.top}px`;
    }
    a.shown = i;
    gd.classList.add('explorer-ahead-shown');
    followed(gd, i);
    const token = ++a.token;
    clearTimeout(a.timer);
    a.timer = setTimeout(async () => {                 // the thumb rests: plotly draws the frame itself
      const fr = a.token === token && frameOf(gd, i);
      if (!fr) return;
      a.own = true;
      try { await window.Plotly.react(gd, fr[0], fr[1]); } catch (err) { console.error(err); }
      a.own = false;
      await nextPaint();
      if (a.token === token) unshow(gd);
    }, REST_MS);
    return true;
  };
  // a frame not drawn ahead yet: drawn with Plotly.react (one pass, where an animation redraws after applying
  // the frame); a thumb faster than the drawing skips to its latest step
  let drawing = false, wanted = null;
  const react = async (gd) => {
    if (drawing) return;
    drawing = true;
    try {
      while (wanted !== null) {
        const k = wanted;
        wanted = null;
        const fr = frameOf(gd, k);
        if (!fr) continue;
        unshow(gd);
        try { await window.Plotly.react(gd, fr[0], fr[1]); } catch (err) { console.error(err); continue; }
        followed(gd, k);
      }
    } finally { drawing = false; }
  };
  const show = (gd, i) => {
    if (gd.__explorerShown === i) return;
    gd.__explorerShown = i;
    const meta = gd.layout.meta;
    if (meta.redraw) { if (!drawing && showAhead(gd, i)) return; wanted = i; react(gd); return; }
    window.Plotly.animate(gd, [meta.frames[i]], { mode: 'immediate', transition: { duration: 0 },
                                                  frame: { duration: 0, redraw: false } });
    settle(gd, true);
  };
  const listen = () => {
    const gd = figure();
    if (gd && gd.__explorerFollow !== data.key) {
      gd.__explorerFollow = data.key;
      gd.on('plotly_sliderchange', (e) => {
        if (!e || !e.step) return;
        if (e.step.method === 'skip') show(gd, e.slider.steps.indexOf(e.step));     // the component draws it
        else settle(gd, true);                                       // plotly animated it: redraw when it rests
      });
      gd.on('plotly_sliderend', (e) => { if (e && e.step) setTriggerValue('value', e.step.value); });
      gd.on('plotly_afterplot', () => {                // drawn again (a rerun, a resize): so are its frames
        const a = gd.__explorerAhead;
        if (a && !a.own) { a.token++; clearTimeout(a.timer); unshow(gd); }
        if (gd.layout.meta && gd.layout.meta.follow === data.key) ahead(gd);
      });
    }
    if (gd) ahead(gd);
    const box = gd && document.querySelector('.' + gd.layout.meta.box);
    const shown = box && box.querySelector(`[data-testid="${I.slider_thumb_value}"]`);
    if (shown && !shown.__explorerFollow) {
      shown.__explorerFollow = true;
      gd.__explorerShown = gd.layout.meta.current;      // a new control (a rerun): the figure is drawn at its value
      new MutationObserver(() => play(shown.textContent))
        .observe(shown, { childList: true, characterData: true, subtree: true });
    }
  };
  listen();
  const seen = new MutationObserver(listen);
  seen.observe(document.body, { childList: true, subtree: true });
  return () => { seen.disconnect(); clearTimeout(rest); if (prepared) teardown(prepared); prepared = null; };
}
