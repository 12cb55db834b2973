// Package identities is the storage room of sign-in providers (issue #30): the identities linked
// to accounts, the accounts a provider made, the sign-in states between start and callback, and
// the one-time exchange codes. States and codes are kept as hashes and consumed by one DELETE, so
// they are single use on every instance without Redis. This package imports no core repository.
package identities
