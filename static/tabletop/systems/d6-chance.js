// Sunrider D6 at the table (docs/rules/d6-chance.md): your characters' points, the character
// point that doubles the base dice for the round, a point spent to survive, the actions each
// character declares for the round (and how many it has taken); rounds and declarations on the
// GM dashboard.
import {_, fmt, ngettext} from "../i18n.js";
import {h} from "../dom.js";
import {drawResources, err, fill, li, none} from "../pools.js";

/** What this table declares to the core (static/tabletop/seam.js): its chance die's caption,
 * the tone of its flag and its stylesheet. */
export const table = {
  roles: {chance: [_("chance"), _("chance die")]},
  tones: {complication: "warn"},
  words: {complication: _("complication")},
  styles: "d6-chance.css",
};

/** Actions taken this round, from the "staged" events this screen may see: character -> count. */
export function actionBook() {
  const taken = new Map(); // `${character}:${round}` -> the highest action number seen
  return {
    event(ev) {
      const d = ev.data || {};
      if (ev.kind !== "pool" || d.action !== "staged" || !d.character) return;
      const key = `${d.character.id}:${d.round}`;
      taken.set(key, Math.max(taken.get(key) || 0, d.taken));
    },
    taken: (c, round) => taken.get(`${c}:${round}`) || 0,
  };
}

/** "2 actions declared (−3D), 1 taken" for a character this round, or null. */
export function declaredText(table, book, c) {
  const n = (table.declared || {})[String(c)];
  if (!n) return null;
  const taken = book.taken(c, table.round);
  const penalty = n > 1 ? fmt(_(" (−%(dice)sD each)"), {dice: 3 * (n - 1)}) : "";
  const extra = taken > n
    ? fmt(ngettext("; %(count)s more defense", "; %(count)s more defenses", taken - n), {count: taken - n}) : "";
  return fmt(ngettext("%(count)s action declared%(penalty)s, %(taken)s taken%(extra)s",
    "%(count)s actions declared%(penalty)s, %(taken)s taken%(extra)s", n),
  {count: n, penalty, taken: Math.min(taken, n), extra});
}

export function room(t) {
  const list = h("ul", {class: "resrows", "aria-live": "polite"});
  const e = err();
  t.card(_("Your characters"), list, e);
  const cp = document.getElementById("f-d6-chance-character_point");
  const note = h("span", {class: "cost"});
  cp?.closest(".field").append(note);
  t.resets.push(() => { if (cp) cp.checked = false; });
  t.check("long_action", _("A long action (a character point lasts this roll only)"));
  t.check("defense", _("A dodge or other defense (beyond the declared actions, only these)"));
  const book = actionBook();
  const actionsNote = h("span", {class: "cost", "aria-live": "polite"});
  document.getElementById("f-d6-chance-actions")?.closest(".field")?.append(actionsNote);
  // A point spent this round: the character's rolls are doubled until the GM's next round.
  // The round each of your characters' points lasts, read off its spend (as hidden as the roll
  // that paid it). Outside rounds, or for a long action, a point lasts the one roll it is spent on.
  const lasts = new Map();
  const active = (c) => c != null && !!t.table.round && lasts.get(c) === t.table.round;
  return {
    event(ev) {
      const d = ev.data || {};
      if (ev.kind === "pool" && d.use === "double-base" && d.lasts_round && d.character) lasts.set(d.character.id, d.lasts_round);
      book.event(ev);
    },
    draw() {
      drawResources(t, list, {character_points: _("Character points")}, (c, [points]) => {
        const who = t.name(c);
        const survive = t.button(_("Survive"), {type: "resource.spend", character: c, use: "survive"}, e,
          fmt(_("Spend one of %(who)s's character points to survive?"), {who}));
        // The name starts with the words on the button (speech input says what it sees).
        survive.setAttribute("aria-label", fmt(_("Survive: %(who)s (1 character point)"), {who}));
        survive.dataset.off = points ? "" : 1;
        const said = declaredText(t.table, book, c);
        // In a round, a character declares its actions once; every roll of the round takes their penalty.
        const count = h("input", {type: "number", class: "num-in", min: 1, max: 100, value: 1,
          "aria-label": fmt(_("Actions %(who)s takes this round"), {who})});
        const declare = t.button(_("Declare"), () => ({type: "actions.declare", character: c, actions: +count.value || 1}), e);
        declare.setAttribute("aria-label", fmt(_("Declare %(who)s's actions this round"), {who}));
        const asking = t.table.round && !said ? h("span", {class: "ptools"}, count, declare) : null;
        return [active(c) ? h("span", {class: "badge badge-good"}, _("base doubled this round")) : null,
          said ? h("span", {class: "badge badge-plain"}, said) : null, asking, survive];
      }, JSON.stringify([t.table.round, t.table.declared, t.mine.map((c) => [active(c), book.taken(c, t.table.round)])]));
    },
    panel(c) {
      // The declaration, not the field, sets a declared character's penalty this round.
      const said = c == null ? null : declaredText(t.table, book, c);
      actionsNote.textContent = said ? fmt(_("%(name)s: %(said)s; the declaration sets this roll's penalty"), {name: t.name(c), said}) : "";
      if (!cp) return;
      if (active(c)) {
        note.textContent = fmt(_("%(name)s's point is spent: doubled for the rest of the round"), {name: t.name(c)});
        cp.disabled = true;
        return;
      }
      const once = t.table.round ? "" : _("; no round yet: a point lasts this roll");
      note.textContent = c == null ? _("choose who rolls") : fmt(_("%(name)s has %(count)s left"), {name: t.name(c), count: t.amount(c, "character_points")}) + once;
      cp.disabled = !(c && t.amount(c, "character_points"));
      if (cp.disabled && cp.checked) {
        cp.checked = false;
        cp.dispatchEvent(new Event("change", {bubbles: true}));
      }
    },
  };
}

export async function dashboard(ctx) {
  const {roundControls} = await import("./base.js");
  const rounds = roundControls(ctx);
  const book = actionBook();
  const list = document.getElementById("declared");
  return {
    apply(event) { book.event(event); },
    draw() {
      rounds();
      const table = ctx.state.table || {};
      const rows = Object.keys(table.declared || {}).map(Number)
        .map((c) => [ctx.characterName(c), declaredText(table, book, c)]);
      fill(list, JSON.stringify(rows), rows.length ? rows.map(([who, said]) => li(h("strong", null, who), ` ${said}`))
        : none(table.round ? _("Nobody has declared actions this round.") : _("Actions are declared once a round begins.")));
    },
  };
}
