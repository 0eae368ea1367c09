// The GM dashboard: every seat's pools and resources live, and the GM's controls for the table.
// The room socket (with reconnect and resume) and the log are the room page's own modules; the
// table system's sections and tools come from its module (systems/<engine id>.js).
import {ChatBox} from "./chat.js";
import {_, fmt, ngettext, statusWord} from "./i18n.js";
import {connectionStatus, h} from "./dom.js";
import {Initiative} from "./initiative.js";
import {Log} from "./log.js";
import {Odds} from "./odds.js";
import {Panel} from "./panel.js";
import {characterSheet, postJson, sheetForm} from "./sheet.js";
import {RoomSocket} from "./socket.js";
import {load} from "./seam.js";
import {RoomState} from "./state.js";
import {hiddenRollView, keyed, seatView} from "./gm-views.js";

const $ = (id) => document.getElementById(id);
const page = JSON.parse($("dashboard-data").textContent);
const system = page.system.id;
const gmSeatId = page.seat.id;
const LOG_KEEP = 120; // the log here is a glance at what just happened; the room keeps it all

const state = {
  status: page.session.status,
  live: false, // the socket
  fairness: page.fairness || {},
  seats: new Map(),
  characters: new Map((page.characters || []).map((c) => [c.id, c])),
  pools: new Map(),
  resources: new Map(), // "character:name" -> amount
  table: {},
  hidden: new Map(), // seq -> roll event not yet revealed
};

// --- sending, and answers to what we sent ----------------------------------------------------
const busy = new Set();

/** Send a GM message; its error (if any) appears in ``error``, next to the control. */
function act(message, {button, error} = {}) {
  if (error) error.textContent = "";
  const sent = socket.request(message, (err) => {
    if (button) busy.delete(button);
    if (err && error) showError(error, err.message);
    refreshControls();
  });
  if (!sent) {
    if (error) showError(error, _("Not connected; try again in a moment."));
    return false;
  }
  if (button) {
    busy.add(button);
    button.disabled = true;
  }
  return true;
}

/** An error next to its control, for a while: the next try, or a quarter of a minute, clears it. */
function showError(node, message) {
  node.textContent = message;
  clearTimeout(node._clear);
  node._clear = setTimeout(() => { if (node.textContent === message) node.textContent = ""; }, 15000);
}

function reveal(seq, button, error) {
  act({type: "reveal", seq}, {button, error});
}

// --- what the views need to know --------------------------------------------------------------
const ctx = {
  system,
  gmSeatId,
  page,
  state,
  act,
  showError,
  reveal,
  home: null, // the table system's dashboard hooks, once its module is loaded
  room: null, // the room state (state.js), whose keys a system's module reads
  resources: page.system.resources || [],
  seatName: (id) => (state.seats.get(id) || {}).name || `seat ${id}`,
  characterName: (id) => (state.characters.get(id) || {}).name || `character ${id}`,
  sheet: (id) => ((state.characters.get(id) || {}).sheet || {}),
  poolsOf: (seatId) => [...state.pools.values()].filter((p) => p.seat === seatId),
  resource(characterId, name) {
    const key = `${characterId}:${name}`;
    if (state.resources.has(key)) return state.resources.get(key);
    const start = ctx.sheet(characterId)[name];
    return Number.isInteger(start) ? start : 0;
  },
};

// --- drawing -----------------------------------------------------------------------------------
function drawHeader() {
  const badge = $("session-status");
  badge.textContent = statusWord(state.status);
  badge.className = `status status-${state.status}`;
  $("start-session").hidden = state.status !== "planned";
  $("end-session").hidden = state.status !== "live";
  $("next-session").hidden = state.status !== "ended"; // a new planned session, new invite
  const f = state.fairness;
  $("commitment-row").hidden = !f.commitment;
  if (f.commitment) {
    $("commitment").textContent = f.commitment;
    $("commitment").title = f.commitment;
  }
  $("seed-row").hidden = !f.server_seed;
  if (f.server_seed) $("server-seed").textContent = f.server_seed;
}

function drawSeats() {
  // The GM first; the GM's card only when it has something to show (or the system deals the GM
  // a pool of their own).
  const seats = [...state.seats.values()]
    .filter((s) => s.role !== "gm" || ctx.home?.gmSeatShown || (s.characters || []).length || ctx.poolsOf(s.id).length)
    .sort((a, b) => (b.role === "gm") - (a.role === "gm"));
  keyed($("seat-cards"), seats, (s) => s.id, (s) => seatView(ctx, s));
  const players = seats.filter((s) => s.role !== "gm").length;
  $("seat-count").textContent = fmt(ngettext("(%(count)s player)", "(%(count)s players)", players), {count: players});
  $("no-seats").hidden = players > 0;
}

function drawHidden() {
  const rolls = [...state.hidden.values()].sort((a, b) => b.seq - a.seq);
  keyed($("hidden-rolls"), rolls, (e) => e.seq, (e) => hiddenRollView(ctx, e));
  $("no-hidden").hidden = rolls.length > 0;
  $("hidden-count").textContent = rolls.length ? `(${rolls.length})` : "";
}

/** Enable what can be done now: session controls need a live socket, table controls a live session. */
function refreshControls() {
  const socketUp = state.live;
  panel.setState({status: state.status, live: socketUp});
  const ok = {
    socket: socketUp,
    live: socketUp && state.status === "live",
    planned: socketUp && state.status === "planned",
  };
  for (const el of document.querySelectorAll("[data-needs]")) {
    el.disabled = !ok[el.dataset.needs] || busy.has(el) || el.dataset.blocked === "1" || el.dataset.zero === "1";
  }
}

let scheduled = false;
function draw() {
  if (scheduled) return;
  scheduled = true;
  setTimeout(() => {
    scheduled = false;
    drawHeader();
    drawSeats();
    ctx.home?.draw?.();
    drawHidden();
    refreshControls();
  }, 0);
}

// --- applying what the server says ------------------------------------------------------------
// The room state is state.js's (hello, then every event applied by the server's own rule); the
// maps the views draw from are read from it after every change.
const room = new RoomState();
ctx.room = room;

function fromRoom() {
  const s = room.state;
  state.seats = room.seats;
  if (s.characters) state.characters = room.characters;
  state.pools = room.pools;
  state.resources = new Map(s.resources.map((r) => [`${r.character}:${r.name}`, r.amount]));
  state.table = room.table;
  state.fairness = room.fairness;
  state.status = room.session.status;
}

const HIDDEN = new Set(["gm", "blind"]);

/** What the dashboard keeps beyond the room state: the hidden rolls not yet revealed. */
function apply(event) {
  const data = event.data || {};
  if (data.hidden) return; // not ours to see
  ctx.home?.apply?.(event);
  if (event.kind === "roll") {
    const mine = event.actor && event.actor.seat === gmSeatId;
    if (HIDDEN.has(event.visibility) || (event.visibility === "self" && mine)) state.hidden.set(event.seq, event);
  } else if (event.kind === "roll.reveal") {
    state.hidden.delete(data.seq);
  }
}

// --- connection status ------------------------------------------------------------------------
const showConnection = connectionStatus($("conn"), _("connected"));
function showStatus(kind, until) {
  showConnection(kind, until);
  const was = state.live;
  state.live = kind === "live";
  if (was !== state.live && was) log.announce(kind === "offline" ? _("You are offline.") : _("Connection lost; reconnecting."));
  refreshControls();
}

// --- the log ----------------------------------------------------------------------------------
const logList = $("log");
const log = new Log(logList, $("announce"), {seatId: gmSeatId, role: "gm", reveal});

function addToLog(event, replay) {
  log.add(event, replay);
  while (logList.children.length > LOG_KEEP) {
    const first = logList.firstElementChild;
    log.entries.delete(Number(first.dataset.seq));
    first.remove();
  }
}

// --- talk at the table and the turn order -----------------------------------------------------
const talkRequest = (message, done) => socket.request(message, (err) => done(err));
const chat = new ChatBox({form: $("chat-form"), input: $("chat-text"), error: $("chat-error"), help: $("chat-help"),
  note: $("talk-note"), settings: $("talk-settings"), gm: true, request: talkRequest, clientSeed: freshSeed});
const turns = new Initiative({box: $("turns-card"), seatId: gmSeatId, gm: true, request: talkRequest, clientSeed: freshSeed});

// --- the socket -------------------------------------------------------------------------------
const socket = new RoomSocket(page.socket, {
  status: showStatus,
  hello(msg) {
    room.hello(msg);
    fromRoom();
    turns.hello(msg);
    chat.talk(msg.state.talk);
    ctx.home?.load?.(msg.state);
    draw();
  },
  event(event, replay) {
    addToLog(event, replay);
    document.dispatchEvent(new CustomEvent("table:event", {detail: {...event, replay}}));
    if (room.apply(event)) fromRoom();
    turns.event(event);
    if (event.kind === "chat.settings" && event.data.talk) chat.talk(event.data.talk);
    apply(event);
    draw();
  },
  error(msg) {
    // (answers to this page's own requests go to their controls; see act)
    if (msg.ref !== "heartbeat") showError($("session-error"), msg.message);
  },
});

// --- the GM's own rolls: the room's panel, for any character of the campaign (NPCs too) --------
function freshSeed() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
const odds = new Odds($("odds"), page.odds_url, (field, message) => panel.showError(field, message, {panel: false}));
const panel = new Panel($("roll-form"), {
  system: page.panel_system,
  generic: page.generic,
  quick_rolls: (page.characters || []).map((c) => ({character: {id: c.id, name: c.name}, rolls: []})),
  seat: page.seat,
  role: "gm",
}, ({system, request, missing}) => odds.update(system, request, missing));
if (panel.saveButton) panel.saveButton.hidden = true; // saved rolls live in the room
$("roll-form").addEventListener("submit", (e) => {
  e.preventDefault();
  if (panel.button.disabled) return;
  panel.clearErrors();
  const sent = socket.request({...panel.message(), client_seed: freshSeed()}, (err) => {
    panel.setBusy(false);
    if (err) panel.showError(err.field, err.message);
    else panel.rolled();
  });
  if (!sent) panel.showError(null, _("Not connected: wait until the status says connected."));
  else panel.setBusy(true);
});

// --- sheets and settings: forms from the system's schema ---------------------------------------
{
  const box = $("sheets");
  const parts = [];
  if ((page.settings_schema || []).length) {
    parts.push(h("details", {class: "sheet"}, h("summary", null, _("Campaign settings")),
      sheetForm({schema: page.settings_schema, values: page.settings || {}, title: "campaign settings",
        save: (settings) => postJson(`/play/${page.code}/settings`, {settings})})));
  }
  if ((page.sheet_schema || []).length) {
    for (const c of page.characters || []) {
      parts.push(characterSheet({schema: page.sheet_schema, character: c,
        save: (sheet) => postJson(`/play/${page.code}/sheet/${c.id}`, {sheet})}));
    }
  }
  box.replaceChildren(...parts);
  $("sheets-card").hidden = !parts.length;
}

// --- header controls --------------------------------------------------------------------------
$("start-session").addEventListener("click", (e) => {
  act({type: "session.start"}, {button: e.currentTarget, error: $("session-error")});
});
$("end-session").addEventListener("click", (e) => {
  const ok = confirm(_("End the session for everyone?\n\nEvery pool expires (unused dice are lost), no more rolls can be made, and the server seed is revealed so anyone can verify the dice."));
  if (ok) act({type: "session.end"}, {button: e.currentTarget, error: $("session-error")});
});

function copier(button, value, select) {
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value());
      button.textContent = _("Copied");
    } catch {
      select();
      button.textContent = document.execCommand && document.execCommand("copy") ? _("Copied") : _("Selected");
    }
    setTimeout(() => { button.textContent = _("Copy"); }, 1500);
  });
}
const invite = $("invite");
copier($("copy-invite"), () => invite.value, () => invite.select());
copier($("copy-commitment"), () => state.fairness.commitment || "", () => {
  const range = document.createRange();
  range.selectNodeContents($("commitment"));
  getSelection().removeAllRanges();
  getSelection().addRange(range);
});
invite.addEventListener("focus", () => invite.select());
const lasting = $("campaign-link");
copier($("copy-campaign-link"), () => lasting.value, () => lasting.select());
lasting.addEventListener("focus", () => lasting.select());

// --- the table system's own sections ---------------------------------------------------------
// Loaded by the engine id before the socket starts, so every view is made with its hooks; a
// table with no system module (ordinary notation) has none.
// (The seam registers its rule of the room reducer before hello is folded.)
const module = await load(system);
ctx.home = (await module?.dashboard?.(ctx)) || null;

drawHeader();
draw();
socket.start();
