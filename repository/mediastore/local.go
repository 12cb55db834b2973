package mediastore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inkwell-dev/inkwell/domain"
)

// Local keeps objects in a directory, fanned out by the key's first two hex digits
// (dir/ab/abcd….png) so no directory grows past a few thousand entries. A write goes to a
// temporary file in the same directory, is synced and renamed into place: a reader never sees a
// half-written object, and a crash leaves at most a stray temporary file (".tmp-*").
type Local struct {
	dir   string
	small *objectCache
}

// NewLocal opens (creating it if need be) the directory dir.
func NewLocal(dir string) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("media directory %s: %w", abs, err)
	}
	return &Local{dir: abs, small: newObjectCache(localCacheBytes)}, nil
}

// Dir is the directory's absolute path.
func (l *Local) Dir() string { return l.dir }

// path is where key lives; key is valid (Store checks), so it never leaves dir.
func (l *Local) path(key string) string { return filepath.Join(l.dir, key[:2], key) }

// Put writes data under key unless it is there already (a key names its bytes).
func (l *Local) Put(_ context.Context, key, _ string, data []byte) error {
	p := l.path(key)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("media store: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("media store: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("media store: write %s: %w", key, err)
	}
	return nil
}

// Delete removes key; a missing key is not an error.
func (l *Local) Delete(_ context.Context, key string) error {
	l.small.forget(key)
	if err := os.Remove(l.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("media store: delete %s: %w", key, err)
	}
	return nil
}

// Open opens key for reading: a small object from memory while its file is unchanged.
func (l *Local) Open(_ context.Context, key string) (domain.MediaObject, error) {
	p := l.path(key)
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		l.small.forget(key)
		return domain.MediaObject{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.MediaObject{}, fmt.Errorf("media store: stat %s: %w", key, err)
	}
	if data, ok := l.small.get(key, st.Size(), st.ModTime()); ok {
		return domain.MediaObject{Content: bytesObject{bytes.NewReader(data)}, Size: st.Size(), ModTime: st.ModTime(), Data: data}, nil
	}
	if st.Size() <= localCacheObjectMax {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return domain.MediaObject{}, domain.ErrNotFound
		}
		if err != nil {
			return domain.MediaObject{}, fmt.Errorf("media store: read %s: %w", key, err)
		}
		// A rename between the stat and the read is harmless: a key names its bytes.
		l.small.put(key, data, st.ModTime())
		return domain.MediaObject{Content: bytesObject{bytes.NewReader(data)}, Size: int64(len(data)), ModTime: st.ModTime(), Data: data}, nil
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return domain.MediaObject{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.MediaObject{}, fmt.Errorf("media store: open %s: %w", key, err)
	}
	return domain.MediaObject{Content: f, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// Presign is "": the app serves local objects itself.
func (l *Local) Presign(context.Context, string) (string, error) { return "", nil }

// Check writes and removes a temporary file: the directory exists and takes writes.
func (l *Local) Check(context.Context) error {
	f, err := os.CreateTemp(l.dir, ".ready-*")
	if err != nil {
		return fmt.Errorf("media directory %s is not writable: %w", l.dir, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}
