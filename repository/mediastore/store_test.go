package mediastore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/mediastore"
)

// storeUnderTest is one adapter with what the table needs to read an object back as a client
// would: bytes served by the app (local) or fetched from the presigned URL (S3).
type storeUnderTest struct {
	name  string
	store *mediastore.Store
	// broken returns a store of the same kind whose Check fails.
	broken func(t *testing.T) *mediastore.Store
}

func adapters(t *testing.T) []storeUnderTest {
	t.Helper()
	endpoint, bucket := testenv.StartS3(t)
	creds := credentials.NewStaticV4("test-key", "test-secret", "")
	s3, err := mediastore.NewS3(mediastore.S3Config{Endpoint: endpoint, Bucket: bucket, Region: "us-east-1", Creds: creds})
	if err != nil {
		t.Fatal(err)
	}
	local, err := mediastore.NewLocal(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	return []storeUnderTest{
		{name: "local", store: mediastore.NewStore(local, "file"), broken: func(t *testing.T) *mediastore.Store {
			dir := filepath.Join(t.TempDir(), "gone")
			l, err := mediastore.NewLocal(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(dir); err != nil { // the directory vanished (an unmounted share)
				t.Fatal(err)
			}
			return mediastore.NewStore(l, "file")
		}},
		{name: "s3", store: mediastore.NewStore(s3, "s3"), broken: func(t *testing.T) *mediastore.Store {
			b, err := mediastore.NewS3(mediastore.S3Config{Endpoint: endpoint, Bucket: "no-such-bucket", Region: "us-east-1", Creds: creds})
			if err != nil {
				t.Fatal(err)
			}
			return mediastore.NewStore(b, "s3")
		}},
	}
}

func keyOf(data []byte, ext string) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]) + "." + ext
}

// fetch reads key as a client would: the app's own bytes (local) or the presigned URL (S3).
// It returns the bytes and the content type, or found=false.
func fetch(t *testing.T, s *mediastore.Store, key string) (data []byte, contentType string, found bool) {
	t.Helper()
	ctx := context.Background()
	url, err := s.Presign(ctx, key)
	if err != nil {
		t.Fatalf("Presign(%s): %v", key, err)
	}
	if url == "" {
		obj, err := s.Open(ctx, key)
		if errors.Is(err, domain.ErrNotFound) {
			return nil, "", false
		}
		if err != nil {
			t.Fatalf("Open(%s): %v", key, err)
		}
		defer obj.Content.Close()
		b, err := io.ReadAll(obj.Content)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != obj.Size || obj.ModTime.IsZero() {
			t.Errorf("Open(%s): size %d, modtime %v; read %d bytes", key, obj.Size, obj.ModTime, len(b))
		}
		return b, domain.MediaContentType(key), true
	}
	if _, err := s.Open(ctx, key); !errors.Is(err, mediastore.ErrPresigns) {
		t.Errorf("Open on a presigning store = %v, want ErrPresigns", err)
	}
	if !strings.Contains(url, "X-Amz-Signature=") || !strings.Contains(url, "X-Amz-Expires=900") {
		t.Errorf("presigned URL %s: want a signature valid 900 s", url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if cc := resp.Header.Get("Cache-Control"); cc != mediastore.CacheControl {
			t.Errorf("the bucket serves %s with Cache-Control %q, want %q", key, cc, mediastore.CacheControl)
		}
		return b, resp.Header.Get("Content-Type"), true
	case http.StatusNotFound:
		return nil, "", false
	default:
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
		return nil, "", false
	}
}

// TestMediaStore_Adapters runs the same table against the local directory and a real
// S3-compatible server (internal/tools/fakes3, its own process).
func TestMediaStore_Adapters(t *testing.T) {
	for _, a := range adapters(t) {
		t.Run(a.name, func(t *testing.T) {
			ctx := context.Background()
			s := a.store
			png := []byte("\x89PNG\r\n\x1a\n not really, but bytes: " + a.name)
			key := keyOf(png, "png")

			t.Run("put then serve", func(t *testing.T) {
				if err := s.Put(ctx, key, "image/png", png); err != nil {
					t.Fatal(err)
				}
				got, ct, found := fetch(t, s, key)
				if !found || string(got) != string(png) || ct != "image/png" {
					t.Fatalf("fetch = %q, %q, %v; want the bytes put, image/png", got, ct, found)
				}
			})
			t.Run("put again is harmless", func(t *testing.T) {
				if err := s.Put(ctx, key, "image/png", png); err != nil {
					t.Fatal(err)
				}
				if got, _, found := fetch(t, s, key); !found || string(got) != string(png) {
					t.Fatalf("after a second put: %q, %v", got, found)
				}
			})
			t.Run("a jpeg keeps its type", func(t *testing.T) {
				jpg := []byte("\xff\xd8\xff jpeg-ish " + a.name)
				k := keyOf(jpg, "jpg")
				if err := s.Put(ctx, k, "image/jpeg", jpg); err != nil {
					t.Fatal(err)
				}
				if _, ct, found := fetch(t, s, k); !found || ct != "image/jpeg" {
					t.Fatalf("fetch %s: %q, %v", k, ct, found)
				}
			})
			t.Run("delete", func(t *testing.T) {
				if err := s.Delete(ctx, key); err != nil {
					t.Fatal(err)
				}
				if _, _, found := fetch(t, s, key); found {
					t.Fatal("a deleted key is still served")
				}
			})
			t.Run("delete a missing key", func(t *testing.T) {
				if err := s.Delete(ctx, keyOf([]byte("never stored"), "gif")); err != nil {
					t.Fatalf("Delete of a missing key: %v", err)
				}
			})
			t.Run("serve a missing key", func(t *testing.T) {
				if _, _, found := fetch(t, s, keyOf([]byte("never stored"), "png")); found {
					t.Fatal("a key never stored is served")
				}
			})
			t.Run("keys that are not object keys never reach the backend", func(t *testing.T) {
				for _, bad := range []string{"../../etc/passwd", "../" + key, strings.ToUpper(key),
					key[:64] + ".svg", key[:64] + ".png/../x", "", "ab/" + key} {
					if err := s.Put(ctx, bad, "image/png", png); err == nil {
						t.Errorf("Put(%q) accepted", bad)
					}
					if err := s.Delete(ctx, bad); err == nil {
						t.Errorf("Delete(%q) accepted", bad)
					}
					if _, err := s.Open(ctx, bad); !errors.Is(err, domain.ErrNotFound) {
						t.Errorf("Open(%q) = %v, want ErrNotFound", bad, err)
					}
					if _, err := s.Presign(ctx, bad); !errors.Is(err, domain.ErrNotFound) {
						t.Errorf("Presign(%q) = %v, want ErrNotFound", bad, err)
					}
				}
			})
			t.Run("check", func(t *testing.T) {
				if err := s.Check(ctx); err != nil {
					t.Fatalf("Check of a working store: %v", err)
				}
				if err := a.broken(t).Check(ctx); err == nil {
					t.Fatal("Check of a broken store passed")
				}
			})
		})
	}
}

// TestLocal_WritesAtomically: an object lands whole under its fan-out directory, and no temporary
// file is left behind.
func TestLocal_WritesAtomically(t *testing.T) {
	dir := t.TempDir()
	l, err := mediastore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := mediastore.NewStore(l, "file")
	data := []byte("gif bytes")
	key := keyOf(data, "gif")
	if err := s.Put(context.Background(), key, "image/gif", data); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, key[:2], key))
	if err != nil || string(got) != string(data) {
		t.Fatalf("stored file: %q, %v", got, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, key[:2]))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want the object only", len(entries))
	}
}

// TestS3_NeedsCredentials: an S3 store without AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY fails at
// start with what to set, not on the first upload.
func TestS3_NeedsCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	_, err := mediastore.NewS3(mediastore.S3Config{Endpoint: "127.0.0.1:9", Bucket: "b", Region: "us-east-1"})
	if err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Fatalf("NewS3 without credentials = %v, want an error naming AWS_ACCESS_KEY_ID", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	if _, err := mediastore.NewS3(mediastore.S3Config{Endpoint: "127.0.0.1:9", Bucket: "b", Region: "us-east-1"}); err != nil {
		t.Fatalf("NewS3 with credentials from the environment: %v", err)
	}
}
