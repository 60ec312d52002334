// Live training's charts keep their element from tick to tick while their structure stays (explorer/ui/internals.py,
// charts_kept_by_key): each tick's figures arrive here, and plotly.js updates each chart in place, so a chart is
// never an empty box between two ticks and the browser does not draw it anew at every tick. Every element of a
// chart's key is updated: while Streamlit swaps a part of the page it can hold an outgoing copy beside the new one.
export default function (component) {
  const figures = JSON.parse(component.data.figures);
  if (!window.Plotly) return;
  for (const [key, fig] of Object.entries(figures)) {
    for (const gd of document.querySelectorAll(`.st-key-${CSS.escape(key)} .js-plotly-plot`)) {
      window.Plotly.react(gd, fig.data, fig.layout).catch((err) => console.error(err));
    }
  }
}
