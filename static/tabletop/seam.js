// The browser's side of the seam (docs/systems.md): systems/<engine id>.js exports ``table``,
// its reducer rule (``fold``), dice captions (``roles``), flags' ``tones`` and ``words``,
// ``styles``; pages fold hello once it is registered (``load``).
const PLAIN = Object.freeze({fold: (state) => state, roles: {}, tones: {}, words: {}, styles: null});
const tables = new Map();
const modules = new Map();

/** A system's ``table`` by engine id (once; its stylesheet joins the page). */
export function register(id, table) {
  if (!tables.has(id)) {
    const declared = {...PLAIN, ...table};
    tables.set(id, declared);
    if (declared.styles && typeof document !== "undefined") {
      const href = new URL(`./systems/${declared.styles}`, import.meta.url).href;
      document.head.append(Object.assign(document.createElement("link"), {rel: "stylesheet", href}));
    }
  }
  return tables.get(id);
}

/** The system's module, registered once; null for a table without one. */
export function load(id) {
  if (!modules.has(id)) {
    modules.set(id, import(`./systems/${id}.js`).then(
      (module) => { register(id, module.table || {}); return module; },
      () => { register(id, {}); return null; }));
  }
  return modules.get(id);
}

export const tableSystem = (id) => tables.get(id) || PLAIN;

/** A die role's [caption, spoken words], a flag's tone or words, as a system declared them. */
export function roleWords(role) {
  for (const t of tables.values()) if (t.roles[role]) return t.roles[role];
  return null;
}

export function flagTone(flag) {
  for (const t of tables.values()) if (t.tones[flag]) return t.tones[flag];
  return null;
}

export function flagWords(flag) {
  for (const t of tables.values()) if (t.words[flag]) return t.words[flag];
  return null;
}
