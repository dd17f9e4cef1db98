"""Entry point: `python -m kz_train` (docs/train-protocol.md)."""

from .loop import main

if __name__ == "__main__":
    main()
