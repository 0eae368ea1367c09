// The stream overlay: the last few public rolls (and public messages), large, on a transparent
// page. Hidden rolls and whispers never reach this socket with their data (the server redacts
// them), and are not shown at all. What players typed goes in as text, never markup.
import {messageParts} from "./chat.js";
import {_} from "./i18n.js";
import {rollerWords} from "./dice.js";
import {h} from "./dom.js";
import {RoomSocket} from "./socket.js";

const page = JSON.parse(document.getElementById("overlay-data").textContent);
const list = document.getElementById("rolls");
const plain = (text) => String(text || "").replace(/~~(.+?)~~/g, "$1").replace(/\*\*(.+?)\*\*/g, "$1").replace(/\b_(-?\d+)_\b/g, "$1");

function rollOf(event) {
  const data = event.data || {};
  if (data.hidden) return null;
  if (event.kind === "roll") return {who: event.actor && event.actor.name, data};
  if (event.kind === "roll.reveal" && data.roll) return {who: data.roller && data.roller.name, data: data.roll};
  return null;
}

function item(event, roll, fresh) {
  const data = roll.data;
  const headline = typeof data.total === "number" ? data.total : typeof data.successes === "number" ? `${data.successes} ✓` : "";
  const tags = [data.outcome, ...(data.flags || [])].filter(Boolean);
  const dice = Array.isArray(data.dice) ? data.dice.filter((d) => d.role !== "dropped").map((d) => d.value).join(" · ") : "";
  return h("li", {class: fresh ? "fresh" : null, "data-seq": event.seq},
    h("div", {class: "who"}, rollerWords(data, roll.who || _("Someone")), data.request && data.request.notation ? ` · ${data.request.notation}` : ""),
    h("div", null, h("span", {class: "total"}, headline), h("span", {class: "tags"}, tags.join(" · "))),
    dice ? h("div", {class: "dice"}, dice) : h("div", {class: "dice"}, plain(data.text)));
}

/** A public message (its inline rolls come as rolls of their own, just before it). */
function said(event, fresh) {
  const data = event.data || {};
  if (event.kind !== "chat" || data.hidden || event.visibility !== "public") return null;
  const who = event.actor ? event.actor.name : _("Someone");
  return h("li", {class: ["said", fresh ? "fresh" : ""].join(" ").trim(), "data-seq": event.seq},
    h("div", {class: "who"}, data.me ? `* ${who}` : who), h("div", {class: "dice"}, messageParts(data)));
}

const socket = new RoomSocket(page.socket, {
  status() {},
  hello() {},
  error(msg) {
    if (msg.code !== "forbidden") return;
    socket.retry = socket.now = () => {}; // revoked: the overlay goes blank and stays so
    list.replaceChildren();
  },
  event(event, replay) {
    const roll = rollOf(event);
    const shown = roll ? item(event, roll, !replay) : said(event, !replay);
    if (!shown) return;
    list.prepend(shown);
    while (list.childElementCount > page.rolls) list.lastElementChild.remove();
  },
});
socket.lastSeq = page.after; // replay only the end of a long session
socket.start();
