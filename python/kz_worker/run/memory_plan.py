"""The memory plan of one run (docs/memory.md): how many input sets and outputs the
verifier keeps alive, chosen from the task's measured sizes.

Small tasks (inputs + outputs of one call ≤ LEAN_BYTES) keep the full plan: a timing pool
of POOL_SIZE input sets per side and every traced output alive (a few hundred MiB at
most). Larger tasks take the lean plan: the timing pool has two input sets shared by the
reference and the candidate (both already proved not to modify their inputs), only the
last output of each side is kept, and the trace keeps one earlier output. Such an input set
is already larger than an H200's L2 (60 MiB), and every timed call is preceded by an L2
flush anyway, so two sets lose nothing.
"""

from dataclasses import dataclass

LEAN_BYTES = 64 << 20
POOL_SIZE = 3


@dataclass(frozen=True)
class Plan:
    lean: bool
    pool_size: int        # timing input sets
    shared_pool: bool     # one pool for both sides (else a clone each)
    traced_outputs: int   # outputs of the trace's repeated calls kept alive
    inputs_bytes: int = 0
    outputs_bytes: int = 0

    def describe(self) -> dict:
        return {"plan": "lean" if self.lean else "full", "pool_size": self.pool_size,
                "shared_pool": self.shared_pool, "traced_outputs": self.traced_outputs,
                "inputs_bytes": self.inputs_bytes, "outputs_bytes": self.outputs_bytes}


def choose(sizes: dict | None, reference_modifies_inputs: bool = False) -> Plan:
    """The plan for a task whose one call has `sizes` = {"inputs": B, "outputs": B}
    (None: unknown, the full plan). A reference that writes its inputs never shares."""
    inputs_bytes = int((sizes or {}).get("inputs", 0))
    outputs_bytes = int((sizes or {}).get("outputs", 0))
    if inputs_bytes + outputs_bytes <= LEAN_BYTES:
        return Plan(False, POOL_SIZE, False, 3, inputs_bytes, outputs_bytes)
    return Plan(True, 2, not reference_modifies_inputs, 1, inputs_bytes, outputs_bytes)
