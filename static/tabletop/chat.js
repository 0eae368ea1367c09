// Talk at the table: the box where a seat types messages, emotes, whispers and slash-command
// rolls (tabletop/services/chat.py reads the line; /help is answered here), and how a message
// reads in the log. Everything people typed goes in as text nodes, never as markup.
import {h} from "./dom.js";
import {_, fmt} from "./i18n.js";

// The slash commands, in the words of tabletop/services/chat.py's COMMANDS.
// The commands stay as typed (a translation changes only their placeholders and explanations).
export const HELP = () => [
  [_("text with [[1d20+5]]"), _("a message; each [[dice]] is a fair roll, verifiable like any other")],
  [_("/me TEXT"), _("an emote (* Ana ducks)")],
  [_("/r NOTATION [#init] [what for]"), _("a roll everyone sees (also /roll); #init puts you in the turn order")],
  [_("/gmr NOTATION"), _("a roll only you and the GM see")],
  [_("/w NAME TEXT"), _("a whisper to one seat (/w GM: to the GM)")],
  [_("//TEXT"), _("a message that starts with /")],
  ["/help", _("these commands")],
];

/** A message's text with its inline rolls as their results (each with its dice on hover). */
export function messageParts(data) {
  const rolls = data.rolls || [];
  const message = String(data.message || "");
  const parts = [];
  let at = 0;
  for (const roll of rolls) {
    const start = message.indexOf("[[", at);
    const end = start < 0 ? -1 : message.indexOf("]]", start + 2);
    if (start < 0 || end < 0) break;
    parts.push(message.slice(at, start));
    parts.push(h("span", {class: "inline-roll", title: `${roll.notation}: ${roll.text} (#${roll.seq})`,
      "data-seq": roll.seq}, String(roll.total)));
    at = end + 2;
  }
  parts.push(message.slice(at));
  return parts;
}

/** The log's line for a chat event this seat may read. */
export function renderChat(event, head, classes) {
  const data = event.data || {};
  const name = event.actor ? event.actor.name : _("Someone");
  if (data.me) {
    return h("li", {class: [...classes, "ev-emote"].join(" ")}, head(event),
      h("p", {class: "ev-text"}, h("em", null, `* ${name} `, messageParts(data))));
  }
  const to = data.to && data.to.name;
  const title = to ? h("span", null, `${name} `, h("span", {class: "vis"}, `🔒 ${fmt(_("whispers to %(name)s"), {name: to})}`),
    data.gm_reads && to !== "GM" ? h("span", {class: "muted small"}, ` ${_("(the GM can read it)")}`) : null) : null;
  const rolls = (data.rolls || []).length
    ? h("p", {class: "muted small inline-dice"}, (data.rolls || []).map((r, i) =>
      [i ? " · " : "", h("span", null, `#${r.seq} ${r.notation}: `), h("span", null, r.text)]))
    : null;
  return h("li", {class: classes.join(" ")}, head(event, title),
    h("p", {class: "ev-text chat-text"}, messageParts(data)), rolls);
}

/** What a screen reader hears of a chat event. */
export function spokenChat(event) {
  const data = event.data || {};
  const name = event.actor ? event.actor.name : _("Someone");
  const text = messageParts(data).map((p) => (typeof p === "string" ? p : `[${p.textContent}]`)).join("");
  if (data.me) return `* ${name} ${text}`;
  return data.to ? fmt(_("%(name)s whispers to %(to)s: %(text)s"), {name, to: data.to.name, text}) : `${name}: ${text}`;
}

export class ChatBox {
  /** ctx: {form, input, error, help, note, settings, gm, request(message, done) -> sent,
   * clientSeed() -> the seed of the message's rolls} */
  constructor(ctx) {
    this.ctx = ctx;
    this.history = [];
    ctx.help.replaceChildren(h("p", {class: "small"}, _("Type in the box:")),
      h("dl", {class: "chat-help small"}, HELP().map(([cmd, what]) => [h("dt", null, h("code", null, cmd)), h("dd", null, what)])));
    ctx.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.send();
    });
    if (ctx.gm && ctx.settings) {
      for (const box of ctx.settings.querySelectorAll("input[type=checkbox]")) {
        box.addEventListener("change", () => {
          box.disabled = true;
          ctx.request({type: "chat.settings", [box.name]: box.checked}, (err) => {
            box.disabled = false;
            if (err) {
              box.checked = !box.checked;
              ctx.error.textContent = err.message;
            }
          });
        });
      }
    }
  }

  send() {
    const {input, error, help} = this.ctx;
    const text = input.value.trim();
    error.textContent = "";
    if (!text) return;
    if (/^\/(help|\?)\s*$/i.test(text)) {
      help.hidden = !help.hidden;
      input.value = "";
      return;
    }
    const seed = this.ctx.clientSeed ? this.ctx.clientSeed() : "";
    const sent = this.ctx.request({type: "chat", text, client_seed: seed}, (err) => {
      input.disabled = false;
      if (err) {
        error.textContent = err.message;
        input.value = text;
      }
      input.focus();
    });
    if (!sent) {
      error.textContent = _("Not connected: wait until the status says live.");
      return;
    }
    input.value = "";
    input.disabled = true;
  }

  /** The campaign's talk settings, as every seat is shown them. */
  talk(settings) {
    const {note, gm} = this.ctx;
    const reads = settings && settings.gm_reads_whispers;
    note.textContent = reads
      ? _("The GM can read whispers between players.")
      : _("Whispers between players are theirs alone: not even the GM reads them.");
    if (gm && this.ctx.settings) {
      for (const box of this.ctx.settings.querySelectorAll("input[type=checkbox]")) {
        box.checked = Boolean(settings && settings[box.name]);
      }
    }
  }
}
