// Kingyak's Workshop at the table (docs/rules/discordian.md): your characters' Luck and Instant
// Karma and the GM's bonus dice waiting for their next roll, the GM's Discord Die by the roll
// panel (it applies by itself), luck dice, protection and the PvP opponent on a roll, +1 success
// and avoiding a costly success under your own rolls; on the GM dashboard, the Discord Die with
// rounds and scenes, and bonus dice for each character.
import {_, fmt} from "../i18n.js";
import {richText} from "../dice.js";
import {h} from "../dom.js";
import {drawResources, err, fill, li} from "../pools.js";

/** What this table declares to the core (static/tabletop/seam.js): its dice roles, the tones of
 * its flags and its stylesheet (it keeps no state of its own beyond the table's). */
export const table = {
  roles: {
    eliminated: [_("gone"), _("eliminated by the Discord Die")],
    luck: [_("luck"), _("luck die")],
    discord: [_("discord"), _("Discord Die")],
  },
  tones: {"lucky-break": "good", "bad-break": "bad", costly: "bad", fluke: "warn"},
  words: {costly: _("costly"), fluke: _("fluke"), "lucky-break": _("lucky break"), "bad-break": _("bad break")},
  styles: "discordian.css",
};

const PC_DICE = ["d4", "d6", "d8", "d10", "d12"];

/** The bonus dice the GM awarded character ``c``, waiting for its next roll ("d8", "d8", ...). */
function bonusDice(pools, c) {
  return [...pools.values()].filter((p) => p.kind === "bonus-dice" && p.character === c && p.remaining)
    .sort((a, b) => a.sides - b.sides).flatMap((p) => Array(p.remaining).fill(p.die));
}

/** Redraw a roll's headline in the log after a spend changed it (extra successes, costly avoided). */
function redrawRoll(seq, d) {
  const item = document.getElementById(`ev-${seq}`);
  if (!item) return;
  for (const num of item.querySelectorAll(".num")) {
    const key = num.querySelector("small")?.textContent;
    if (key in d && num.querySelector("b")) num.querySelector("b").textContent = d[key];
  }
  // The line under the numbers says what they say (an extra success changes both).
  const line = item.querySelector(".roll > .text");
  if (typeof d.roll_text === "string" && line) line.replaceChildren(...richText(d.roll_text));
  if (d.costly_avoided) {
    for (const b of item.querySelectorAll(".badge")) {
      if (b.textContent === "costly") b.replaceWith(h("span", {class: "badge badge-plain"}, _("costly avoided")));
    }
  }
}

export function room(t) {
  const list = h("ul", {class: "resrows", "aria-live": "polite"});
  const e = err();
  const bonusList = h("ul", {class: "resrows", "aria-live": "polite"});
  t.card(_("Your characters"), list, bonusList, e);
  const $ = (id) => document.getElementById(id);
  const protect = $("f-discordian-protect");
  const note = h("span", {class: "cost"});
  protect?.closest(".field").append(note);
  protect?.addEventListener("input", () => t.drawPanel());
  t.resets.push(() => { if (protect) protect.value = 0; });
  const dd = $("f-discordian-discord");
  if (dd) dd.closest(".field").hidden = true; // the table's Discord Die applies by itself
  const face = h("span", {class: "dd", "aria-hidden": "true"});
  const said = h("span", {"aria-live": "polite"});
  t.ctx.bar.append(face, said);
  t.ctx.bar.hidden = false;
  // The sheet's luck die is the roll's: the table puts it in.
  const luckDie = $("f-discordian-luck_die");
  if (luckDie) luckDie.closest(".field").hidden = true;
  const luck = t.field("luck_dice", _("Luck dice (1 Instant Karma each)"),
    h("input", {type: "number", min: 0, max: 20, value: 0, inputmode: "numeric"}), (v) => (+v > 0 ? +v : undefined));
  const luckNote = h("span", {class: "cost"});
  luck.closest(".field").append(luckNote);
  luck.addEventListener("input", () => t.drawPanel());
  // A PvP roll against a character: its protection costs that character's Instant Karma.
  const versus = t.field("opponent_character", _("Opponent (a character)"), h("select"), (v) => (v ? +v : undefined));
  const opponentBox = $("f-discordian-opponent");
  const showVersus = () => { versus.closest(".field").hidden = !!opponentBox && !opponentBox.checked; };
  opponentBox?.addEventListener("change", showVersus);
  t.resets.push(() => { luck.value = 0; versus.value = ""; showVersus(); });
  const after = new Map(); // roll seq -> what to do once its costly success is avoided
  // A roll's headline as spends left it (roll seq -> the spend's new values): the log may draw
  // the roll later (a replay draws the newest first), so it is redrawn whenever it appears.
  const changed = new Map();
  const log = document.getElementById("log");
  if (log) {
    new MutationObserver(() => {
      for (const [seq, d] of changed) redrawRoll(seq, d);
    }).observe(log, {childList: true});
  }

  /** Under your own successful roll: +1 success for 1 Luck; avoid a costly success. */
  function luckButtons(ev, item) {
    const d = ev.data;
    const error = err();
    const spend = (label, use) => t.button(label, {type: "resource.spend", character: d.character.id, use, roll: ev.seq}, error);
    const avoid = d.flags.includes("costly")
      ? [spend(fmt(_("Avoid costly (%(ones)s Instant Karma)"), {ones: d.ones}), "avoid-costly"), spend(_("Avoid costly (1 Luck)"), "avoid-costly-luck")] : [];
    item.append(h("div", {class: "ev-actions"}, spend(_("+1 success (1 Luck)"), "extra-success"), avoid, error));
    after.set(ev.seq, () => avoid.splice(0).forEach((b) => b.remove()));
  }

  return {
    event(ev, replay, item) {
      const d = ev.data || {};
      if (ev.kind === "pool" && d.action === "spend" && typeof d.roll === "number") {
        changed.set(d.roll, {...changed.get(d.roll), ...d});
        redrawRoll(d.roll, changed.get(d.roll));
        if (d.costly_avoided) after.get(d.roll)?.();
      }
      const mine = ev.actor && ev.actor.seat === t.me;
      if (ev.kind === "roll" && mine && item && d.system === "discordian" && d.character && d.outcome === "success") {
        luckButtons(ev, item);
      }
    },
    draw() {
      drawResources(t, list, {luck: _("Luck"), instant_karma: _("Instant Karma")});
      const waiting = t.mine.map((c) => [c, bonusDice(t.pools, c)]).filter(([, dice]) => dice.length);
      fill(bonusList, JSON.stringify(waiting), waiting.map(([c, dice]) => li(h("strong", null, t.name(c)),
        h("span", {class: "badge badge-good"}, fmt(_("GM's bonus dice for the next roll: %(dice)s"), {dice: dice.join(", ")})))));
      // Who a PvP roll may be against: every character at the table.
      const keep = versus.value;
      const options = [...t.chars.values()].map((ch) => [ch.id, ch.name]);
      if (versus.dataset.k !== JSON.stringify(options)) {
        versus.dataset.k = JSON.stringify(options);
        versus.replaceChildren(h("option", {value: ""}, _("— an NPC (no character) —")),
          options.map(([id, name]) => h("option", {value: id}, name)));
        versus.value = options.some(([id]) => String(id) === keep) ? keep : "";
      }
      showVersus();
    },
    odds(request, c) {
      // The request whose odds the panel shows: with the luck dice and the GM's bonus dice the
      // server will add, and the character's own luck die.
      if (c == null) return request;
      const sheet = t.chars.get(c)?.sheet || {};
      const die = sheet.luck_die || "d6";
      const extra = [...Array(Math.max(0, +luck.value || 0)).fill(die), ...bonusDice(t.pools, c)];
      return {...request, luck_die: die, pool: [...(request.pool || []), ...extra]};
    },
    panel(c) {
      const n = Math.max(0, +luck.value || 0);
      const karma = c == null ? null : t.amount(c, "instant_karma");
      luckNote.textContent = c == null ? _("choose who rolls")
        : (n ? fmt(_("costs %(count)s Instant Karma; "), {count: n}) : "") + fmt(_("%(name)s has %(count)s left"), {name: t.name(c), count: karma});
      if (protect) {
        const n = +protect.value || 0;
        const has = c == null ? _("choose who rolls") : fmt(_("%(name)s has %(count)s left"), {name: t.name(c), count: t.amount(c, "instant_karma")});
        note.textContent = `${n ? `costs up to ${n} Instant Karma (1 a die it shields); ` : ""}${has}`;
      }
      const discord = t.table.discord || {};
      const v = discord.value ?? "";
      face.textContent = v || "–";
      face.classList.toggle("none", !v);
      said.textContent = v ? fmt(_("Discord Die %(v)s: every roll uses it automatically."), {v})
        : discord.wandered ? _("The Discord Die wandered off.") : _("No Discord Die in play.");
      if (dd && dd.value !== String(v)) {
        dd.value = v;
        dd.dispatchEvent(new Event("input", {bubbles: true})); // the odds follow it
      }
    },
  };
}

/** The GM's bonus dice for one character: a die to award, what waits for its next roll. */
function bonusTools(ctx, character) {
  const id = `bonus-${character.id}`;
  const error = h("span", {class: "error small", role: "alert"});
  const die = h("select", {id: `${id}-die`, class: "bonus-die"}, PC_DICE.map((d) => h("option", {value: d}, d)));
  die.value = "d6";
  const give = h("button", {type: "button", class: "small", "data-needs": "live",
    onclick: () => ctx.act({type: "bonus.award", character: character.id, dice: [die.value]}, {button: give, error})},
  _("Give bonus die"));
  const back = h("button", {type: "button", class: "secondary small", "data-needs": "live",
    onclick: () => ctx.act({type: "bonus.take-back", character: character.id}, {button: back, error})}, _("Take back"));
  const waiting = h("span", {class: "muted small"});
  const node = h("div", {class: "seat-tools bonus", role: "group", "aria-label": fmt(_("Bonus dice for %(character)s"), {character: character.name})},
    h("label", {for: die.id}, fmt(_("%(character)s: bonus die"), {character: character.name})), die, give, waiting, back, error);
  return {
    node,
    update() {
      const dice = bonusDice(ctx.state.pools, character.id);
      waiting.textContent = dice.length ? fmt(_("next roll: +%(dice)s"), {dice: dice.join(", ")}) : "";
      give.setAttribute("aria-label", fmt(_("Give bonus die to %(character)s for the next roll"), {character: character.name}));
      back.setAttribute("aria-label", fmt(_("Take back %(character)s's bonus dice"), {character: character.name}));
      back.dataset.blocked = dice.length ? "" : "1";
    },
  };
}

export async function dashboard(ctx) {
  const {keyed} = await import("../gm-views.js");
  const {roundControls} = await import("./base.js");
  const $ = (id) => document.getElementById(id);
  // Characters no player plays (the GM's NPCs) get their tools on the GM's card.
  const npcs = () => {
    const seated = new Set([...ctx.state.seats.values()].filter((s) => s.role !== "gm")
      .flatMap((s) => (s.characters || []).map((c) => c.id)));
    return [...ctx.state.characters.values()].filter((c) => !seated.has(c.id));
  };
  const roll = $("discord-roll");
  roll.addEventListener("click", () => ctx.act({type: "discord.roll"}, {button: roll, error: $("discord-error")}));
  const rounds = roundControls(ctx);
  return {
    get gmSeatShown() { return npcs().length > 0; },
    /** The GM's bonus dice for each character of a seat (the GM's card: the NPCs). */
    seatTools(seat) {
      const box = h("div", {class: "bonus-tools"});
      return {
        node: box,
        update(s) {
          const characters = s.role === "gm" ? npcs() : s.characters || [];
          keyed(box, characters, (c) => c.id, (c) => bonusTools(ctx, c));
        },
      };
    },
    draw() {
      rounds();
      const table = ctx.state.table;
      const discord = table.discord || null;
      const mode = (ctx.page.settings || {}).discord_mode || (discord && discord.mode) || "round";
      const face = $("discord-value");
      face.classList.toggle("none", !discord || discord.value == null);
      face.textContent = !discord ? _("none") : discord.wandered ? _("wandered off") : discord.value == null ? _("to roll") : String(discord.value);
      $("discord-mode").textContent = mode === "scene"
        ? _("Scene mode: one Discord Die a scene; if it wanders off, it is gone for the adventure.")
        : _("Round mode: the Discord Die is rolled as each round begins (before the first round, with this button); if it wanders off, it is gone until the next scene.");
      // Once a round (or scene), not at will; a wandered die waits for a new scene.
      const scene = table.scene || 0;
      const rolled = discord && discord.scene === scene && (mode === "scene" || discord.round === (table.round || 0));
      const gone = discord && discord.wandered && (mode === "scene" || discord.scene === scene);
      roll.dataset.blocked = rolled || gone ? "1" : "";
    },
  };
}
