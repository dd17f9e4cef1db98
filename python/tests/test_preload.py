"""kz_worker.preload: the prestarted child's host-side mapping of cuDNN's sub-libraries,
and the worker's KZ_WORKER_PROFILE hook."""
import json
import os
import subprocess
import sys
from pathlib import Path

from kz_worker import preload
from kzhelpers import spawn_worker


def test_maps_only_cudnn_sub_libraries_beside_the_loaded_ones():
    import torch  # noqa: F401 - maps cuDNN's front library where torch ships it
    opened = preload.map_gpu_libraries()
    assert all(name.startswith("libcudnn_") for name in opened)
    dirs = preload._loaded_library_dirs()
    for name in opened:
        assert any(os.path.exists(os.path.join(d, name)) for d in dirs)


def test_no_gpu_library_loaded_maps_nothing(tmp_path):
    code = "from kz_worker import preload; print(preload.map_gpu_libraries())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
                             preload.__file__))))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"  # torch not imported: no cuDNN mapped, nothing opened


def test_worker_profile_hook_writes_the_ops_profile(tmp_path):
    folder = tmp_path / "prof"
    folder.mkdir()
    candidate = Path(__file__).resolve().parents[2] / "examples" / "candidates" / "relu_triton_ok.py"
    frames, code, _, err = spawn_worker(
        {"protocol": 1, "op": "screen", "candidate_path": str(candidate), "backend": "triton",
         "policy": "strict"}, env={"KZ_WORKER_PROFILE": str(folder)})
    assert code == 0, err
    assert frames[-1]["type"] == "result" and frames[-1]["ok"], json.dumps(frames[-1])[:500]
    files = list(folder.iterdir())
    assert len(files) == 1 and files[0].name.startswith("screen-")
    assert "cumtime" in files[0].read_text()
