// Zoria at the table (docs/rules/zoria.md): on the room page, your pool, everyone's dice, your
// open checks with the dice you use and spend on them, insight (asked of the GM, spent once
// granted), the initiative phase and the lucky break; on the GM dashboard, awards on each seat,
// the open checks the GM declares (and refunds dice spent on a critical that could have no
// effect), the players' requests for an inspiration check, and the initiative phase.
import {_, fmt, ngettext} from "../i18n.js";
import {h, words} from "../dom.js";
import {badge} from "../dice.js";
import {err, fill, li, none} from "../pools.js";

/** What this table declares to the core (static/tabletop/seam.js): its rule of the room reducer,
 * the same as ZoriaTable.fold (checks closed at the session's end leave the open rolls; a lucky
 * break is kept), and the tones of its flags. */
export const table = {
  fold(state, event) {
    const data = event.data || {};
    if (event.kind !== "pool") return state;
    if (data.action === "close") {
      return {...state, open_rolls: state.open_rolls.filter((r) => !data.rolls.includes(r.seq))};
    }
    if (data.action === "lucky-break") {
      return {...state, lucky_breaks: [...new Set([...state.lucky_breaks, data.seat])].sort((a, b) => a - b)};
    }
    return state;
  },
  tones: {"critical-threat": "good", "botch-threat": "warn", "special-botch-threat": "bad"},
  words: {
    "botch-threat": _("botch threat"), "special-botch-threat": _("special botch threat"),
    "critical-threat": _("critical threat"), "reroll-botch": _("reroll botch"),
    "activate-botch": _("activate botch"), "activate-critical": _("activate critical"), insight: _("insight"),
  },
};

/** The seats that took their lucky break (the room state's key of this table). */
const luckyOf = (room) => new Set(room.state ? room.own("lucky_breaks") : []);

const THREATS = new Set(["botch-threat", "special-botch-threat"]);

/** A seat's stacks, pool dice first, biggest first; with ``c``, those character c may use. */
function stacksOf(pools, seat, c) {
  return [...pools.values()].filter((p) => p.seat === seat && (p.kind === "session-dice"
    || (p.kind === "bonus-dice" && (c === undefined || p.character === c))))
    .sort((a, b) => (a.kind === b.kind ? b.sides - a.sides : a.kind === "session-dice" ? -1 : 1));
}

// Zoria calls its pool dice action dice.
const stackClass = (p) => `stk ${p.kind === "session-dice" ? "action-dice" : p.kind}`;

export function room(t) {
  const e = err();
  const selfRolls = new Set(); // your own self checks: you close them, the GM never sees them
  let touched = false;
  const count = h("input", {type: "number", id: "insight-count", class: "num-in", min: 1, max: 100, value: 1});
  const what = h("input", {id: "insight-note", class: "note-in", maxlength: 200, placeholder: _("what you want to learn")});
  const luckyBtn = t.button(_("Lucky break"), {type: "pool.lucky-break"}, e,
    _("Give up your whole pool for a lucky break? No dice for the rest of the session."));
  luckyBtn.hidden = t.gm;
  const stacks = h("ul", {class: "stks", "aria-live": "polite"});
  const note = h("p", {class: "muted small", hidden: true}, _("You took a lucky break: no dice this session."));
  const list = h("ul", {class: "orolls"});
  const empty = h("p", {class: "muted small"}, _("None: your checks stay open until the GM declares them."));
  const others = h("ul", {class: "resrows"});
  // A player asks the GM for an inspiration check and spends on it once granted; the GM's own
  // insight (Dark Agenda) needs no one's consent.
  const insightBtn = t.gm
    ? t.button(_("Spend for insight"), () => ({type: "pool.spend", effect: "insight", count: +count.value || 1, note: what.value.trim()}), e)
    : t.button(_("Ask the GM"), () => ({type: "insight.ask", subject: what.value.trim()}), e);
  const asks = h("ul", {class: "resrows", "aria-live": "polite"});
  const phase = h("p", {class: "small", "aria-live": "polite"});
  t.card(_("Action dice"), h("h3", null, _("Your pool")), stacks, note,
    h("div", {class: "ptools"}, h("label", {for: count.id}, _("Insight: dice")), count,
      h("label", {for: what.id, class: "visually-hidden"}, _("Insight: the question")), what,
      insightBtn, luckyBtn), e, t.gm ? null : asks, phase,
    h("h3", null, _("Open rolls")), list, empty, h("h3", null, _("Everyone's dice")), others);
  t.check("stat_roll", _("Statistic or ability-increase roll (no action dice)"));
  t.check("initiative", _("Initiative roll (augmented only as it is made, before the initiative phase)"));
  const insight = t.field("insight", _("Insight roll about (the GM asked for one)"),
    h("input", {maxlength: 200, autocomplete: "off"}), (v) => v.trim() || undefined);
  t.resets.push(() => { insight.value = ""; });
  if (t.gm) {
    // Dark Agenda: the GM's insight roll for a villain is noted, not announced.
    insight.closest(".field").append(h("small", {class: "help"},
      _("Dark Agenda: for a villain (nobody, or a character no player plays) the roll is hidden from the players; reveal it when you like.")));
  }
  const dice = document.getElementById("f-zoria-action_dice");
  dice?.closest(".field")?.append(h("span", {class: "cost"}, _("paid from your pool, die for die")));

  const views = new Map();
  const closed = new Map(); // seq -> a check closed since this page loaded
  const bonus = (p) => (p.kind === "bonus-dice" ? fmt(_(" (%(t)s's class bonus)"), {t: t.name(p.character)}) : "");

  /** One open check: total, dice added and committed, state; use a die, spend dice on it. */
  function rollView(r) {
    const {seq} = r;
    const own = r.seat === t.me;
    const flags = r.flags || [];
    const effects = [own && "reroll", own && flags.includes("botch-threat") && "reroll-botch",
      (own || t.gm) && flags.includes("critical-threat") && "activate-critical",
      !own && flags.includes("botch-threat") && "activate-botch"].filter(Boolean);
    const state = h("span");
    const sum = h("p", {class: "sum"});
    const tools = h("div", {class: "ptools"});
    const error = err();
    let stack;
    let use;
    let spend;
    let close;
    const pick = () => +stack.value || undefined;
    if (own) {
      stack = h("select", {"aria-label": fmt(_("Dice for roll #%(seq)s"), {seq})});
      use = t.button(_("Use a die"), () => ({type: "pool.use", roll: seq, pool: pick(), client_seed: t.ctx.clientSeed()}), error, null, "small");
      tools.append(stack, use);
      if (selfRolls.has(seq)) {
        close = t.button(_("Close"), {type: "roll.close", roll: seq}, error, _("Close this check as it stands? Only you saw it."));
        tools.append(close);
      }
    }
    if (effects.length) {
      const effect = h("select", {"aria-label": fmt(_("Spend dice on roll #%(seq)s"), {seq})}, effects.map((v) => h("option", {value: v}, words(v))));
      const n = h("input", {type: "number", class: "num-in", min: 1, max: 100, value: 1, "aria-label": _("How many dice")});
      (effect.onchange = () => { n.disabled = !effect.value.startsWith("activate"); })();
      spend = t.button(_("Spend"), () => ({type: "pool.spend", effect: effect.value, roll: seq,
        count: n.disabled ? 1 : +n.value || 1, pool: own ? pick() : undefined}), error);
      tools.append(h("span", {class: "ptools"}, effect, n, spend));
    }
    const who = r.character ? r.character.name : (t.seats.get(r.seat) || {}).name || "someone";
    const flagBox = h("span");
    const node = h("li", {class: "oroll"}, h("div", {class: "ohead"}, h("a", {href: `#ev-${seq}`}, `#${seq}`),
      h("strong", null, who), flagBox, state), sum, tools.firstChild ? tools : null, error);
    const update = (o) => {
      node.classList.toggle("closed", !o.open);
      fill(flagBox, (o.flags || []).join(), (o.flags || []).map((f) => badge(f)));
      state.className = `badge badge-${o.open ? "warn" : "plain"}`;
      state.textContent = o.open ? _("open") : /^(declared)?$/.test(o.declared || "") ? _("declared") : fmt(_("declared: %(declared)s"), {declared: o.declared});
      const more = [o.added && fmt(_("+%(added)s from pool dice"), {added: o.added}), o.critical_dice && fmt(_("%(critical_dice)s dice on the critical"), {critical_dice: o.critical_dice}),
        o.botch_dice && fmt(_("botch severity %(botch_dice)s"), {botch_dice: o.botch_dice})].filter(Boolean).join(" · ");
      fill(sum, o.total + more, _("Total "), h("b", null, o.total), o.dc != null ? fmt(_(" vs DC %(dc)s"), {dc: o.dc}) : "",
        more && h("span", {class: "muted"}, ` · ${more}`));
      if (stack) {
        const usable = stacksOf(t.pools, t.me, o.character && o.character.id).filter((p) => p.remaining);
        const keep = stack.value;
        fill(stack, usable.map((p) => [p.id, p.remaining]).join(), usable.length
          ? usable.map((p) => h("option", {value: p.id}, `${p.die}${p.kind === "bonus-dice" ? " bonus" : ""} (${p.remaining} left)`))
          : h("option", {value: ""}, _("no dice left")));
        if (usable.some((p) => String(p.id) === keep)) stack.value = keep;
        use.dataset.off = o.open && usable.length ? "" : 1;
      }
      if (spend) spend.dataset.off = o.open ? "" : 1;
      if (close) close.dataset.off = o.open ? "" : 1;
    };
    return {node, update};
  }

  return {
    event(ev, replay, item, before) {
      const d = ev.data || {};
      const mine = ev.actor && ev.actor.seat === t.me;
      if (ev.kind === "pool" && mine && (d.action === "use" || d.action === "commit" || d.effect)) touched = true;
      if (mine && ev.kind === "roll" && !d.hidden && ev.visibility === "self") selfRolls.add(ev.seq);
      if (replay || d.hidden) return;
      // Checks closed while this page is open stay in sight as page history (like the log); the
      // room state holds open checks only.
      const close = (roll, declared) => roll && closed.set(roll.seq, {...roll, open: false, declared});
      if (d.open_roll && d.open_roll.open === false) close(d.open_roll, d.open_roll.declared);
      if (ev.kind === "roll" && d.reroll_of != null) close(before.get(d.reroll_of), "re-rolled");
    },

    draw() {
      const table = t.table;
      const myAsks = (table.insight_asks || []).filter((a) => a.seat === t.me);
      fill(asks, JSON.stringify(myAsks), myAsks.map((a) => li(h("q", null, a.subject), " ",
        a.granted ? h("span", {class: "badge badge-good"}, _("granted")) : h("span", {class: "badge badge-warn"}, _("waiting for the GM")),
        a.granted ? t.button(_("Spend dice on it"), () => ({type: "pool.spend", effect: "insight", count: +count.value || 1, note: a.subject}), e) : null)));
      phase.textContent = table.initiative ? _("The initiative phase is under way: initiative rolls are set.") : "";
      phase.hidden = !table.initiative;
      const mine = stacksOf(t.pools, t.me);
      const lucky = luckyOf(t.room);
      const took = lucky.has(t.me);
      fill(stacks, mine.map((p) => [p.id, p.remaining]).join(), mine.length
        ? mine.map((p) => h("li", {class: stackClass(p)}, h("b", null, p.remaining), ` × ${p.die}`,
          h("span", {class: "muted small"}, bonus(p))))
        : none(_("No dice yet.")));
      note.hidden = !took;
      luckyBtn.dataset.off = took || touched || !mine.some((p) => p.remaining) ? 1 : "";

      // Everyone else's pools are open information at the table; the GM's last.
      const text = (s) => stacksOf(t.pools, s.id).map((p) => `${p.remaining} × ${p.die}${bonus(p)}`).join(" + ");
      const seats = [...t.seats.values()].filter((s) => s.id !== t.me && text(s))
        .sort((a, b) => (a.role === "gm") - (b.role === "gm"));
      fill(others, seats.map((s) => s.id + text(s) + lucky.has(s.id)).join(), seats.length
        ? seats.map((s) => li(h("strong", null, s.role === "gm" && s.name !== "GM" ? `${s.name} (GM)` : s.name),
          text(s), lucky.has(s.id) ? badge(_("lucky break"), "good") : null))
        : none(_("Nobody else has dice yet.")));

      // Open checks, newest first; the last few declared since the page loaded stay in sight.
      let older = 0;
      const open = t.open;
      const checks = [...open.values(), ...[...closed.values()].filter((r) => !open.has(r.seq))];
      const shown = checks.filter((r) => r.seat === t.me || !t.hidden.has(r.seq))
        .sort((a, b) => b.seq - a.seq).filter((r) => r.open || ++older <= 3);
      for (const [seq, view] of views) {
        if (!shown.some((r) => r.seq === seq)) view.node.remove(), views.delete(seq);
      }
      shown.forEach((r, i) => {
        let view = views.get(r.seq);
        if (!view) views.set(r.seq, (view = rollView(r)));
        view.update(r);
        if (list.children[i] !== view.node) list.insertBefore(view.node, list.children[i] || null);
      });
      empty.hidden = shown.length > 0;
    },
  };
}

// --- the GM dashboard ----------------------------------------------------------------------------

/** An open check: who, total, DC, flags, dice committed; declare, activate, use a GM die. */
function openRollView(ctx, roll, put) {
  const id = `open-${roll.seq}`;
  const title = h("h3", {id: `${id}-h`});
  const flags = h("span", {class: "flags"});
  const tally = h("p", {class: "tally"});
  const committed = h("p", {class: "committed small"});
  const error = h("p", {class: "error small", role: "alert"});
  const result = h("input", {id: `${id}-result`, maxlength: 200, autocomplete: "off", placeholder: _("e.g. the door gives way")});
  const declare = h("button", {type: "submit", "data-needs": "live"}, _("Declare"));
  const form = h("form", {class: "declare", onsubmit: (e) => {
    e.preventDefault();
    ctx.act({type: "roll.close", roll: roll.seq, result: result.value.trim()}, {button: declare, error});
  }}, h("label", {for: result.id}, _("Result")), result, declare);
  const dice = h("input", {id: `${id}-dice`, type: "number", min: 1, max: 100, value: 1, inputmode: "numeric", class: "count"});
  const n = () => Math.max(1, Math.min(100, Math.trunc(Number(dice.value)) || 1));
  const spend = (effect, button) => ctx.act({type: "pool.spend", effect, roll: roll.seq, count: n()}, {button, error});
  const botch = h("button", {type: "button", class: "secondary small", "data-needs": "live",
    onclick: () => spend("activate-botch", botch)}, _("Activate botch"));
  const crit = h("button", {type: "button", class: "secondary small", "data-needs": "live",
    onclick: () => spend("activate-critical", crit)}, _("Activate critical"));
  const use = h("button", {type: "button", class: "small", "data-needs": "live",
    onclick: () => ctx.act({type: "pool.use", roll: roll.seq}, {button: use, error})}, _("Use a GM die"));
  // Dice spent on a critical that could have no effect go back to the seat that spent them.
  const to = h("select", {id: `${id}-refund-to`, class: "refund-to"});
  const refund = h("button", {type: "button", class: "secondary small refund", "data-needs": "live",
    onclick: () => ctx.act({type: "pool.refund", roll: roll.seq, count: n(), seat: +to.value || undefined},
      {button: refund, error})}, _("Refund critical dice"));
  const refundTools = h("span", {class: "refund-tools"}, h("label", {for: to.id}, "to"), to, refund);
  const gmTools = h("div", {class: "gm-spend", role: "group", "aria-label": fmt(_("GM dice on roll #%(seq)s"), {seq: roll.seq})},
    h("label", {for: dice.id}, "GM dice"), dice, botch, crit, refundTools);
  const node = h("article", {class: "open-roll", "aria-labelledby": `${id}-h`, "data-seq": roll.seq},
    h("header", {class: "open-top"}, title, flags), tally, committed, h("div", {class: "open-tools"}, use, gmTools), form, error);
  return {
    node,
    update(r) {
      const who = ctx.seatName(r.seat);
      put(title, h("a", {href: `#ev-${r.seq}`}, `#${r.seq}`), " ", who,
        r.character ? h("span", {class: "muted"}, fmt(_(" as %(character)s"), {character: r.character.name})) : null);
      const list = r.flags || [];
      put(flags, ...list.map((f) => badge(f)));
      const outcome = r.dc == null ? null : r.total >= r.dc ? "success" : "failure";
      put(tally,
        h("span", {class: "num"}, h("small", null, "total"), " ", h("b", {class: "open-total"}, r.total)),
        r.added ? h("span", {class: "muted small"}, fmt(_(" (+%(added)s from action dice)"), {added: r.added})) : null,
        r.dc != null ? h("span", {class: "num"}, h("small", null, "DC"), " ", h("b", null, r.dc)) : null,
        outcome ? badge(outcome) : null);
      const parts = [];
      if (r.botch_dice) parts.push(fmt(_("botch severity %(botch_dice)s"), {botch_dice: r.botch_dice}));
      if (r.critical_dice) parts.push(fmt(ngettext("%(count)s die on the critical", "%(count)s dice on the critical", r.critical_dice), {count: r.critical_dice}));
      committed.textContent = parts.join(" · ");
      committed.hidden = !parts.length;
      botch.hidden = !list.some((f) => THREATS.has(f));
      crit.hidden = !list.includes("critical-threat");
      refundTools.hidden = !r.critical_dice;
      const seats = [...ctx.state.seats.values()];
      const choice = to.value;
      put(to, h("option", {value: ""}, _("whoever spent them")), seats.map((s) => h("option", {value: s.id}, s.name)));
      to.value = seats.some((s) => String(s.id) === choice) ? choice : "";
      refund.setAttribute("aria-label", fmt(_("Refund critical dice spent on roll #%(seq)s"), {seq: r.seq}));
      gmTools.hidden = botch.hidden && crit.hidden && refundTools.hidden;
      use.hidden = r.seat !== ctx.gmSeatId;
      use.setAttribute("aria-label", fmt(_("Use a GM die on roll #%(seq)s"), {seq: r.seq}));
      botch.setAttribute("aria-label", fmt(_("Activate botch of roll #%(seq)s with GM dice"), {seq: r.seq}));
      crit.setAttribute("aria-label", fmt(_("Activate critical of roll #%(seq)s with GM dice"), {seq: r.seq}));
      declare.setAttribute("aria-label", fmt(_("Declare roll #%(seq)s"), {seq: r.seq}));
    },
  };
}

/** A player's request for an inspiration check, with the GM's Agree and Refuse. */
function askView(ctx, put) {
  const text = h("span");
  const error = h("span", {class: "error small", role: "alert"});
  let ask = null;
  const answer = (grant, button) => ctx.act({type: "insight.answer", ask: ask.ask, grant}, {button, error});
  const yes = h("button", {type: "button", class: "small", "data-needs": "live", onclick: () => answer(true, yes)}, _("Agree"));
  const no = h("button", {type: "button", class: "secondary small", "data-needs": "live", onclick: () => answer(false, no)}, _("Refuse"));
  const state = h("span", {class: "badge badge-good"}, _("granted: waits for the spend"));
  return {
    node: h("li", {class: "insight-ask"}, text, yes, no, state, error),
    update(a) {
      ask = a;
      put(text, h("strong", null, a.name), _(" asks about "), h("q", null, a.subject), " ");
      yes.hidden = no.hidden = a.granted;
      state.hidden = !a.granted;
      yes.setAttribute("aria-label", fmt(_("Agree to %(name)s's inspiration check on %(subject)s"), {name: a.name, subject: a.subject}));
      no.setAttribute("aria-label", fmt(_("Refuse %(name)s's inspiration check on %(subject)s"), {name: a.name, subject: a.subject}));
    },
  };
}

export async function dashboard(ctx) {
  const {keyed, put} = await import("../gm-views.js"); // the dashboard's own views (not the room's)
  const $ = (id) => document.getElementById(id);
  const undo = $("undo-award");
  undo?.addEventListener("click", () => ctx.act({type: "pool.undo-award"}, {button: undo, error: $("undo-error")}));
  const phaseBtn = $("initiative-phase");
  phaseBtn?.addEventListener("click", () => ctx.act(
    {type: ctx.state.table.initiative ? "initiative.end" : "initiative.begin"}, {button: phaseBtn, error: $("initiative-error")}));
  const open = new Map(); // roll seq -> summary
  return {
    gmSeatShown: true, // the GM has a pool of their own
    load(s) {
      open.clear();
      for (const r of s.open_rolls || []) open.set(r.seq, r);
    },
    apply(event) {
      const d = event.data || {};
      if (event.kind === "roll") {
        if (d.reroll_of != null) open.delete(d.reroll_of);
        if (d.open_roll) open.set(event.seq, {...d.open_roll, seq: event.seq});
      } else if (event.kind === "roll.reveal" && d.open_roll) {
        open.set(d.open_roll.seq, d.open_roll); // a self check the GM could not see until now
      } else if (event.kind === "roll.close") {
        open.delete(d.roll);
      } else if (event.kind === "pool") {
        if (d.open_roll) d.open_roll.open ? open.set(d.open_roll.seq, d.open_roll) : open.delete(d.open_roll.seq);
        for (const seq of d.rolls || []) open.delete(seq);
      }
    },
    draw() {
      const rolls = [...open.values()].filter((r) => r.open !== false).sort((a, b) => a.seq - b.seq);
      keyed($("open-rolls"), rolls, (r) => r.seq, (r) => openRollView(ctx, r, put));
      $("no-open").hidden = rolls.length > 0;
      $("open-count").textContent = rolls.length ? `(${rolls.length})` : "";
      const table = ctx.state.table || {};
      const asks = table.insight_asks || [];
      keyed($("insight-asks"), asks, (a) => a.ask, () => askView(ctx, put));
      $("no-asks").hidden = asks.length > 0;
      if (phaseBtn) {
        phaseBtn.textContent = table.initiative ? _("End the initiative phase") : _("Begin the initiative phase");
        $("initiative-state").textContent = table.initiative ? _("Initiative phase: initiative rolls are set.") : "";
      }
    },
    characterInfo: (sheet) => (sheet.level != null ? fmt(_("level %(level)s"), {level: sheet.level}) : ""),
    /** A seat that gave up its pool says so on its card. */
    badges: (seat) => (luckyOf(ctx.room).has(seat.id)
      ? [h("span", {class: "badge badge-good", title: _("Gave up the pool: no awards this session")}, _("lucky break"))] : []),
    noPool: (seat, hasChars) => (seat.role === "gm" ? _("The GM's pool comes with the first player's pool.")
      : hasChars ? _("The pool is dealt when the session starts.") : _("No character, so no pool.")),
    /** Award dice on a player's card (refunds are on the check whose critical they were spent on). */
    seatTools(seat) {
      if (seat.role === "gm") return null;
      const id = `seat-${seat.id}`;
      const error = h("p", {class: "error small", role: "alert"});
      const count = h("input", {id: `${id}-count`, type: "number", min: 1, max: 20, value: 1, inputmode: "numeric", class: "count"});
      const n = () => Math.max(1, Math.min(20, Math.trunc(Number(count.value)) || 1));
      const award = h("button", {type: "button", class: "small award", "data-needs": "live",
        onclick: () => ctx.act({type: "pool.award", seat: seat.id, count: n()}, {button: award, error})}, _("Award die"));
      const node = h("div", null, h("div", {class: "seat-tools", role: "group", "aria-label": fmt(_("Dice for %(seat)s"), {seat: seat.name})},
        h("label", {for: count.id}, _("Dice")), count, award), error);
      return {
        node,
        update(s, pools) {
          award.setAttribute("aria-label", fmt(_("Award die to %(name)s"), {name: s.name}));
          // After a lucky break the player receives no dice this session: no awards.
          award.dataset.blocked = luckyOf(ctx.room).has(s.id) || !pools.length ? "1" : "";
        },
      };
    },
  };
}
