// Package repository implements the service layer's storage ports by composing the sqlc-generated
// queries in dao/ with the Redis caches in cache/. It owns transactions and cache policy (what is
// cached, when entries are dropped), and it is the one place where driver errors become domain
// errors.
package repository
