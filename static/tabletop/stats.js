// "Are the dice fair?": per seat and die, the face counts as a bar chart (inline SVG), the
// mean against a fair die's, and the verdict in words, as the server works them out from the
// stored events this viewer may see.
import {_, fmt, ngettext} from "./i18n.js";
import {h} from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const svg = (tag, attrs, ...kids) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const kid of kids) if (kid) node.append(kid);
  return node;
};
const BADGE = {fair: [_("no sign of bias"), "good"], "too-few": [_("too few rolls"), "plain"], weak: [_("weak sign"), "warn"], biased: [_("sign of bias"), "bad"], none: [_("no rolls"), "plain"]};

/** A bar per face, a dashed line where a fair die's bars would stand. */
export function chart(die) {
  const n = die.faces.length;
  const width = 300, height = 90, top = 6, base = height - 16;
  const expected = die.n / n;
  const most = Math.max(expected * 1.25, ...die.counts, 1);
  const bar = width / n;
  const y = (count) => base - (count / most) * (base - top);
  const labelEvery = n <= 12 ? 1 : n <= 20 ? (n === 20 ? 19 : 5) : Math.ceil(n / 10);
  const bars = die.counts.map((count, i) => svg("rect", {
    x: (i * bar + bar * 0.12).toFixed(2), y: y(count).toFixed(2), width: (bar * 0.76).toFixed(2),
    height: Math.max(0, base - y(count)).toFixed(2), class: "bar"},
  svg("title", null, document.createTextNode(`${die.faces[i]}: ${count}`))));
  // The end labels sit inside the chart (a centred "100" would be cut at the edge); a label
  // too close to the last yields.
  const shown = (i) => i === n - 1 || (i % labelEvery === 0 && (n - 1 - i >= labelEvery / 2 || n <= 12));
  const narrow = n > 20; // bars narrower than their labels
  const place = (i) => (narrow && i === 0 ? [0, "start"] : narrow && i === n - 1 ? [width, "end"] : [i * bar + bar / 2, "middle"]);
  const labels = die.faces.map((face, i) => {
    if (!shown(i)) return null;
    const [x, anchor] = place(i);
    return svg("text", {x: x.toFixed(2), y: height - 3, "text-anchor": anchor, class: "axis"}, document.createTextNode(String(face)));
  });
  const fy = y(expected).toFixed(2);
  const fair = die.n ? svg("line", {x1: 0, x2: width, y1: fy, y2: fy, class: "fair-line"}) : null;
  const words = die.faces.map((f, i) => `${f}: ${die.counts[i]}`).join(", ");
  return svg("svg", {viewBox: `0 0 ${width} ${height}`, class: "stats-chart", role: "img",
    "aria-label": fmt(_("%(die)s faces (fair: about %(expected)s each): %(words)s"), {die: die.die, expected: expected.toFixed(1), words})}, ...bars, fair, ...labels);
}

function dieCard(die) {
  const [word, tone] = BADGE[die.verdict] || BADGE.none;
  const mean = die.mean == null ? "—" : die.mean.toFixed(2);
  return h("article", {class: `stats-die verdict-${die.verdict}`},
    h("h3", null, die.die, " ", h("span", {class: `badge badge-${tone}`}, word)),
    h("p", {class: "stats-sentence"}, die.sentence),
    chart(die),
    h("p", {class: "muted small"}, fmt(_("mean %(mean)s (a fair %(die)s: %(expected_mean)s)"), {mean, die: die.die, expected_mean: die.expected_mean.toFixed(2)}),
      die.p == null ? "" : ` · χ² ${die.chi2.toFixed(1)}, ${die.df} df, ${die.method === "monte-carlo" ? _("simulated p") : "p"} ${die.p < 0.001 ? "< 0.001" : die.p.toFixed(3)}`));
}

export class StatsPanel {
  constructor(root, url) {
    this.root = root;
    this.url = url;
    this.campaignUrl = root.dataset.campaignUrl || null;
    this.who = root.querySelector("#stats-who");
    this.scope = root.querySelector("#stats-scope");
    this.body = root.querySelector("#stats-body");
    this.summary = root.querySelector("#stats-summary");
    this.report = null;
    this.timer = null;
    root.querySelector("#stats-refresh").addEventListener("click", () => this.load());
    this.who.addEventListener("change", () => this.draw());
    if (this.scope) this.scope.addEventListener("change", () => this.load());
  }

  /** Hear a live event: one that brings dice (a roll, a reveal, a die used on an open roll)
   * changes the figures. */
  heard(event) {
    const data = event.data || {};
    if (event.kind === "roll" || event.kind === "roll.reveal" || (Array.isArray(data.dice) && data.dice.length)) this.soon();
  }

  /** Reload a moment after a roll: several rolls in a burst cost one request, and the screens
   * of a room spread their requests over a second or two. */
  soon() {
    if (this.timer) return;
    this.timer = setTimeout(() => { this.timer = null; this.load(); }, 1000 + Math.random() * 1500);
  }

  async load() {
    const url = this.scope && this.scope.value === "campaign" ? this.campaignUrl : this.url;
    try {
      const answer = await fetch(url, {credentials: "same-origin", headers: {Accept: "application/json"}});
      const seconds = Math.min(120, Number(answer.headers.get("Retry-After")) || 5);
      if (answer.status === 429 || answer.status === 503) {
        this.summary.textContent = fmt(_("The statistics will load again in %(seconds)s s."), {seconds});
        clearTimeout(this.timer);
        this.timer = setTimeout(() => { this.timer = null; this.load(); }, seconds * 1000);
        return;
      }
      if (!answer.ok) throw new Error(String(answer.status));
      this.report = await answer.json();
    } catch {
      this.summary.textContent = _("The statistics could not be loaded; try Refresh.");
      return;
    }
    this.draw();
  }

  draw() {
    const report = this.report;
    if (!report) return;
    const chosen = this.who.value;
    const names = report.seats.map((s) => s.who).filter((w) => w !== "Whole table");
    this.who.replaceChildren(h("option", {value: ""}, _("whole table")), ...names.map((n) => h("option", {value: n}, n)));
    this.who.value = names.includes(chosen) ? chosen : "";
    const seat = report.seats.find((s) => s.who === (this.who.value || "Whole table"));
    // The summary speaks of what the charts show: the whole table, or the seat chosen.
    const rolls = this.who.value && seat ? seat.rolls : report.rolls;
    const by = this.who.value ? fmt(_(" by %(who)s"), {who: this.who.value}) : "";
    const hidden = report.hidden ? fmt(ngettext(" (%(count)s hidden roll not counted)", " (%(count)s hidden rolls not counted)", report.hidden), {count: report.hidden}) : "";
    const counted = report.scope === "campaign"
      ? ngettext("%(count)s roll%(by)s counted over the campaign%(hidden)s.", "%(count)s rolls%(by)s counted over the campaign%(hidden)s.", rolls)
      : ngettext("%(count)s roll%(by)s counted over this session%(hidden)s.", "%(count)s rolls%(by)s counted over this session%(hidden)s.", rolls);
    this.summary.textContent = fmt(counted, {count: rolls, by, hidden});
    this.body.replaceChildren(...(seat ? seat.dice.map(dieCard) : [h("p", {class: "muted"}, _("No dice rolled yet."))]));
  }
}
