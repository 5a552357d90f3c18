package io.stepline.reports.triage;

/**
 * One rank's kernel evidence in the incident window: how busy the GPU was (kernel time / window),
 * the largest idle gap between kernels on the compute stream, kernel density, the share of time in
 * collectives (waiting for other ranks), and how much slower its kernels ran than their baselines.
 * {@code largestIdleGapPassNs} is the length of the forward pass that held the largest gap: the gap
 * is told as a share of its own pass, not of another step's.
 */
public record RankEvidence(int rank, double busyRatio, long largestIdleGapNs, long largestIdleGapPassNs, double kernelsPerMs, double collectiveShare,
                           double medianKernelSlowdown, double preprocessGrowth, double forwardGrowth, double sampleGrowth) {}
