// The player's room: header, roll panel with exact odds, live log, fair dice.
import {ChatBox} from "./chat.js";
import {_, fmt, pgettext, statusWord} from "./i18n.js";
import {connectionStatus, h, lock} from "./dom.js";
import {renderRoll} from "./dice.js";
import {Initiative} from "./initiative.js";
import {Log, short} from "./log.js";
import {Odds} from "./odds.js";
import {Panel} from "./panel.js";
import {Pools} from "./pools.js";
import {SavedRolls} from "./saved.js";
import {characterSheet, postJson} from "./sheet.js";
import {RoomSocket} from "./socket.js";
import {load} from "./seam.js";

const $ = (id) => document.getElementById(id);
const page = JSON.parse($("room-data").textContent);
const seatId = page.seat.id;
const state = {status: page.session.status, live: false, fairness: page.fairness || {}};
// The room's seats, session and fairness are drawn from the one room state (state.js's
// RoomState, which the table card holds: hello's state and every event since, folded).
const room = () => pools.room;

// --- client seed: a fresh one for every roll
// The field holds the seed the next roll (or die used) takes; taking it puts a new random one
// in its place. No two rolls share a seed, so once the server seed is revealed a public roll's
// seed tells nothing about a hidden one (whose seed is hidden with its dice).
function freshSeed() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
function clientSeed() {
  const field = $("client-seed");
  const seed = field.value.trim().slice(0, 200) || freshSeed();
  field.value = freshSeed();
  return seed;
}

// --- connection status
const showConnection = connectionStatus($("conn"), pgettext("connection", "live"));
let connection = ["connecting"];
// The socket opens first (its messages wait for this script); a status is shown once drawn.
let drawn = false;
let early = null;
function showStatus(kind, until) {
  if (!drawn) {
    early = [kind, until];
    return;
  }
  connection = [kind, until];
  showConnection(kind, until);
  drawEnded();
  const was = state.live;
  state.live = kind === "live";
  if (state.live) askHere();
  if (was !== state.live) {
    log.announce(state.live ? _("Connected to the table.") : kind === "offline" ? _("You are offline.") : _("Connection lost; reconnecting."));
  }
  panel.setState(state);
  pools.setState(state);
  turns.setLive(state.live);
}

const socket = new RoomSocket(page.socket, {
  status: showStatus,
  hello(msg) {
    if (msg.state) {
      pools.hello(msg);
      turns.hello(msg);
      chat.talk(room().state.talk);
      setSeats();
      if (msg.state.fairness) state.fairness = room().fairness;
      if (msg.state.session) setStatus(room().session.status);
      drawFairness();
    }
  },
  event(event, replay) {
    const item = log.add(event, replay);
    document.dispatchEvent(new CustomEvent("table:event", {detail: {...event, replay}}));
    if (replay && event.seq >= socket.caughtUp) log.flush(); // the replay is over: draw it now
    const held = room().seq;
    pools.event(event, replay, item); // (folds it into the room state)
    turns.event(event);
    const data = event.data || {};
    const fresh = Boolean(room().state) && event.seq > held; // else hello's state holds it
    if (fresh && event.kind === "chat.settings" && data.talk) chat.talk(room().state.talk);
    if (fresh && event.kind === "seat.join" && data.seat) {
      here?.add(data.seat.id);
      setSeats();
    } else if (fresh && event.kind === "seat.leave" && data.seat) {
      removed(data);
    } else if (fresh && (event.kind === "session.start" || event.kind === "session.end")) {
      if (event.kind === "session.end" && !replay && $("onward").hidden) {
        drawOnward({link: page.campaign_link, next: null});
      }
      setStatus(room().session.status);
      state.fairness = room().fairness;
      drawFairness();
    }
    if (event.kind === "roll" && event.actor && event.actor.seat === seatId && !replay) showLast(event);
  },
  nextSession(msg) {
    if (state.status === "ended") drawOnward({link: msg.link, next: msg.session});
  },
  notice(msg) {
    if (msg.type === "here" && Array.isArray(msg.here)) {
      here = new Set(msg.here);
      drawSeats();
    } else if (msg.type === "quick_rolls" && msg.character) {
      quickRolls.set(msg.character.id, msg);
      drawQuick();
    }
  },
  error(msg) {
    // (answers to this page's own requests go to whoever asked; see socket.request)
    if (msg.ref !== "heartbeat") {
      panel.showError(msg.field, msg.message);
    }
  },
});
load(page.system.id).then(() => socket.start()); // its module (preloaded) folds hello

// --- seats: who sat down, who is here now, the GM's "Remove"
const seats = new Map();
let here = null; // Set of seat ids with a socket open now, or null until first asked
let managing = false;
function drawSeats() {
  const list = $("seats");
  const gm = page.role === "gm" && state.status !== "ended";
  list.replaceChildren(...[...seats.values()].map((s) => {
    const away = here && s.id !== seatId && !here.has(s.id);
    return h("li", {class: [s.id === seatId ? "me" : "", away ? "away" : ""].join(" ").trim() || null,
      title: away ? fmt(_("%(name)s is not connected"), {name: s.name}) : null},
      s.name, s.role === "gm" && s.name !== "GM" ? h("span", {class: "badge badge-plain"}, "GM") : null,
      s.id === seatId ? h("span", {class: "visually-hidden"}, " (you)") : null,
      away ? h("span", {class: "visually-hidden"}, " (away)") : null,
      gm && managing && s.role !== "gm" ? h("button", {type: "button", class: "link small remove-seat",
        onclick: () => removeSeat(s)}, fmt(_("Remove %(name)s"), {name: s.name})) : null);
  }));
  $("seat-count").textContent = seats.size;
  seatsScroll();
  const manage = $("manage-seats");
  if (manage) {
    manage.hidden = !gm || ![...seats.values()].some((s) => s.role !== "gm");
    manage.textContent = managing ? _("Done") : _("Manage seats");
    manage.setAttribute("aria-pressed", String(managing));
  }
}
/** On a phone the seats scroll sideways in one row: a row that scrolls can be reached from the
 * keyboard (and is named), one that does not is no extra tab stop. */
function seatsScroll() {
  const list = $("seats");
  if (list.scrollWidth > list.clientWidth + 1) {
    list.tabIndex = 0;
    list.setAttribute("aria-label", _("Seats at the table (scrolls sideways)"));
  } else {
    list.removeAttribute("tabindex");
    list.removeAttribute("aria-label");
  }
}
addEventListener("resize", seatsScroll, {passive: true});
/** The seats as the room state holds them, drawn. */
function setSeats() {
  seats.clear();
  for (const s of room().state?.seats || []) seats.set(s.id, s);
  drawSeats();
}
/** Who is connected now: asked on connecting; after that the socket tells every change. */
async function askHere() {
  if (document.visibilityState !== "visible" || !state.live) return;
  try {
    const answer = await (await fetch(`/play/${page.session.code}/here`, {credentials: "same-origin"})).json();
    if (Array.isArray(answer.here)) {
      here = new Set(answer.here);
      drawSeats();
    }
  } catch {
    // The next round asks again.
  }
}
$("manage-seats")?.addEventListener("click", () => {
  managing = !managing;
  drawSeats();
});
function removeSeat(s) {
  if (!confirm(fmt(_("Remove %(name)s from the table? Their link will no longer open this room."), {name: s.name}))) return;
  $("end-error").textContent = "";
  request({type: "seat.remove", seat: s.id}, (err) => {
    if (err) $("end-error").textContent = err.message;
  });
}
function removed(data) {
  setSeats();
  if (data.seat !== seatId) return;
  socket.stop();
  panel.setState({status: "ended", live: false});
  $("conn").textContent = "removed";
  $("conn").dataset.session = "ended";
  $("removed-note").hidden = false;
}

// --- fairness
function drawFairness() {
  const f = state.fairness;
  const commitment = $("commitment");
  if (f.commitment) {
    commitment.textContent = short(f.commitment);
    commitment.title = f.commitment;
  }
  $("commitment-row").hidden = !f.commitment;
  $("seed-row").hidden = !f.server_seed;
  if (f.server_seed) $("server-seed").textContent = f.server_seed;
}
function copier(button, value) {
  button.addEventListener("click", async () => {
    const text = value();
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = _("Copied");
    } catch {
      const range = document.createRange();
      range.selectNodeContents(button.previousElementSibling);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = _("Selected");
    }
    setTimeout(() => { button.textContent = _("Copy"); }, 1500);
  });
}

// --- session status
/** Once the session ended, the badge says so (not a green "live") while the socket stays up. */
function drawEnded() {
  const conn = $("conn");
  if (state.status === "ended") {
    conn.dataset.session = "ended";
    if (connection[0] === "live") conn.textContent = statusWord("ended");
  } else {
    delete conn.dataset.session;
  }
}

function setStatus(status) {
  state.status = status;
  const badge = $("session-status");
  badge.textContent = statusWord(status);
  badge.className = `status status-${status}`;
  badge.hidden = status !== "planned"; // the connection badge says "live" or "ended"
  if (status === "ended") log.end();
  drawSeats();
  showConnection(...connection);
  drawEnded();
  panel.setState(state);
  pools.setState(state);
  const end = $("end-session");
  if (end) end.hidden = status !== "live";
}

// --- where an ended session goes on
/** An ended session's room points on to the campaign link: to the next session once it is
 * planned or live (told live by a "next-session" notice), else "the next session starts soon". */
function drawOnward(onward) {
  const box = $("onward");
  const next = onward.next;
  box.replaceChildren(
    _("This session has ended. "),
    next ? fmt(_("The next session, “%(title)s”, is %(status)s: "), {title: next.title, status: statusWord(next.status)})
      : _("The next session starts soon: "),
    h("a", {href: onward.link}, _("go on to the campaign's table")), ".");
  box.hidden = false;
}

// --- the pieces
const odds = new Odds($("odds"), page.odds_url, (field, message) => panel.showError(field, message, {panel: false}));
const panel = new Panel($("roll-form"), page, ({system, request, missing}) => odds.update(system, request, missing));
const log = new Log($("log"), $("announce"), {seatId, role: page.role, reveal, again, visibleBottom});

/** "Roll again" on a log entry: the same request (and label) from the panel, at once. */
function again(event) {
  const data = event.data || {};
  panel.fill(data.request, data.character ? data.character.id : null, data.system, data.label);
  $("roll-form").requestSubmit();
}
const pools = new Pools({page, panel, card: $("table-card"), bar: $("table-bar"), clientSeed, request});

// --- talk at the table and the turn order
const chat = new ChatBox({form: $("chat-form"), input: $("chat-text"), error: $("chat-error"), help: $("chat-help"),
  note: $("talk-note"), settings: $("talk-settings"), gm: page.role === "gm", request, clientSeed});
const turns = new Initiative({box: $("turns-card"), seatId, gm: page.role === "gm", request, clientSeed});

/** Send a message; ``done(error or null)`` once the table answers it (or does not, in time). */
function request(message, done) {
  return socket.request(message, (err) => done(err));
}

function reveal(seq, button, error) {
  error.textContent = "";
  const sent = socket.request({type: "reveal", seq}, (err) => {
    button.disabled = false;
    if (err) error.textContent = err.message;
  });
  if (!sent) {
    error.textContent = _("Not connected; try again in a moment.");
    return;
  }
  button.disabled = true;
}

$("roll-form").addEventListener("submit", (e) => {
  e.preventDefault();
  if (panel.button.disabled) return;
  const message = {...panel.message(), client_seed: clientSeed()};
  panel.clearErrors();
  const sent = socket.request(message, (err) => {
    panel.setBusy(false);
    if (err) panel.showError(err.field, err.message);
    else panel.rolled();
  });
  if (!sent) {
    panel.showError(null, _("Not connected: wait until the status says live."));
    return;
  }
  panel.setBusy(true);
});

function showLast(event) {
  const box = $("last-roll");
  box.replaceChildren(h("h3", null, _("Your roll "), h("a", {href: `#ev-${event.seq}`}, `#${event.seq}`)),
    event.data.hidden ? h("p", {class: "muted"}, lock(), _(" Only the GM sees this one.")) : renderRoll(event.data));
  box.hidden = false;
}


// --- quick rolls
const quick = $("quick");
// Each character's quick rolls (character id -> group); a sheet edited anywhere redraws them.
const quickRolls = new Map((page.quick_rolls || []).map((group) => [group.character.id, group]));
function drawQuick() {
  for (const old of quick.querySelectorAll(":scope > .quick-rolls")) old.remove();
  const groups = [...quickRolls.values()].filter((group) => group.rolls && group.rolls.length);
  quick.prepend(...groups.map((group) => h("div", {class: "quick-group quick-rolls", role: "group",
    "aria-label": fmt(_("Quick rolls for %(character)s"), {character: group.character.name}), "data-character": group.character.id},
    h("span", {class: "quick-who"}, group.character.name),
    group.rolls.map((roll) => h("button", {type: "button", class: "secondary small",
      onclick: () => {
        panel.fill(roll.request, group.character.id, roll.system, roll.label);
        panel.button.focus();
      }}, roll.label)))));
  quick.hidden = !quick.querySelector(".quick-group, .saved:not([hidden])");
}
drawQuick();
{ // every seat keeps saved rolls: its characters', or its own when it has none
  const saved = new SavedRolls({box: quick, panel, url: `/play/${page.session.code}/saved`,
    csrf: document.querySelector("meta[name=csrf-token]")?.content || "",
    roll: () => $("roll-form").requestSubmit()});
  saved.load();
}

// --- a player's own character sheets: forms from the system's schema
if ((page.sheet_schema || []).length) {
  $("sheets").replaceChildren(...(page.sheets || []).map((c) => characterSheet({schema: page.sheet_schema,
    character: c, save: (sheet) => postJson(`/play/${page.session.code}/sheet/${c.id}`, {sheet})})));
}

// --- GM: end the session
const end = $("end-session");
if (end) {
  end.addEventListener("click", () => {
    if (!confirm(_("End the session for everyone? No more rolls can be made, and the server seed is revealed."))) return;
    $("end-error").textContent = "";
    const sent = socket.request({type: "session.end"}, (err) => {
      end.disabled = false;
      if (err) $("end-error").textContent = err.message;
    });
    if (!sent) {
      $("end-error").textContent = _("Not connected; try again in a moment.");
      return;
    }
    end.disabled = true;
  });
}

// --- client seed field
const seedInput = $("client-seed");
seedInput.value = freshSeed();
seedInput.addEventListener("change", () => { seedInput.value = seedInput.value.trim().slice(0, 200); });
$("new-seed").addEventListener("click", () => { seedInput.value = freshSeed(); });
copier($("copy-commitment"), () => state.fairness.commitment || "");
copier($("copy-seed"), () => state.fairness.server_seed || "");

// --- a phone: the roll bar at the screen's foot, the log above, the keyboard below
const phone = matchMedia("(max-width: 760px)");
const bar = document.querySelector(".room > .panel");
bar.classList.add("roll-bar");

/** Where the reader's view ends: above the bar on a phone. */
function visibleBottom() {
  const view = window.visualViewport;
  const bottom = view ? view.offsetTop + view.height : innerHeight;
  return phone.matches ? Math.min(bottom, bar.getBoundingClientRect().top) : bottom;
}

/** Sizes for table.css: the keyboard's (the visual viewport ends above the window's foot), the
 * bar's, the log's. */
function fit() {
  const root = document.documentElement.style;
  // (a scrolling bar is a tab stop)
  bar.tabIndex = phone.matches ? 0 : -1;
  if (!phone.matches) {
    for (const name of ["--keyboard", "--bar-h", "--log-h"]) root.removeProperty(name);
    return;
  }
  const view = window.visualViewport;
  const keyboard = view ? Math.max(0, Math.round(innerHeight - view.height - view.offsetTop)) : 0;
  root.setProperty("--keyboard", `${keyboard}px`);
  const height = bar.getBoundingClientRect().height;
  root.setProperty("--bar-h", `${Math.round(height)}px`);
  const top = $("log").getBoundingClientRect().top + scrollY; // where the log starts on the page
  root.setProperty("--log-h", `${Math.max(160, Math.round(innerHeight - keyboard - height - top - 12))}px`);
}

let pressed = null; // what the last press went down on
addEventListener("pointerdown", (e) => { pressed = e.target; }, true);

/** A focused field stays clear of the bar (and its Roll row) and the keyboard. A control
 * pressed stays put (a tapped text field is :focus-visible, and moves): moved between the press
 * and the release, the click would land on what came under the finger. */
function keepInView(field) {
  if (!phone.matches || !field?.closest || field === document.body) return;
  if (field.contains(pressed) && !field.matches(":focus-visible")) return;
  const view = window.visualViewport;
  const top = view ? view.offsetTop : 0;
  const bottom = top + (view ? view.height : innerHeight);
  const box = field.getBoundingClientRect();
  if (bar.contains(field)) {
    // The Roll row sticks over the roll form's own fields, not the sheets after it.
    const row = bar.querySelector(".roll-form .actions");
    const under = row && !row.contains(field) && field.closest(".roll-form");
    const floor = under ? Math.min(bottom, row.getBoundingClientRect().top) : bottom;
    const ceiling = Math.max(top, bar.getBoundingClientRect().top);
    if (box.bottom > floor) bar.scrollTop += box.bottom - floor + 8;
    else if (box.top < ceiling) bar.scrollTop -= ceiling - box.top + 8;
  } else {
    const floor = Math.min(bottom, bar.getBoundingClientRect().top);
    if (box.bottom > floor) scrollBy(0, box.bottom - floor + 8);
    else if (box.top < top) scrollBy(0, box.top - top - 8);
  }
}

let fitting = 0;
function refit() {
  cancelAnimationFrame(fitting);
  fitting = requestAnimationFrame(() => {
    const follow = log.atNewest();
    fit();
    if (follow) log.toNewest();
    keepInView(document.activeElement);
  });
}
const sizes = new ResizeObserver(refit); // the bar, and the header above the log
sizes.observe(bar);
sizes.observe(document.querySelector(".room-head"));
addEventListener("resize", refit);
phone.addEventListener("change", refit);
window.visualViewport?.addEventListener("resize", refit);
window.visualViewport?.addEventListener("scroll", refit);
document.addEventListener("focusin", (e) => requestAnimationFrame(() => keepInView(e.target)));

drawFairness();
setStatus(state.status);
drawn = true;
if (early) showStatus(...early);
