// The vote page follows its round: every few seconds it asks the server for the round's state (a few bytes) and
// reloads the page when the round has moved on (shown, round 2, revealed, closed). Without JavaScript the page
// works the same, a reload at a time.
(() => {
  const state = document.body.dataset.state;
  const every = Number(document.body.dataset.follow) || 2000;
  const url = location.pathname.replace(/\/$/, "") + "/state";
  const look = async () => {
    try {
      const reply = await fetch(url, { cache: "no-store", credentials: "same-origin" });
      const now = (await reply.json()).state;
      if (now && now !== state) {
        location.replace(location.pathname + location.search);
        return;
      }
    } catch (err) {
      // offline for a moment: look again
    }
    setTimeout(look, every);
  };
  setTimeout(look, every);
})();
