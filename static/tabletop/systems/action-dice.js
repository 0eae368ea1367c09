// The Action Dice System at the table (docs/rules/action-dice.md): the round and your characters'
// action dice left in it (restricted ones by their class or skill), defenses, and the roll options
// that spend them (a defense against a named opponent, general defense, a group attack, the class
// or skill a roll is for); rounds and everyone's defenses on the GM dashboard.
import {_, fmt} from "../i18n.js";
import {h} from "../dom.js";
import {fill, li} from "../pools.js";

/** What this table declares to the core (static/tabletop/seam.js): its stylesheet. */
export const table = {styles: "action-dice.css"};

const against = (d) => Object.entries(d.against_opponent || {}).map(([who, n]) => fmt(_("+%(n)s against %(who)s"), {n, who}));

export function room(t) {
  const roundBox = h("div", {"aria-live": "polite"});
  const defBox = h("div");
  t.card(_("The round"), roundBox, defBox);
  const defense = t.field("defense", _("This roll is"), h("select", null, [["", _("attack")], ["action", _("defense action")],
    ["general", _("general defense")]].map(([value, text]) => h("option", {value}, text))), (v) => v || undefined);
  const opponent = t.field("opponent", _("Against (defense action)"), h("input", {maxlength: 80, autocomplete: "off"}),
    (v) => (defense.value === "action" && v.trim()) || undefined);
  const extra = t.field("group_extra", _("Group attack: extra action dice"), h("input", {type: "number", min: 0, max: 20, value: 0}),
    (v) => (+v > 0 ? +v : undefined));
  const restricted = t.field("restricted", _("Restricted dice for (class or skill)"), h("input", {maxlength: 60, autocomplete: "off"}),
    (v) => v.trim() || undefined);
  const showOpponent = () => { opponent.closest(".field").hidden = defense.value !== "action"; };
  defense.addEventListener("change", showOpponent);
  showOpponent();
  t.resets.push(() => { defense.value = ""; extra.value = 0; opponent.value = ""; restricted.value = ""; showOpponent(); });
  // Every roll here is some character's: its action dice come out of that character's round.
  const who = h("small", {class: "help", id: "roll-character-help"});
  t.ctx.panel.character?.closest(".field")?.append(who);
  t.ctx.panel.character?.setAttribute("aria-describedby", who.id);
  return {
    panel(c) {
      const left = [...t.pools.values()].filter((p) => p.kind === "round-dice" && p.character === c)
        .reduce((n, p) => n + p.remaining, 0);
      who.textContent = c == null ? _("Every roll here is a character's: choose who rolls.")
        : t.table.round ? fmt(_("%(name)s has %(left)s action dice left this round."), {name: t.name(c), left}) : "";
    },
    draw() {
      const round = t.table.round || 0;
      const mine = [...t.pools.values()].filter((p) => p.kind === "round-dice" && t.mine.includes(p.character));
      const defenses = Object.entries(t.table.defense || {});
      fill(roundBox, JSON.stringify([round, mine]), h("p", null, round ? h("strong", null, fmt(_("Round %(round)s"), {round})) : _("No round running.")),
        round && mine.length ? h("ul", {class: "resrows"}, mine.map((p) => li(h("strong", null, t.name(p.character)),
          h("span", {class: "amt"}, h("b", null, p.remaining), fmt(_(" of %(initial)s action dice left"), {initial: p.initial}),
            p.label ? fmt(_(" for %(label)s"), {label: p.label}) : ""))))
          : null);
      fill(defBox, JSON.stringify(defenses), defenses.length ? [h("h3", null, _("Defenses this round")),
        h("ul", {class: "resrows"}, defenses.map(([id, d]) => li(h("strong", null, d.name || t.name(+id)),
          [...against(d), fmt(_("+%(against_everyone_else)s against everyone else"), {against_everyone_else: d.against_everyone_else || 0})].join(", "))))] : null);
    },
  };
}

export async function dashboard(ctx) {
  const {roundControls} = await import("./base.js");
  const $ = (id) => document.getElementById(id);
  const rounds = roundControls(ctx);
  const cell = (v) => h("td", null, v == null || v === "" ? "—" : String(v));
  return {
    draw() {
      rounds();
      const defenses = Object.entries(ctx.state.table.defense || {});
      $("defense").replaceChildren(...defenses.map(([id, d]) => h("tr", null,
        h("th", {scope: "row"}, d.name || ctx.characterName(Number(id))),
        cell(Object.entries(d.actions || {}).map(([who, n]) => fmt(_("%(n)s vs %(who)s"), {n, who})).join(", ")),
        cell(d.general), cell(against(d).join(", ")), cell(d.against_everyone_else))));
      $("defense-table").hidden = !defenses.length;
      $("no-defense").hidden = defenses.length > 0;
    },
  };
}
