// Pools and resources (docs/protocol.md): your Zoria pool and open rolls, everyone's dice,
// character resources, the Discord Die, extended actions, rounds, and the roll options that
// spend them. hello gives the state; a later pool event carries the new absolute values.
import {h, words} from "./dom.js";
import {badge} from "./dice.js";

const TITLE = {zoria: "Action dice", "d6-chance": "Your characters", discordian: "Your characters",
  "roll-and-keep": "Extended actions", "action-dice": "The round"};
const RES = {"d6-chance": {character_points: "Character points"}, discordian: {luck: "Luck", instant_karma: "Instant Karma"}};
const $ = (id) => document.getElementById(id);
const err = () => h("span", {class: "error small", role: "alert"});
const li = (...kids) => h("li", null, ...kids);
const none = (text) => h("li", {class: "muted"}, text);

/** Replace an element's children only when what they say changed (live regions stay quiet). */
function fill(el, key, ...kids) {
  if (el.dataset.k === key) return;
  el.dataset.k = key;
  el.replaceChildren(...kids.flat());
}

export class Pools {
  /** ctx: {page, panel, card, bar, request(message, done(error)) -> sent, clientSeed()} */
  constructor(ctx) {
    const {page, panel} = ctx;
    Object.assign(this, {ctx, sys: page.system.id, me: page.seat.id, gm: page.role === "gm", live: false,
      pools: new Map(), res: new Map(), open: new Map(), ext: new Map(), lucky: new Set(), table: {},
      seats: new Map(), chars: new Map(), mine: [], hidden: new Set(), touched: false, after: new Map(), views: new Map(),
      opts: [], resets: []});
    this.mode = panel.modes.find((m) => m.id === this.sys);
    if (TITLE[this.sys]) this.build();
    panel.hooks.push((out) => {
      if (out.system === this.sys) for (const [key, get] of this.opts) out[key] = get();
    });
    panel.oddsHooks.push((system, request, character) => this.oddsRequest(system, request, character));
    panel.character?.addEventListener("change", () => this.drawPanel());
  }

  name(id) {
    return (this.chars.get(id) || {}).name || "?";
  }

  amount(c, name) {
    return this.res.get(`${c}:${name}`) ?? 0;
  }

  /** A button sending ``message`` (or what a function makes) while the table is live. */
  button(label, message, error, ask, cls = "secondary small") {
    const b = h("button", {type: "button", class: cls, "data-live": 1, onclick: () => {
      if (ask && !confirm(ask)) return;
      error.textContent = "";
      const sent = this.ctx.request(typeof message === "function" ? message() : message, (e) => {
        delete b.dataset.busy;
        this.sync();
        if (e) error.textContent = e.message;
      });
      if (sent) b.dataset.busy = 1;
      else error.textContent = "Not connected; try again in a moment.";
      this.sync();
    }}, label);
    return b;
  }

  setState({status, live}) {
    this.live = live && status === "live";
    this.sync();
  }

  sync() {
    for (const b of document.querySelectorAll("[data-live]")) b.disabled = !this.live || !!b.dataset.off || !!b.dataset.busy;
  }

  // --- the card, and the roll panel's extra options ------------------------------------------

  build() {
    const sys = this.sys;
    const e = err();
    const parts = [h("h2", {id: "table-h"}, TITLE[sys])];
    if (sys === "zoria") {
      const count = h("input", {type: "number", id: "insight-count", class: "num-in", min: 1, max: 100, value: 1});
      const what = h("input", {id: "insight-note", class: "note-in", maxlength: 200, placeholder: "what you want to learn"});
      this.luckyBtn = this.button("Lucky break", {type: "pool.lucky-break"}, e,
        "Give up your whole pool for a lucky break? No awards for the rest of the session.");
      this.luckyBtn.hidden = this.gm;
      parts.push(h("h3", null, "Your pool"), (this.stacks = h("ul", {class: "stks", "aria-live": "polite"})),
        (this.note = h("p", {class: "muted small", hidden: true}, "You took a lucky break: no awards this session.")),
        h("div", {class: "ptools"}, h("label", {for: count.id}, "Insight: dice"), count,
          h("label", {for: what.id, class: "visually-hidden"}, "Insight: the question"), what,
          this.button("Spend for insight", () => ({type: "pool.spend", effect: "insight", count: +count.value || 1, note: what.value.trim()}), e),
          this.luckyBtn), e,
        h("h3", null, "Open rolls"), (this.list = h("ul", {class: "orolls"})),
        (this.empty = h("p", {class: "muted small"}, "None: your checks stay open until the GM declares them.")),
        h("h3", null, "Everyone's dice"), (this.others = h("ul", {class: "resrows"})));
      this.check("stat_roll", "Statistic or ability-increase roll (no action dice)");
    } else if (RES[sys]) {
      parts.push((this.resList = h("ul", {class: "resrows", "aria-live": "polite"})), (this.resErr = e));
      this.cp = $("f-d6-chance-character_point");
      this.protect = $("f-discordian-protect");
      for (const input of [this.cp, this.protect]) input?.closest(".field").append((input.note = h("span", {class: "cost"})));
      this.protect?.addEventListener("input", () => this.drawPanel());
      this.resets.push(() => {
        if (this.cp) this.cp.checked = false;
        if (this.protect) this.protect.value = 0;
      });
      if (sys === "discordian") {
        this.dd = $("f-discordian-discord");
        if (this.dd) this.dd.closest(".field").hidden = true; // the table's Discord Die applies by itself
        this.ctx.bar.append((this.face = h("span", {class: "dd", "aria-hidden": "true"})), (this.ddText = h("span", {"aria-live": "polite"})));
        this.ctx.bar.hidden = false;
        this.luckBox = this.check("add_luck_die", "Add luck die (1 Instant Karma)");
      }
    } else if (sys === "roll-and-keep") {
      parts.push((this.extList = h("ul", {class: "resrows", "aria-live": "polite"})));
      this.extSel = this.field("extended", "Counts toward", h("select"), (v) => (v ? +v : undefined));
    } else {
      parts.push((this.roundBox = h("div", {"aria-live": "polite"})), (this.defBox = h("div")));
      const defense = this.field("defense", "This roll is", h("select", null, [["", "attack"], ["action", "defense action"],
        ["general", "general defense"]].map(([value, text]) => h("option", {value}, text))), (v) => v || undefined);
      const extra = this.field("group_extra", "Group attack: extra action dice", h("input", {type: "number", min: 0, max: 20, value: 0}),
        (v) => (+v > 0 ? +v : undefined));
      this.resets.push(() => { defense.value = ""; extra.value = 0; });
    }
    this.ctx.card.replaceChildren(...parts);
    this.ctx.card.hidden = false;
  }

  /** A field of the roll panel's own mode; the server's errors about ``key`` show in it. */
  field(key, label, input, get) {
    input.id = `roll-${key}`;
    const error = h("span", {class: "field-error", hidden: true});
    const node = h("div", {class: "field"}, h("label", {for: input.id}, label), input, error);
    this.mode.node.append(node);
    this.mode.registry.set(key, {node, error, focus: () => input.focus()});
    this.opts.push([key, () => get(input.value)]);
    return input;
  }

  check(key, label) {
    const input = h("input", {type: "checkbox", id: `roll-${key}`});
    this.mode.node.append(h("div", {class: "field check wide"}, h("label", {for: input.id}, input, " ", label)));
    this.opts.push([key, () => input.checked || undefined]);
    this.resets.push(() => { input.checked = false; });
    return input;
  }

  /** The request whose odds the panel shows: with the luck die the server will add, if checked. */
  oddsRequest(system, request, characterId) {
    if (system !== "discordian" || !this.luckBox?.checked || characterId == null) return request;
    const sheet = this.chars?.get(characterId)?.sheet || {};
    return {...request, pool: [...(request.pool || []), sheet.luck_die || "d6"]};
  }

  // --- state --------------------------------------------------------------------------------

  hello(msg) {
    const s = msg.state || {};
    const map = (list, key = "id") => new Map((list || []).map((x) => [x[key], x]));
    this.seats = map(s.seats);
    this.chars = map(s.characters);
    this.mine = this.gm ? [...this.chars.keys()] : ((msg.seat || {}).characters || []).map((c) => c.id);
    this.pools = map(s.pools);
    this.res = new Map((s.resources || []).map((r) => [`${r.character}:${r.name}`, r.amount]));
    this.open = map(s.open_rolls, "seq");
    this.ext = map(s.extended);
    this.lucky = new Set(s.lucky_breaks);
    this.table = s.table || {};
    this.draw();
  }

  /** Every event in seq order; ``replay``: older than hello's state, so it changes no counts. */
  event(ev, replay, item) {
    const d = ev.data || {};
    const mine = ev.actor && ev.actor.seat === this.me;
    if (d.hidden) {
      this.hidden.add(ev.seq);
    } else if (ev.kind === "seat.join" && d.seat) {
      this.seats.set(d.seat.id, d.seat);
    } else if (ev.kind === "pool") {
      if (mine && (d.action === "use" || d.effect)) this.touched = true;
      if (/^avoid-costly/.test(d.use)) this.after.get(d.roll)?.();
      if (!replay) {
        for (const p of d.pools || []) this.pools.set(p.id, p);
        for (const r of d.resources || []) this.res.set(`${r.character}:${r.name}`, r.amount);
        if (d.open_roll) this.open.set(d.open_roll.seq, d.open_roll);
        if (d.extended) this.ext[d.extended.open ? "set" : "delete"](d.extended.id, d.extended);
        if (d.table) this.table = d.table;
        if (d.action === "lucky-break") this.lucky.add(d.seat);
      }
    } else if (ev.kind === "roll.close" && d.open_roll && !replay) {
      this.open.set(d.roll, d.open_roll);
    } else if (ev.kind === "roll") {
      if (mine && !replay && !d.reroll_of && this.resets.length) {
        // What a roll spends is chosen again for the next one.
        this.resets.forEach((reset) => reset());
        this.mode.node.dispatchEvent(new Event("change", {bubbles: true}));
      }
      const was = this.open.get(d.reroll_of);
      if (was) this.open.set(was.seq, {...was, open: false, declared: "re-rolled"});
      if (!replay && this.sys === "zoria" && d.system === "zoria" && !d.stat_roll) {
        this.open.set(ev.seq, {seq: ev.seq, seat: ev.actor && ev.actor.seat, character: d.character, total: d.total ?? 0,
          added: 0, dc: (d.request || {}).dc, flags: d.flags || [], botch_dice: 0, critical_dice: 0, open: true});
      }
      if (mine && item && d.system === "discordian" && d.character && d.outcome === "success") this.luckButtons(ev, item);
    }
    // Draw once after a burst (a replay brings hundreds of events).
    this.timer ||= setTimeout(() => {
      this.timer = null;
      this.draw();
    }, 15);
  }

  // --- drawing ------------------------------------------------------------------------------

  draw() {
    const sys = this.sys;
    if (sys === "zoria") this.drawZoria();
    else if (RES[sys]) this.drawResources();
    else if (sys === "roll-and-keep") this.drawExtended();
    else if (sys === "action-dice") this.drawRound();
    this.drawPanel();
    this.sync();
  }

  /** A seat's stacks, action dice first, biggest first; with ``c``, those character c may use. */
  stacksOf(seat, c) {
    return [...this.pools.values()].filter((p) => p.seat === seat && (p.kind === "session-dice"
      || (p.kind === "bonus-dice" && (c === undefined || p.character === c))))
      .sort((a, b) => (a.kind === b.kind ? b.sides - a.sides : a.kind === "session-dice" ? -1 : 1));
  }

  bonus(p) {
    return p.kind === "bonus-dice" ? ` (${this.name(p.character)}'s class bonus)` : "";
  }

  drawZoria() {
    const mine = this.stacksOf(this.me);
    const took = this.lucky.has(this.me);
    fill(this.stacks, mine.map((p) => [p.id, p.remaining]).join(), mine.length
      ? mine.map((p) => h("li", {class: `stk ${p.kind}`}, h("b", null, p.remaining), ` × ${p.die}`,
        h("span", {class: "muted small"}, this.bonus(p))))
      : none("No dice yet."));
    this.note.hidden = !took;
    this.luckyBtn.dataset.off = took || this.touched || !mine.some((p) => p.remaining) ? 1 : "";

    // Everyone else's pools are open information at the table; the GM's last.
    const text = (s) => this.stacksOf(s.id).map((p) => `${p.remaining} × ${p.die}${this.bonus(p)}`).join(" + ");
    const seats = [...this.seats.values()].filter((s) => s.id !== this.me && text(s))
      .sort((a, b) => (a.role === "gm") - (b.role === "gm"));
    fill(this.others, seats.map((s) => s.id + text(s) + this.lucky.has(s.id)).join(), seats.length
      ? seats.map((s) => li(h("strong", null, s.role === "gm" && s.name !== "GM" ? `${s.name} (GM)` : s.name),
        text(s), this.lucky.has(s.id) ? badge("lucky break", "good") : null))
      : none("Nobody else has dice yet."));

    // Open rolls, newest first; the last few declared ones stay in sight.
    let closed = 0;
    const shown = [...this.open.values()].filter((r) => r.seat === this.me || !this.hidden.has(r.seq))
      .sort((a, b) => b.seq - a.seq).filter((r) => r.open || ++closed <= 3);
    for (const [seq, view] of this.views) {
      if (!shown.some((r) => r.seq === seq)) view.node.remove(), this.views.delete(seq);
    }
    shown.forEach((r, i) => {
      let view = this.views.get(r.seq);
      if (!view) this.views.set(r.seq, (view = this.rollView(r)));
      view.update(r);
      if (this.list.children[i] !== view.node) this.list.insertBefore(view.node, this.list.children[i] || null);
    });
    this.empty.hidden = shown.length > 0;
  }

  /** One open roll: total, dice added and committed, state; use a die, spend dice on it. */
  rollView(r) {
    const {seq} = r;
    const own = r.seat === this.me;
    const flags = r.flags || [];
    const botch = flags.some((f) => /botch-threat/.test(f));
    const effects = [own && "reroll", own && botch && "reroll-botch",
      (own || this.gm) && flags.includes("critical-threat") && "activate-critical", botch && "activate-botch"].filter(Boolean);
    const e = err();
    const state = h("span");
    const sum = h("p", {class: "sum"});
    const tools = h("div", {class: "ptools"});
    let stack;
    let use;
    let spend;
    const pick = () => +stack.value || undefined;
    if (own) {
      stack = h("select", {"aria-label": `Dice for roll #${seq}`});
      use = this.button("Use a die", () => ({type: "pool.use", roll: seq, pool: pick(), client_seed: this.ctx.clientSeed()}), e, null, "small");
      tools.append(stack, use);
    }
    if (effects.length) {
      const effect = h("select", {"aria-label": `Spend dice on roll #${seq}`}, effects.map((v) => h("option", {value: v}, words(v))));
      const count = h("input", {type: "number", class: "num-in", min: 1, max: 100, value: 1, "aria-label": "How many dice"});
      (effect.onchange = () => { count.disabled = !effect.value.startsWith("activate"); })();
      spend = this.button("Spend", () => ({type: "pool.spend", effect: effect.value, roll: seq,
        count: count.disabled ? 1 : +count.value || 1, pool: own ? pick() : undefined}), e);
      tools.append(h("span", {class: "ptools"}, effect, count, spend));
    }
    const who = r.character ? r.character.name : (this.seats.get(r.seat) || {}).name || "someone";
    const node = h("li", {class: "oroll"}, h("div", {class: "ohead"}, h("a", {href: `#ev-${seq}`}, `#${seq}`),
      h("strong", null, who), flags.map((f) => badge(f)), state), sum, tools.firstChild ? tools : null, e);
    const update = (o) => {
      node.classList.toggle("closed", !o.open);
      state.className = `badge badge-${o.open ? "warn" : "plain"}`;
      state.textContent = o.open ? "open" : /^(declared)?$/.test(o.declared || "") ? "declared" : `declared: ${o.declared}`;
      const more = [o.added && `+${o.added} from pool dice`, o.critical_dice && `${o.critical_dice} dice on the critical`,
        o.botch_dice && `botch severity ${o.botch_dice}`].filter(Boolean).join(" · ");
      fill(sum, o.total + more, "Total ", h("b", null, o.total), o.dc != null ? ` vs DC ${o.dc}` : "",
        more && h("span", {class: "muted"}, ` · ${more}`));
      if (stack) {
        const usable = this.stacksOf(this.me, o.character && o.character.id).filter((p) => p.remaining);
        const keep = stack.value;
        fill(stack, usable.map((p) => [p.id, p.remaining]).join(), usable.length
          ? usable.map((p) => h("option", {value: p.id}, `${p.die}${p.kind === "bonus-dice" ? " bonus" : ""} (${p.remaining} left)`))
          : h("option", {value: ""}, "no dice left"));
        if (usable.some((p) => String(p.id) === keep)) stack.value = keep;
        use.dataset.off = o.open && usable.length ? "" : 1;
      }
      if (spend) spend.dataset.off = o.open ? "" : 1;
    };
    return {node, update};
  }

  drawResources() {
    const names = Object.entries(RES[this.sys]);
    const rows = this.mine.map((c) => [c, names.map(([n]) => this.amount(c, n))]);
    fill(this.resList, JSON.stringify(rows), rows.length ? rows.map(([c, amounts]) => {
      const who = this.name(c);
      let survive = null;
      if (this.sys === "d6-chance") {
        survive = this.button("Survive", {type: "resource.spend", character: c, use: "survive"}, this.resErr,
          `Spend one of ${who}'s character points to survive?`);
        survive.setAttribute("aria-label", `${who} survives (1 character point)`);
        survive.dataset.off = amounts[0] ? "" : 1;
      }
      return li(h("strong", null, who), names.map(([, label], i) => h("span", {class: "amt"}, `${label} `, h("b", null, amounts[i]))), survive);
    }) : none("No character of yours at this table."));
  }

  drawExtended() {
    const list = [...this.ext.values()];
    fill(this.extList, JSON.stringify(list), list.length ? list.map((x) => h("li", {class: "xact"},
      h("span", null, h("strong", null, x.label), ` ${x.progress} / ${x.target} successes`),
      h("progress", {max: x.target, value: Math.min(x.progress, x.target), "aria-label": x.label})))
      : none("No extended action under way."));
    const sel = this.extSel;
    const keep = sel.value;
    fill(sel, list.map((x) => x.id).join(), h("option", {value: ""}, "(none)"), list.map((x) => h("option", {value: x.id}, x.label)));
    sel.value = this.ext.has(+keep) ? keep : "";
    sel.parentNode.hidden = !list.length;
  }

  drawRound() {
    const round = this.table.round;
    const mine = [...this.pools.values()].filter((p) => p.kind === "round-dice" && this.mine.includes(p.character));
    const defense = Object.entries(this.table.defense || {});
    fill(this.roundBox, JSON.stringify([round, mine]), h("p", null, round ? h("strong", null, `Round ${round}`) : "No round running."),
      round && mine.length ? h("ul", {class: "resrows"}, mine.map((p) => li(h("strong", null, this.name(p.character)),
        h("span", {class: "amt"}, h("b", null, p.remaining), ` of ${p.initial} action dice left`)))) : null);
    fill(this.defBox, JSON.stringify(defense), defense.length ? [h("h3", null, "Defenses this round"),
      h("ul", {class: "resrows"}, defense.map(([id, d]) => li(h("strong", null, d.name || this.name(+id)),
        `+${d.against_opponent} against one opponent, +${d.against_everyone_else} against everyone else`)))] : []);
  }

  /** What the roll panel shows of the table: points and Karma left, the Discord Die. */
  drawPanel() {
    const select = this.ctx.panel.character;
    const c = select && select.value ? +select.value : null;
    const has = (name) => (c == null ? "choose who rolls" : `${this.name(c)} has ${this.amount(c, name)} left`);
    const cp = this.cp;
    if (cp) {
      cp.note.textContent = has("character_points");
      cp.disabled = !(c && this.amount(c, "character_points"));
      if (cp.disabled && cp.checked) {
        cp.checked = false;
        cp.dispatchEvent(new Event("change", {bubbles: true}));
      }
    }
    if (this.protect) {
      const n = +this.protect.value || 0;
      this.protect.note.textContent = `${n ? `costs ${n} Instant Karma; ` : ""}${has("instant_karma")}`;
    }
    if (this.face) {
      const dd = this.table.discord || {};
      const v = dd.value ?? "";
      this.face.textContent = v || "–";
      this.face.classList.toggle("none", !v);
      this.ddText.textContent = v ? `Discord Die ${v}: every roll uses it automatically.`
        : dd.wandered ? "The Discord Die wandered off." : "No Discord Die in play.";
      if (this.dd && this.dd.value !== String(v)) {
        this.dd.value = v;
        this.dd.dispatchEvent(new Event("input", {bubbles: true})); // the odds follow it
      }
    }
  }

  /** Under your own successful discordian roll: +1 success for 1 Luck; avoid a costly success. */
  luckButtons(ev, item) {
    const d = ev.data;
    const e = err();
    const spend = (label, use) => this.button(label, {type: "resource.spend", character: d.character.id, use, roll: ev.seq}, e);
    const avoid = d.flags.includes("costly")
      ? [spend(`Avoid costly (${d.ones} Instant Karma)`, "avoid-costly"), spend("Avoid costly (1 Luck)", "avoid-costly-luck")] : [];
    const box = h("div", {class: "ev-actions"}, spend("+1 success (1 Luck)", "extra-success"), avoid, e);
    item.append(box);
    this.after.set(ev.seq, () => {
      if (avoid.length) box.append(h("span", {class: "muted small"}, "costly success avoided"));
      avoid.splice(0).forEach((b) => b.remove());
    });
  }
}
