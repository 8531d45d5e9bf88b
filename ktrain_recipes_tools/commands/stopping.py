"""How a command ends when it is stopped: SIGTERM raised where the command is (as Ctrl-C is), and a run that
stopped early ending the command as the signal would. The command line installs the handler; the training
commands end with ``exit_as_stopped`` (a module of its own, so the commands never import the command line)."""

from __future__ import annotations


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so that it cleans up as for Ctrl-C (partial files, staging folders)."""


SIGNALLED: list[int] = []  # the signals that stopped this command (a library may turn the exception into another)


def exit_as_stopped(result) -> None:
    """End the command as the signal that stopped its run would (143 for SIGTERM, 130 for Ctrl-C) when the run's
    record says it was ``interrupted``: its best epoch is saved and its checkpoint kept, but a scheduler (docker stop,
    systemd, timeout, a series script) must not read it as finished."""
    if isinstance(result, dict) and result.get("interrupted"):
        raise Terminated() if SIGNALLED else KeyboardInterrupt()


def terminate(signum, frame) -> None:
    """The SIGTERM handler the command line installs while a command runs."""
    SIGNALLED.append(signum)
    raise Terminated
