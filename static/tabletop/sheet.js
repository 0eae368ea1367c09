// Character sheets and campaign settings as forms, built from the system's schema (the rules'
// Field.as_json): numbers, text, choices, lists of dice, "name -> value" tables, nested groups.
// The server checks what is sent against the same schema and answers field by field.
import {_, fmt} from "./i18n.js";
import {h} from "./dom.js";

let serial = 0;
const nextId = (name) => `sh-${++serial}-${String(name).replace(/\W/g, "-")}`;
const labelOf = (spec) => spec.label || spec.name;

const KEY_LENGTH = 60; // the longest name in a "name -> value" table (rules/engines/schema.py)

/** The size the schema allows a field, in words: every field states one (the server refuses more). */
function limitOf(spec) {
  if (spec.type === "text" && spec.max_length != null) return fmt(_("At most %(count)s characters."), {count: spec.max_length});
  if (spec.max_items == null) return "";
  const most = spec.type === "dice" ? _("At most %(count)s dice.") : spec.type === "list" ? _("At most %(count)s items.")
    : _("At most %(count)s entries.");
  return fmt(most, {count: spec.max_items});
}

/** One field: {node, get(), set(value), error(path, message) -> bool}. */
function control(spec, path) {
  const id = nextId(path);
  const words = [spec.help, limitOf(spec)].filter(Boolean).join(" ");
  const help = words ? h("small", {class: "help sheet-help", id: `${id}-help`}, words) : null;
  const describedBy = help ? `${id}-help` : null;
  const err = h("span", {class: "field-error", id: `${id}-error`, hidden: true});
  let input;
  let get;
  let set;
  let wide = false;
  if (spec.type === "object") {
    const inner = fields(spec.fields || [], `${path}.`);
    const node = h("fieldset", {class: "field wide object"}, h("legend", null, labelOf(spec)), help, inner.node, err);
    return {node, get: inner.get, set: (v) => inner.set(v || {}), error: inner.error};
  }
  if ((spec.type === "counts" || spec.type === "map") && !Array.isArray(spec.choices)) {
    return table(spec, path, help);
  }
  if (spec.type === "dice") {
    // A list of dice, typed ("d8, d6"); the allowed ones are in the help.
    const allowed = Array.isArray(spec.choices) ? ` (${spec.choices.join(", ")})` : "";
    input = h("input", {id, type: "text", placeholder: `d8, d6${allowed}`, autocomplete: "off", "aria-describedby": describedBy});
    get = () => input.value.split(/[\s,]+/).filter(Boolean);
    set = (v) => { input.value = Array.isArray(v) ? v.join(", ") : ""; };
  } else if (Array.isArray(spec.choices)) {
    input = h("select", {id, "aria-describedby": describedBy},
      spec.nullable ? h("option", {value: ""}, "—") : null,
      spec.choices.map((c, i) => h("option", {value: String(i)}, String(c))));
    get = () => (input.value === "" ? null : spec.choices[Number(input.value)]);
    set = (v) => {
      const i = spec.choices.findIndex((c) => String(c) === String(v));
      input.value = i >= 0 ? String(i) : spec.nullable ? "" : "0";
    };
  } else if (spec.type === "int") {
    input = h("input", {id, type: "number", step: 1, min: spec.min, max: spec.max, inputmode: "numeric", "aria-describedby": describedBy});
    get = () => (input.value.trim() === "" ? (spec.nullable ? null : spec.default ?? 0) : Number(input.value));
    set = (v) => { input.value = v == null ? "" : String(v); };
  } else if (spec.type === "bool") {
    input = h("input", {id, type: "checkbox", "aria-describedby": describedBy});
    get = () => input.checked;
    set = (v) => { input.checked = !!v; };
  } else if (spec.type === "text" || spec.type === "die" || spec.type === "choice") {
    input = h("input", {id, type: "text", autocomplete: "off", maxlength: spec.max_length, "aria-describedby": describedBy});
    get = () => input.value;
    set = (v) => { input.value = v == null ? "" : String(v); };
  } else {
    input = h("textarea", {id, rows: 3, spellcheck: "false", "aria-describedby": describedBy});
    get = () => { try { return JSON.parse(input.value || "null"); } catch { return input.value; } };
    set = (v) => { input.value = v == null ? "" : JSON.stringify(v, null, 1); };
    wide = true;
  }
  const node = spec.type === "bool"
    ? h("div", {class: "field check"}, h("label", {for: id}, input, " ", labelOf(spec)), help, err)
    : h("div", {class: `field${wide ? " wide" : ""}`}, h("label", {for: id}, labelOf(spec)), input, help, err);
  return {node, get, set, error: (p, message) => showAt(p === path, err, input, message)};
}

function showAt(match, err, input, message) {
  if (!match) return false;
  err.textContent = message;
  err.hidden = false;
  input?.setAttribute("aria-invalid", "true");
  input?.setAttribute("aria-describedby", `${input.getAttribute("aria-describedby") || ""} ${err.id}`.trim());
  return true;
}

/** "Name -> value" rows (skills, abilities, attributes): a name and a number (or a code). */
function table(spec, path, help) {
  const numeric = spec.type === "counts";
  const rows = h("div", {class: "rows"});
  const err = h("span", {class: "field-error", hidden: true});
  const legend = labelOf(spec);
  const addRow = (name = "", value = "") => {
    const key = h("input", {type: "text", value: name, "aria-label": `${legend}: name`, autocomplete: "off", placeholder: "name", maxlength: KEY_LENGTH});
    const val = h("input", numeric
      ? {type: "number", step: 1, value, "aria-label": `${legend}: value`, inputmode: "numeric", min: spec.min, max: spec.max}
      : {type: "text", value, "aria-label": `${legend}: value`, placeholder: "3D+1", autocomplete: "off", maxlength: spec.fields?.[0]?.max_length});
    const row = h("div", {class: "row"}, key, val,
      h("button", {type: "button", class: "secondary small", onclick: () => row.remove()}, _("Remove")));
    rows.append(row);
    return key;
  };
  const node = h("fieldset", {class: "field wide sheet-table"}, h("legend", null, legend), help, rows,
    h("button", {type: "button", class: "secondary small", onclick: () => addRow().focus()}, fmt(_("Add to %(legend)s"), {legend})), err);
  const get = () => {
    const out = {};
    for (const row of rows.children) {
      const [key, val] = row.querySelectorAll("input");
      if (!key.value.trim()) continue;
      out[key.value.trim()] = numeric ? Number(val.value || 0) : val.value.trim();
    }
    return out;
  };
  const set = (v) => {
    rows.replaceChildren();
    for (const [name, value] of Object.entries(v && typeof v === "object" ? v : {})) {
      addRow(name, typeof value === "object" && value !== null ? value.code ?? JSON.stringify(value) : value);
    }
  };
  return {node, get, set, error: (p, message) => showAt(p === path || p.startsWith(`${path}.`), err, null, message)};
}

function fields(specs, prefix) {
  const controls = specs.map((spec) => [spec.name, control(spec, prefix + spec.name)]);
  return {
    node: h("div", {class: "fields sheet-fields"}, controls.map(([, c]) => c.node)),
    get: () => Object.fromEntries(controls.map(([name, c]) => [name, c.get()])),
    set: (values) => {
      for (const [name, c] of controls) {
        const spec = specs.find((s) => s.name === name);
        c.set(values && name in values ? values[name] : spec.default ?? null);
      }
    },
    error: (path, message) => controls.some(([, c]) => c.error(path, message)),
  };
}

/** A form for ``values`` under ``schema``; ``save(values)`` resolves to null or an error
 * {field, message}. ``title``: the form's name for screen readers and its Save button. */
export function sheetForm({schema, values, title, save}) {
  const set = fields(schema, "");
  set.set(values || {});
  const status = h("p", {class: "small", role: "status"});
  const button = h("button", {type: "submit"}, fmt(_("Save %(title)s"), {title}));
  const form = h("form", {class: "sheet-form", novalidate: true, "aria-label": title}, set.node,
    h("div", {class: "actions"}, button, status));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    for (const n of form.querySelectorAll(".field-error")) { n.hidden = true; n.textContent = ""; }
    form.querySelectorAll("[aria-invalid]").forEach((n) => n.removeAttribute("aria-invalid"));
    status.textContent = "";
    button.disabled = true;
    const err = await save(set.get());
    button.disabled = false;
    status.classList.toggle("error", !!err);
    if (!err) {
      status.textContent = _("Saved.");
      return;
    }
    const path = String(err.field || "").replace(/^(sheet|settings)\.?/, "");
    if (!path || !set.error(path, err.message)) status.textContent = err.message;
  });
  return form;
}

/** A character's sheet form; one stored past the limits comes unread (too_large). */
export function characterSheet({schema, character, save}) {
  const title = fmt(_("%(name)s's sheet"), {name: character.name});
  const big = character.too_large;
  const note = big && h("p", {class: "small error"}, fmt(_("This sheet (%(size)s KiB, from before the %(limit)s KiB limit) is not shown: saving this form replaces it."),
    {size: big.kib, limit: big.limit_kib}));
  return h("details", {class: "sheet"}, h("summary", null, title), note,
    sheetForm({schema, values: big ? {} : character.sheet || {}, title, save}));
}

/** POST JSON to ``url`` with the page's CSRF token: null, or the error the server gave. */
export async function postJson(url, body) {
  try {
    const response = await fetch(url, {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json",
        "X-CSRFToken": document.querySelector("meta[name=csrf-token]")?.content || ""},
      body: JSON.stringify(body)});
    if (response.ok) return null;
    const answer = await response.json().catch(() => ({}));
    return answer.error || {message: _("The table could not save that.")};
  } catch {
    return {message: _("No answer from the table; try again.")};
  }
}
