"""Analyses built on the on-disk formats of :mod:`kdump.storage`: checks, searches and recovery as a broker
does them (index and log verification, the index rebuild, offset and timestamp lookups, what a read_committed
consumer sees, salvage of damaged segments, a partition's summary, topic configuration from the metadata log).
Pure like storage: nothing here prints or knows a command."""
