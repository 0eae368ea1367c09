// Kingyak's Workshop at the table (docs/rules/discordian.md): your characters' Luck and Instant
// Karma, the GM's Discord Die by the roll panel (it applies by itself), the luck die and
// protection on a roll, +1 success and avoiding a costly success under your own rolls; on the GM
// dashboard, the Discord Die with rounds and scenes.
import {h} from "../dom.js";
import {drawResources, err} from "../pools.js";

/** Redraw a roll's headline in the log after a spend changed it (extra successes, costly avoided). */
function redrawRoll(seq, d) {
  const item = document.getElementById(`ev-${seq}`);
  if (!item) return;
  for (const num of item.querySelectorAll(".num")) {
    const key = num.querySelector("small")?.textContent;
    if (key in d && num.querySelector("b")) num.querySelector("b").textContent = d[key];
  }
  if (d.costly_avoided) {
    for (const b of item.querySelectorAll(".badge")) {
      if (b.textContent === "costly") b.replaceWith(h("span", {class: "badge badge-plain"}, "costly avoided"));
    }
  }
}

export function room(t) {
  const list = h("ul", {class: "resrows", "aria-live": "polite"});
  const e = err();
  t.card("Your characters", list, e);
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
  const luck = t.check("add_luck_die", "Add luck die (1 Instant Karma)");
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
    },
    odds(request, c) {
      // The request whose odds the panel shows: with the luck die the server will add.
      if (!luck.checked || c == null) return request;
      const sheet = t.chars.get(c)?.sheet || {};
      return {...request, pool: [...(request.pool || []), sheet.luck_die || "d6"]};
    },
    panel(c) {
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

export async function dashboard(ctx) {
  const {roundControls} = await import("../gm-views.js");
  const $ = (id) => document.getElementById(id);
  const roll = $("discord-roll");
  roll.addEventListener("click", () => ctx.act({type: "discord.roll"}, {button: roll, error: $("discord-error")}));
  const rounds = roundControls(ctx);
  return {
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
