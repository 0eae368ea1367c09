// Exact odds before rolling: asks the engines (never computes them here) and draws a small chart.
import {_, fmt} from "./i18n.js";
import {h, pct, sentence, words} from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const HEADLINE = {total: _("total"), successes: _("successes"), net_successes: _("net successes")};

function svg(tag, attrs, ...kids) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  node.append(...kids);
  return node;
}

/** Drop the far tails (under 0.05% together on each side) so the chart stays readable. */
function trimmed(points) {
  let lo = 0;
  let hi = points.length - 1;
  let cut = 0;
  while (lo < hi && cut + points[lo][1] < 0.0005) cut += points[lo++][1];
  cut = 0;
  while (hi > lo && cut + points[hi][1] < 0.0005) cut += points[hi--][1];
  return points.slice(lo, hi + 1);
}

/** The lowest result that succeeds, where success is "this result or more" (every system's
 * target is): the value whose upper tail carries exactly the answer's chance of success. None
 * without a target, or where no tail matches (success is not a threshold on the headline). */
function successFrom(all, pSuccess) {
  if (pSuccess == null) return null;
  let tail = 0;
  for (let i = all.length - 1; i >= 0; i--) {
    tail += all[i][1];
    if (Math.abs(tail - pSuccess) <= 1e-9) return all[i][0];
    if (tail > pSuccess + 1e-9) break;
  }
  return pSuccess <= 1e-12 ? Infinity : null;
}

export function chart(answer) {
  const all = Object.entries(answer.distribution || {}).map(([k, p]) => [Number(k), p]).sort((a, b) => a[0] - b[0]);
  if (!all.length) return null;
  const points = trimmed(all);
  const top = Math.max(...points.map(([, p]) => p));
  const low = Math.min(...points.map(([, p]) => p));
  // A flat spread (a single d20) has no most likely result: every bar is as tall.
  const flat = points.length > 1 && top - low <= top * 1e-9;
  const mode = flat ? null : points.find(([, p]) => p === top);
  const beats = successFrom(all, answer.p_success);
  const width = points.length * 10;
  const name = HEADLINE[answer.outcome] || answer.outcome || "result";
  const bars = points.map(([value, p], i) => {
    const height = Math.max((p / top) * 60, p > 0 ? 0.8 : 0);
    const classes = ["bar", mode && value === mode[0] ? "mode" : "", beats != null && value >= beats ? "beats" : ""];
    return svg("rect", {x: i * 10 + 1, y: 60 - height, width: 8, height, class: classes.filter(Boolean).join(" ")},
      svg("title", {}, `${value}: ${pct(p)}`));
  });
  const likely = flat ? fmt(_("every result equally likely (%(pct)s each)"), {pct: pct(top)}) : fmt(_("most likely %(mode)s (%(pct)s)"), {mode: mode[0], pct: pct(mode[1])});
  const shaded = beats != null && Number.isFinite(beats) ? fmt(_("; %(beats)s or more succeeds (shaded)"), {beats}) : "";
  const summary = fmt(_("Chart of the %(name)s, %(points)s to %(points2)s; %(likely)s%(shaded)s"), {name, points: points[0][0], points2: points[points.length - 1][0], likely, shaded});
  return h("figure", {class: "chart"},
    svg("svg", {viewBox: `0 0 ${width} 60`, preserveAspectRatio: "none", role: "img", "aria-label": summary}, ...bars),
    h("figcaption", null,
      h("span", null, points[0][0]),
      h("span", {class: "muted"}, `${name} · ${likely}${shaded ? ` · ${beats}+ succeeds` : ""}`),
      h("span", null, points[points.length - 1][0])));
}

export class Odds {
  constructor(box, url, onFieldError) {
    this.box = box;
    this.url = url;
    this.onFieldError = onFieldError;
    this.cache = new Map();
    this.timer = null;
    this.abort = null;
    this.key = "";
  }

  /** Ask again after a quiet ~200 ms. */
  update(system, request, missing) {
    clearTimeout(this.timer);
    if (missing && missing.length) {
      this.key = "";
      if (this.abort) this.abort.abort();
      this.show(h("p", {class: "muted"}, fmt(_("Fill in %(fields)s to see the odds."), {fields: missing.join(", ")})));
      return;
    }
    this.timer = setTimeout(() => this.fetch(system, request), 200);
  }

  async fetch(system, request) {
    const json = JSON.stringify(request);
    const key = `${system}|${json}`;
    if (key === this.key) return;
    this.key = key;
    if (this.abort) this.abort.abort();
    if (this.cache.has(key)) {
      this.render(this.cache.get(key));
      return;
    }
    this.abort = new AbortController();
    this.box.setAttribute("aria-busy", "true");
    let status = 0;
    let body = null;
    try {
      // check=1: a request not finished yet answers 200 with ok:false, so typing does not
      // fill the console with failed requests.
      const params = new URLSearchParams({system, request: json, check: "1"});
      const response = await fetch(`${this.url}?${params}`, {signal: this.abort.signal, credentials: "same-origin"});
      status = response.status;
      body = await response.json();
    } catch (err) {
      if (err.name === "AbortError") return;
      if (key === this.key) this.key = "";
      this.show(h("p", {class: "muted"}, _("Odds are not available right now.")));
      return;
    } finally {
      this.box.removeAttribute("aria-busy");
    }
    if (status === 200 && body && body.ok === false) status = body.status;
    const result = status === 200 ? {answer: body} : {status, error: (body && body.error) || {}};
    if (status === 200 || status === 400 || status === 422) this.cache.set(key, result);
    if (key === this.key) this.render(result);
  }

  render(result) {
    if (result.answer) {
      this.show(this.answer(result.answer));
      return;
    }
    const error = result.error;
    if (result.status === 422) {
      this.show(h("p", {class: "warn"}, _("Too large for exact odds: "), sentence(error.message || _("this roll is past the engine's limit"))));
    } else {
      this.show(h("p", {class: "error"}, sentence(error.message || _("These dice cannot be rolled."))));
      if (error.field) this.onFieldError(error.field, error.message);
    }
  }

  answer(answer) {
    const parts = [];
    if (answer.p_success != null) {
      parts.push(h("p", {class: "chance"}, h("span", null, _("Chance of success")), " ", h("strong", {class: "p-success"}, pct(answer.p_success))));
    } else {
      parts.push(h("p", {class: "chance muted"}, _("No target set: the spread of results.")));
    }
    parts.push(chart(answer));
    const events = Object.entries(answer.events || {}).filter(([, p]) => p > 0);
    if (events.length) {
      parts.push(h("ul", {class: "events"}, events.map(([flag, p]) => h("li", null, words(flag), " ", h("b", null, pct(p))))));
    }
    return parts;
  }

  show(content) {
    this.box.replaceChildren(h("h3", {class: "odds-h"}, _("Exact odds")), ...[content].flat().filter(Boolean));
  }

  clear() {
    clearTimeout(this.timer);
    this.key = "";
    this.box.replaceChildren();
  }
}
