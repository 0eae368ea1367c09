// What the systems' browser modules share, as tabletop/systems/base.py does on the server:
// rounds and scenes on the GM dashboard.
import {_, fmt} from "../i18n.js";

/** The GM's round (and scene) buttons of a system's dashboard section; returns its drawing. */
export function roundControls(ctx) {
  const $ = (id) => document.getElementById(id);
  const error = $("round-error");
  for (const [id, type] of [["new-round", "round.new"], ["new-scene", "scene.new"]]) {
    const button = $(id);
    button?.addEventListener("click", () => ctx.act({type}, {button, error}));
  }
  return () => {
    const {round, scene} = ctx.state.table;
    $("round-no").textContent = [scene ? fmt(_("Scene %(scene)s"), {scene}) : "", round ? fmt(_("Round %(round)s"), {round}) : _("No round yet")]
      .filter(Boolean).join(" · ");
  };
}
