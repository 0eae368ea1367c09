import {_, fmt} from "./i18n.js";
import { richText } from "./dice.js";
import { checkDice, sha256hex, unhex } from "./fairdice.js";

const root = document.getElementById("verify");
const $ = (id) => document.getElementById(id);

// Column names, shown beside each cell where a phone stacks a row into a card.
const HEADS = ["#", _("What"), _("Who"), _("Dice"), _("Verdict")];

function row(cells, verdict, cls) {
  const tr = document.createElement("tr");
  tr.className = cls;
  cells.forEach((text, i) => {
    const td = document.createElement("td");
    td.dataset.label = HEADS[i];
    const body = document.createElement("span"); // one box, whatever the text holds
    if (i === 1) body.append(...[richText(text)].flat()); else body.textContent = text;
    td.append(body);
    tr.append(td);
  });
  const td = document.createElement("td"); td.dataset.label = HEADS[4]; td.textContent = verdict; tr.append(td);
  $("rows").append(tr);
}

async function main() {
  const answer = await fetch(root.dataset.record, { credentials: "same-origin" });
  // A refusal (too many downloads of the record just now) is plain words: shown as they are.
  if (!answer.ok) throw new Error((await answer.text()).trim() || String(answer.status));
  const record = await answer.json();
  const { commitment, server_seed: seed } = record.fairness;
  $("commitment").textContent = commitment || "none";
  $("seed").textContent = seed || _("still secret: the session has not ended");
  if (!seed) {
    $("commitment-check").textContent = _("not yet");
    $("summary").textContent = _("The seed is revealed when the GM ends the session; come back then.");
    return;
  }
  const seedBytes = unhex(seed);
  const matches = (await sha256hex(seedBytes)) === commitment;
  $("commitment-check").textContent = matches ? _("✔ yes") : _("✘ NO: this seed is not the one promised");
  let ok = 0, bad = 0, hidden = 0;
  for (const ev of record.events) {
    const who = ev.actor ? ev.actor.name : "table";
    // Others' whispers (and their inline rolls) are not this reader's: not even a row.
    if (ev.visibility === "whisper" && ev.data && ev.data.hidden) continue;
    if (ev.data && ev.data.hidden) {
      if (ev.kind === "roll") { hidden++; row([ev.seq, ev.kind, who, "?"], _("hidden from you"), "hidden"); }
      continue;
    }
    const dice = ev.data && ev.data.dice;
    if (!Array.isArray(dice) || dice.length === 0) continue;
    const problem = await checkDice(seedBytes, ev.data.client_seed || "", ev.seq, dice);
    const what = ev.data.text || ev.kind;
    if (problem) { bad++; row([ev.seq, what, who, dice.length], `✘ ${problem}`, "bad"); }
    else { ok++; row([ev.seq, what, who, dice.length], _("✔ verified"), "ok"); }
  }
  const parts = [fmt(_("%(ok)s verified"), {ok}), fmt(_("%(bad)s not matching"), {bad})];
  if (hidden) parts.push(fmt(_("%(hidden)s hidden from you"), {hidden}));
  $("summary").textContent = (matches && bad === 0 ? _("All dice check out: ") : _("Problems found: ")) + parts.join(", ") + ".";
  root.dataset.result = matches && bad === 0 ? "verified" : "failed";
}

main().catch((err) => { $("summary").textContent = fmt(_("Could not verify: %(message)s"), {message: err.message}); root.dataset.result = "error"; });
