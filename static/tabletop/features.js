// The table's extras wherever a page has them (room, dashboard): the statistics panel (loaded
// when first opened, and again a moment after each roll) and, in the room, the rolling dice.
// Both hear the page's socket through the "table:event" the room and dashboard dispatch.
const root = document.getElementById("stats");
const details = document.getElementById("stats-details");
const controls = document.getElementById("fx-controls");
let panel = null;

async function openStats() {
  if (panel || !root) return;
  const {StatsPanel} = await import("./stats.js");
  panel = new StatsPanel(root, root.dataset.url);
  panel.load();
}
if (root && (!details || details.open)) openStats();
if (details) details.addEventListener("toggle", () => { if (details.open) openStats(); });

let fx = null;
if (controls) {
  import("./rollfx.js").then(({RollFx}) => { fx = new RollFx(controls); });
}

document.addEventListener("table:event", (e) => {
  const event = e.detail || {};
  if (event.replay) return;
  if (fx) fx.play(event);
  // Only a panel someone looks at refreshes itself: a room of players need not all ask at once.
  const shown = (!details || details.open) && document.visibilityState === "visible";
  if (panel && shown) panel.heard(event);
});
