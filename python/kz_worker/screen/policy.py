"""Rule catalogue (docs/screen-rules.md) and the report that collects findings.

Every finding names a rule id of the catalogue; its severity comes from the run's policy.
Notes are informational (never change the verdict): e.g. sources that are not statically
known.
"""

RULES_VERSION = 1
POLICIES = ("strict", "kernelbench")
BACKENDS = ("cuda", "triton")

# rule id -> (severity under strict, severity under kernelbench)
RULES = {
    "py.syntax": ("reject", "reject"),
    "py.torch_compute": ("reject", "warn"),
    "py.try_except": ("reject", "reject"),
    "py.concurrency": ("reject", "reject"),
    "py.extra_stream": ("warn", "warn"),
    "py.timer_patch": ("reject", "reject"),
    "py.module_patch": ("reject", "reject"),
    "py.tensor_subclass": ("reject", "reject"),
    "py.torch_compile": ("reject", "reject"),
    "py.introspection": ("reject", "reject"),
    "py.reference_access": ("reject", "reject"),
    "py.env_write": ("reject", "reject"),
    "py.native_loader": ("reject", "reject"),
    "py.raw_io": ("reject", "reject"),
    "py.global_cache": ("reject", "reject"),
    "cpp.aten_compute": ("reject", "warn"),
    "cpp.vendor_library": ("reject", "warn"),
    "cpp.extra_stream": ("warn", "warn"),
    "cpp.host_thread": ("reject", "reject"),
    "gen.no_kernel": ("reject", "reject"),
}


def severity(rule: str, policy: str) -> str:
    """Severity of `rule` under `policy` ("reject" or "warn")."""
    strict, kernelbench = RULES[rule]
    return strict if policy == "strict" else kernelbench


class Report:
    """Findings and notes of one screen, deduplicated by (rule, line, message)."""

    def __init__(self, policy: str):
        self.policy = policy
        self.findings = []
        self.notes = []
        self._seen = set()

    def add(self, rule: str, line, message: str) -> None:
        """Record a finding of `rule` at `line` (1-based; None for the whole file)."""
        key = (rule, line, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append({"rule": rule, "severity": severity(rule, self.policy),
                              "line": line, "message": message})

    def note(self, line, message: str) -> None:
        """Record an informational note."""
        if (line, message) not in self._seen:
            self._seen.add((line, message))
            self.notes.append({"line": line, "message": message})

    def verdict(self) -> str:
        return "reject" if any(f["severity"] == "reject" for f in self.findings) else "pass"

    def sorted_findings(self) -> list:
        return sorted(self.findings, key=lambda f: (f["line"] or 0, f["rule"], f["message"]))
