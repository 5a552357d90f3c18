package io.stepline.simulator.cluster;

/** Token-bucket admission: a request takes one token; tokens refill continuously up to the capacity. */
public final class TokenBucket {
    private final double capacity;
    private final double refillPerS;
    private double tokens;
    private double lastS;

    public TokenBucket(double capacity, double refillPerS) {
        if (capacity <= 0 || refillPerS < 0) {
            throw new IllegalArgumentException("token bucket needs capacity > 0 and refill >= 0");
        }
        this.capacity = capacity;
        this.refillPerS = refillPerS;
        this.tokens = capacity;
    }

    public boolean tryAdmit(double nowS) {
        tokens = Math.min(capacity, tokens + (nowS - lastS) * refillPerS);
        lastS = nowS;
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }

    public double tokens() {
        return tokens;
    }
}
