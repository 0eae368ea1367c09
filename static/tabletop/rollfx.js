// Dice that roll, never in the way: each die of a new roll tumbles for a moment in a corner of the
// screen, in the colours the log gives its role (kept, dropped, a system's own). The log has the result
// at once; this only decorates it: no pointer events, nothing waits for it, a newer roll replaces
// it, and it is off under prefers-reduced-motion or when the player switches it off (remembered in
// this browser). An optional clatter is generated with WebAudio: no sound files.
import {_} from "./i18n.js";
import {h} from "./dom.js";

const KEYS = {animate: "tabletop.fx.animate", sound: "tabletop.fx.sound"};
const MOTION_MS = 775; // the tumble: 0.6 s, the last die starting 175 ms after the first (under 0.8 s in all)
const SHOWN = 24; // dice drawn for one roll; more are summed up as "+N"

const memory = {};
const store = {
  get: (k) => { try { return localStorage.getItem(k); } catch { return memory[k] ?? null; } },
  set: (k, v) => { try { localStorage.setItem(k, v); } catch { memory[k] = v; } },
};

export class RollFx {
  /** ``controls``: where the two switches go. */
  constructor(controls) {
    this.reduced = matchMedia("(prefers-reduced-motion: reduce)");
    this.tray = h("div", {class: "fx-tray", "aria-hidden": "true"});
    document.body.append(this.tray);
    this.timer = null;
    this.audio = null;
    const animate = h("input", {type: "checkbox", id: "fx-animate"});
    const sound = h("input", {type: "checkbox", id: "fx-sound"});
    animate.checked = store.get(KEYS.animate) !== "off";
    sound.checked = store.get(KEYS.sound) === "on";
    animate.addEventListener("change", () => store.set(KEYS.animate, animate.checked ? "on" : "off"));
    sound.addEventListener("change", () => {
      store.set(KEYS.sound, sound.checked ? "on" : "off");
      if (sound.checked) this.clatter(2); // a click is the gesture browsers want before sound
    });
    this.switches = {animate, sound};
    const note = h("span", {class: "muted small", id: "fx-reduced"}, _("(off: your system asks for reduced motion)"));
    const sync = () => {
      animate.disabled = this.reduced.matches;
      note.hidden = !this.reduced.matches;
    };
    this.reduced.addEventListener?.("change", sync);
    sync();
    controls.replaceChildren(
      h("label", {class: "fx-switch"}, animate, _(" Dice animation")), note,
      h("label", {class: "fx-switch"}, sound, _(" Dice sound")));
  }

  get animating() {
    return this.switches.animate.checked && !this.reduced.matches;
  }

  /** A live event: roll the dice of a roll (or a revealed one) the viewer may see. */
  play(event) {
    const data = event.kind === "roll.reveal" ? (event.data || {}).roll : event.data;
    if (!data || data.hidden || !Array.isArray(data.dice) || !data.dice.length) return;
    if (event.kind !== "roll" && event.kind !== "roll.reveal") return;
    if (this.switches.sound.checked) this.clatter(Math.min(data.dice.length, 8));
    if (!this.animating) return;
    const dice = data.dice.slice(0, SHOWN).map((d, i) => h("span", {
      class: `die fx-die role-${d.role || "base"} fx-${shape(d)}`,
      style: `--fx-delay:${(i % 8) * 25}ms;--fx-turn:${turn()}deg;--fx-from:${(i % 2 ? -1 : 1) * (40 + (i * 7) % 50)}px`,
    }, h("span", {class: "face"}, String(d.value))));
    const more = data.dice.length > SHOWN ? [h("span", {class: "fx-more"}, `+${data.dice.length - SHOWN}`)] : [];
    this.tray.replaceChildren(...dice, ...more);
    this.tray.classList.remove("fx-fade");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.tray.classList.add("fx-fade");
      this.timer = setTimeout(() => this.tray.replaceChildren(), 400);
    }, MOTION_MS + 900);
  }

  clatter(count) {
    try {
      this.audio ||= new AudioContext();
      const ctx = this.audio;
      if (ctx.state === "suspended") ctx.resume();
      const length = Math.floor(ctx.sampleRate * 0.04);
      for (let n = 0; n < count; n++) {
        const buffer = ctx.createBuffer(1, length, ctx.sampleRate);
        const samples = buffer.getChannelData(0);
        for (let i = 0; i < length; i++) samples[i] = (Math.random() * 2 - 1) * (1 - i / length) ** 3;
        const source = ctx.createBufferSource();
        const filter = ctx.createBiquadFilter();
        const gain = ctx.createGain();
        source.buffer = buffer;
        filter.type = "bandpass";
        filter.frequency.value = 1800 + Math.random() * 2200;
        gain.gain.value = 0.25;
        source.connect(filter).connect(gain).connect(ctx.destination);
        source.start(ctx.currentTime + n * 0.045 + Math.random() * 0.03);
      }
    } catch {
      // No WebAudio here: the dice stay silent.
    }
  }
}

function shape(die) {
  const sides = die.sides || 6;
  if (die.die === "dF") return "d6";
  return {4: "d4", 6: "d6", 8: "d8", 10: "d10", 12: "d12", 20: "d20"}[sides] || "dx";
}

function turn() {
  return Math.round(180 + Math.random() * 360) * (Math.random() < 0.5 ? -1 : 1);
}
