package org.apache.kafka.test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;

/**
 * kdump's stand-in for the one method LocalTieredStorage (Kafka's storage test sources) takes from Kafka's clients
 * test jar, which the distribution does not ship: a fresh temporary directory. Used only when the RSM is
 * configured without a storage directory, which tests/tiered_broker never does.
 */
public final class TestUtils {
    private TestUtils() { }

    public static File tempDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix).toFile();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }
}
