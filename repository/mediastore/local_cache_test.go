package mediastore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

func objectKey(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]) + ".jpg"
}

func readAll(t *testing.T, l *Local, key string) ([]byte, error) {
	t.Helper()
	obj, err := l.Open(context.Background(), key)
	if err != nil {
		return nil, err
	}
	defer obj.Content.Close()
	data, err := io.ReadAll(obj.Content)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != obj.Size {
		t.Fatalf("read %d bytes, the object says %d", len(data), obj.Size)
	}
	return data, nil
}

// TestLocal_SmallObjectsFromMemoryStayCoherent: two instances share a directory; one serves a
// small object (from memory from then on), the other deletes it: the first answers not found on
// its next read, as the file is gone; an object too large for memory is streamed from its file.
func TestLocal_SmallObjectsFromMemoryStayCoherent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	small := []byte("a thumbnail's bytes")
	key := objectKey(small)
	if err := a.Put(ctx, key, "image/jpeg", small); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, err := readAll(t, a, key); err != nil || !bytes.Equal(got, small) {
			t.Fatalf("read %q, %v; want the object", got, err)
		}
	}
	if _, ok := a.small.byKey[key]; !ok {
		t.Fatal("a small object read twice is not kept in memory")
	}
	if err := b.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, a, key); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("after another instance deleted it: %v, want domain.ErrNotFound", err)
	}

	large := bytes.Repeat([]byte("x"), localCacheObjectMax+1)
	key = objectKey(large)
	if err := a.Put(ctx, key, "image/jpeg", large); err != nil {
		t.Fatal(err)
	}
	obj, err := a.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Content.Close()
	if _, ok := obj.Content.(*os.File); !ok {
		t.Errorf("a %d-byte object is served from %T, want its file", len(large), obj.Content)
	}
}

// TestObjectCache_StaysWithinItsBytes: the least recently served objects go first, a changed
// file's entry is dropped, and an object larger than the per-object bound is never kept.
func TestObjectCache_StaysWithinItsBytes(t *testing.T) {
	t.Parallel()
	c := newObjectCache(10)
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	c.put("a", []byte("aaaa"), at)
	c.put("b", []byte("bbbb"), at)
	if _, ok := c.get("a", 4, at); !ok { // a is now the most recently served
		t.Fatal("a is not kept")
	}
	c.put("c", []byte("cccc"), at) // 12 bytes > 10: b goes
	if _, ok := c.get("b", 4, at); ok {
		t.Error("b, the least recently served, was kept past the bound")
	}
	if _, ok := c.get("a", 4, at); !ok {
		t.Error("a was evicted before b")
	}
	if c.used > c.max {
		t.Errorf("%d bytes kept, bound %d", c.used, c.max)
	}
	if _, ok := c.get("c", 4, at.Add(time.Second)); ok {
		t.Error("an entry read from a file of another modification time was used")
	}
	if _, ok := c.byKey["c"]; ok {
		t.Error("a stale entry was kept")
	}
	c.put("big", bytes.Repeat([]byte("x"), 11), at)
	if _, ok := c.byKey["big"]; ok {
		t.Error("an object larger than the whole cache was kept")
	}
}
