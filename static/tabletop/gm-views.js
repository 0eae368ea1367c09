// The GM dashboard's cards: seats with their pools and resources, open Zoria rolls, hidden rolls.
// Cards are kept by key and updated in place, so a live update never steals focus or typed text.
import {h, sr, words} from "./dom.js";
import {badge} from "./dice.js";

/** Draw ``items`` into ``container``: one view per key, made once by ``make(item)`` ->
 * {node, update(item)}, updated every time, in the order given; views whose key is gone go. */
export function keyed(container, items, keyOf, make) {
  const views = container._views || (container._views = new Map());
  const seen = new Set();
  let before = container.firstChild;
  for (const item of items) {
    const key = keyOf(item);
    seen.add(key);
    let view = views.get(key);
    if (!view) {
      view = make(item);
      views.set(key, view);
    }
    view.update(item);
    if (view.node !== before) container.insertBefore(view.node, before);
    else before = before.nextSibling;
  }
  for (const [key, view] of views) {
    if (!seen.has(key)) {
      view.node.remove();
      views.delete(key);
    }
  }
}

/** replaceChildren that skips null and false, as h() does. */
export function put(node, ...kids) {
  node.replaceChildren(...kids.flat().filter((kid) => kid != null && kid !== false));
}

const MAX_PIPS = 24;

/** "4 × d6 of 4" with a pip per die: filled for the dice left. */
export function pips(remaining, initial) {
  const count = Math.max(remaining, initial);
  if (count > MAX_PIPS || count === 0) return null;
  const row = h("span", {class: "pips", "aria-hidden": "true"});
  for (let i = 0; i < count; i++) row.append(h("i", {class: `pip${i < remaining ? " on" : ""}${i >= initial ? " extra" : ""}`}));
  return row;
}

const KIND_LABEL = {"session-dice": "Action dice", "bonus-dice": "Bonus dice", "round-dice": "Round dice"};
const KIND_ORDER = {"session-dice": 0, "bonus-dice": 1, "round-dice": 2};

export function sortPools(pools) {
  return pools.sort((a, b) => (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || b.sides - a.sides || a.id - b.id);
}

function poolView(ctx) {
  const label = h("span", {class: "pool-label"});
  const count = h("span", {class: "pool-count"});
  const bar = h("span", {class: "pool-pips"});
  const node = h("li", {class: "pool"}, label, bar, count);
  return {
    node,
    update(pool) {
      const who = pool.character != null ? ctx.characterName(pool.character) : "";
      label.textContent = (KIND_LABEL[pool.kind] || words(pool.kind)) + (who ? ` · ${who}` : "");
      node.dataset.pool = pool.id;
      node.dataset.kind = pool.kind;
      node.classList.toggle("empty", pool.remaining === 0);
      put(count,
        pool.kind === "round-dice"
          ? h("span", null, h("b", null, pool.remaining), ` of ${pool.initial}`)
          : h("span", null, h("b", null, pool.remaining), ` × ${pool.die} of ${pool.initial}`));
      count.setAttribute("aria-label", `${pool.remaining} ${pool.die} left (started with ${pool.initial})`);
      put(bar, pips(pool.remaining, pool.initial));
    },
  };
}

function resourceView(ctx, character, spec) {
  const amount = h("b", {class: "res-amount"});
  const error = h("span", {class: "error small", role: "alert"});
  const award = (delta, button) => ctx.act(
    {type: "resource.award", character: character.id, name: spec.name, amount: delta}, {button, error});
  const minus = h("button", {type: "button", class: "secondary small step", "data-needs": "live",
    "aria-label": `Take 1 ${spec.label} from ${character.name}`, onclick: () => award(-1, minus)}, "−");
  const plus = h("button", {type: "button", class: "secondary small step", "data-needs": "live",
    "aria-label": `Award ${character.name} 1 ${spec.label}`, onclick: () => award(1, plus)}, "+");
  const node = h("div", {class: "res", role: "group", "aria-label": `${spec.label} of ${character.name}`},
    h("span", {class: "res-name"}, spec.label), minus, amount, plus, error);
  return {
    node,
    update() {
      const value = ctx.resource(character.id, spec.name);
      amount.textContent = value;
      minus.dataset.zero = value <= 0 ? "1" : "";
    },
  };
}

function characterView(ctx, character) {
  const info = h("span", {class: "muted small"});
  const res = h("div", {class: "resources"});
  const node = h("li", {class: "seat-char"}, h("span", {class: "char-name"}, character.name), " ", info, res);
  return {
    node,
    update(c) {
      const sheet = ctx.sheet(c.id);
      info.textContent = ctx.system === "zoria" && sheet.level != null ? `level ${sheet.level}` : "";
      keyed(res, ctx.resources, (spec) => spec.name, (spec) => resourceView(ctx, c, spec));
    },
  };
}

/** A seat's card: name, role, characters with resources, pools; Zoria award and refund. */
export function seatView(ctx, seat) {
  const isGm = seat.role === "gm";
  const id = `seat-${seat.id}`;
  const name = h("h3", {id: `${id}-h`});
  const badges = h("span", {class: "seat-badges"});
  const chars = h("ul", {class: "seat-chars"});
  const pools = h("ul", {class: "pools"});
  const noPool = h("p", {class: "muted small no-pool"});
  const error = h("p", {class: "error small", role: "alert"});
  let tools = null;
  if (ctx.system === "zoria" && !isGm) {
    const count = h("input", {id: `${id}-count`, type: "number", min: 1, max: 20, value: 1, inputmode: "numeric", class: "count"});
    const n = () => Math.max(1, Math.min(20, Math.trunc(Number(count.value)) || 1));
    const award = h("button", {type: "button", class: "small award", "data-needs": "live",
      onclick: () => ctx.act({type: "pool.award", seat: seat.id, count: n()}, {button: award, error})}, "Award die");
    const refund = h("button", {type: "button", class: "secondary small refund", "data-needs": "live",
      onclick: () => ctx.act({type: "pool.refund", seat: seat.id, count: n()}, {button: refund, error})}, "Refund");
    tools = h("div", {class: "seat-tools", role: "group", "aria-label": `Dice for ${seat.name}`},
      h("label", {for: count.id}, "Dice"), count, award, refund);
    tools._award = award;
    tools._refund = refund;
  }
  const node = h("article", {class: `seat-card${isGm ? " gm" : ""}`, "aria-labelledby": `${id}-h`, "data-seat": seat.id},
    h("header", {class: "seat-top"}, name, badges), chars, pools, noPool, tools, error);
  return {
    node,
    update(s) {
      name.textContent = isGm && s.id === ctx.gmSeatId ? `${s.name} (you)` : s.name;
      const lucky = ctx.lucky.has(s.id);
      put(badges,
        isGm ? badge("GM", "plain") : null,
        lucky ? h("span", {class: "badge badge-good", title: "Gave up the pool: no awards this session"}, "lucky break") : null);
      keyed(chars, s.characters || [], (c) => c.id, (c) => characterView(ctx, c));
      const mine = sortPools(ctx.poolsOf(s.id));
      keyed(pools, mine, (p) => p.id, () => poolView(ctx));
      const hasChars = (s.characters || []).length > 0;
      if (ctx.system === "zoria") {
        noPool.hidden = mine.length > 0;
        noPool.textContent = isGm ? "The GM's pool comes with the first player's pool."
          : hasChars ? "The pool is dealt when the session starts." : "No character, so no pool.";
      } else {
        noPool.hidden = hasChars || mine.length > 0;
        noPool.textContent = "No character.";
      }
      if (tools) {
        tools._award.setAttribute("aria-label", `Award ${s.name} dice`);
        tools._refund.setAttribute("aria-label", `Refund ${s.name} dice`);
        tools._award.dataset.blocked = lucky || !mine.length ? "1" : "";
      }
    },
  };
}

const THREATS = new Set(["botch-threat", "special-botch-threat"]);

/** An open Zoria roll: who, total, DC, flags, dice committed; declare, activate, use a GM die. */
export function openRollView(ctx, roll) {
  const id = `open-${roll.seq}`;
  const title = h("h3", {id: `${id}-h`});
  const flags = h("span", {class: "flags"});
  const tally = h("p", {class: "tally"});
  const committed = h("p", {class: "committed small"});
  const error = h("p", {class: "error small", role: "alert"});
  const result = h("input", {id: `${id}-result`, maxlength: 200, autocomplete: "off", placeholder: "e.g. the door gives way"});
  const declare = h("button", {type: "submit", "data-needs": "live"}, "Declare");
  const form = h("form", {class: "declare", onsubmit: (e) => {
    e.preventDefault();
    ctx.act({type: "roll.close", roll: roll.seq, result: result.value.trim()}, {button: declare, error});
  }}, h("label", {for: result.id}, "Result"), result, declare);
  const dice = h("input", {id: `${id}-dice`, type: "number", min: 1, max: 100, value: 1, inputmode: "numeric", class: "count"});
  const n = () => Math.max(1, Math.min(100, Math.trunc(Number(dice.value)) || 1));
  const spend = (effect, button) => ctx.act({type: "pool.spend", effect, roll: roll.seq, count: n()}, {button, error});
  const botch = h("button", {type: "button", class: "secondary small", "data-needs": "live",
    onclick: () => spend("activate-botch", botch)}, "Activate botch");
  const crit = h("button", {type: "button", class: "secondary small", "data-needs": "live",
    onclick: () => spend("activate-critical", crit)}, "Activate critical");
  const use = h("button", {type: "button", class: "small", "data-needs": "live",
    onclick: () => ctx.act({type: "pool.use", roll: roll.seq}, {button: use, error})}, "Use a GM die");
  const gmTools = h("div", {class: "gm-spend", role: "group", "aria-label": `GM dice on roll #${roll.seq}`},
    h("label", {for: dice.id}, "GM dice"), dice, botch, crit);
  const node = h("article", {class: "open-roll", "aria-labelledby": `${id}-h`, "data-seq": roll.seq},
    h("header", {class: "open-top"}, title, flags), tally, committed, h("div", {class: "open-tools"}, use, gmTools), form, error);
  return {
    node,
    update(r) {
      const who = ctx.seatName(r.seat);
      put(title, h("a", {href: `#ev-${r.seq}`}, `#${r.seq}`), " ", who,
        r.character ? h("span", {class: "muted"}, ` as ${r.character.name}`) : null);
      const list = r.flags || [];
      put(flags, ...list.map((f) => badge(f)));
      const outcome = r.dc == null ? null : r.total >= r.dc ? "success" : "failure";
      put(tally,
        h("span", {class: "num"}, h("small", null, "total"), " ", h("b", {class: "open-total"}, r.total)),
        r.added ? h("span", {class: "muted small"}, ` (+${r.added} from action dice)`) : null,
        r.dc != null ? h("span", {class: "num"}, h("small", null, "DC"), " ", h("b", null, r.dc)) : null,
        outcome ? badge(outcome) : null);
      const parts = [];
      if (r.botch_dice) parts.push(`botch severity ${r.botch_dice}`);
      if (r.critical_dice) parts.push(`${r.critical_dice} ${r.critical_dice === 1 ? "die" : "dice"} on the critical`);
      committed.textContent = parts.join(" · ");
      committed.hidden = !parts.length;
      const threat = list.some((f) => THREATS.has(f));
      botch.hidden = !threat;
      crit.hidden = !list.includes("critical-threat");
      gmTools.hidden = botch.hidden && crit.hidden;
      use.hidden = r.seat !== ctx.gmSeatId;
      use.setAttribute("aria-label", `Use a GM die on roll #${r.seq}`);
      botch.setAttribute("aria-label", `Activate the botch of roll #${r.seq} with GM dice`);
      crit.setAttribute("aria-label", `Activate the critical of roll #${r.seq} with GM dice`);
      declare.setAttribute("aria-label", `Declare roll #${r.seq}`);
    },
  };
}

/** A gm or blind roll nobody else has seen yet, with its Reveal button. */
export function hiddenRollView(ctx, event) {
  const error = h("span", {class: "error small", role: "alert"});
  const button = h("button", {type: "button", class: "secondary small", "data-needs": "socket",
    "aria-label": `Reveal roll #${event.seq} to the room`,
    onclick: () => ctx.reveal(event.seq, button, error)}, "Reveal");
  const data = event.data || {};
  const vis = {gm: "GM and roller", blind: "blind: GM only", self: "only you"}[event.visibility] || event.visibility;
  const node = h("li", {class: "hidden-roll"},
    h("span", {class: "hr-who"}, h("a", {href: `#ev-${event.seq}`}, `#${event.seq}`), " ",
      event.actor ? event.actor.name : "someone", data.character ? h("span", {class: "muted"}, ` as ${data.character.name}`) : null),
    h("span", {class: "hr-what"}, typeof data.total === "number" ? h("b", null, data.total) : null,
      data.outcome ? badge(data.outcome) : null, sr(" "), h("span", {class: "badge badge-warn"}, vis)),
    button, error);
  return {node, update() {}};
}
