"""`python -m kz_worker.probe`: the versions that key compiled extensions, without
importing torch (~0.1 s instead of ~2 s). Prints one JSON object on stdout:
{"torch": "2.11.0+cu130", "cuda": "13.0", "python": "3.11.7", "version_file": "/…/torch/version.py"}
(`version_file` only when read: kz reuses a probe while that file is unchanged); a missing
torch gives nulls."""
import ast
import importlib.util
import json
import os
import platform


def probe() -> dict:
    out = {"torch": None, "cuda": None, "python": platform.python_version()}
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return out
    path = os.path.join(os.path.dirname(spec.origin), "version.py")
    try:
        tree = ast.parse(open(path).read())
    except OSError:
        return out
    out["version_file"] = path
    names = {"__version__": "torch", "cuda": "cuda"}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and target.id in names and isinstance(value, ast.Constant):
                out[names[target.id]] = value.value
    return out


if __name__ == "__main__":
    print(json.dumps(probe()))
