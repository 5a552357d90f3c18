package io.stepline.schemas;

/**
 * Avro 1.12 refuses to instantiate generated classes outside the packages listed in the
 * {@code org.apache.avro.SERIALIZABLE_PACKAGES} system property. Our records live in
 * {@code io.stepline.events}; this adds our package to whatever the user configured, before
 * Avro first reads the property.
 */
final class TrustedPackages {
    static final String PROPERTY = "org.apache.avro.SERIALIZABLE_PACKAGES";
    static final String OUR_PACKAGE = "io.stepline";

    private TrustedPackages() {}

    static synchronized void ensureTrusted() {
        String current = System.getProperty(PROPERTY);
        if (current == null || current.isBlank()) {
            System.setProperty(PROPERTY, OUR_PACKAGE);
        } else if (!(',' + current + ',').contains(',' + OUR_PACKAGE + ',')) {
            System.setProperty(PROPERTY, current + ',' + OUR_PACKAGE);
        }
    }
}
