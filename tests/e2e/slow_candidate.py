"""The e2e suites' slow candidate: the correct Triton relu of examples/, sleeping `seconds`
in its first forward (the seconds also make each candidate's text unique)."""

OK = open("examples/candidates/relu_triton_ok.py").read()


def slow(seconds) -> str:
    c = OK.replace("import torch\n", "import time\nimport torch\n", 1).replace("class ModelNew", "_SLEPT = []\n\n\nclass ModelNew")
    return c.replace("        x = x.contiguous()\n", "        if not _SLEPT:\n            _SLEPT.append(1)\n"
                     "            time.sleep(%s)\n        x = x.contiguous()\n" % seconds)
