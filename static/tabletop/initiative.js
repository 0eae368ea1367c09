// The turn order on the room page and the GM's dashboard: the tracker in the room's rule state
// (state.table.turns and state.table.round, kept by the one room state of state.js), drawn
// live, with the buttons this seat may use (tabletop/services/initiative.py decides).
import {h} from "./dom.js";
import {_, fmt} from "./i18n.js";
import {RoomState} from "./state.js";

export class Initiative {
  /** ctx: {box, seatId, gm, request(message, done(error)) -> sent, clientSeed()} */
  constructor(ctx) {
    this.ctx = ctx;
    this.room = new RoomState();
    this.live = false;
    this.error = h("p", {class: "error small", role: "alert"});
    this.list = h("ol", {class: "turns", "aria-label": _("Turn order")});
    this.round = h("p", {class: "turns-round", "aria-live": "polite"});
    const notation = h("input", {id: "init-notation", value: "1d20", maxlength: 100, autocomplete: "off",
      spellcheck: "false", autocapitalize: "off"});
    this.rollForm = h("form", {class: "turns-roll", novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        this.send({type: "roll", request: {notation: notation.value.trim() || "1d20"}, system: "generic",
          turn_order: true, client_seed: ctx.clientSeed ? ctx.clientSeed() : ""});
      }},
    h("label", {for: "init-notation"}, _("Initiative roll")), notation,
    h("button", {type: "submit", class: "secondary small"}, _("Roll initiative")));
    const npcName = h("input", {id: "npc-name", maxlength: 40, autocomplete: "off", required: true});
    const npcValue = h("input", {id: "npc-value", type: "number", min: -999, max: 9999, inputmode: "numeric", required: true});
    this.npcForm = ctx.gm ? h("form", {class: "turns-npc", novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        this.send({type: "turns.add", name: npcName.value, value: Number(npcValue.value)}, () => {
          npcName.value = "";
          npcValue.value = "";
        });
      }},
    h("label", {for: "npc-name"}, _("NPC")), npcName,
    h("label", {for: "npc-value"}, _("Initiative")), npcValue,
    h("button", {type: "submit", class: "secondary small"}, _("Add"))) : null;
    this.next = h("button", {type: "button", class: "small", onclick: () => this.send({type: "turns.next"})}, _("Next turn"));
    this.nextRound = ctx.gm ? h("button", {type: "button", class: "secondary small",
      onclick: () => this.send({type: "turns.next", round: true})}, _("Next round")) : null;
    this.clear = ctx.gm ? h("button", {type: "button", class: "secondary small danger",
      onclick: () => { if (confirm(_("Clear the turn order?"))) this.send({type: "turns.clear"}); }}, _("Clear")) : null;
    ctx.box.replaceChildren(...[h("h2", {id: "turns-h"}, _("Turn order")), this.round, this.list,
      h("div", {class: "turns-bar"}, this.next, this.nextRound, this.clear), this.rollForm, this.npcForm,
      this.error].filter(Boolean));
    this.draw();
  }

  send(message, then) {
    this.error.textContent = "";
    const sent = this.ctx.request(message, (err) => {
      if (err) this.error.textContent = err.message;
      else if (then) then();
    });
    if (!sent) this.error.textContent = _("Not connected; try again in a moment.");
  }

  hello(msg) {
    this.room.hello(msg);
    this.draw();
  }

  event(event) {
    if (this.room.apply(event) && (event.data || {}).table !== undefined) this.draw();
  }

  setLive(live) {
    this.live = live;
    this.draw();
  }

  draw() {
    if (!this.room.state) {
      this.round.textContent = "";
      return;
    }
    const {entries, current, round} = this.room.turns;
    const me = this.ctx.seatId;
    const gm = this.ctx.gm;
    const status = this.room.session && this.room.session.status;
    const open = status === "live";
    const holder = entries.find((e) => e.id === current);
    // A player sees the card once there is an order to see (the GM starts one by adding to it).
    this.ctx.box.hidden = !gm && !entries.length && !round;
    this.round.textContent = round
      ? (holder ? fmt(_("Round %(round)s: %(name)s's turn"), {round, name: holder.name}) : fmt(_("Round %(round)s"), {round}))
      : entries.length ? _("Not started: the GM starts the first round with “Next turn”.") : _("Nobody in the turn order yet.");
    this.list.replaceChildren(...entries.map((e) => {
      const mine = e.seat === me;
      const may = open && (gm || mine);
      const buttons = [];
      if (may && !e.delayed && gm && e.id !== current) {
        buttons.push(h("button", {type: "button", class: "link small", onclick: () => this.send({type: "turns.set", entry: e.id})}, _("Turn")));
      }
      if (may) {
        buttons.push(e.delayed
          ? h("button", {type: "button", class: "link small", onclick: () => this.send({type: "turns.act", entry: e.id})}, _("Act now"))
          : h("button", {type: "button", class: "link small", onclick: () => this.send({type: "turns.delay", entry: e.id})}, _("Delay")));
        buttons.push(h("button", {type: "button", class: "link small", "aria-label": fmt(_("Remove %(name)s"), {name: e.name}),
          onclick: () => this.send({type: "turns.remove", entry: e.id})}, _("Remove")));
      }
      return h("li", {class: ["turn", e.id === current ? "current" : "", e.delayed ? "delayed" : "", mine ? "mine" : ""].join(" ").trim(),
        "aria-current": e.id === current ? "true" : null, "data-entry": e.id},
      h("span", {class: "turn-value"}, String(e.value)), " ", h("span", {class: "turn-name"}, e.name),
      e.delayed ? h("span", {class: "muted small"},  ` ${_("(delaying)")}`) : null,
      e.id === current ? h("span", {class: "visually-hidden"},  ` ${_("(has the turn)")}`) : null,
      buttons.length ? h("span", {class: "turn-actions"}, buttons) : null);
    }));
    this.next.hidden = !open || !(gm || (holder && holder.seat === me));
    this.next.textContent = holder && holder.seat === me && !gm ? _("End my turn") : _("Next turn");
    if (this.nextRound) this.nextRound.hidden = !open;
    if (this.clear) this.clear.hidden = !open || !entries.length;
    this.rollForm.hidden = !open;
    if (this.npcForm) this.npcForm.hidden = !open;
  }
}
