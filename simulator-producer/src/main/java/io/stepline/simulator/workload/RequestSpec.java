package io.stepline.simulator.workload;

/** One request as the workload generates it: arrival time (s) and token counts. */
public record RequestSpec(double arrivalS, int promptTokens, int outputTokens) {}
