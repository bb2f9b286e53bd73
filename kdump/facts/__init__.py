"""The contract between commands and sinks: every command's fact types and the protocols of the sinks that
write them (one module per command), problems as typed facts, and the output and progress interfaces.
Commands produce facts and import this package, never :mod:`kdump.render`; sinks import it, never
:mod:`kdump.commands`; the command line picks the sink."""
