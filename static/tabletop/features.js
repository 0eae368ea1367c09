// The statistics panel wherever a page has one (room, dashboard): loaded now, and again a moment
// after each roll the page's own socket reports (the room and dashboard dispatch "table:event").
import {StatsPanel} from "./stats.js";

const root = document.getElementById("stats");
if (root) {
  const panel = new StatsPanel(root, root.dataset.url);
  panel.load();
  document.addEventListener("table:event", (e) => {
    const event = e.detail || {};
    if (!event.replay && (event.kind === "roll" || event.kind === "roll.reveal")) panel.soon();
  });
}
