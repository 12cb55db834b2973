// Package ioc builds inkwell's infrastructure from its configuration: logger, PostgreSQL pool,
// Redis client, HTTP server, cron runner, and the App that runs them. Each constructor that opens
// something returns a cleanup function, which wire chains in reverse order of construction.
package ioc
