package io.stepline.ingest.topology;

import io.stepline.ingest.otlp.SpanFragment;

/**
 * What one ingest processor hands the next inside a task: a kind, and either encoded bytes or an
 * already decoded fragment. It never crosses a topic (branches unwrap it before every sink), so a
 * decoded fragment is passed on as an object instead of being encoded and parsed again.
 */
record Routed(Kind kind, byte[] bytes, SpanFragment fragment) {
    enum Kind {
        /** One resource's spans whose instance lives in this task: assemble here. */
        LOCAL_FRAGMENT,
        /** One resource's spans that must first be re-keyed to their instance's partition. */
        REMOTE_FRAGMENT,
        STEP,
        REQUEST,
        DEAD_LETTER
    }

    static Routed of(Kind kind, byte[] bytes) {
        return new Routed(kind, bytes, null);
    }

    static Routed local(SpanFragment fragment) {
        return new Routed(Kind.LOCAL_FRAGMENT, null, fragment);
    }

    boolean is(Kind k) {
        return kind == k;
    }
}
