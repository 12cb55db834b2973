// Package ioc builds inkwell's infrastructure from its configuration: the settings themselves,
// the logger, the OpenTelemetry tracer provider, the PostgreSQL pools, the Redis client, the cron
// runner, the HTTP server and the pprof listener, all from libraries. It imports none of inkwell's layers: the root package
// inkwell wires those onto this infrastructure. Each constructor that opens something returns a
// cleanup function, which wire chains in reverse order of construction.
package ioc
