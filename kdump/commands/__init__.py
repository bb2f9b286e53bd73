"""kdump's commands: one module each, producing typed facts and an :class:`~kdump.exit_status.ExitStatus`.

Commands never format and never choose an output format; the sinks in :mod:`kdump.render` write their facts.
"""
