// Package service holds inkwell's use cases. Each use case's file declares the ports it needs
// (repositories, password hashing, tokens) as interfaces at its top; a port several use cases
// share lives in the file of the main one and says so. Adapters in repository/, cache/, auth/ and
// events/ implement them. It imports domain and the standard library (plus golang.org/x/sync) only
// — never a storage or transport package; internal/archtest enforces that.
package service
