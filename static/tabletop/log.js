// The live log: every event in seq order, hidden rolls as hidden, new ones announced politely.
// A replay (hundreds of events on opening a long session) draws only the newest; older ones are
// drawn as the reader scrolls up to them (or asks), so a phone opens a long room at once. A roll
// arriving out of view is counted on a "new" button that brings the log back to the newest.
import {renderChat, spokenChat} from "./chat.js";
import {_, fmt, ngettext} from "./i18n.js";
import {clock, h, lock} from "./dom.js";
import {renderRoll, richText, rollerWords} from "./dice.js";

const HIDDEN = new Set(["gm", "blind", "self"]);
const FIRST = 40; // events drawn when a replay ends; the rest wait for "Show earlier"
const MORE = 100; // events each "Show earlier" draws

export class Log {
  /** ctx: {seatId, role, reveal(seq, button) -> bool, seats: Map(id -> name), visibleBottom()
   * -> px: where the view ends} */
  constructor(list, announcer, ctx) {
    this.list = list;
    this.announcer = announcer;
    this.ctx = ctx;
    this.entries = new Map(); // drawn events: seq -> <li>
    this.revealed = new Map(); // roll seq -> reveal seq
    this.events = []; // every event this log holds, in seq order (drawn or not)
    this.seen = new Set();
    this.queue = []; // replayed events not yet drawn
    this.later = new Map(); // roll seq -> notes from later events, for a roll not drawn yet
    this.ended = false;
    this.opening = true; // until the first live event or "Show earlier"
    this.unseen = 0;
    this.earlier = h("li", {class: "earlier"}, h("button", {type: "button", class: "secondary small",
      onclick: () => this.showEarlier()}, _("Show earlier events")));
    this.fresh = h("button", {type: "button", class: "fresh", hidden: true, onclick: () => this.toNewest(true)});
    list.after(this.fresh);
    const check = () => { if (this.unseen && this.newestInView()) this.clearUnseen(); };
    list.addEventListener("scroll", check, {passive: true});
    // At the oldest drawn: the earlier ones come.
    list.addEventListener("scroll", () => {
      if (this.earlier.isConnected && list.scrollTop < 60 && list.scrollHeight > list.clientHeight + 60) this.showEarlier();
    }, {passive: true});
    addEventListener("scroll", check, {passive: true});
    // A press in the log is not moved by an event arriving, nor covered by the "new" button
    // (its click would land on what came under it): the log follows, or counts what came, once
    // the press ends.
    this.held = 0;
    this.due = this.pressed = null;
    list.addEventListener("pointerdown", (e) => { this.pressed = e.isPrimary && e.button === 0; });
    const release = () => {
      const due = this.due;
      const held = this.held;
      this.due = this.pressed = null;
      this.held = 0;
      if (due !== null && Math.abs(list.scrollTop - due) < 2) this.toNewest();
      else if (held && !this.newestInView()) this.countUnseen(held);
    };
    for (const type of ["pointerup", "pointercancel"]) addEventListener(type, () => setTimeout(release), true);
    addEventListener("blur", release); // a press the window never saw end
  }

  /** The newest drawn event is on screen (inside the log's box and the window). */
  newestInView() {
    const last = this.list.lastElementChild;
    if (!last || last === this.earlier) return true;
    const item = last.getBoundingClientRect();
    const box = this.list.getBoundingClientRect();
    const bottom = Math.min(box.bottom, this.ctx.visibleBottom ? this.ctx.visibleBottom() : innerHeight);
    const top = Math.max(box.top, 0);
    return item.top < bottom - 8 && item.bottom > top + 8;
  }

  atNewest() {
    return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
  }

  /** Scroll the log to its newest event; ``page``: bring the log itself into the window too. */
  toNewest(page = false) {
    this.list.scrollTop = this.list.scrollHeight;
    if (page && !this.newestInView()) this.list.lastElementChild?.scrollIntoView({block: "nearest"});
    if (page || this.newestInView()) this.clearUnseen();
  }

  clearUnseen() {
    this.unseen = 0;
    this.fresh.hidden = true;
  }

  countUnseen(count = 1) {
    this.unseen += count;
    this.fresh.textContent = fmt(ngettext("↓ %(count)s new event", "↓ %(count)s new events", this.unseen), {count: this.unseen});
    this.fresh.hidden = false;
  }

  visibilityText(event) {
    const mine = event.actor && event.actor.seat === this.ctx.seatId;
    const who = mine ? "me" : (event.actor && event.actor.name) || _("the roller");
    return {gm: fmt(_("GM and %(who)s"), {who}), blind: _("blind: GM only"), self: fmt(_("only %(who)s"), {who})}[event.visibility] || "";
  }

  head(event, what) {
    const name = event.actor ? event.actor.name : _("The table");
    const vis = HIDDEN.has(event.visibility) ? h("span", {class: "vis"}, lock(), " ", this.visibilityText(event)) : null;
    return h("div", {class: "ev-head"},
      h("span", {class: "who"}, what || (event.kind === "roll" ? rollerWords(event.data, name) : name)),
      vis,
      h("span", {class: "meta"}, h("time", {datetime: event.at}, clock(event.at)), " ", h("span", {class: "seq"}, `#${event.seq}`)));
  }

  /** Take one event (in seq order). A replayed one waits for the end of the replay
   * (``flush``); a live one is drawn now. Returns its <li>, or null when not drawn (yet). */
  add(event, replay) {
    if (this.seen.has(event.seq)) return null;
    this.seen.add(event.seq);
    this.events.push(event);
    if (replay) {
      this.queue.push(event);
      this.flushTimer ||= setTimeout(() => this.flush(), 200); // the page calls flush() when caught up
      return null;
    }
    this.flush();
    this.opening = false;
    const follow = this.atNewest() || (event.actor && event.actor.seat === this.ctx.seatId);
    const item = this.draw(event);
    this.list.append(item);
    if (this.pressed) {
      this.held += 1;
      if (follow) this.due ??= this.list.scrollTop;
    } else {
      if (follow) this.toNewest();
      if (!this.newestInView()) this.countUnseen();
    }
    this.announce(this.spoken(event));
    return item;
  }

  /** Draw what a replay brought: the newest ``FIRST`` events, the rest on request. */
  flush() {
    clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (!this.queue.length) return;
    const queue = this.queue.splice(0);
    if (queue.length > FIRST) {
      // Older drawn events (from an earlier burst) go back behind "Show earlier" too.
      for (const item of this.entries.values()) item.remove();
      this.entries.clear();
    }
    const fragment = document.createDocumentFragment();
    for (const event of queue.slice(-FIRST)) fragment.append(this.draw(event));
    this.list.append(fragment);
    if (this.opening) {
      // Opening the page in bursts: still only the newest FIRST.
      for (const item of [...this.entries.values()].slice(0, -FIRST)) {
        this.entries.delete(Number(item.dataset.seq));
        item.remove();
      }
    }
    this.drawEarlier();
    this.toNewest();
  }

  /** The "Show earlier" line at the top, while older events are undrawn. */
  drawEarlier() {
    const first = this.list.querySelector(":scope > li.ev");
    const hidden = first ? this.events.findIndex((e) => e.seq === Number(first.dataset.seq)) : this.events.length;
    this.earlier.firstChild.textContent = fmt(ngettext("Show %(count)s earlier event (%(all)s in all)", "Show %(count)s earlier events (%(all)s in all)", Math.min(hidden, MORE)), {count: Math.min(hidden, MORE), all: hidden});
    if (hidden > 0) this.list.prepend(this.earlier);
    else this.earlier.remove();
  }

  showEarlier() {
    this.opening = false;
    const first = this.list.querySelector(":scope > li.ev");
    const end = first ? this.events.findIndex((e) => e.seq === Number(first.dataset.seq)) : this.events.length;
    const start = Math.max(0, end - MORE);
    const fragment = document.createDocumentFragment();
    for (const event of this.events.slice(start, end)) fragment.append(this.draw(event));
    const from = this.list.scrollHeight - this.list.scrollTop; // keep the reader's place
    this.earlier.after(fragment);
    this.drawEarlier();
    this.list.scrollTop = this.list.scrollHeight - from;
    if (!this.earlier.isConnected) this.list.focus();
  }

  draw(event) {
    const item = this.render(event);
    item.id = `ev-${event.seq}`;
    item.dataset.seq = event.seq;
    item.dataset.kind = event.kind;
    for (const note of this.later.get(event.seq) || []) item.append(note);
    this.later.delete(event.seq);
    this.entries.set(event.seq, item);
    return item;
  }

  /** The session ended: nothing more to reveal or spend. */
  end() {
    this.ended = true;
    for (const box of this.list.querySelectorAll(".ev-actions")) box.remove();
  }

  render(event) {
    const data = event.data || {};
    const mine = event.actor && event.actor.seat === this.ctx.seatId;
    const classes = ["ev", `ev-${event.kind.replace(/\W/g, "-")}`, `vis-${event.visibility}`];
    if (mine) classes.push("mine");
    if (data.hidden && event.visibility === "whisper") {
      // Someone else's whisper: nothing to show, not even that there was one.
      return h("li", {class: [...classes, "ev-unseen"].join(" "), hidden: true});
    }
    if (data.in_message && event.kind === "roll" && !data.hidden) {
      // An inline roll: its message, the next event, shows it (its dice on the message).
      return h("li", {class: [...classes, "ev-inline-roll"].join(" "), hidden: true});
    }
    if (data.hidden) {
      classes.push("ev-hidden");
      const what = [lock(), " ", event.kind === "roll"
        ? mine ? _("your blind roll: only the GM sees the dice") : fmt(_("a hidden roll by %(name)s"), {name: event.actor ? event.actor.name : _("someone")})
        : fmt(_("something hidden by %(name)s"), {name: event.actor ? event.actor.name : _("the table")})];
      return h("li", {class: classes.join(" ")}, this.head(event, what));
    }
    switch (event.kind) {
      case "chat":
        return renderChat(event, (e, what) => this.head(e, what), classes);
      case "roll":
        return h("li", {class: classes.join(" ")}, this.head(event), renderRoll(data), this.actions(event));
      case "roll.reveal": {
        const roller = data.roller ? data.roller.name : _("someone");
        const by = event.actor ? event.actor.name : _("The GM");
        this.markRevealed(data.seq, event.seq);
        const title = h("span", null, fmt(_("%(by)s revealed "), {by}), h("a", {href: `#ev-${data.seq}`}, `#${data.seq}`),
          _(", a roll by "), rollerWords(data.roll, roller));
        return h("li", {class: classes.join(" ")}, this.head(event, title), data.roll ? renderRoll(data.roll) : null);
      }
      case "seat.join": {
        const seat = data.seat || {};
        const chars = (seat.characters || []).map((c) => c.name).join(", ");
        return h("li", {class: classes.join(" ")}, this.head(event,
          fmt(seat.role === "gm" && seat.name !== "GM"
            ? chars ? _("%(name)s sat down as the GM with %(characters)s") : _("%(name)s sat down as the GM")
            : chars ? _("%(name)s sat down with %(characters)s") : _("%(name)s sat down"),
          {name: seat.name || (event.actor && event.actor.name) || _("Someone"), characters: chars})));
      }
      case "seat.leave":
        return h("li", {class: classes.join(" ")}, this.head(event,
          fmt(_("%(gm)s removed %(name)s from the table"), {gm: event.actor ? event.actor.name : _("The GM"), name: data.name || _("a seat")})));
      case "session.start":
        return h("li", {class: classes.join(" ")}, this.head(event, _("The session started")),
          data.commitment ? h("p", {class: "muted small"}, _("Dice commitment "), h("code", null, short(data.commitment))) : null);
      case "session.end":
        return h("li", {class: classes.join(" ")}, this.head(event, _("The session ended")),
          data.server_seed ? h("p", {class: "muted small"}, _("Server seed revealed: "), h("code", {class: "seed"}, data.server_seed)) : null);
      default: {
        // Pool and resource changes, and kinds this page does not know: what they say of themselves.
        const dice = Array.isArray(data.dice) && data.dice.length ? renderRoll({dice: data.dice}) : null;
        const about = typeof data.roll === "number" ? this.entries.get(data.roll) : null;
        if (typeof data.roll === "number" && data.text) {
          const note = h("p", {class: "later muted small"}, h("a", {href: `#ev-${event.seq}`}, `#${event.seq}`), " ", richText(data.text));
          if (about) about.append(note);
          else this.later.set(data.roll, [...(this.later.get(data.roll) || []), note]);
        }
        return h("li", {class: classes.join(" ")}, this.head(event, data.text ? null : event.kind),
          data.text ? h("p", {class: "ev-text"}, richText(data.text)) : null, dice);
      }
    }
  }

  actions(event) {
    const ctx = this.ctx;
    const data = event.data || {};
    const mine = event.actor && event.actor.seat === ctx.seatId;
    const gmMay = ctx.role === "gm" && (event.visibility === "gm" || event.visibility === "blind");
    const rollerMay = mine && (event.visibility === "gm" || event.visibility === "self");
    const note = this.revealed.has(event.seq)
      ? h("p", {class: "revealed-note muted small"}, _("Revealed to everyone in "), h("a", {href: `#ev-${this.revealed.get(event.seq)}`}, `#${this.revealed.get(event.seq)}`))
      : null;
    if (this.ended) return note;
    const buttons = [];
    const error = h("span", {class: "error small", role: "alert"});
    if (ctx.again && data.request && typeof data.request === "object") {
      buttons.push(h("button", {type: "button", class: "secondary small again",
        "aria-label": fmt(_("Roll again: %(roll)s (#%(seq)s)"), {roll: data.label || data.request.notation || _("the same roll"), seq: event.seq}),
        onclick: () => ctx.again(event)}, _("Roll again")));
    }
    if ((gmMay || rollerMay) && !note) {
      const button = h("button", {type: "button", class: "secondary small reveal",
        onclick: () => ctx.reveal(event.seq, button, error)}, gmMay ? _("Reveal") : _("Show everyone"));
      buttons.push(button);
    }
    const box = buttons.length ? h("div", {class: "ev-actions"}, buttons, error) : null;
    return note || box ? [box, note] : null;
  }

  markRevealed(rollSeq, revealSeq) {
    this.revealed.set(rollSeq, revealSeq);
    const original = this.entries.get(rollSeq);
    if (!original) return;
    original.querySelector(".ev-actions .reveal")?.remove();
    if (!original.querySelector(".revealed-note")) {
      original.append(h("p", {class: "revealed-note muted small"}, _("Revealed to everyone in "), h("a", {href: `#ev-${revealSeq}`}, `#${revealSeq}`)));
    }
  }

  spoken(event) {
    const name = event.actor ? event.actor.name : _("The table");
    const data = event.data || {};
    if (data.hidden && event.visibility === "whisper") return "";
    if (data.hidden) return fmt(_("%(name)s made a hidden roll."), {name});
    if (event.kind === "chat") return spokenChat(event);
    if (data.in_message) return "";
    if (event.kind === "roll") return `${spokenRoller(data, name)}: ${data.text || _("rolled")}`;
    if (event.kind === "roll.reveal") {
      return fmt(_("%(name)s revealed a roll by %(roller)s: %(roll)s"), {name,
        roller: spokenRoller(data.roll, (data.roller && data.roller.name) || _("someone")), roll: (data.roll && data.roll.text) || ""});
    }
    if (event.kind === "seat.join") return fmt(_("%(name)s sat down."), {name: (data.seat && data.seat.name) || name});
    if (event.kind === "seat.leave") return fmt(_("%(name)s was removed from the table."), {name: data.name || _("A seat")});
    if (event.kind === "session.start") return _("The session started.");
    if (event.kind === "session.end") return _("The session ended.");
    return data.text || "";
  }

  announce(text) {
    if (!text) return;
    this.announcer.append(h("p", null, text));
    while (this.announcer.childNodes.length > 3) this.announcer.firstChild.remove();
  }
}

const spokenRoller = (data, who) => rollerWords(data, who).flat().map((part) => (part && part.textContent !== undefined ? part.textContent : part || "")).join("");

export const short = (hex) => (hex ? `${hex.slice(0, 12)}…` : "");
