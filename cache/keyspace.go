package cache

import "strings"

// Keyspace is the prefix of every key inkwell writes, so several deployments (or test packages)
// can share one Redis without seeing each other's keys.
type Keyspace string

// Key joins the prefix and parts into one key.
func (k Keyspace) Key(parts ...string) string {
	n := len(k)
	for _, p := range parts {
		n += len(p) + 1
	}
	// A Builder hands its buffer over as the string: one allocation per key, not two (keys are
	// built on every cached read).
	var b strings.Builder
	b.Grow(n)
	b.WriteString(string(k))
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(p)
	}
	return b.String()
}
