// Package requestid carries a request's id in its context, so every log line the request causes
// can name it. web sets it; the logger (ioc) reads it.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context { return context.WithValue(ctx, key{}, id) }

// From returns the id in ctx, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// New returns a random id.
func New() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Valid accepts ids a client may send in X-Request-Id: 1 to 128 printable ASCII characters
// without spaces, so a hostile header cannot forge log structure.
func Valid(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}
