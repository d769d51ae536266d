"""errors.py: the exceptions that end a command with a message, and the exit
statuses of the runner. Nothing else."""

EXIT_USAGE = 2          # bad input: nothing measured, no run folder created
EXIT_ALL_FAILED = 3     # every cell failed
EXIT_NOT_WRITTEN = 4    # the run folder could not be written (results saved elsewhere or printed)
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM: the finished cells are kept


class UsageError(Exception):
    """Bad input: reported on stderr, exit status 2, nothing measured."""


class RunError(UsageError):
    """A folder that is not a readable run folder: the message names the file."""
