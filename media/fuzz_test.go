package media

import (
	"bytes"
	"errors"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

// FuzzProcess feeds arbitrary bytes to the pipeline: it never panics, and it either succeeds with
// well-formed outputs or refuses with one of its three answers (too large, unsupported, a
// validation error on "file").
//
//	go test -run '^$' -fuzz FuzzProcess -fuzztime 60s ./media/
func FuzzProcess(f *testing.F) {
	f.Add(pngOf(f, gradient(3, 2)))
	f.Add(jpegOf(f, gradient(3, 2)))
	f.Add(gifOf(f, 3, 2, 2))
	f.Add(webpLossless)
	f.Add(webpLossy)
	f.Add(webpAlpha)
	f.Add(craftedGIF(4, 4, 2, 4, 4))
	f.Add(pngHeaderOnly(30000, 30000))
	f.Add(jpegHeaderOnly(8, 8))
	f.Add([]byte("<svg/>"))
	p := NewProcessor(1)
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := p.Process(t.Context(), bytes.NewReader(data), 1<<20)
		if err != nil {
			var v *domain.ValidationError
			if !errors.Is(err, domain.ErrMediaTooLarge) && !errors.Is(err, domain.ErrMediaUnsupported) &&
				(!errors.As(err, &v) || len(v.Fields["file"]) != 1) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(out.Original.Data) == 0 || len(out.Variants) != 3 || out.Original.SHA256 == "" {
			t.Fatalf("incomplete output %+v", out.Original)
		}
	})
}
