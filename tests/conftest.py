"""The tests are a package (``tests``); shared helpers are its modules (``tests.corpus`` locates the corpus).

The suite's oracle is Kafka 4.0's tool (the corpus, the real 4.0 distribution, the recorded fixtures), so
``kdump files`` runs here as Kafka 4.0's tool unless a test asks for another release (``--kafka-version``, or
``KDUMP_KAFKA_VERSION`` set or removed by the test): the environment variable is set for the whole session,
child processes included.  The default release itself (the newest) is tested with the variable removed.
"""

import os

os.environ["KDUMP_KAFKA_VERSION"] = "4.0"
