// Sunrider D6 at the table (docs/rules/d6-chance.md): your characters' points, the character
// point that doubles the base dice for the round, a point spent to survive; rounds on the GM
// dashboard.
import {h} from "../dom.js";
import {drawResources, err} from "../pools.js";

export function room(t) {
  const list = h("ul", {class: "resrows", "aria-live": "polite"});
  const e = err();
  t.card("Your characters", list, e);
  const cp = document.getElementById("f-d6-chance-character_point");
  const note = h("span", {class: "cost"});
  cp?.closest(".field").append(note);
  t.resets.push(() => { if (cp) cp.checked = false; });
  t.check("long_action", "A long action (a character point lasts this roll only)");
  // A point spent this round: the character's rolls are doubled until the GM's next round.
  // The round each of your characters' points lasts, read off its spend (as hidden as the roll
  // that paid it). Outside rounds, or for a long action, a point lasts the one roll it is spent on.
  const lasts = new Map();
  const active = (c) => c != null && !!t.table.round && lasts.get(c) === t.table.round;
  return {
    event(ev) {
      const d = ev.data || {};
      if (ev.kind === "pool" && d.use === "double-base" && d.lasts_round && d.character) lasts.set(d.character.id, d.lasts_round);
    },
    draw() {
      drawResources(t, list, {character_points: "Character points"}, (c, [points]) => {
        const who = t.name(c);
        const survive = t.button("Survive", {type: "resource.spend", character: c, use: "survive"}, e,
          `Spend one of ${who}'s character points to survive?`);
        survive.setAttribute("aria-label", `${who} survives (1 character point)`);
        survive.dataset.off = points ? "" : 1;
        return [active(c) ? h("span", {class: "badge badge-good"}, "base doubled this round") : null, survive];
      });
    },
    panel(c) {
      if (!cp) return;
      if (active(c)) {
        note.textContent = `${t.name(c)}'s point is spent: doubled for the rest of the round`;
        cp.disabled = true;
        return;
      }
      const once = t.table.round ? "" : "; no round yet: a point lasts this roll";
      note.textContent = c == null ? "choose who rolls" : `${t.name(c)} has ${t.amount(c, "character_points")} left${once}`;
      cp.disabled = !(c && t.amount(c, "character_points"));
      if (cp.disabled && cp.checked) {
        cp.checked = false;
        cp.dispatchEvent(new Event("change", {bubbles: true}));
      }
    },
  };
}

export async function dashboard(ctx) {
  const {roundControls} = await import("../gm-views.js");
  return {draw: roundControls(ctx)};
}
