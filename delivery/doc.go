// Package delivery holds the adapters that send one-time login codes to people (a log sender for
// development, an HTTP webhook sender for a real SMS/email gateway) and the resilience wrapper
// around them: a timeout per attempt, retries of transient failures, a circuit breaker and a
// concurrency limit. It is an adapter folder of its own because it talks to the outside world,
// which no other adapter does.
package delivery
