"""Message schemas of Kafka's internal topics, held as data for the generic reader in
:mod:`kdump.storage.message`: one module per topic, each a block of compact schema text transcribed from
Kafka 4.0's JSON schema files, parsed once at import.  Adding a record type or version means editing that text.
"""
