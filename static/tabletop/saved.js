// Saved rolls: each character's named rolls (a seat's own, without a character), kept on the
// server, one tap to roll. "Save roll"
// keeps what the panel holds under its "What for" name; "Edit" renames or removes them.
import {_, fmt} from "./i18n.js";
import {h} from "./dom.js";

export class SavedRolls {
  /** box: where the rolls are listed; panel: the roll panel; roll(): submit the panel. */
  constructor({box, panel, url, csrf, roll}) {
    this.box = box;
    this.panel = panel;
    this.url = url;
    this.csrf = csrf;
    this.roll = roll;
    this.characters = [];
    this.editing = false;
    this.error = h("p", {class: "error small", role: "alert"});
    this.edit = h("button", {type: "button", class: "secondary small", "aria-pressed": "false",
      onclick: () => { this.editing = !this.editing; this.draw(); }}, _("Edit saved rolls"));
    this.list = h("div", {class: "saved-list"});
    this.node = h("section", {class: "saved", "aria-labelledby": "saved-h"},
      h("div", {class: "saved-head"}, h("h3", {id: "saved-h"}, _("Saved rolls")), this.edit), this.list, this.error);
    box.append(this.node);
    panel.onSave = () => this.saveCurrent();
  }

  async call(path, method, body) {
    this.error.textContent = "";
    try {
      const response = await fetch(this.url + path, {method, credentials: "same-origin",
        headers: {"Content-Type": "application/json", "X-CSRFToken": this.csrf},
        body: body ? JSON.stringify(body) : undefined});
      const answer = await response.json();
      if (!response.ok) return answer.error || {message: _("The table could not do that.")};
      this.characters = answer.characters || [];
      this.draw();
      return null;
    } catch {
      return {message: _("No answer from the table; try again.")};
    }
  }

  load() {
    return this.call("", "GET");
  }

  /** Keep the panel's roll for the character it rolls for, under its "What for". */
  async saveCurrent() {
    const {system, request, character} = this.panel.current();
    const label = this.panel.label.value.trim();
    // No character: the roll is the seat's own, where the seat has no character (the table
    // says so otherwise).
    if (!label) {
      this.panel.showError(null, _("Name it in What for first, like Longsword attack."));
      this.panel.label.focus();
      return;
    }
    const err = await this.call("", "POST", {character: character ?? null, label, system, request});
    if (err) this.panel.showError(err.field, err.message);
    else this.panel.announce?.(fmt(_("Saved %(label)s."), {label}));
  }

  draw() {
    const groups = this.characters.filter((c) => c.rolls.length);
    this.node.hidden = !groups.length && !this.characters.length;
    this.edit.hidden = !groups.length;
    this.edit.setAttribute("aria-pressed", String(this.editing));
    this.edit.textContent = this.editing ? _("Done") : _("Edit saved rolls");
    this.list.replaceChildren(...(groups.length ? groups.map((c) => this.group(c))
      : [h("p", {class: "muted small"}, _("Name a roll in What for and press Save roll to keep it here."))]));
    this.box.hidden = !this.box.querySelector(".quick-group, .saved:not([hidden])");
  }

  group(character) {
    return h("div", {class: "quick-group", role: "group", "aria-label": fmt(_("Saved rolls of %(character)s"), {character: character.name})},
      h("span", {class: "quick-who"}, character.name),
      character.rolls.map((roll) => this.editing ? this.editor(roll) : h("button", {type: "button",
        class: "secondary small saved-roll", title: roll.request.notation || "",
        onclick: () => {
          this.panel.fill(roll.request, character.id, roll.system, roll.label);
          this.roll();
        }}, roll.label)));
  }

  editor(roll) {
    return h("span", {class: "saved-edit"},
      h("button", {type: "button", class: "secondary small", onclick: async () => {
        const label = prompt(_("New name for this roll"), roll.label);
        if (label == null || !label.trim()) return;
        const err = await this.call(`/${roll.id}`, "POST", {label});
        if (err) this.error.textContent = err.message;
      }}, fmt(_("Rename %(label)s"), {label: roll.label})),
      h("button", {type: "button", class: "secondary small danger", onclick: async () => {
        if (!confirm(fmt(_("Forget the saved roll %(label)s?"), {label: roll.label}))) return;
        const err = await this.call(`/${roll.id}`, "DELETE");
        if (err) this.error.textContent = err.message;
      }}, fmt(_("Remove %(label)s"), {label: roll.label})));
  }
}
