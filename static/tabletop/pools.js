// Pools and resources (docs/protocol.md) on the room page: the table's state that pool events
// change (pools, resources, open rolls, the table's rule state, the keys a system keeps of its
// own), and the card and roll options of the table's game system, drawn by that system's own
// module (systems/<engine id>.js, loaded by the engine id through the seam, seam.js). The state is the one room state
// (state.js): hello gives it, every later event is applied to it by the same reducer as the
// server's, and the card only draws what it holds.
import {_} from "./i18n.js";
import {h} from "./dom.js";
import {load} from "./seam.js";
import {RoomState} from "./state.js";

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
      room: new RoomState(), mine: [], hidden: new Set(), opts: [], resets: [], home: null});
    this.mode = panel.modes.find((m) => m.id === this.sys);
    panel.hooks.push((out) => {
      if (out.system === this.sys) for (const [key, get] of this.opts) out[key] = get();
    });
    panel.oddsHooks.push((system, request, character) =>
      (system === this.sys && this.home?.odds ? this.home.odds(request, character) : request));
    panel.character?.addEventListener("change", () => this.drawPanel());
    // The page opens its socket once this is registered (preloaded): hello is folded by its rule.
    this.loaded = load(this.sys).then((module) => {
      this.home = module?.room(this) || null;
      this.draw();
    });
  }

  // What the systems draw, from the room state (empty until hello).
  get pools() { return this.room.state ? this.room.pools : new Map(); }
  get open() { return this.room.state ? this.room.openRolls : new Map(); }
  get table() { return this.room.state ? this.room.table : {}; }
  get seats() { return this.room.state ? this.room.seats : new Map(); }
  get chars() { return this.room.state ? this.room.characters : new Map(); }

  name(id) {
    return (this.chars.get(id) || {}).name || "?";
  }

  amount(c, name) {
    return this.room.state ? this.room.amount(c, name) : 0;
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
      else error.textContent = _("Not connected; try again in a moment.");
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
    this.room.hello(msg);
    this.mine = this.gm ? [...this.chars.keys()] : ((msg.seat || {}).characters || []).map((c) => c.id);
    this.draw();
  }

  /** Every event in seq order; ``replay``: older than hello's state, so the state skips it. The
   * system's module is given the open rolls as they stood before the event (what closed). */
  event(ev, replay, item) {
    const d = ev.data || {};
    const mine = ev.actor && ev.actor.seat === this.me;
    const before = this.open;
    if (d.hidden) this.hidden.add(ev.seq);
    this.room.apply(ev);
    if (ev.kind === "roll" && mine && !replay && !d.hidden && !d.reroll_of && this.resets.length) {
      // What a roll spends is chosen again for the next one.
      this.resets.forEach((reset) => reset());
      this.mode.node.dispatchEvent(new Event("change", {bubbles: true}));
    }
    this.home?.event?.(ev, replay, item, before);
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
 * amounts)`` adds to its row (a button); drawn into ``list``. ``also``: what else the rows
 * show (the table's state they read), so they are drawn again when it changes. */
export function drawResources(t, list, names, extra = () => null, also = "") {
  const pairs = Object.entries(names);
  const rows = t.mine.map((c) => [c, pairs.map(([n]) => t.amount(c, n))]);
  fill(list, JSON.stringify(rows) + also, rows.length ? rows.map(([c, amounts]) => li(h("strong", null, t.name(c)),
    pairs.map(([, label], i) => h("span", {class: "amt"}, `${label} `, h("b", null, amounts[i]))), extra(c, amounts)))
    : none(_("No character of yours at this table.")));
}
