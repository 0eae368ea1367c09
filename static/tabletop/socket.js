// The room socket: reconnects by itself (jittered exponential backoff), resumes with
// after=<last seq seen>, and hands every event on exactly once, in seq order. ``request`` sends
// a message and answers it: the sender's copy of the event it caused, or its error.
import {_} from "./i18n.js";

const PING_EVERY = 20000;
const SILENCE_LIMIT = 45000;
const MAX_DELAY = 30000;

export class RoomSocket {
  constructor(path, handlers) {
    this.path = path;
    this.on = handlers; // {hello, event, error, status, closed?, notice?}
    this.lastSeq = 0;
    this.attempt = 0;
    this.ws = null;
    this.timer = null;
    this.heard = Date.now();
    this.caughtUp = 0;
    this.pending = new Map(); // ref -> {done, timer}
    this.refs = 0;
    addEventListener("online", () => this.now());
    addEventListener("offline", () => this.drop("offline"));
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && !this.ws) this.now();
    });
    setInterval(() => this.beat(), PING_EVERY);
  }

  start() {
    this.open();
  }

  get live() {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN && this.ready;
  }

  send(message) {
    if (!this.live) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Send ``message`` with a fresh ref; ``done(error, event)`` once the table answers it: with
   * null and the event it caused, with its error, with an error after ``timeout`` ms without
   * an answer, or with null if the connection drops first (the log shows what happened). False
   * when not connected: nothing was sent. */
  request(message, done, {timeout = 8000} = {}) {
    const ref = `${message.type}-${++this.refs}`;
    if (!this.send({...message, ref})) return false;
    const timer = setTimeout(() => this.answer(ref, {code: "no-answer", message: _("No answer from the table; try again.")}), timeout);
    this.pending.set(ref, {done, timer});
    return true;
  }

  /** Hand a request its answer; false if ``ref`` is not one this socket is waiting on. */
  answer(ref, error, event) {
    const waiting = ref != null && this.pending.get(ref);
    if (!waiting) return false;
    this.pending.delete(ref);
    clearTimeout(waiting.timer);
    waiting.done(error, event);
    return true;
  }

  /** Reconnect at once (the network came back, the tab became visible). */
  now() {
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    clearTimeout(this.timer);
    this.attempt = 0;
    this.open();
  }

  /** For good (the GM removed this seat): close and never come back. */
  stop() {
    this.stopped = true;
    this.drop("offline");
  }

  open() {
    this.timer = null;
    if (this.stopped) return;
    if (navigator.onLine === false) {
      this.status("offline");
      return;
    }
    this.status(this.attempt ? "reconnecting" : "connecting");
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    // A page that shows the table's notices (who is here, quick rolls) asks for them; replay=batch:
    // missed events come many to a frame.
    const ws = new WebSocket(`${scheme}//${location.host}${this.path}?after=${this.lastSeq}&replay=batch${this.on.notice ? "&notices=1" : ""}`);
    this.ws = ws;
    this.ready = false;
    ws.onmessage = (msg) => {
      if (ws !== this.ws) return;
      this.heard = Date.now();
      let data;
      try {
        data = JSON.parse(msg.data);
      } catch {
        return;
      }
      this.receive(data);
    };
    ws.onclose = (closed) => {
      if (ws !== this.ws) return;
      this.forget();
      this.ws = null;
      this.ready = false;
      // The page hears why (a close code and reason) before the socket tries again.
      if (this.on.closed) this.on.closed(closed.code, closed.reason);
      this.retry();
    };
  }

  receive(msg) {
    if (msg.type === "hello") {
      this.ready = true;
      this.attempt = 0;
      this.caughtUp = msg.last_seq;
      this.on.hello(msg);
      this.status("live");
    } else if (msg.type === "event") {
      if (msg.seq <= this.lastSeq) return; // seen already
      if (msg.seq > this.lastSeq + 1) {
        // A gap: reconnect and let the server replay from what we have.
        this.drop("reconnecting", true);
        return;
      }
      this.lastSeq = msg.seq;
      this.on.event(msg, msg.seq <= this.caughtUp);
      if (msg.ref != null) this.answer(msg.ref, null, msg);
    } else if (msg.type === "replay") {
      // Each as if alone; after a gap (a reconnect) the rest is not read.
      const ws = this.ws;
      for (const event of Array.isArray(msg.events) ? msg.events : []) {
        if (this.ws !== ws) return;
        this.receive(event);
      }
    } else if (msg.type === "error") {
      if (!this.answer(msg.ref, msg)) this.on.error(msg);
    } else if (msg.type === "next-session") {
      this.on.nextSession?.(msg);
    } else if (msg.type === "here" || msg.type === "quick_rolls") {
      this.on.notice?.(msg);
    }
  }

  /** Requests still waiting when the connection goes: their answers will not come. */
  forget() {
    for (const ref of [...this.pending.keys()]) this.answer(ref, null);
  }

  /** Close the socket; come back at once (``soon``) or with the usual backoff. */
  drop(state, soon = false) {
    this.forget();
    const ws = this.ws;
    this.ws = null;
    this.ready = false;
    if (ws) ws.close();
    clearTimeout(this.timer);
    if (state === "offline") {
      this.status("offline");
      return;
    }
    if (soon) this.open();
    else this.retry();
  }

  retry() {
    if (this.stopped) return;
    if (navigator.onLine === false) {
      this.status("offline");
      return;
    }
    this.attempt += 1;
    const cap = Math.min(MAX_DELAY, 500 * 2 ** Math.min(this.attempt - 1, 8));
    const delay = cap / 2 + Math.random() * (cap / 2);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
    this.status("reconnecting", Date.now() + delay);
  }

  beat() {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    if (Date.now() - this.heard > SILENCE_LIMIT) {
      this.drop("reconnecting"); // a half-open connection (sleeping laptop, lost Wi-Fi)
      return;
    }
    this.ws.send(JSON.stringify({type: "ping", ref: "heartbeat"}));
  }

  status(state, until) {
    this.on.status(state, until);
  }
}
