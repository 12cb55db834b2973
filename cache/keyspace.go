package cache

// Keyspace is the prefix of every key inkwell writes, so several deployments (or test packages)
// can share one Redis without seeing each other's keys.
type Keyspace string

// Key joins the prefix and parts into one key.
func (k Keyspace) Key(parts ...string) string {
	n := len(k)
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, k...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, p...)
	}
	return string(b)
}
