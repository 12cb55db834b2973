// Package moderation is the storage room of moderation: the append-only moderation log, the
// notices a moderation action writes, reports and the cases they are grouped into, and blocks.
// Hiding content and suspending accounts change the core's rows (articles, comments, users) and
// live there; a use case joins both in one unit of work (service/moderation*.go). This package
// imports no core repository.
package moderation
