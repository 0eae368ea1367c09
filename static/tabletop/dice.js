// Dice and roll results as the engines report them: every die, its role, the tallies and flags.
import {_, fmt, ngettext} from "./i18n.js";
import {h, sr, words} from "./dom.js";
import {flagTone, roleWords} from "./seam.js";

// Short captions under a die, and the words a screen reader hears (a system's: seam.js).
const ROLES = {
  base: ["", ""],
  kept: [_("kept"), "kept"],
  dropped: [_("drop"), _("dropped")],
  rerolled: [_("rerolled"), _("rerolled, does not count")],
  action: [_("action"), _("action die")],
  skill: [_("skill"), _("skill die")],
  challenge: [_("challenge"), _("challenge die")],
  bonus: [_("bonus"), _("bonus die")],
  opponent: [_("opp."), _("opponent's die")],
};

// Flags' tones (a system's: seam.js).
const GOOD = new Set(["success"]);
const BAD = new Set(["failure"]);
const WARN = new Set(["capped"]);

export function tone(flag) {
  const own = flagTone(flag);
  if (own) return own;
  if (GOOD.has(flag)) return "good";
  if (BAD.has(flag)) return "bad";
  if (WARN.has(flag)) return "warn";
  return "plain";
}

export function badge(text, kind) {
  return h("span", {class: `badge badge-${kind || tone(text)}`}, words(text));
}

// Dice that do not count: no natural 20 among them.
const SET_ASIDE = new Set(["dropped", "rerolled", "eliminated"]);

/** "max" for a natural 20 on a d20 that counts, "min" for a natural 1, else "". */
export function natural(die) {
  if ((die.die || `d${die.sides}`) !== "d20" || SET_ASIDE.has(die.role)) return "";
  return die.value === 20 ? "max" : die.value === 1 ? "min" : "";
}

// [mark, caption, words] of a natural 20 or 1: only the face (a critical is a system's flag).
const NATURAL = {max: ["★", _("nat 20"), _("natural 20, the highest face")], min: ["✖", _("nat 1"), _("natural 1, the lowest face")]};

export function renderDie(die) {
  const role = die.role || "base";
  const nat = natural(die);
  // A die compounded onto the one before it (!!) is part of that die: the role is said once.
  const [caption, spoken] = die.compounded ? ["+", "added onto the die before"]
    : nat ? [NATURAL[nat][1], (ROLES[role] || roleWords(role))?.[1]] : ROLES[role] || roleWords(role) || [role, role];
  const marks = nat ? [`nat-${nat}`] : [];
  const said = [fmt(_("%(die)s showing %(value)s"), {die: die.die || "d" + die.sides, value: die.value})];
  if (nat) said.push(NATURAL[nat][2]);
  if (spoken) said.push(spoken);
  if (die.explodes) { marks.push("explodes"); said.push("exploded"); }
  if (die.exploded && !die.compounded) { marks.push("added"); said.push("added by an explosion"); }
  if (die.compounded) marks.push("compounded");
  if (die.protected) { marks.push("protected"); said.push("protected"); }
  if (die.hit) { marks.push("hit"); said.push(_("a hit")); }
  if (die.success === true) { marks.push("success"); said.push(_("a success")); }
  if (die.failure === true) { marks.push("failure"); said.push(_("a failure")); }
  if (die.capped) said.push(_("chain capped"));
  if (typeof die.successes === "number" && die.successes > 0) said.push(fmt(ngettext("%(count)s success", "%(count)s successes", die.successes), {count: die.successes}));
  const label = said.join(", ");
  return h("span", {class: ["die", `role-${role}`, ...marks].join(" "), title: label},
    h("span", {class: "face", "aria-hidden": "true"}, die.value),
    h("span", {class: "kind", "aria-hidden": "true"}, die.die || `d${die.sides}`),
    caption ? h("span", {class: "cap", "aria-hidden": "true"}, caption) : null,
    nat ? h("span", {class: "mark nat", "aria-hidden": "true"}, NATURAL[nat][0]) : null,
    die.explodes ? h("span", {class: "mark", "aria-hidden": "true"}, "✸") : null,
    die.protected ? h("span", {class: "mark", "aria-hidden": "true"}, "🛡") : null,
    sr(label + ";"));
}

function isOpponent(die) {
  return die.side === "opponent" || die.role === "opponent";
}

const SHOWN = 36; // dice drawn at once; the rest on request (a 1000d6 roll stays readable)

function diceRow(dice, cls, label) {
  const row = h("div", {class: cls}, label ? h("span", {class: "side-label"}, label) : null, dice.slice(0, SHOWN).map(renderDie));
  if (dice.length > SHOWN) {
    const more = h("button", {type: "button", class: "link more", onclick: () => {
      more.replaceWith(...dice.slice(SHOWN).map(renderDie));
    }}, fmt(_("+%(dice)s more dice"), {dice: dice.length - SHOWN}));
    row.append(more);
  }
  return row;
}

function diceRows(dice) {
  const theirs = dice.filter(isOpponent);
  const rows = [diceRow(dice.filter((d) => !isOpponent(d)), "dice")];
  if (theirs.length) rows.push(diceRow(theirs, "dice opp", _("Opponent")));
  return rows;
}

const NUMBERS = [["total", _("total")], ["successes", _("successes")], ["net", _("net")], ["degree", _("degree")], ["fails", _("fails")]];

/** A roll's headline numbers as the room shows them (total, successes, net, ...). */
export function headline(data) {
  const same = typeof data.successes === "number" && data.total === data.successes;
  return NUMBERS.filter(([key]) => typeof data[key] === "number" && !(same && key === "total"))
    .map(([key, label]) => h("span", {class: "num"}, h("small", null, label), " ", h("b", null, data[key])));
}

/** Who rolled, as which character and what for ("Ana as Kael · Attack"): every place that shows
 * a roll names it so (the log, a reveal, the overlay, the GM's views). */
export function rollerWords(data, who) {
  const character = data && data.character && data.character.name;
  const label = data && typeof data.label === "string" && data.label;
  return [who,
    character && character !== who ? h("span", {class: "muted"}, ` as ${character}`) : null,
    label ? [" ", h("span", {class: "roll-label"}, label)] : null];
}

/** One roll's result: dice, headline numbers, outcome, flags and the engine's own line. */
export function renderRoll(data) {
  // Counting successes, the total is the successes: say it once.
  const nums = headline(data);
  const tags = [];
  if (data.outcome) tags.push(badge(data.outcome));
  if ("winner" in data && data.request && data.request.opponent) {
    tags.push(badge(data.winner == null ? "tie" : fmt(_("winner: %(winner)s"), {winner: data.winner}), "plain"));
  }
  for (const flag of data.flags || []) tags.push(badge(flag));
  // A natural 20 or 1, in words.
  const nats = new Set((Array.isArray(data.dice) ? data.dice : []).map(natural).filter(Boolean));
  if (nats.has("max")) tags.push(badge("★ natural 20", "good"));
  if (nats.has("min")) tags.push(badge("✖ natural 1", "bad"));
  return h("div", {class: "roll"},
    Array.isArray(data.dice) && data.dice.length ? diceRows(data.dice) : null,
    h("p", {class: "tally"}, nums, tags),
    data.text ? line(data.text) : null);
}

function line(text) {
  if (text.length <= 300) return h("p", {class: "text"}, richText(text));
  return h("details", {class: "text"}, h("summary", null, richText(text.slice(0, 160)), "…"), h("p", null, richText(text)));
}

/** The engine's line: ~~x~~ a die that does not count, **x** a success, _x_ a failure. */
export function richText(text) {
  return String(text).split(/(~~.+?~~|\*\*.+?\*\*|\b_-?\d+_\b)/).map((part) => {
    if (part.startsWith("~~") && part.endsWith("~~") && part.length > 4) return h("s", null, part.slice(2, -2));
    if (part.startsWith("**") && part.endsWith("**") && part.length > 4) return h("b", {class: "hit"}, part.slice(2, -2));
    if (/^_-?\d+_$/.test(part)) return h("em", {class: "miss"}, part.slice(1, -1));
    return part;
  });
}
