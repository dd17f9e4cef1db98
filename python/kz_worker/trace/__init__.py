"""The launch trace of the run op (docs/trace.md): stage.py traces the repeated calls through
libkz_trace.so and sends the windows to the supervisor, which judges them; names.py reads the
candidate's own kernel names."""
