"""Op `run`: verify one candidate against its task (docs/verdict.md). The op is op.py;
the stages' measuring code is in the other modules (README.md of kz_worker maps them)."""
