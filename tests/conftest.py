"""The tests are a package (``tests``); shared helpers are its modules (``tests.corpus`` locates the corpus)."""
