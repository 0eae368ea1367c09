// Kingyak's Workshop at the table (docs/rules/discordian.md): your characters' Luck and Instant
// Karma and the GM's bonus dice waiting for their next roll, the GM's Discord Die by the roll
// panel (it applies by itself), luck dice, protection and the PvP opponent on a roll, +1 success
// and avoiding a costly success under your own rolls; on the GM dashboard, the Discord Die with
// rounds and scenes, and bonus dice for each character.
import {richText} from "../dice.js";
import {h} from "../dom.js";
import {drawResources, err, fill, li} from "../pools.js";

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
      if (b.textContent === "costly") b.replaceWith(h("span", {class: "badge badge-plain"}, "costly avoided"));
    }
  }
}

export function room(t) {
  const list = h("ul", {class: "resrows", "aria-live": "polite"});
  const e = err();
  const bonusList = h("ul", {class: "resrows", "aria-live": "polite"});
  t.card("Your characters", list, bonusList, e);
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
  const luck = t.field("luck_dice", "Luck dice (1 Instant Karma each)",
    h("input", {type: "number", min: 0, max: 20, value: 0, inputmode: "numeric"}), (v) => (+v > 0 ? +v : undefined));
  const luckNote = h("span", {class: "cost"});
  luck.closest(".field").append(luckNote);
  luck.addEventListener("input", () => t.drawPanel());
  // A PvP roll against a character: its protection costs that character's Instant Karma.
  const versus = t.field("opponent_character", "Opponent (a character)", h("select"), (v) => (v ? +v : undefined));
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
      ? [spend(`Avoid costly (${d.ones} Instant Karma)`, "avoid-costly"), spend("Avoid costly (1 Luck)", "avoid-costly-luck")] : [];
    item.append(h("div", {class: "ev-actions"}, spend("+1 success (1 Luck)", "extra-success"), avoid, error));
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
      drawResources(t, list, {luck: "Luck", instant_karma: "Instant Karma"});
      const waiting = t.mine.map((c) => [c, bonusDice(t.pools, c)]).filter(([, dice]) => dice.length);
      fill(bonusList, JSON.stringify(waiting), waiting.map(([c, dice]) => li(h("strong", null, t.name(c)),
        h("span", {class: "badge badge-good"}, `GM's bonus dice for the next roll: ${dice.join(", ")}`))));
      // Who a PvP roll may be against: every character at the table.
      const keep = versus.value;
      const options = [...t.chars.values()].map((ch) => [ch.id, ch.name]);
      if (versus.dataset.k !== JSON.stringify(options)) {
        versus.dataset.k = JSON.stringify(options);
        versus.replaceChildren(h("option", {value: ""}, "— an NPC (no character) —"),
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
      luckNote.textContent = c == null ? "choose who rolls"
        : `${n ? `costs ${n} Instant Karma; ` : ""}${t.name(c)} has ${karma} left`;
      if (protect) {
        const n = +protect.value || 0;
        const has = c == null ? "choose who rolls" : `${t.name(c)} has ${t.amount(c, "instant_karma")} left`;
        note.textContent = `${n ? `costs up to ${n} Instant Karma (1 a die it shields); ` : ""}${has}`;
      }
      const discord = t.table.discord || {};
      const v = discord.value ?? "";
      face.textContent = v || "–";
      face.classList.toggle("none", !v);
      said.textContent = v ? `Discord Die ${v}: every roll uses it automatically.`
        : discord.wandered ? "The Discord Die wandered off." : "No Discord Die in play.";
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
  "Give bonus die");
  const back = h("button", {type: "button", class: "secondary small", "data-needs": "live",
    onclick: () => ctx.act({type: "bonus.take-back", character: character.id}, {button: back, error})}, "Take back");
  const waiting = h("span", {class: "muted small"});
  const node = h("div", {class: "seat-tools bonus", role: "group", "aria-label": `Bonus dice for ${character.name}`},
    h("label", {for: die.id}, `${character.name}: bonus die`), die, give, waiting, back, error);
  return {
    node,
    update() {
      const dice = bonusDice(ctx.state.pools, character.id);
      waiting.textContent = dice.length ? `next roll: +${dice.join(", ")}` : "";
      give.setAttribute("aria-label", `Give bonus die to ${character.name} for the next roll`);
      back.setAttribute("aria-label", `Take back ${character.name}'s bonus dice`);
      back.dataset.blocked = dice.length ? "" : "1";
    },
  };
}

export async function dashboard(ctx) {
  const {keyed, roundControls} = await import("../gm-views.js");
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
      face.textContent = !discord ? "none" : discord.wandered ? "wandered off" : discord.value == null ? "to roll" : String(discord.value);
      $("discord-mode").textContent = mode === "scene"
        ? "Scene mode: one Discord Die a scene; if it wanders off, it is gone for the adventure."
        : "Round mode: the Discord Die is rolled as each round begins (before the first round, with this button); if it wanders off, it is gone until the next scene.";
      // Once a round (or scene), not at will; a wandered die waits for a new scene.
      const scene = table.scene || 0;
      const rolled = discord && discord.scene === scene && (mode === "scene" || discord.round === (table.round || 0));
      const gone = discord && discord.wandered && (mode === "scene" || discord.scene === scene);
      roll.dataset.blocked = rolled || gone ? "1" : "";
    },
  };
}
