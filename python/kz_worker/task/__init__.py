"""The task ops: `task_check` and `footprint` (can kz judge a task, what it costs),
`validate` (the curriculum's validation stages 2-3), `baseline` (the reference's eager and
compiled times) and `calibrate` (the device's roofline ceilings)."""
