"""The browser's room reducer (``static/tabletop/state.js``), run in Node.js on the states and
events a test gives it, with the systems' browser modules registered through the seam
(``static/tabletop/seam.js``) as a page registers its table's before hello."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

NODE = shutil.which("node")
STATIC = Path(__file__).resolve().parents[2] / "static" / "tabletop"
FOLD_IN_NODE = f"""
import {{applyEvent}} from {json.dumps((STATIC / "state.js").as_uri())};
import {{load, register, tableSystem}} from {json.dumps((STATIC / "seam.js").as_uri())};
// The page the modules expect, as far as they read it at load (no catalogue: English).
globalThis.document = {{
  getElementById: () => null, documentElement: {{lang: "en"}}, head: {{append() {{}}}},
  createElement: () => ({{}}),
}};
let input = "";
for await (const chunk of process.stdin) input += chunk;
const {{modules, cases}} = JSON.parse(input);
for (const [id, url] of modules) {{
  if (url) register(id, (await import(url)).table);
  else await load(id);
}}
const folded = cases.map(([state, events]) => events.reduce(applyEvent, state));
const declared = Object.fromEntries(modules.map(([id]) => [id, tableSystem(id)]));
process.stdout.write(JSON.stringify({{folded, declared}}));
"""


def fold_in_node(
    cases: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    *,
    systems: tuple[str, ...] = (),
    modules: dict[str, Path] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each case's state after its events, as the browser folds them; and what each system's
    module declared to the seam. ``systems``: loaded by engine id, as the pages load them;
    ``modules``: registered from a file of their own (a system only the tests have)."""
    assert NODE is not None
    listed = [[id, None] for id in systems]
    listed += [[id, path.as_uri()] for id, path in (modules or {}).items()]
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", FOLD_IN_NODE],
        input=json.dumps({"modules": listed, "cases": cases}),
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    out = json.loads(done.stdout)
    return out["folded"], out["declared"]
