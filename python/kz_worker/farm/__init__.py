"""The compile farm's ops: `extract` (a candidate's load_inline calls), `build` (torch's own
load_inline on one call) and `build_facts` (what the C++ build driver needs from torch)."""
