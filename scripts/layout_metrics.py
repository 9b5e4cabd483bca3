"""Layout figures of issue 20: modules over 400 lines, functions over 60 lines, public modules and
the names they export, top-level names.

Run from a checkout: ``python scripts/layout_metrics.py [ROOT]`` (prints JSON). The duplicate pairs
and circles come from the ``duplicates`` and ``farm-studio look`` tools.
"""

from __future__ import annotations

import ast
import importlib
import json
import pathlib
import sys


def main(root: pathlib.Path) -> dict:
    files = sorted(p for folder in ("trl_env", "envs") for p in (root / folder).rglob("*.py"))
    big_modules, long_functions, public_modules, exported = [], [], 0, 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        relative = path.relative_to(root)
        if text.count("\n") > 400:
            big_modules.append((str(relative), text.count("\n")))
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 60:
                    long_functions.append((f"{relative}:{node.name}", length))
        if any(part.startswith("_") and part != "__init__.py" for part in relative.parts):
            continue
        public_modules += 1
        for node in tree.body:
            targets = getattr(node, "targets", [])
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                exported += len(ast.literal_eval(node.value))
    return {
        "modules_over_400": big_modules,
        "functions_over_60": long_functions,
        "public_modules": public_modules,
        "names_exported_by_public_modules": exported,
        "top_level_names": len(importlib.import_module("trl_env").__all__),
    }


if __name__ == "__main__":
    print(json.dumps(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")), indent=1))
