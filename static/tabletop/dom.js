// Tiny DOM helpers shared by the room's modules.
import {_, fmt} from "./i18n.js";
import {flagWords} from "./seam.js";

/** h("p", {class: "x", onclick: fn}, "text", child) -> element. */
export function h(tag, props, ...kids) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value == null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
    else if (key === "style") node.style.cssText = String(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const kid of kids.flat(3)) {
    if (kid != null && kid !== false) node.append(kid instanceof Node ? kid : String(kid));
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** The page's own padlock, drawn as SVG (an emoji shows as a box where no emoji font is
 * installed): the mark of a hidden roll. Decorative: the words beside it say what it means. */
export function lock() {
  const icon = document.createElementNS(SVG_NS, "svg");
  for (const [key, value] of Object.entries({viewBox: "0 0 16 16", width: "1em", height: "1em",
    class: "icon-lock", "aria-hidden": "true", focusable: "false"})) icon.setAttribute(key, value);
  const body = document.createElementNS(SVG_NS, "rect");
  for (const [key, value] of Object.entries({x: "2.5", y: "7", width: "11", height: "8", rx: "1.5"})) body.setAttribute(key, value);
  const shackle = document.createElementNS(SVG_NS, "path");
  shackle.setAttribute("d", "M5 7V5a3 3 0 0 1 6 0v2");
  shackle.setAttribute("fill", "none");
  shackle.setAttribute("stroke", "currentColor");
  shackle.setAttribute("stroke-width", "1.8");
  icon.append(body, shackle);
  return icon;
}

const VERBS = /^(is|are|must|should|has|have|needs?|cannot|can|was|were|expected|not|may|takes?|only|exceeds?|too)\b/;

/** A server's "request.notation: is empty; expected ..." as a sentence about the field by the
 * name the panel shows: "Dice is empty; expected ...". */
export function sentence(message, label) {
  // The field's path or name the server put first ("request.notation: ", "Notation: ").
  let text = String(message || "").trim().replace(/^[A-Za-z_][\w .[\]-]{0,40}:\s+/, "");
  if (label && text) text = VERBS.test(text) ? `${label} ${text}` : `${label}: ${text}`;
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return text && !/[.!?…]$/.test(text) ? `${text}.` : text;
}

/** Text only screen readers hear. */
export const sr = (text) => h("span", {class: "visually-hidden"}, text);

export function pct(p) {
  if (p == null) return "—";
  if (p > 0 && p < 0.001) return "<0.1%";
  if (p < 1 && p > 0.999) return ">99.9%";
  return `${(p * 100).toFixed(1)}%`;
}

// One formatter (toLocaleTimeString makes one a call: slow when a long log opens).
let timeFormat = null;

export function clock(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return "";
  timeFormat ||= new Intl.DateTimeFormat([], {hour: "2-digit", minute: "2-digit", second: "2-digit"});
  return timeFormat.format(when);
}

// The words for the flags and outcomes engines name by id (a system's: seam.js).
const WORDS = {success: _("success"), failure: _("failure"), tie: _("tie"), capped: _("capped"), reroll: _("reroll")};

/** A flag, outcome or effect id as words: "critical-threat" -> "critical threat". */
export const words = (flag) => WORDS[flag] || flagWords(flag) || String(flag).replace(/[-_]/g, " ");

/** The connection line: show(kind, until) puts "connecting", `liveText`, "reconnecting" (with a
 * countdown to `until`, a time in ms) or "offline" in `node` and its data-state. */
export function connectionStatus(node, liveText) {
  let ticker = null;
  return function show(kind, until) {
    clearInterval(ticker);
    node.dataset.state = kind;
    const text = () => {
      if (kind === "reconnecting" && until) {
        const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
        return left ? fmt(_("reconnecting in %(left)ss"), {left}) : _("reconnecting…");
      }
      return {connecting: _("connecting…"), live: liveText, reconnecting: _("reconnecting…"), offline: _("offline")}[kind] || kind;
    };
    node.textContent = text();
    if (kind === "reconnecting" && until) ticker = setInterval(() => { node.textContent = text(); }, 1000);
  };
}
