// Package mediastore is the media room: the media store keeps encoded images under their content
// address ("<sha256 hex>.<ext>", domain.ValidMediaKey) in a local directory (Local) or an
// S3-compatible bucket (S3). Store is the one type the rest of the app is given: it implements
// service.MediaStore (Put, Delete), what GET /media/:key reads (Open, Presign) and the readiness
// check (Check).
package mediastore

import (
	"context"
	"fmt"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// CacheControl is sent with every stored object: a key names its bytes, which never change.
const CacheControl = "public, max-age=31536000, immutable"

// PresignLifetime is how long a presigned GET of the S3 store is valid: long enough for a page
// and its images to load, short enough that a leaked URL soon stops working.
const PresignLifetime = 15 * time.Minute

// Backend is one kind of store.
type Backend interface {
	// Put stores data under key; a key already stored is left as it is (same key, same bytes).
	Put(ctx context.Context, key, contentType string, data []byte) error
	// Delete removes key; a key that is not there is not an error.
	Delete(ctx context.Context, key string) error
	// Open returns the object for the server to send itself; domain.ErrNotFound when it is not
	// there. A store that presigns answers ErrPresigns.
	Open(ctx context.Context, key string) (domain.MediaObject, error)
	// Presign returns a URL a client may GET the object from for PresignLifetime; "" when the
	// store serves its objects itself (Open).
	Presign(ctx context.Context, key string) (string, error)
	// Check reports whether the store can take writes (readiness).
	Check(ctx context.Context) error
}

// ErrPresigns is Open's answer from a store whose objects are fetched from presigned URLs.
var ErrPresigns = fmt.Errorf("this media store serves objects through presigned URLs")

// Store is the media store the app uses: a Backend chosen by INKWELL_MEDIA_URL. Every method
// refuses a key that is not an object key before it reaches the backend.
type Store struct {
	b    Backend
	kind string
}

// NewStore wraps a backend; kind names it in logs ("file" or "s3").
func NewStore(b Backend, kind string) *Store { return &Store{b: b, kind: kind} }

// Kind is "file" or "s3".
func (s *Store) Kind() string { return s.kind }

// Put stores data under key.
func (s *Store) Put(ctx context.Context, key, contentType string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.b.Put(ctx, key, contentType, data)
}

// Delete removes key.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.b.Delete(ctx, key)
}

// Open returns a stored object; a malformed key is domain.ErrNotFound, as a missing one.
func (s *Store) Open(ctx context.Context, key string) (domain.MediaObject, error) {
	if !domain.ValidMediaKey(key) {
		return domain.MediaObject{}, domain.ErrNotFound
	}
	return s.b.Open(ctx, key)
}

// Presign returns a presigned GET URL of key, or "" when the store serves it itself.
func (s *Store) Presign(ctx context.Context, key string) (string, error) {
	if !domain.ValidMediaKey(key) {
		return "", domain.ErrNotFound
	}
	return s.b.Presign(ctx, key)
}

// Check reports whether the store takes writes.
func (s *Store) Check(ctx context.Context) error { return s.b.Check(ctx) }

func checkKey(key string) error {
	if !domain.ValidMediaKey(key) {
		return fmt.Errorf("media store: %q is not an object key (<sha256 hex>.png|jpg|gif)", key)
	}
	return nil
}
