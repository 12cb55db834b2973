package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// webp1x1 is a 1×1 lossless WebP (the standard library has no WebP encoder).
var webp1x1, _ = base64.StdEncoding.DecodeString("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")

type uploadJSON struct {
	ID          int64  `json:"id"`
	URL         string `json:"url"`
	ContentType string `json:"contentType"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Bytes       int64  `json:"bytes"`
	Variants    map[string]struct {
		URL string `json:"url"`
	} `json:"variants"`
}

// postUpload sends data as the multipart part "file"; the answer's status and body.
func postUpload(t *testing.T, base, token string, data []byte) (int, []byte) {
	t.Helper()
	status, body, _ := postUploadRetry(t, base, token, data)
	return status, body
}

// postUploadRetry is postUpload that also returns the answer's Retry-After.
func postUploadRetry(t *testing.T, base, token string, data []byte) (int, []byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile("file", "upload.bin")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(data)
	_ = w.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/uploads", &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Token "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body, resp.Header.Get("Retry-After")
}

func noisy(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	seed := uint32(7)
	for i := range img.Pix {
		seed = seed*1664525 + 1013904223
		img.Pix[i] = byte(seed >> 24)
	}
	return img
}

func encoded(t *testing.T, enc func(io.Writer, image.Image) error, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withGPS puts an EXIF APP1 segment naming a GPS position right after a JPEG's SOI.
func withGPS(jpg []byte) []byte {
	payload := []byte("Exif\x00\x00MM\x00\x2a\x00\x00\x00\x08GPSLatitude 52.5200 N GPSLongitude 13.4050 E")
	seg := append([]byte{0xFF, 0xE1}, byte((len(payload)+2)>>8), byte(len(payload)+2))
	seg = append(seg, payload...)
	return append(append(append([]byte{}, jpg[:2]...), seg...), jpg[2:]...)
}

// hugeHeader is a PNG whose header claims 30000×30000 pixels (valid CRC), with no pixel data.
func hugeHeader(t *testing.T) []byte {
	b := encoded(t, png.Encode, image.NewGray(image.Rect(0, 0, 1, 1)))
	binary.BigEndian.PutUint32(b[16:], 30000)
	binary.BigEndian.PutUint32(b[20:], 30000)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

// TestUploads_EveryRule: raster images (PNG, JPEG, GIF, WebP) are accepted and served re-encoded (a JPEG's EXIF GPS is
// gone), anything else is 415, a file over the limit 413, a header of too many pixels and a
// truncated file 422; a user lists and deletes their own uploads and gets 404 for another's; the
// total quota refuses with 413. Run against the local store and a real S3 server.
func TestUploads_EveryRule(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "e2e-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "e2e-secret")
	t.Run("local", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "media")
		testUploads(t, func(c *ioc.Config) { c.Media.URL = "file://" + dir })
	})
	t.Run("daily quota", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "media")
		app := startApp(t, func(c *ioc.Config) {
			c.Media.URL = "file://" + dir
			c.Uploads.Quota = "100KB/day,1GB"
		})
		token := app.Register("updaily")
		img := encoded(t, png.Encode, noisy(80, 80)) // about 19 KB, incompressible
		// Uploads succeed until the day's bytes would pass 100 KB: then 429 with Retry-After.
		created := 0
		for range 10 {
			status, body, retry := postUploadRetry(t, app.URL, token, img)
			if status == http.StatusCreated {
				created++
				continue
			}
			if status != http.StatusTooManyRequests || !strings.Contains(string(body), "daily upload quota") || retry == "" || created == 0 {
				t.Fatalf("after %d uploads: %d %s (Retry-After %q)", created, status, body, retry)
			}
			return
		}
		t.Fatalf("%d uploads of %d bytes passed a quota of 100 KB a day", created, len(img))
	})
	t.Run("s3", func(t *testing.T) {
		endpoint, bucket := testenv.StartS3(t)
		testUploads(t, func(c *ioc.Config) {
			c.Media.URL = "s3://" + bucket + "?endpoint=" + endpoint + "&region=us-east-1&secure=false"
		})
	})
}

func testUploads(t *testing.T, store func(*ioc.Config)) {
	app := startApp(t, store, func(c *ioc.Config) {
		c.Uploads.MaxBytes = "256KiB"
		c.Uploads.Quota = "100MB/day,300KB"
	})
	ann, bob := app.Register("upann"), app.Register("upbob")

	jpg := withGPS(encoded(t, func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, nil) }, noisy(64, 48)))
	pal := image.NewPaletted(image.Rect(0, 0, 20, 10), color.Palette{color.Black, color.White})
	accepted := map[string][]byte{
		"png":  encoded(t, png.Encode, noisy(40, 30)),
		"jpeg": jpg,
		"gif":  encoded(t, func(w io.Writer, m image.Image) error { return gif.Encode(w, m, nil) }, pal),
		"webp": webp1x1,
	}
	var ids []int64
	for kind, data := range accepted {
		status, body := postUpload(t, app.URL, ann, data)
		if status != http.StatusCreated {
			t.Fatalf("%s: %d %s", kind, status, body)
		}
		var r struct{ Upload uploadJSON }
		if err := json.Unmarshal(body, &r); err != nil || r.Upload.URL == "" || r.Upload.Width == 0 || len(r.Upload.Variants) == 0 {
			t.Fatalf("%s: %s (%v)", kind, body, err)
		}
		ids = append(ids, r.Upload.ID)
		resp, served := get(t, http.DefaultClient, app.URL+r.Upload.URL, nil)
		if resp.StatusCode != http.StatusOK || len(served) == 0 {
			t.Fatalf("%s: GET %s: %s", kind, r.Upload.URL, resp.Status)
		}
		if kind == "jpeg" && (bytes.Contains(served, []byte("GPSLatitude")) || bytes.Contains(served, []byte("Exif\x00"))) {
			t.Errorf("the served JPEG still carries the EXIF GPS segment")
		}
	}

	refused := []struct {
		what string
		data []byte
		want int
	}{
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), http.StatusUnsupportedMediaType},
		{"html", []byte(`<!doctype html><html><body>hi</body></html>`), http.StatusUnsupportedMediaType},
		{"text", []byte("just some text"), http.StatusUnsupportedMediaType},
		{"over the limit", bytes.Repeat([]byte{0x89}, 300<<10), http.StatusRequestEntityTooLarge},
		{"30000×30000 header", hugeHeader(t), http.StatusUnprocessableEntity},
		{"truncated", accepted["png"][:len(accepted["png"])/2], http.StatusUnprocessableEntity},
	}
	for _, r := range refused {
		if status, body := postUpload(t, app.URL, ann, r.data); status != r.want {
			t.Errorf("%s: %d %s, want %d", r.what, status, body, r.want)
		}
	}

	// The list is ann's own, newest first; bob sees none of it and cannot delete it.
	list := app.call(t, http.MethodGet, "/api/user/uploads?limit=2", ann, nil).Expect(t, http.StatusOK)
	var page struct {
		Uploads    []uploadJSON `json:"uploads"`
		NextCursor string       `json:"nextCursor"`
	}
	if err := json.Unmarshal(list.Body, &page); err != nil || len(page.Uploads) != 2 || page.NextCursor == "" {
		t.Fatalf("ann's first page: %s", list.Body)
	}
	app.call(t, http.MethodDelete, fmt.Sprintf("/api/uploads/%d", ids[0]), bob, nil).Expect(t, http.StatusNotFound)
	app.call(t, http.MethodDelete, fmt.Sprintf("/api/uploads/%d", ids[0]), ann, nil).Expect(t, http.StatusNoContent)
	app.call(t, http.MethodDelete, fmt.Sprintf("/api/uploads/%d", ids[0]), ann, nil).Expect(t, http.StatusNotFound)

	// Over the total quota (300 KB): refused with 413 and what to do.
	big := encoded(t, png.Encode, noisy(200, 200)) // about 160 KB, incompressible
	status, body := postUpload(t, app.URL, ann, big)
	if status == http.StatusCreated {
		status, body = postUpload(t, app.URL, ann, big)
	}
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "delete some uploads") {
		t.Fatalf("over the total quota: %d %s", status, body)
	}
}
