// The live log: every event in seq order, hidden rolls as hidden, new ones announced politely.
import {clock, h} from "./dom.js";
import {renderRoll, richText} from "./dice.js";

const HIDDEN = new Set(["gm", "blind", "self"]);

export class Log {
  /** ctx: {seatId, role, reveal(seq, button) -> bool, seats: Map(id -> name)} */
  constructor(list, announcer, ctx) {
    this.list = list;
    this.announcer = announcer;
    this.ctx = ctx;
    this.entries = new Map();
    this.revealed = new Map(); // roll seq -> reveal seq
  }

  visibilityText(event) {
    const mine = event.actor && event.actor.seat === this.ctx.seatId;
    const who = mine ? "me" : (event.actor && event.actor.name) || "the roller";
    return {gm: `GM and ${who}`, blind: "blind: GM only", self: `only ${who}`}[event.visibility] || "";
  }

  head(event, what) {
    const name = event.actor ? event.actor.name : "The table";
    const character = event.data && event.data.character && event.data.character.name;
    const vis = HIDDEN.has(event.visibility) ? h("span", {class: "vis"}, "🔒 ", this.visibilityText(event)) : null;
    return h("div", {class: "ev-head"},
      h("span", {class: "who"}, what || name, character && !what ? h("span", {class: "muted"}, ` as ${character}`) : null),
      vis,
      h("span", {class: "meta"}, h("time", {datetime: event.at}, clock(event.at)), " ", h("span", {class: "seq"}, `#${event.seq}`)));
  }

  add(event, replay) {
    if (this.entries.has(event.seq)) return null;
    const item = this.render(event);
    item.id = `ev-${event.seq}`;
    item.dataset.seq = event.seq;
    item.dataset.kind = event.kind;
    const atBottom = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
    this.list.append(item);
    this.entries.set(event.seq, item);
    if (atBottom || (event.actor && event.actor.seat === this.ctx.seatId)) this.list.scrollTop = this.list.scrollHeight;
    if (!replay) this.announce(this.spoken(event));
    return item;
  }

  render(event) {
    const data = event.data || {};
    const mine = event.actor && event.actor.seat === this.ctx.seatId;
    const classes = ["ev", `ev-${event.kind.replace(/\W/g, "-")}`, `vis-${event.visibility}`];
    if (mine) classes.push("mine");
    if (data.hidden) {
      classes.push("ev-hidden");
      const what = event.kind === "roll"
        ? mine ? "🔒 your blind roll: only the GM sees the dice" : `🔒 a hidden roll by ${event.actor ? event.actor.name : "someone"}`
        : `🔒 something hidden by ${event.actor ? event.actor.name : "the table"}`;
      return h("li", {class: classes.join(" ")}, this.head(event, what));
    }
    switch (event.kind) {
      case "roll":
        return h("li", {class: classes.join(" ")}, this.head(event), renderRoll(data), this.actions(event));
      case "roll.reveal": {
        const roller = data.roller ? data.roller.name : "someone";
        const by = event.actor ? event.actor.name : "The GM";
        this.markRevealed(data.seq, event.seq);
        const title = h("span", null, `${by} revealed `, h("a", {href: `#ev-${data.seq}`}, `#${data.seq}`),
          data.roller && event.actor && data.roller.seat === event.actor.seat ? "" : `, a roll by ${roller}`,
          data.roll && data.roll.character ? ` as ${data.roll.character.name}` : "");
        return h("li", {class: classes.join(" ")}, this.head(event, title), data.roll ? renderRoll(data.roll) : null);
      }
      case "seat.join": {
        const seat = data.seat || {};
        const chars = (seat.characters || []).map((c) => c.name).join(", ");
        return h("li", {class: classes.join(" ")}, this.head(event,
          `${seat.name || (event.actor && event.actor.name) || "Someone"} sat down${seat.role === "gm" && seat.name !== "GM" ? " as the GM" : ""}${chars ? ` with ${chars}` : ""}`));
      }
      case "session.start":
        return h("li", {class: classes.join(" ")}, this.head(event, "The session started"),
          data.commitment ? h("p", {class: "muted small"}, "Dice commitment ", h("code", null, short(data.commitment))) : null);
      case "session.end":
        return h("li", {class: classes.join(" ")}, this.head(event, "The session ended"),
          data.server_seed ? h("p", {class: "muted small"}, "Server seed revealed: ", h("code", {class: "seed"}, data.server_seed)) : null);
      default: {
        // Pool and resource changes, and kinds this page does not know: what they say of themselves.
        const dice = Array.isArray(data.dice) && data.dice.length ? renderRoll({dice: data.dice}) : null;
        const about = typeof data.roll === "number" ? this.entries.get(data.roll) : null;
        if (about && data.text) {
          about.append(h("p", {class: "later muted small"}, h("a", {href: `#ev-${event.seq}`}, `#${event.seq}`), " ", richText(data.text)));
        }
        return h("li", {class: classes.join(" ")}, this.head(event, data.text ? null : event.kind),
          data.text ? h("p", {class: "ev-text"}, richText(data.text)) : null, dice);
      }
    }
  }

  actions(event) {
    const ctx = this.ctx;
    const mine = event.actor && event.actor.seat === ctx.seatId;
    const gmMay = ctx.role === "gm" && (event.visibility === "gm" || event.visibility === "blind");
    const rollerMay = mine && (event.visibility === "gm" || event.visibility === "self");
    if (!(gmMay || rollerMay) || this.revealed.has(event.seq)) return null;
    const error = h("span", {class: "error small", role: "alert"});
    const button = h("button", {type: "button", class: "secondary small reveal",
      onclick: () => ctx.reveal(event.seq, button, error)}, gmMay ? "Reveal" : "Show everyone");
    return h("div", {class: "ev-actions"}, button, error);
  }

  markRevealed(rollSeq, revealSeq) {
    this.revealed.set(rollSeq, revealSeq);
    const original = this.entries.get(rollSeq);
    if (!original) return;
    original.querySelector(".ev-actions")?.remove();
    if (!original.querySelector(".revealed-note")) {
      original.append(h("p", {class: "revealed-note muted small"}, "Revealed to everyone in ", h("a", {href: `#ev-${revealSeq}`}, `#${revealSeq}`)));
    }
  }

  spoken(event) {
    const name = event.actor ? event.actor.name : "The table";
    const data = event.data || {};
    if (data.hidden) return `${name} made a hidden roll.`;
    if (event.kind === "roll") return `${name}: ${data.text || "rolled"}`;
    if (event.kind === "roll.reveal") return `${name} revealed a roll: ${(data.roll && data.roll.text) || ""}`;
    if (event.kind === "seat.join") return `${(data.seat && data.seat.name) || name} sat down.`;
    if (event.kind === "session.start") return "The session started.";
    if (event.kind === "session.end") return "The session ended.";
    return data.text || "";
  }

  announce(text) {
    if (!text) return;
    this.announcer.append(h("p", null, text));
    while (this.announcer.childNodes.length > 3) this.announcer.firstChild.remove();
  }
}

export const short = (hex) => (hex ? `${hex.slice(0, 12)}…` : "");
