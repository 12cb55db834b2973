// Package service holds inkwell's use cases. It declares the ports it needs (repositories, password
// hashing, tokens) as interfaces in ports.go; adapters in repository/, cache/ and auth/ implement
// them. It imports domain and the standard library (plus golang.org/x/sync) only — never a storage
// or transport package; internal/archtest enforces that.
package service
