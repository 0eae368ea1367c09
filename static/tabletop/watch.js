// The spectator's page: the room's log, read-only. The socket is the watch link's: the server
// sends hidden events redacted, and refuses anything a spectator might try to send.
import {_, language} from "./i18n.js";
import {connectionStatus} from "./dom.js";
import {Log} from "./log.js";
import {load} from "./seam.js";
import {RoomSocket} from "./socket.js";
import {StatsPanel} from "./stats.js";

const $ = (id) => document.getElementById(id);
const page = JSON.parse($("room-data").textContent);
const log = new Log($("log"), $("announce"), {seatId: null, role: "spectator", reveal: null});
const stats = $("stats") ? new StatsPanel($("stats"), page.stats_url) : null;
const showConnection = connectionStatus($("conn"), _("watching"));

/** The GM revoked this link: stop trying, and say so. */
function revoked(message) {
  socket.retry = socket.now = () => {};
  showConnection("offline");
  $("revoked").textContent = message || _("This watch link was revoked.");
  $("revoked").hidden = false;
}

const socket = new RoomSocket(page.socket, {
  status: showConnection,
  hello() {},
  closed(code, reason) {
    // 4403: the link is unknown or was revoked; anything else (busy, too many spectators on
    // this link, too far behind) is worth trying again.
    // The reason is in English (close reasons are kept short): other languages say it their way.
    if (code === 4403) revoked(reason && language === "en" ? `${reason[0].toUpperCase()}${reason.slice(1)}.` : "");
  },
  error(msg) {
    if (msg.code === "forbidden") revoked(`${msg.message[0].toUpperCase()}${msg.message.slice(1)}.`);
  },
  event(event, replay) {
    log.add(event, replay);
    if (replay && event.seq >= socket.caughtUp && log.flush) log.flush();
    if (event.kind === "session.end" && log.end) log.end();
    if (stats && !replay) stats.heard(event);
  },
});
await load(page.session.system); // its dice captions and styles, before the log draws a roll
socket.start();
if (stats) stats.load();
