// The dice tray under the notation field: tap dice to add them, +/- a modifier, advantage or
// disadvantage on a d20; and the field's memory of the last rolls. Everything it does is typed
// into the notation field, so the field stays the one truth and a player learns the notation.
import {_, fmt} from "./i18n.js";
import {h} from "./dom.js";

export const DICE = [4, 6, 8, 10, 12, 20, 100];
const HISTORY = 50; // kept (Up walks them); the tray shows the newest few
const SHOWN = 8;

// "2d6+1d8-1", "2d20kh1+5": dice terms and one number. Anything else is left as typed.
const TERM = /^([+-]?)(\d*)d(\d+)(k[hl]1)?$/;

/** {dice: [{count, sides, keep}], modifier} or null for notation the tray does not read. */
export function parse(text) {
  const compact = String(text || "").replace(/\s+/g, "");
  if (!compact) return {dice: [], modifier: 0};
  const parts = compact.match(/[+-]?[^+-]+/g) || [];
  const dice = [];
  let modifier = 0;
  for (const part of parts) {
    if (/^[+-]?\d+$/.test(part)) {
      modifier += Number(part);
      continue;
    }
    const m = part.match(TERM);
    if (!m || m[1] === "-") return null;
    const count = m[2] === "" ? 1 : Number(m[2]);
    if (!count) return null;
    const same = dice.find((d) => d.sides === Number(m[3]) && !d.keep && !m[4]);
    if (same) same.count += count;
    else dice.push({count, sides: Number(m[3]), keep: m[4] || ""});
  }
  return {dice, modifier};
}

export function print({dice, modifier}) {
  const terms = dice.map((d) => `${d.count}d${d.sides}${d.keep}`);
  let text = terms.join("+");
  if (modifier) text += (modifier > 0 ? (text ? "+" : "") : "-") + Math.abs(modifier);
  return text;
}

/** Add one die of ``sides``: "2d6" + d6 -> "3d6", "1d20+5" + d8 -> "1d20+1d8+5". */
export function addDie(text, sides) {
  const parsed = parse(text);
  if (!parsed) return `${String(text).trim()}+1d${sides}`;
  const same = parsed.dice.find((d) => d.sides === sides && !d.keep);
  if (same) same.count += 1;
  else parsed.dice.push({count: 1, sides, keep: ""});
  return print(parsed);
}

export function addModifier(text, delta) {
  const parsed = parse(text);
  if (!parsed) return `${String(text).trim()}${delta > 0 ? "+" : "-"}${Math.abs(delta)}`;
  parsed.modifier += delta;
  return print(parsed);
}

/** "adv" | "dis" | "" as the notation stands (one d20 kept of two). */
export function edge(text) {
  const parsed = parse(text);
  const d20 = parsed && parsed.dice.find((d) => d.sides === 20 && d.keep);
  return d20 && d20.count === 2 ? (d20.keep === "kh1" ? "adv" : "dis") : "";
}

/** Roll the d20 twice and keep the higher ("adv") or lower ("dis"), or once (""). */
export function setEdge(text, want) {
  const parsed = parse(text) || {dice: [], modifier: 0};
  let d20 = parsed.dice.find((d) => d.sides === 20);
  if (!d20) {
    d20 = {count: 1, sides: 20, keep: ""};
    parsed.dice.unshift(d20);
  }
  d20.count = want ? 2 : 1;
  d20.keep = want === "adv" ? "kh1" : want === "dis" ? "kl1" : "";
  return print(parsed);
}

/** The notation field's memory: the last rolls, newest first, kept in this browser (per room:
 * the key names it). */
export class History {
  constructor(key, store) {
    this.key = key;
    this.store = store;
  }

  list() {
    try {
      const list = JSON.parse(this.store.get(this.key) || "[]");
      return Array.isArray(list) ? list.filter((x) => typeof x === "string") : [];
    } catch {
      return [];
    }
  }

  remember(notation) {
    const text = String(notation || "").trim();
    if (!text) return;
    const list = [text, ...this.list().filter((x) => x !== text)].slice(0, HISTORY);
    this.store.set(this.key, JSON.stringify(list));
  }
}

/** The tray for ``input`` (the notation field). ``history``: a History, or null. */
export function tray(input, history) {
  const set = (text) => {
    input.value = text;
    input.dispatchEvent(new Event("input", {bubbles: true}));
    draw();
  };
  const edgeButtons = [["adv", _("Advantage")], ["dis", _("Disadvantage")]].map(([value, text]) =>
    h("button", {type: "button", class: "secondary small edge", "aria-pressed": "false",
      onclick: () => set(setEdge(input.value, edge(input.value) === value ? "" : value))}, text));
  const recent = h("div", {class: "recent", role: "group", "aria-label": _("Your last rolls")});
  const draw = () => {
    const now = edge(input.value);
    edgeButtons.forEach((b, i) => b.setAttribute("aria-pressed", String(now === ["adv", "dis"][i])));
    if (!history) return;
    const list = history.list().slice(0, SHOWN);
    recent.replaceChildren(...(list.length ? [h("span", {class: "muted small"}, _("Last:"))] : []),
      ...list.map((text) => h("button", {type: "button", class: "secondary small recent-roll",
        "aria-label": fmt(_("Use %(text)s again"), {text}), onclick: () => set(text)}, text)));
    recent.hidden = !list.length;
  };
  input.addEventListener("input", draw);
  if (history) keys(input, history, set);
  const node = h("div", {class: "tray"},
    h("div", {class: "tray-dice", role: "group", "aria-label": _("Add dice")},
      DICE.map((sides) => h("button", {type: "button", class: "secondary die-button",
        "aria-label": fmt(_("Add a d%(sides)s"), {sides}), onclick: () => set(addDie(input.value, sides))}, `d${sides}`))),
    h("div", {class: "tray-row"},
      h("div", {class: "tray-mod", role: "group", "aria-label": _("Modifier")},
        h("button", {type: "button", class: "secondary small", "aria-label": _("−1 to the modifier"),
          onclick: () => set(addModifier(input.value, -1))}, "−1"),
        h("button", {type: "button", class: "secondary small", "aria-label": _("+1 to the modifier"),
          onclick: () => set(addModifier(input.value, 1))}, "+1")),
      h("div", {class: "tray-edge", role: "group", "aria-label": "d20"}, edgeButtons),
      h("button", {type: "button", class: "link small", onclick: () => set("")}, _("Clear"))),
    recent);
  draw();
  return {node, draw};
}

/** A terminal's habits: Up and Down walk the earlier rolls, Escape clears (Enter: the form's). */
function keys(input, history, set) {
  let at = -1; // -1: what is typed; 0, 1, ...: that many rolls back
  let draft = "";
  input.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.isComposing) return;
    if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      const list = history.list();
      const next = e.key === "ArrowUp" ? Math.min(at + 1, list.length - 1) : Math.max(at - 1, -1);
      if (next === at) return;
      e.preventDefault();
      if (at === -1) draft = input.value;
      set(next === -1 ? draft : list[next]); // (its input event resets at)
      at = next;
      input.setSelectionRange(input.value.length, input.value.length);
    } else if (e.key === "Escape" && input.value) {
      e.preventDefault();
      set("");
    }
  });
  input.addEventListener("input", () => { at = -1; });
  input.form?.addEventListener("submit", () => { at = -1; });
}
