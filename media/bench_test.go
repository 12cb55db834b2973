package media

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"testing"
)

// noisyJPEG is a w×h JPEG of smooth gradients with noise on top: photo-like enough that it does
// not compress to nothing.
func noisyJPEG(b *testing.B, w, h int) []byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(64))
			img.SetNRGBA(x, y, color.NRGBA{uint8(x*200/w) + n, uint8(y*200/h) + n, 100 + n, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkProcess2MBJPEG runs the whole pipeline on a ~2 MB, 12-megapixel-class photo-like JPEG:
// header checks, decode, orientation, the original re-encoded at quality 85 and three variants.
//
//	go test -run '^$' -bench BenchmarkProcess2MBJPEG -benchmem -count 3 ./media/
func BenchmarkProcess2MBJPEG(b *testing.B) {
	in := noisyJPEG(b, 2400, 1600)
	b.Logf("input: %d bytes, 2400×1600", len(in))
	p := NewProcessor(1)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Process(b.Context(), bytes.NewReader(in), 10<<20); err != nil {
			b.Fatal(err)
		}
	}
}
