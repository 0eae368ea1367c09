// Mana roll-and-keep at the table (docs/rules/roll-and-keep.md): extended actions, their
// progress, and the roll option that counts a roll toward one; opened and closed by the GM; and
// the botched actions their characters cannot repeat.
import {_, fmt} from "../i18n.js";
import {h} from "../dom.js";
import {fill, none} from "../pools.js";

/** What this table declares to the core (static/tabletop/seam.js): its rule of the room reducer,
 * the same as RollAndKeepTable.fold (an extended action listed while open, by id, gone once
 * closed), the tone of its flag and its stylesheet. */
export const table = {
  fold(state, event) {
    const extended = (event.data || {}).extended;
    if (!extended) return state;
    const rest = state.extended.filter((x) => x.id !== extended.id);
    return {...state, extended: (extended.open ? [...rest, extended] : rest).sort((a, b) => a.id - b.id)};
  },
  tones: {botch: "bad"},
  words: {botch: _("botch"), "opponent-botch": _("opponent botch")},
  styles: "roll-and-keep.css",
};

/** The open extended actions by id (the room state's key of this table). */
const openActions = (room) => new Map((room.state ? room.own("extended") : []).map((x) => [x.id, x]));

/** Botched actions, by roll: from the "botch" events this screen may see, and from hidden
 * rolls revealed since (their mark stays as hidden as the roll was; the rule binds them now). */
export function botchBook() {
  const marks = new Map();
  return {
    event(ev) {
      const d = ev.data || {};
      if (ev.kind === "pool" && d.action === "botch" && d.folded && d.character) {
        marks.set(d.roll, {who: d.character.name, what: d.what, roll: d.roll});
      }
      const r = ev.kind === "roll.reveal" && d.roll;
      if (r && (r.flags || []).includes("botch") && r.label && r.character) {
        marks.set(d.seq, {who: r.character.name, what: r.label, roll: d.seq});
      }
    },
    list: () => [...marks.values()].sort((a, b) => a.roll - b.roll),
  };
}

/** The botched actions as list items (or a line saying there are none). */
export function botchItems(marks) {
  return marks.length ? marks.map((m) => h("li", {class: "botched"}, h("strong", null, m.who), _(" botched "),
    h("q", null, m.what), h("a", {href: `#ev-${m.roll}`, class: "muted small"}, ` (#${m.roll})`),
    h("span", {class: "muted small"}, _(": cannot be repeated"))))
    : none(_("No botched action."));
}

export function room(t) {
  const list = h("ul", {class: "resrows", "aria-live": "polite"});
  const botched = h("ul", {class: "resrows", "aria-live": "polite"});
  t.card(_("Extended actions"), list, h("h3", null, _("Botched actions")), botched,
    h("p", {class: "muted small"}, _("A botched action (its “what for”) cannot be repeated by its character.")));
  const sel = t.field("extended", _("Counts toward"), h("select"), (v) => (v ? +v : undefined));
  const book = botchBook();
  return {
    event(ev) { book.event(ev); },
    draw() {
      const marks = book.list();
      fill(botched, JSON.stringify(marks), botchItems(marks));
      const ext = openActions(t.room);
      const open = [...ext.values()];
      fill(list, JSON.stringify(open), open.length ? open.map((x) => h("li", {class: "xact"},
        h("span", null, h("strong", null, x.label), ` ${x.progress} / ${x.target} successes`,
          x.each ? h("span", {class: "muted small"}, fmt(_(" (at least %(each)s a roll to count)"), {each: x.each})) : null),
        h("progress", {max: x.target, value: Math.min(x.progress, x.target), "aria-label": x.label})))
        : none(_("No extended action under way.")));
      const keep = sel.value;
      fill(sel, open.map((x) => x.id).join(), h("option", {value: ""}, "(none)"), open.map((x) => h("option", {value: x.id}, x.label)));
      sel.value = ext.has(+keep) ? keep : "";
      sel.parentNode.hidden = !open.length;
    },
  };
}

export async function dashboard(ctx) {
  const {keyed} = await import("../gm-views.js");
  const $ = (id) => document.getElementById(id);
  const form = $("extended-form");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const label = $("ext-label").value.trim();
    const target = Number($("ext-target").value);
    const eachText = $("ext-each").value.trim();
    const each = eachText === "" ? null : Number(eachText);
    const error = $("extended-error");
    if (!label) {
      ctx.showError(error, _("Give the extended action a label."));
      $("ext-label").focus();
      return;
    }
    if (!Number.isInteger(target) || target < 1 || target > 1000) {
      ctx.showError(error, _("The target is a number of successes from 1 to 1000."));
      $("ext-target").focus();
      return;
    }
    if (each !== null && (!Number.isInteger(each) || each < 1 || each > target)) {
      ctx.showError(error, _("Each round's minimum is a number of successes from 1 to the target, or empty."));
      $("ext-each").focus();
      return;
    }
    if (ctx.act({type: "extended.open", label, target, each}, {button: form.querySelector("button"), error})) {
      $("ext-label").value = "";
      $("ext-each").value = "";
    }
  });
  const view = (x) => {
    const label = h("span", {class: "ext-label"});
    const bar = h("progress", {max: 1, value: 0});
    const count = h("span", {class: "ext-count"});
    const error = h("span", {class: "error small", role: "alert"});
    const close = h("button", {type: "button", class: "secondary small", "data-needs": "live",
      "aria-label": fmt(_("Close the extended action %(label)s"), {label: x.label}),
      onclick: () => ctx.act({type: "extended.close", extended: x.id}, {button: close, error})}, _("Close"));
    return {
      node: h("li", {class: "ext"}, label, bar, count, close, error),
      update(item) {
        label.textContent = item.label;
        bar.max = item.target;
        bar.value = Math.min(item.progress, item.target);
        bar.setAttribute("aria-label", fmt(_("%(label)s: %(progress)s of %(target)s successes"), {label: item.label, progress: item.progress, target: item.target}));
        count.textContent = `${item.progress} / ${item.target}${item.each ? fmt(_(" (≥ %(each)s a roll)"), {each: item.each}) : ""}`;
      },
    };
  };
  const book = botchBook();
  return {
    apply(event) { book.event(event); },
    draw() {
      const marks = book.list();
      fill($("botched"), JSON.stringify(marks), botchItems(marks));
      const open = [...openActions(ctx.room).values()].filter((x) => x.open).sort((a, b) => a.id - b.id);
      keyed($("extended"), open, (x) => x.id, view);
      $("no-extended").hidden = open.length > 0;
    },
  };
}
