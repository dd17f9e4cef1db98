"""KernelZero's built-in trainer backend: one long-lived process per policy,
`python -m kz_train`, answering length-prefixed JSON frames on stdin/stdout
(docs/train-protocol.md). Ops: hello, load, generate, score, train_step, sft, save,
shutdown. `loop.py` reads frames and turns every failure into an error frame;
`policy.py` holds the model math (torch, transformers, peft). Sampling tasks,
verification, rewards, advantages and schedules stay in the C++ control plane.
"""
