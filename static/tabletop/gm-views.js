// The GM dashboard's cards: seats with their pools and resources, hidden rolls. What a game
// system adds (its tools on a seat, its own sections) comes from its module (ctx.home).
// Cards are kept by key and updated in place, so a live update never steals focus or typed text.
import {_, fmt} from "./i18n.js";
import {h, sr, words} from "./dom.js";
import {badge, headline, richText, rollerWords} from "./dice.js";

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

const KIND_LABEL = {"session-dice": _("Pool dice"), "bonus-dice": _("Bonus dice"), "round-dice": _("Round dice")};
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
          ? h("span", null, h("b", null, pool.remaining), fmt(_(" of %(initial)s"), {initial: pool.initial}))
          : h("span", null, h("b", null, pool.remaining), fmt(_(" × %(die)s of %(initial)s"), {die: pool.die, initial: pool.initial})));
      count.setAttribute("aria-label", fmt(_("%(remaining)s %(die)s left (started with %(initial)s)"), {remaining: pool.remaining, die: pool.die, initial: pool.initial}));
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
    "aria-label": fmt(_("Take 1 %(label)s from %(character)s"), {label: spec.label, character: character.name}), onclick: () => award(-1, minus)}, "−");
  const plus = h("button", {type: "button", class: "secondary small step", "data-needs": "live",
    "aria-label": fmt(_("Award %(character)s 1 %(label)s"), {character: character.name, label: spec.label}), onclick: () => award(1, plus)}, "+");
  const node = h("div", {class: "res", role: "group", "aria-label": fmt(_("%(label)s of %(character)s"), {label: spec.label, character: character.name})},
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
      info.textContent = ctx.home?.characterInfo?.(sheet) || "";
      keyed(res, ctx.resources, (spec) => spec.name, (spec) => resourceView(ctx, c, spec));
    },
  };
}

/** A seat's card: name, role, characters with resources, pools, and the system's seat tools. */
export function seatView(ctx, seat) {
  const isGm = seat.role === "gm";
  const id = `seat-${seat.id}`;
  const name = h("h3", {id: `${id}-h`});
  const badges = h("span", {class: "seat-badges"});
  const chars = h("ul", {class: "seat-chars"});
  const pools = h("ul", {class: "pools"});
  const noPool = h("p", {class: "muted small no-pool"});
  const error = h("p", {class: "error small", role: "alert"});
  const tools = ctx.home?.seatTools?.(seat) || null;
  const node = h("article", {class: `seat-card${isGm ? " gm" : ""}`, "aria-labelledby": `${id}-h`, "data-seat": seat.id},
    h("header", {class: "seat-top"}, name, badges), chars, pools, noPool, tools && tools.node, error);
  return {
    node,
    update(s) {
      name.textContent = isGm && s.id === ctx.gmSeatId ? `${s.name} (you)` : s.name;
      put(badges, isGm ? badge(_("GM"), "plain") : null, ...(ctx.home?.badges?.(s) || []));
      keyed(chars, s.characters || [], (c) => c.id, (c) => characterView(ctx, c));
      const mine = sortPools(ctx.poolsOf(s.id));
      keyed(pools, mine, (p) => p.id, () => poolView(ctx));
      const hasChars = (s.characters || []).length > 0;
      const said = ctx.home?.noPool?.(s, hasChars);
      noPool.hidden = mine.length > 0 || (said == null && hasChars);
      noPool.textContent = said ?? _("No character.");
      tools?.update(s, mine);
    },
  };
}

/** A gm or blind roll nobody else has seen yet, with its Reveal button. */
export function hiddenRollView(ctx, event) {
  const error = h("span", {class: "error small", role: "alert"});
  const button = h("button", {type: "button", class: "secondary small", "data-needs": "socket",
    "aria-label": fmt(_("Reveal roll #%(seq)s to the room"), {seq: event.seq}),
    onclick: () => ctx.reveal(event.seq, button, error)}, _("Reveal"));
  const data = event.data || {};
  const vis = {gm: _("GM and roller"), blind: _("blind: GM only"), self: _("only you")}[event.visibility] || event.visibility;
  const node = h("li", {class: "hidden-roll"},
    h("span", {class: "hr-who"}, h("a", {href: `#ev-${event.seq}`}, `#${event.seq}`), " ",
      rollerWords(data, event.actor ? event.actor.name : "someone")),
    // The numbers the room would see once revealed, in every system (not just the outcome).
    h("span", {class: "hr-what"}, headline(data), data.outcome ? badge(data.outcome) : null,
      (data.flags || []).map((flag) => badge(flag)), sr(" "), h("span", {class: "badge badge-warn"}, vis)),
    data.text ? h("span", {class: "hr-text muted small"}, richText(data.text)) : null,
    button, error);
  return {node, update() {}};
}
