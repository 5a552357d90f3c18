package io.stepline.simulator.sink;

import java.io.IOException;
import java.util.List;

import io.stepline.events.FaultEpisode;
import io.stepline.simulator.SimulationSummary;
import io.stepline.simulator.instance.StepOutput;

/** Where a simulation's output goes. Called from the simulation thread only, in simulated-time order. */
public interface SimulationSink extends AutoCloseable {
    /** The fault episodes of the run (ground truth), known before the first step. */
    default void begin(List<FaultEpisode> episodes) throws IOException {}

    void step(StepOutput step) throws IOException;

    /**
     * Gets everything handed over so far written out (a sink may encode on another thread); called
     * after the last step, before the run's wall time is taken.
     */
    default void drain() throws IOException {}

    default void end(SimulationSummary summary) throws IOException {}

    @Override
    void close() throws IOException;

    /** Sends everything to each sink in turn. */
    static SimulationSink all(List<SimulationSink> sinks) {
        return new SimulationSink() {
            @Override
            public void begin(List<FaultEpisode> episodes) throws IOException {
                for (SimulationSink s : sinks) {
                    s.begin(episodes);
                }
            }

            @Override
            public void step(StepOutput step) throws IOException {
                for (SimulationSink s : sinks) {
                    s.step(step);
                }
            }

            @Override
            public void drain() throws IOException {
                for (SimulationSink s : sinks) {
                    s.drain();
                }
            }

            @Override
            public void end(SimulationSummary summary) throws IOException {
                for (SimulationSink s : sinks) {
                    s.end(summary);
                }
            }

            @Override
            public void close() throws IOException {
                IOException first = null;
                for (SimulationSink s : sinks) {
                    try {
                        s.close();
                    } catch (IOException e) {
                        if (first == null) {
                            first = e;
                        }
                    }
                }
                if (first != null) {
                    throw first;
                }
            }
        };
    }
}
