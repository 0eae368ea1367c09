// The room state of the room page and the GM dashboard: hello's state and every event applied by
// the server's rule (apply_event, tabletop/selectors/room.py; a test runs both). Events carry the
// values they change, so nothing here knows a game's rules (a system's keys: seam.js).
import {tableSystem} from "./seam.js";

/** Replace the item with the same key, or add it at the end. */
function upsert(items, item, key) {
  const k = key(item);
  const at = items.findIndex((x) => key(x) === k);
  if (at < 0) return [...items, item];
  return items.map((x, i) => (i === at ? item : x));
}

// As hello lists seats (seat_entry): no player role, no empty characters.
const seatEntry = ({role, characters: c, ...s}) =>
  ({...s, ...(role !== "player" && {role}), ...(c?.length && {characters: c})});

/** An open roll's new state: listed while open (in seq order), gone once closed. */
function bySeq(rolls, roll) {
  const rest = rolls.filter((r) => r.seq !== roll.seq);
  if (roll.open !== false) rest.push(roll);
  return rest.sort((a, b) => a.seq - b.seq);
}

/** hello.state after one event, as this seat received it (redacted where it had to be). */
export function applyEvent(state, event) {
  const data = event.data || {};
  if (data.hidden || data.too_large) return state;
  const next = {...state};
  const kind = event.kind;
  if (kind === "seat.join") {
    next.seats = upsert(state.seats, seatEntry(data.seat), (s) => s.id);
  } else if (kind === "seat.leave") {
    next.seats = state.seats.filter((s) => s.id !== data.seat);
  } else if (kind === "session.start") {
    next.session = {...state.session, status: "live", started_at: data.started_at};
    next.fairness = {...state.fairness, commitment: data.commitment};
  } else if (kind === "session.end") {
    next.session = {...state.session, status: "ended", ended_at: data.ended_at};
    next.fairness = {...state.fairness, server_seed: data.server_seed};
  } else if (kind === "chat.settings") {
    next.talk = data.talk;
  }
  for (const pool of data.pools || []) next.pools = upsert(next.pools, pool, (p) => p.id);
  for (const row of data.resources || []) {
    next.resources = upsert(next.resources, row, (r) => `${r.character}:${r.name}`);
  }
  if ("table" in data) next.table = data.table;
  if (data.open_roll) {
    const roll = kind === "roll" ? {seq: event.seq, ...data.open_roll} : data.open_roll;
    next.open_rolls = bySeq(next.open_rolls, roll);
  }
  // What the table's system keeps of its own (its ``fold``, declared with it).
  return tableSystem((next.session || {}).system).fold(next, event);
}

/** The room as this seat sees it now; ``seq`` is the last event it holds. */
export class RoomState {
  constructor() {
    this.state = null;
    this.seq = 0;
  }

  /** hello: the state as of ``last_seq``. */
  hello(msg) {
    this.state = msg.state;
    this.seq = msg.last_seq;
    this.me = msg.seat;
    this.role = msg.role;
  }

  /** Apply an event; false for one the state already holds (a replay older than hello). */
  apply(event) {
    if (!this.state || event.seq <= this.seq) return false;
    this.state = applyEvent(this.state, event);
    this.seq = event.seq;
    return true;
  }

  // What pages draw, by key.
  get session() { return this.state.session; }
  get seats() { return new Map(this.state.seats.map((s) => [s.id, s])); }
  get characters() { return new Map(this.state.characters.map((c) => [c.id, c])); }
  get pools() { return new Map(this.state.pools.map((p) => [p.id, p])); }
  get openRolls() { return new Map(this.state.open_rolls.map((r) => [r.seq, r])); }
  /** A key a game system keeps of its own (its ``state_keys``), as hello and events left it. */
  own(key) { return this.state[key]; }
  get table() { return this.state.table || {}; }
  get fairness() { return this.state.fairness || {}; }
  get talk() { return this.state.talk || {}; }
  /** The turn order: entries in order, whose turn it is, and the round. */
  get turns() {
    const turns = this.table.turns || {entries: [], current: null};
    return {...turns, round: this.table.round || 0};
  }

  /** A character's amount of a resource (0 when it has none). */
  amount(character, name) {
    const row = this.state.resources.find((r) => r.character === character && r.name === name);
    return row ? row.amount : 0;
  }
}
