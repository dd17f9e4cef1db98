"""KernelZero's Python worker: one piece of work per process, `python -m kz_worker`.

The supervisor sends one request frame on the fd named by KZ_PROTOCOL_FD; the worker
answers with `event` frames and one `result` frame (docs/worker-protocol.md). Ops: see
`OPS` in __main__.py and the table in README.md.
"""
