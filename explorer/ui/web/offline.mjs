// The offline lesson file's script (explorer/offline.py writes it into each file): the slider, and the choice
// beside it when there is one, pick a precomputed state; the figure, its text alternative, the sentences and the
// question follow. Everything is in the file: nothing is requested from anywhere.
(() => {
  const read = id => JSON.parse(document.getElementById(id).textContent);
  const all = read("states"), words = read("words");
  const slider = document.getElementById("state"), second = document.getElementById("second");
  const figure = document.getElementById("figure"), reveal = document.getElementById("reveal");
  const put = (id, html) => { document.getElementById(id).innerHTML = html; };
  const letter = i => String.fromCharCode(65 + i);

  function show() {
    const row = second ? Number(second.value) : 0, k = Number(slider.value), s = all.states[row][k];
    slider.disabled = all.inert[row];           // (Masking's causal mask has no valid length to move)
    const label = all.control.values[k];
    slider.setAttribute("aria-valuetext", label);
    document.getElementById("value").textContent = label;
    s.figures.forEach((f, i) => {      // the main figure, then (Live training) the others beside it
      const div = i ? document.getElementById(`figure-${i}`) : figure;
      Plotly.react(div, f.figure.data, f.figure.layout, {displaylogo: false, responsive: true});
    });
    // the figures in words, just before them (read by a screen reader, not drawn), as the app does
    document.getElementById("alt").textContent = s.figures.map(f => f.alt).join(" ");
    // the sentences are the app's own text, escaped when the file was written (explorer.offline.inline)
    put("sentences", s.sentences.map((html, i) => `<div class="${s.tones[i]}">${html}</div>`).join(""));
    const q = s.question;
    document.getElementById("question").hidden = !q;
    if (!q) return;
    put("asked", q.asked);
    put("choices", q.choices.map((c, i) => `<li data-letter="${letter(i)}">${letter(i)}. ${c}</li>`).join(""));
    put("verdict", `${words.answer}: ${letter(q.answer)}. ${q.choices[q.answer]}`);
    put("why", q.why);
    document.querySelectorAll("#choices li").forEach((li, i) => {
      li.classList.toggle("right", i === q.answer || q.also.includes(i));
    });
  }

  slider.addEventListener("input", show);
  if (second) second.addEventListener("change", show);
  reveal.addEventListener("toggle", () => document.body.classList.toggle("revealed", reveal.open));
  show();
})();
