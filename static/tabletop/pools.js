// Pools and resources (docs/protocol.md) on the room page: the table's state that pool events
// change (pools, resources, open rolls, extended actions, the table's rule state), and the card
// and roll options of the table's game system, drawn by that system's own module
// (systems/<engine id>.js, loaded by the engine id). hello gives the state; a later pool event
// carries the new absolute values.
import {h} from "./dom.js";

export const err = () => h("span", {class: "error small", role: "alert"});
export const li = (...kids) => h("li", null, ...kids);
export const none = (text) => h("li", {class: "muted"}, text);

/** Replace an element's children only when what they say changed (live regions stay quiet). */
export function fill(el, key, ...kids) {
  if (el.dataset.k === key) return;
  el.dataset.k = key;
  el.replaceChildren(...kids.flat().filter((kid) => kid != null && kid !== false));
}

export class Pools {
  /** ctx: {page, panel, card, bar, request(message, done(error)) -> sent, clientSeed()} */
  constructor(ctx) {
    const {page, panel} = ctx;
    Object.assign(this, {ctx, sys: page.system.id, me: page.seat.id, gm: page.role === "gm", live: false,
      pools: new Map(), res: new Map(), open: new Map(), ext: new Map(), lucky: new Set(), table: {},
      seats: new Map(), chars: new Map(), mine: [], hidden: new Set(), opts: [], resets: [], home: null});
    this.mode = panel.modes.find((m) => m.id === this.sys);
    panel.hooks.push((out) => {
      if (out.system === this.sys) for (const [key, get] of this.opts) out[key] = get();
    });
    panel.oddsHooks.push((system, request, character) =>
      (system === this.sys && this.home?.odds ? this.home.odds(request, character) : request));
    panel.character?.addEventListener("change", () => this.drawPanel());
    // A table whose system has no module of its own (ordinary notation) has no card.
    this.loaded = import(`./systems/${this.sys}.js`).then((module) => {
      this.home = module.room(this);
      this.draw();
    }, () => null);
  }

  name(id) {
    return (this.chars.get(id) || {}).name || "?";
  }

  amount(c, name) {
    return this.res.get(`${c}:${name}`) ?? 0;
  }

  /** The table card, titled, with the system's parts. */
  card(title, ...parts) {
    this.ctx.card.replaceChildren(h("h2", {id: "table-h"}, title), ...parts);
    this.ctx.card.hidden = false;
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
    } else if (ev.kind === "pool" && !replay) {
      for (const p of d.pools || []) this.pools.set(p.id, p);
      for (const r of d.resources || []) this.res.set(`${r.character}:${r.name}`, r.amount);
      if (d.open_roll) this.open.set(d.open_roll.seq, d.open_roll);
      if (d.extended) this.ext[d.extended.open ? "set" : "delete"](d.extended.id, d.extended);
      if (d.table) this.table = d.table;
      if (d.action === "lucky-break") this.lucky.add(d.seat);
      for (const seq of d.rolls || []) this.open.delete(seq); // closed as they stood
    } else if ((ev.kind === "roll.reveal" || ev.kind === "session.end") && !replay) {
      // Counts a hidden roll's spends moved reach the room with its reveal or the session's end.
      for (const p of d.pools || []) this.pools.set(p.id, p);
      for (const r of d.resources || []) this.res.set(`${r.character}:${r.name}`, r.amount);
    } else if (ev.kind === "roll.close" && d.open_roll && !replay) {
      this.open.set(d.roll, d.open_roll);
    } else if (ev.kind === "roll" && mine && !replay && !d.reroll_of && this.resets.length) {
      // What a roll spends is chosen again for the next one.
      this.resets.forEach((reset) => reset());
      this.mode.node.dispatchEvent(new Event("change", {bubbles: true}));
    }
    this.home?.event?.(ev, replay, item);
    // Draw once after a burst (a replay brings hundreds of events).
    this.timer ||= setTimeout(() => {
      this.timer = null;
      this.draw();
    }, 15);
  }

  draw() {
    this.home?.draw?.();
    this.drawPanel();
    this.sync();
  }

  /** What the roll panel shows of the table (the system draws it: resources left, table state). */
  drawPanel() {
    const select = this.ctx.panel.character;
    this.home?.panel?.(select && select.value ? +select.value : null);
  }
}

/** Each of your characters with the resources ``names`` ({name: label}) and what ``extra(c,
 * amounts)`` adds to its row (a button); drawn into ``list``. */
export function drawResources(t, list, names, extra = () => null) {
  const pairs = Object.entries(names);
  const rows = t.mine.map((c) => [c, pairs.map(([n]) => t.amount(c, n))]);
  fill(list, JSON.stringify(rows), rows.length ? rows.map(([c, amounts]) => li(h("strong", null, t.name(c)),
    pairs.map(([, label], i) => h("span", {class: "amt"}, `${label} `, h("b", null, amounts[i]))), extra(c, amounts)))
    : none("No character of yours at this table."));
}
