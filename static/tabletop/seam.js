// The browser's side of the seam between the core and the game systems (docs/systems.md). A
// system's module (systems/<engine id>.js) exports ``table``: its rule of the room reducer
// (``fold``, the same as its server side's ``TableSystem.fold``), the captions of its dice roles
// (``roles``: role -> [caption, what a screen reader hears]), the tone of its roll flags
// (``tones``: flag -> "good", "bad" or "warn") and its stylesheet (``styles``, a file next to
// it). Pages load the table's module (``load``) before the socket starts, so hello is folded
// with its rule; the core asks the seam by the engine id and names no system.

/** A table without a module of its own: nothing folded, no captions, no styles. */
const PLAIN = Object.freeze({fold: (state) => state, roles: {}, tones: {}, styles: null});
const tables = new Map();
const modules = new Map();

/** Declare a system's ``table`` under its engine id (once; its stylesheet joins the page). */
export function register(id, table) {
  if (tables.has(id)) return tables.get(id);
  const declared = {...PLAIN, ...table};
  tables.set(id, declared);
  if (declared.styles && typeof document !== "undefined") {
    const href = new URL(`./systems/${declared.styles}`, import.meta.url).href;
    document.head.append(Object.assign(document.createElement("link"), {rel: "stylesheet", href}));
  }
  return declared;
}

/** The system's module (its ``room`` and ``dashboard``), loaded and registered once; null for
 * a table with no module of its own. */
export function load(id) {
  if (!modules.has(id)) {
    modules.set(id, import(`./systems/${id}.js`).then((module) => {
      register(id, module.table || {});
      return module;
    }, () => {
      register(id, {});
      return null;
    }));
  }
  return modules.get(id);
}

/** What a system declared (the plain table's defaults until its module is registered). */
export function tableSystem(id) {
  return tables.get(id) || PLAIN;
}

/** A die role's caption and spoken words, as whichever loaded system declared it. */
export function roleWords(role) {
  for (const table of tables.values()) if (table.roles[role]) return table.roles[role];
  return null;
}

/** A roll flag's tone as a loaded system declared it, or null. */
export function flagTone(flag) {
  for (const table of tables.values()) if (table.tones[flag]) return table.tones[flag];
  return null;
}
