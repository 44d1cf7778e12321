"""``python -m xlsent …`` (and ``torchrun -m xlsent …``): the same as the ``xlsent`` command."""

from xlsent.cli.main import main

if __name__ == "__main__":
    main()
