"""Op `footprint`: a task's footprint on the meta device, before it gets a GPU slot
(docs/worker-protocol.md). Runs on the CPU (the supervisor hides every GPU); loads the
task (never a candidate) and allocates none of its tensors.

Result: {"type": "result", "ok": true, "footprint": footprint.measure(task),
"budget": footprint.budget(footprint, None)}; a task that cannot be loaded gives ok false
with error {"kind": "invalid_task", "message"}.
"""

from .. import loader
from ..failure import Failure
from ..protocol import ProtocolError
from . import footprint


def footprint_op(request: dict) -> dict:
    path = request.get("task_path")
    if not isinstance(path, str):
        raise ProtocolError("task_path: expected a string")
    try:
        task = loader.load_task(path)
    except Failure as failure:
        return {"type": "result", "ok": False,
                "error": {"kind": "invalid_task", "message": failure.reason}}
    fp = footprint.measure(task)
    return {"type": "result", "ok": True, "footprint": fp, "budget": footprint.budget(fp, None)}
