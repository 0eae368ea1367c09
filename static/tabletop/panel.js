// The roll panel, built from the engines' request schemas (rules/engines/schema.py Field.as_json).
import {_, fmt} from "./i18n.js";
import {h, lock, sentence} from "./dom.js";
import {History, tray} from "./tray.js";

const VISIBILITY = [
  ["public", _("Everyone")],
  ["gm", _("GM and me")],
  ["blind", _("GM only (blind)")],
  ["self", _("Only me")],
];


// This browser's memory (the last rolls); a private window without storage keeps it in memory.
const memory = {};
const store = {
  get: (k) => { try { return localStorage.getItem(k); } catch { return memory[k] ?? null; } },
  set: (k, v) => { try { localStorage.setItem(k, v); } catch { memory[k] = v; } },
};

const has = (spec, key) => Object.prototype.hasOwnProperty.call(spec, key);
const labelOf = (spec) => spec.label || spec.name;
// An empty nullable field means null. Sent as null only where the default is something else;
// otherwise left out, so the engine's own default (null) applies and "absent" stays absent.
const empty = (spec) => (spec.nullable && has(spec, "default") && spec.default !== null ? null : undefined);

function help(spec, id) {
  return spec.help ? h("small", {class: "help", id: `${id}-help`}, spec.help) : null;
}

function selectOf(spec, id, value, describedBy) {
  const choices = spec.choices;
  const nullable = spec.nullable;
  const select = h("select", {id, "aria-describedby": describedBy});
  if (nullable) select.append(h("option", {value: ""}, "—"));
  choices.forEach((choice, i) => select.append(h("option", {value: String(i)}, String(choice))));
  const set = (v) => {
    const i = choices.findIndex((c) => c === v || String(c) === String(v));
    select.value = i >= 0 ? String(i) : nullable ? "" : "0";
  };
  const get = () => (select.value === "" ? empty(spec) : choices[Number(select.value)]);
  set(value);
  return {input: select, get, set};
}

/** One field: {node, get() (undefined = leave out), set(value), paths: {path: wrapper}}. */
function control(spec, path, idBase, registry) {
  const id = `${idBase}-${path.replace(/\W/g, "-")}`;
  const fallback = has(spec, "default") ? spec.default : null;
  const describedBy = spec.help ? `${id}-help` : null;
  let input;
  let get;
  let set;
  let wide = false;
  let labelled = true;

  switch (spec.type) {
    case "int": {
      if (Array.isArray(spec.choices)) {
        ({input, get, set} = selectOf(spec, id, fallback, describedBy));
        break;
      }
      input = h("input", {id, type: "number", step: 1, min: spec.min, max: spec.max, "aria-describedby": describedBy,
        inputmode: spec.min != null && spec.min >= 0 ? "numeric" : null, required: spec.required});
      get = () => {
        const raw = input.value.trim();
        if (raw === "") return empty(spec);
        const n = Number(raw);
        return Number.isFinite(n) ? n : raw;
      };
      set = (v) => { input.value = v == null ? "" : String(v); };
      break;
    }
    case "bool": {
      input = h("input", {id, type: "checkbox", "aria-describedby": describedBy});
      get = () => input.checked;
      set = (v) => { input.checked = !!v; };
      break;
    }
    case "choice":
    case "die": {
      if (Array.isArray(spec.choices)) {
        ({input, get, set} = selectOf(spec, id, fallback, describedBy));
        break;
      }
    }
    // falls through: a die with no fixed choices is typed in
    case "text": {
      const notation = spec.name === "notation";
      input = h("input", {id, type: "text", autocomplete: "off", autocapitalize: "off", spellcheck: "false",
        placeholder: notation ? "4d6kh3+2" : spec.type === "die" ? "d6" : null, "aria-describedby": describedBy,
        required: spec.required, class: notation ? "notation" : null});
      get = () => {
        const raw = input.value.trim();
        if (raw === "") return spec.required ? "" : empty(spec);
        return raw;
      };
      set = (v) => { input.value = v == null ? "" : String(v); };
      wide = notation;
      break;
    }
    case "dice": {
      ({input, get, set} = diceEditor(spec, id, registry, path));
      wide = true;
      labelled = false;
      break;
    }
    case "counts":
    case "map": {
      ({input, get, set} = countsEditor(spec, id, path, idBase, registry));
      wide = true;
      labelled = false;
      break;
    }
    case "object": {
      return objectField(spec, path, id, idBase, registry);
    }
    default: {
      input = h("input", {id, type: "text", "aria-describedby": describedBy});
      get = () => {
        const raw = input.value.trim();
        if (raw === "") return undefined;
        try { return JSON.parse(raw); } catch { return raw; }
      };
      set = (v) => { input.value = v == null ? "" : JSON.stringify(v); };
    }
  }

  const error = h("span", {class: "field-error", id: `${id}-error`, hidden: true});
  const label = labelled
    ? h("label", {for: id}, labelOf(spec), spec.required ? h("span", {"aria-hidden": "true"}, " *") : null)
    : h("span", {class: "label", id: `${id}-label`}, labelOf(spec));
  const node = spec.type === "bool"
    ? h("div", {class: "field check"}, h("label", {for: id}, input, " ", labelOf(spec)), help(spec, id), error)
    : h("div", {class: `field${wide ? " wide" : ""}`}, label, input, help(spec, id), error);
  if (!labelled) input.setAttribute("aria-labelledby", `${id}-label`);
  registry.set(path, {node, error, label: labelOf(spec), focus: () => (input.querySelector?.("button,select,input") || input).focus()});
  set(fallback);
  return {node, get, set, reset: () => set(fallback)};
}

function diceEditor(spec, id, registry, path) {
  const choices = Array.isArray(spec.choices) ? spec.choices : null;
  const list = h("ul", {class: "chips", "aria-live": "off"});
  let dice = [];
  const box = h("div", {class: "dice-edit", role: "group", id});
  const redraw = (focusAt) => {
    list.replaceChildren(...dice.map((die, i) => h("li", null,
      h("button", {type: "button", class: "chip", "aria-label": fmt(_("Remove %(die)s (die %(i)s of %(length)s)"), {die, i: i + 1, length: dice.length}),
        onclick: () => {
          dice.splice(i, 1);
          redraw(Math.min(i, dice.length - 1));
          box.dispatchEvent(new Event("input", {bubbles: true}));
        }}, die, h("span", {"aria-hidden": "true"}, " ✕")))));
    if (!dice.length) list.append(h("li", {class: "muted empty"}, _("no dice")));
    if (focusAt != null) (list.querySelectorAll("button")[focusAt] || box.querySelector(".add button"))?.focus();
  };
  const add = (die) => {
    dice.push(die);
    redraw();
    box.dispatchEvent(new Event("input", {bubbles: true}));
  };
  let adders;
  if (choices) {
    adders = h("div", {class: "add"}, choices.map((c) => h("button", {type: "button", class: "secondary small",
      "aria-label": fmt(_("Add a %(c)s"), {c}), onclick: () => add(String(c))}, `+${c}`)));
  } else {
    const typed = h("input", {type: "text", size: 5, placeholder: "d6", "aria-label": _("Die to add"), autocomplete: "off"});
    adders = h("div", {class: "add"}, typed, h("button", {type: "button", class: "secondary small",
      onclick: () => { if (typed.value.trim()) add(typed.value.trim()); typed.value = ""; }}, _("Add")));
  }
  box.append(list, adders);
  const set = (value) => {
    if (Array.isArray(value)) dice = value.map(String);
    else if (spec.required && choices) dice = [choices.includes("d6") ? "d6" : String(choices[0])];
    else dice = [];
    redraw();
  };
  return {input: box, get: () => [...dice], set};
}

function countsEditor(spec, id, path, idBase, registry) {
  const inner = spec.type === "map" && spec.fields && spec.fields[0] ? spec.fields[0] : {type: "int", min: spec.min, max: spec.max};
  const box = h("div", {class: "counts", role: "group", id});
  if (!Array.isArray(spec.choices)) {
    // Free names: "black 3, blue 2".
    const text = h("input", {type: "text", "aria-label": labelOf(spec), placeholder: "name 2, other 1", autocomplete: "off"});
    box.append(text);
    return {
      input: box,
      get: () => {
        const out = {};
        for (const part of text.value.split(",")) {
          const m = part.trim().match(/^(.+?)\s*[:= ]\s*(-?\d+)$/);
          if (m) out[m[1].trim()] = Number(m[2]);
        }
        return Object.keys(out).length ? out : undefined;
      },
      set: (v) => { text.value = v && typeof v === "object" ? Object.entries(v).map(([k, n]) => `${k} ${n}`).join(", ") : ""; },
    };
  }
  const parts = spec.choices.map((name) => {
    const sub = control({...inner, name: String(name), label: String(name), nullable: true, default: null, help: ""},
      `${path}.${name}`, idBase, registry);
    box.append(sub.node);
    return [String(name), sub];
  });
  return {
    input: box,
    get: () => {
      const out = {};
      for (const [name, sub] of parts) {
        const v = sub.get();
        if (v != null && v !== "" && v !== 0) out[name] = v;
      }
      return Object.keys(out).length ? out : undefined;
    },
    set: (v) => { for (const [name, sub] of parts) sub.set(v && typeof v === "object" ? v[name] ?? null : null); },
  };
}

function objectField(spec, path, id, idBase, registry) {
  const inner = fieldSet(spec.fields || [], `${path}.`, idBase, registry);
  const body = h("div", {class: "fields"}, inner.nodes);
  const error = h("span", {class: "field-error", hidden: true});
  let node;
  let on = () => true;
  let toggle = null;
  if (spec.nullable || !spec.required) {
    toggle = h("input", {type: "checkbox", id, "aria-controls": `${id}-body`, "aria-expanded": "false"});
    body.id = `${id}-body`;
    const sync = () => {
      body.hidden = !toggle.checked;
      toggle.setAttribute("aria-expanded", String(toggle.checked));
    };
    toggle.addEventListener("change", sync);
    node = h("fieldset", {class: "field wide object"},
      h("legend", null, h("label", {for: id}, toggle, " ", labelOf(spec))), help(spec, id), body, error);
    on = () => toggle.checked;
    const set = (v) => {
      toggle.checked = v != null && typeof v === "object";
      inner.set(toggle.checked ? v : {});
      sync();
    };
    registry.set(path, {node, error, label: labelOf(spec), focus: () => toggle.focus()});
    set(has(spec, "default") ? spec.default : null);
    return {node, get: () => (on() ? inner.get() : empty(spec)), set, reset: () => set(spec.default ?? null)};
  }
  node = h("details", {class: "field wide object", open: true}, h("summary", null, labelOf(spec)), help(spec, id), body, error);
  registry.set(path, {node, error, label: labelOf(spec), focus: () => node.querySelector("input,select,button")?.focus()});
  return {node, get: () => inner.get(), set: (v) => inner.set(v || {}), reset: () => inner.set(spec.default || {})};
}

function fieldSet(fields, prefix, idBase, registry) {
  const controls = fields.map((spec) => [spec.name, control(spec, prefix + spec.name, idBase, registry)]);
  return {
    nodes: controls.map(([, c]) => c.node),
    get: () => {
      const out = {};
      for (const [name, c] of controls) {
        const v = c.get();
        if (v !== undefined) out[name] = v;
      }
      return out;
    },
    set: (values) => {
      for (const [name, c] of controls) {
        if (values && has(values, name)) c.set(values[name]);
        else c.reset();
      }
    },
  };
}

/** The whole panel: mode (the table's system or plain notation), fields, who rolls, who sees. */
export class Panel {
  constructor(form, page, onChange) {
    this.form = form;
    this.page = page;
    this.onChange = onChange;
    this.registry = new Map();
    this.modes = [];
    this.hooks = []; // (message) => void: options other modules add to a roll
    this.oddsHooks = []; // (system, request, character) => request: what the table adds before rolling
    // Each room remembers its own rolls.
    const room = page.session && page.session.code;
    this.history = new History(room ? `tabletop.recent_notation.${room}` : "tabletop.recent_notation", store);
    this.trays = [];
    const system = page.system;
    this.modes.push({id: system.id, title: system.id === "generic" ? _("Dice notation") : system.title, fields: system.request});
    if (system.id !== "generic" && page.generic) {
      this.modes.push({id: "generic", title: _("Dice notation"), fields: page.generic.request});
    }
    this.build();
  }

  build() {
    const page = this.page;
    const parts = [];
    if (this.modes.length > 1) {
      parts.push(h("fieldset", {class: "modes"}, h("legend", {class: "visually-hidden"}, _("Roll with")),
        this.modes.map((mode, i) => h("label", {class: "mode"},
          h("input", {type: "radio", name: "mode", value: mode.id, checked: i === 0, onchange: () => this.switchTo(mode.id)}),
          " ", mode.title))));
    }
    for (const mode of this.modes) {
      const registry = new Map();
      mode.registry = registry;
      mode.set = fieldSet(mode.fields, "", `f-${mode.id}`, registry);
      mode.node = h("div", {class: "fields", "data-mode": mode.id}, mode.set.nodes);
      for (const input of mode.node.querySelectorAll("input.notation")) {
        const t = tray(input, this.history);
        this.trays.push(t);
        input.after(t.node);
      }
      parts.push(mode.node);
    }
    const characters = (page.quick_rolls || []).map((q) => q.character);
    const own = (page.seat.characters || []).filter((c) => !characters.some((d) => d.id === c.id));
    const all = [...characters, ...own];
    this.character = null;
    const opts = [];
    if (all.length) {
      this.character = h("select", {id: "roll-character", name: "character"},
        h("option", {value: ""}, _("— nobody —")),
        all.map((c) => h("option", {value: c.id}, c.name)));
      if (page.role !== "gm") this.character.value = String(all[0].id);
      opts.push(h("div", {class: "field"}, h("label", {for: "roll-character"}, _("Rolling for")), this.character));
    }
    // What the roll is for ("Attack"), carried into the roll and shown with it in the log.
    this.label = h("input", {id: "roll-label", name: "label", maxlength: 60, autocomplete: "off",
      placeholder: _("Attack, Stealth…")});
    opts.unshift(h("div", {class: "field"}, h("label", {for: "roll-label"}, _("What for")), this.label));
    this.visibility = h("select", {id: "roll-visibility", name: "visibility"},
      VISIBILITY.map(([value, text]) => h("option", {value}, text)));
    opts.push(h("div", {class: "field"}, h("label", {for: "roll-visibility"}, _("Who sees it")), this.visibility));
    this.button = h("button", {type: "submit", class: "roll-button"}, _("Roll"));
    // Keeps this roll for the character, or for a seat without one (saved.js sets onSave).
    this.onSave = null;
    this.saveButton = h("button", {type: "button", class: "secondary save-roll",
      onclick: () => this.onSave?.()}, _("Save roll"));
    this.note = h("p", {class: "panel-note muted", hidden: true});
    this.error = h("p", {class: "error panel-error", id: "roll-error", role: "alert"});
    this.fieldset = h("fieldset", {class: "plain"}, parts, h("div", {class: "fields opts"}, opts),
      h("div", {class: "actions"}, this.button, this.saveButton));
    this.form.replaceChildren(this.fieldset, this.note, this.error);
    this.form.addEventListener("input", (e) => this.changed(e));
    this.form.addEventListener("change", (e) => this.changed(e));
    this.switchTo(this.modes[0].id);
  }

  get mode() {
    return this.modes.find((m) => m.id === this.active);
  }

  switchTo(id) {
    this.active = id;
    for (const mode of this.modes) mode.node.hidden = mode.id !== id;
    const radio = this.form.querySelector(`input[name=mode][value="${id}"]`);
    if (radio) radio.checked = true;
    this.clearErrors();
    this.changedRequest();
  }

  changed(event) {
    if (event.target && event.target.name === "mode") return;
    if (event.target === this.visibility) {
      this.drawVisibility();
      return;
    }
    if (event.target === this.label) return; // the odds do not depend on it
    // A text field's "change" comes on blur, i.e. on the mouse press on Roll: clearing its error
    // then would move the button from under the pointer and the click would be lost.
    if (event.type === "change" && event.target.matches?.("input:not([type=checkbox]):not([type=radio])")) return;
    this.clearErrors();
    this.changedRequest();
  }

  /** Tell the odds what would be rolled now, with what the table's rules add to the request. */
  changedRequest() {
    const now = this.current();
    let request = now.request;
    for (const hook of this.oddsHooks) request = hook(now.system, request, now.character);
    this.onChange({...now, request});
  }

  /** {system, request, missing, character} as the form stands; ``missing``: required fields left
   * empty; ``character``: the id of who rolls, or null. */
  current() {
    const request = this.mode.set.get();
    const missing = this.mode.fields.filter((f) => f.required && [undefined, null, ""].includes(request[f.name])
      || (f.required && Array.isArray(request[f.name]) && !request[f.name].length)).map(labelOf);
    const character = this.character && this.character.value ? Number(this.character.value) : null;
    return {system: this.active, request, missing, character};
  }

  message() {
    const {system, request, character} = this.current();
    const out = {type: "roll", system, request, visibility: this.visibility.value};
    if (character != null) out.character = character;
    if (this.label.value.trim()) out.label = this.label.value.trim();
    for (const hook of this.hooks) hook(out);
    return out;
  }

  /** Fill from a quick roll: its request on the table's system (or notation), its character. */
  fill(request, characterId, system, label) {
    const id = system && this.modes.some((m) => m.id === system) ? system : this.modes[0].id;
    this.switchTo(id);
    this.mode.set.set(request || {});
    this.label.value = label || "";
    if (this.character && characterId != null) this.character.value = String(characterId);
    this.clearErrors();
    this.changedRequest();
  }

  clearErrors() {
    this.error.textContent = "";
    for (const mode of this.modes) {
      for (const entry of mode.registry.values()) {
        if (entry.error.hidden) continue;
        entry.error.hidden = true;
        entry.error.textContent = "";
        entry.node.classList.remove("invalid");
        entry.node.querySelectorAll("[aria-invalid]").forEach((n) => n.removeAttribute("aria-invalid"));
      }
    }
  }

  /** An error naming a field ("request.pool.2"): show it next to that field, else on the panel. */
  showError(field, message, {panel = true} = {}) {
    const path = String(field || "").replace(/^request\./, "");
    const registry = this.mode.registry;
    let key = path;
    while (key && !registry.has(key)) key = key.includes(".") ? key.slice(0, key.lastIndexOf(".")) : "";
    const entry = key ? registry.get(key) : null;
    const named = {character: _("Rolling for"), visibility: _("Who sees it"), system: _("The table's rules")}[path];
    const label = entry ? (key === path ? entry.label : `${entry.label} (${path.slice(key.length + 1).replace(/\./g, " ")})`) : named;
    message = sentence(message, label);
    if (entry) {
      entry.error.textContent = message;
      entry.error.hidden = false;
      entry.node.classList.add("invalid");
      const input = entry.node.querySelector("input,select");
      if (input) {
        input.setAttribute("aria-invalid", "true");
        const ids = new Set((input.getAttribute("aria-describedby") || "").split(" ").filter(Boolean));
        if (entry.error.id) ids.add(entry.error.id);
        input.setAttribute("aria-describedby", [...ids].join(" "));
      }
    }
    if (panel || !entry) this.error.textContent = message;
  }

  setBusy(busy) {
    this.button.disabled = busy || this.blocked;
    this.drawVisibility(busy);
  }

  /** A hidden roll says so on its button ("Roll hidden: GM only"); Everyone is the plain Roll. */
  drawVisibility(busy = false) {
    const value = this.visibility.value;
    const hidden = value !== "public";
    this.visibility.closest(".field").classList.toggle("hidden-roll", hidden);
    this.button.classList.toggle("hidden-roll", hidden);
    const text = VISIBILITY.find(([v]) => v === value)[1];
    this.button.replaceChildren(...(busy ? [_("Rolling…")] : hidden ? [lock(), fmt(_(" Roll hidden: %(text)s"), {text})] : [_("Roll")]));
  }

  /** After a roll: the next one is for everyone again unless chosen otherwise. */
  rolled() {
    for (const input of this.mode.node.querySelectorAll("input.notation")) this.history.remember(input.value);
    this.trays.forEach((t) => t.draw());
    this.label.value = "";
    if (this.visibility.value === "public") return;
    this.visibility.value = "public";
    this.drawVisibility();
  }

  /** Rolls only while the session is live and the socket is up. */
  setState({status, live}) {
    const reasons = {
      planned: _("The session has not started yet: rolls open when the GM starts it."),
      ended: _("This session has ended: no more rolls."),
    };
    const reason = reasons[status] || (live ? "" : _("Waiting for the connection…"));
    this.blocked = !!reason;
    this.fieldset.disabled = status === "ended";
    this.button.disabled = this.blocked;
    this.note.hidden = !reason;
    this.note.textContent = reason;
  }
}
