// The modules' words in the page's language. The server puts the catalogue of the page's
// language in #i18n-catalog (English msgid -> text, or a list of plural forms); English, the
// modules' own language, has an empty one. Wrap every text a person reads in _("...") (or
// ngettext), so `makemessages -d djangojs` finds it; fill in values with fmt().

const node = document.getElementById("i18n-catalog");
const catalog = node ? JSON.parse(node.textContent) : {};

/** The page's language code ("en", "de"), for number and time formats. */
export const language = document.documentElement.lang || "en";

/** `msgid` in the page's language. */
export function _(msgid) {
  const found = catalog[msgid];
  if (typeof found === "string" && found) return found;
  if (Array.isArray(found) && found[0]) return found[0];
  return msgid;
}

/** The singular or plural text for `n` (English and German: one, and every other count). */
export function ngettext(singular, plural, n) {
  const index = n === 1 ? 0 : 1;
  const found = catalog[singular];
  if (Array.isArray(found) && found[index]) return found[index];
  return index === 0 ? singular : plural;
}

/** `msgid` as said in `context` (the same English word may be two words elsewhere). */
export function pgettext(context, msgid) {
  const found = catalog[`${context}\x04${msgid}`];
  return typeof found === "string" && found ? found : msgid;
}

/** A session's status as a word ("planned", "live", "ended"), as the server says it. */
export function statusWord(status) {
  return {planned: pgettext("session", "planned"), live: pgettext("session", "live"),
    ended: pgettext("session", "ended")}[status] || status;
}

/** fmt("Remove %(name)s", {name: "Ana"}) -> "Remove Ana": named values, as in the catalogues. */
export function fmt(text, values) {
  return text.replace(/%\((\w+)\)s/g, (whole, key) => (key in values ? String(values[key]) : whole));
}
