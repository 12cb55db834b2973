package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

var _ service.ImageProcessor = (*Processor)(nil)

const testMax = 10 << 20

// --- test images, made in code -------------------------------------------------------------

// gradient is a w×h opaque image whose colour changes across it (so encoders have work to do).
func gradient(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / max(w, 1)), uint8(y * 255 / max(h, 1)), 128, 255})
		}
	}
	return img
}

func pngOf(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jpegOf(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gifOf(t testing.TB, w, h, frames int) []byte {
	t.Helper()
	g := &gif.GIF{LoopCount: 0}
	for i := range frames {
		f := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
		for y := range h {
			for x := range w {
				f.SetColorIndex(x, y, uint8((x+y+i)%len(palette.Plan9)))
			}
		}
		g.Image = append(g.Image, f)
		g.Delay = append(g.Delay, 10+i)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Tiny WebP files (1×1): lossless (VP8L), lossy (VP8) and lossy with alpha (VP8X + ALPH).
var (
	webpLossless = mustB64("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")
	webpLossy    = mustB64("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA")
	webpAlpha    = mustB64("UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==")
)

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// pngChunk encodes one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// pngHeaderOnly is a valid PNG signature and IHDR chunk claiming w×h RGBA pixels, and nothing
// else: a few dozen bytes that would decode to w×h×4 bytes.
func pngHeaderOnly(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	return append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
}

// jpegHeaderOnly is SOI, a JFIF APP0 and a baseline SOF0 claiming w×h, one component.
func jpegHeaderOnly(w, h uint16) []byte {
	b := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0}
	sof := []byte{0xFF, 0xC0, 0x00, 0x0B, 8, 0, 0, 0, 0, 1, 1, 0x11, 0}
	binary.BigEndian.PutUint16(sof[5:], h)
	binary.BigEndian.PutUint16(sof[7:], w)
	return append(b, sof...)
}

// craftedGIF is a GIF whose frames are only image descriptors with empty data: enough for the
// block walker, which never decodes.
func craftedGIF(w, h uint16, frames int, fw, fh uint16) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	b = append(b, 0, 0, 0)
	b = append(b, 0x21, 0xFE, 3, 'h', 'i', '!', 0) // a comment extension, skipped
	for range frames {
		b = append(b, 0x2C, 0, 0, 0, 0)
		b = binary.LittleEndian.AppendUint16(b, fw)
		b = binary.LittleEndian.AppendUint16(b, fh)
		b = append(b, 0, 2, 1, 0x44, 0) // no local table; LZW size 2; one sub-block; end
	}
	return append(b, 0x3B)
}

// withEXIF inserts an APP1 EXIF segment right after a JPEG's SOI: IFD0 holds the orientation, an
// ImageDescription with a marker string and a pointer to a GPS IFD (latitude ref "N" and a
// GPSAreaInformation with the marker too).
func withEXIF(jpg []byte, orientation uint16, marker string) []byte {
	be := binary.BigEndian
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08")
	// IFD0 at 8: 3 entries (2+3*12+4 = 42 bytes) → data after it at 50.
	desc := append([]byte(marker), 0)
	descOff := uint32(50)
	gpsOff := descOff + uint32(len(desc))
	ifd := be.AppendUint16(nil, 3)
	ifd = append(be.AppendUint16(be.AppendUint16(ifd, 0x010E), 2), be.AppendUint32(be.AppendUint32(nil, uint32(len(desc))), descOff)...)
	ifd = append(be.AppendUint16(be.AppendUint16(ifd, 0x0112), 3), be.AppendUint32(nil, 1)...)
	ifd = append(be.AppendUint16(ifd, orientation), 0, 0)
	ifd = append(be.AppendUint16(be.AppendUint16(ifd, 0x8825), 4), be.AppendUint32(be.AppendUint32(nil, 1), gpsOff)...)
	ifd = be.AppendUint32(ifd, 0)
	tiff = append(append(tiff, ifd...), desc...)
	// GPS IFD: 2 entries (2+2*12+4 = 30 bytes), then the area string.
	area := []byte("ASCII\x00\x00\x00" + marker)
	areaOff := gpsOff + 30
	gps := be.AppendUint16(nil, 2)
	gps = append(be.AppendUint16(be.AppendUint16(gps, 0x0001), 2), be.AppendUint32(nil, 2)...)
	gps = append(gps, 'N', 0, 0, 0)
	gps = append(be.AppendUint16(be.AppendUint16(gps, 0x001C), 7), be.AppendUint32(be.AppendUint32(nil, uint32(len(area))), areaOff)...)
	gps = be.AppendUint32(gps, 0)
	tiff = append(append(tiff, gps...), area...)

	payload := append([]byte("Exif\x00\x00"), tiff...)
	seg := append([]byte{0xFF, 0xE1}, be.AppendUint16(nil, uint16(len(payload)+2))...)
	seg = append(seg, payload...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// withCOM inserts a JPEG comment segment after SOI.
func withCOM(jpg []byte, comment string) []byte {
	seg := append([]byte{0xFF, 0xFE}, binary.BigEndian.AppendUint16(nil, uint16(len(comment)+2))...)
	seg = append(seg, comment...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// withTEXt inserts a tEXt chunk right after a PNG's IHDR (8 + 25 bytes).
func withTEXt(p []byte, key, text string) []byte {
	out := append([]byte{}, p[:33]...)
	out = append(out, pngChunk("tEXt", append(append([]byte(key), 0), text...))...)
	return append(out, p[33:]...)
}

func allFiles(pi domain.ProcessedImage) []domain.ImageFile {
	return append([]domain.ImageFile{pi.Original}, pi.Variants...)
}

func validationMessage(t *testing.T, err error) string {
	t.Helper()
	var v *domain.ValidationError
	if !errors.As(err, &v) {
		t.Fatalf("err = %v, want a *domain.ValidationError", err)
	}
	if len(v.Fields) != 1 || len(v.Fields["file"]) != 1 {
		t.Fatalf("fields = %v, want one message on \"file\"", v.Fields)
	}
	return v.Fields["file"][0]
}

// --- bounded read ---------------------------------------------------------------------------

// endless never ends; it counts what was read from it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'A'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestProcessReadsAtMostMaxPlusOneByte(t *testing.T) {
	for _, limit := range []int64{0, 1, 1000, 1 << 20} {
		r := &endless{}
		_, err := NewProcessor(1).Process(t.Context(), r, limit)
		if !errors.Is(err, domain.ErrMediaTooLarge) {
			t.Fatalf("limit %d: err = %v, want ErrMediaTooLarge", limit, err)
		}
		if r.n > limit+1 {
			t.Fatalf("limit %d: read %d bytes, want at most %d", limit, r.n, limit+1)
		}
	}
}

func TestProcessAcceptsAFileOfExactlyMaxBytes(t *testing.T) {
	p := pngOf(t, gradient(8, 8))
	if _, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(p), int64(len(p))); err != nil {
		t.Fatalf("a file of exactly max bytes: %v", err)
	}
	if _, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(p), int64(len(p)-1)); !errors.Is(err, domain.ErrMediaTooLarge) {
		t.Fatalf("one byte over: err = %v, want ErrMediaTooLarge", err)
	}
}

// --- sniffing -------------------------------------------------------------------------------

func TestProcessRefusesWhatIsNotAnAcceptedImage(t *testing.T) {
	p := pngOf(t, gradient(4, 4))
	cases := []struct {
		name string
		data []byte
	}{
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)},
		{"xml", []byte(`<?xml version="1.0"?><svg/>`)},
		{"html", []byte("<!DOCTYPE html><html><body>hi</body></html>")},
		{"pdf", []byte("%PDF-1.7\n1 0 obj\n")},
		{"text", []byte("just some words")},
		{"bmp", []byte("BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00")},
		{"tiff", []byte("II*\x00\x08\x00\x00\x00")},
		{"zip", []byte("PK\x03\x04\x14\x00")},
		{"riff wave", []byte("RIFF\x24\x00\x00\x00WAVEfmt ")},
		{"a png's bytes behind a space", append([]byte(" "), p...)},
		{"html with a png's name", []byte("<html>image.png</html>")},
		{"one byte", []byte{0x89}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(tc.data), testMax)
			if !errors.Is(err, domain.ErrMediaUnsupported) {
				t.Fatalf("err = %v, want ErrMediaUnsupported", err)
			}
		})
	}
}

func TestProcessRefusesAnEmptyFile(t *testing.T) {
	_, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(nil), testMax)
	if msg := validationMessage(t, err); msg != "is empty" {
		t.Fatalf("message = %q", msg)
	}
}

// --- headers: pixels and frames, before decoding --------------------------------------------

// busy returns a processor whose only decoding slot is taken and a canceled context: an input that
// got as far as decoding would come back as context.Canceled. Anything refused with a
// ValidationError here was refused from its header alone.
func busy(t *testing.T) (*Processor, context.Context) {
	t.Helper()
	p := NewProcessor(1)
	p.slots <- struct{}{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return p, ctx
}

func TestProcessRefusesTooManyPixelsFromTheHeader(t *testing.T) {
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"png 30000×30000", "is 30000×30000 pixels (900000000); at most 40000000 pixels are accepted", pngHeaderOnly(30000, 30000)},
		{"png 40001×1000", "is 40001×1000 pixels (40001000); at most 40000000 pixels are accepted", pngHeaderOnly(40001, 1000)},
		{"jpeg 65535×65535", "is 65535×65535 pixels (4294836225); at most 40000000 pixels are accepted", jpegHeaderOnly(65535, 65535)},
		{"gif 65535×65535", "is 65535×65535 pixels (4294836225); at most 40000000 pixels are accepted", craftedGIF(65535, 65535, 1, 1, 1)},
		{"webp", "is 16384×16384 pixels (268435456); at most 40000000 pixels are accepted", webpVP8LHeader(16384, 16384)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, ctx := busy(t)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := p.Process(ctx, bytes.NewReader(tc.data), testMax)
			runtime.ReadMemStats(&after)
			if msg := validationMessage(t, err); msg != tc.want {
				t.Fatalf("message = %q, want %q", msg, tc.want)
			}
			// Decoding would allocate gigabytes; the header check about 2 KB (64 KB leaves room for the
			// race detector and the runtime).
			if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
				t.Fatalf("refusing the header allocated %d bytes", d)
			}
		})
	}
}

// webpVP8LHeader is a RIFF/WEBP/VP8L header claiming w×h (the 14-bit fields hold size-1).
func webpVP8LHeader(w, h uint32) []byte {
	bits := (w - 1) | (h-1)<<14
	chunk := []byte{0x2F}
	chunk = binary.LittleEndian.AppendUint32(chunk, bits)
	chunk = append(chunk, 0, 0, 0, 0, 0)
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(4+8+len(chunk)))
	b = append(b, "WEBPVP8L"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(chunk)))
	return append(b, chunk...)
}

func TestProcessCountsGIFFramesWithoutDecoding(t *testing.T) {
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"101 frames", "is an animated GIF of more than 100 frames; at most 100 are accepted", craftedGIF(10, 10, 101, 10, 10)},
		{"10000 frames", "is an animated GIF of more than 100 frames; at most 100 are accepted", craftedGIF(1, 1, 10000, 1, 1)},
		{"frames over the pixel cap together", "is an animated GIF of 11 frames with 44000000 pixels in all; at most 40000000 pixels are accepted", craftedGIF(2000, 2000, 11, 2000, 2000)},
		{"a frame larger than its screen", "is an animated GIF of 1 frames with 4294836225 pixels in all; at most 40000000 pixels are accepted", craftedGIF(1, 1, 1, 65535, 65535)},
		{"no frame", "is not a readable image (a truncated or corrupt GIF)", craftedGIF(10, 10, 0, 0, 0)},
		{"cut inside a frame", "is not a readable image (a truncated or corrupt GIF)", craftedGIF(10, 10, 2, 10, 10)[:40]},
		{"an unknown block", "is not a readable image (a truncated or corrupt GIF)", append(craftedGIF(10, 10, 1, 10, 10)[:len(craftedGIF(10, 10, 1, 10, 10))-1], 0x99)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, ctx := busy(t)
			_, err := p.Process(ctx, bytes.NewReader(tc.data), testMax)
			if msg := validationMessage(t, err); msg != tc.want {
				t.Fatalf("message = %q, want %q", msg, tc.want)
			}
		})
	}
	// At the limits it goes on to the slot (and so would decode).
	p, ctx := busy(t)
	if _, err := p.Process(ctx, bytes.NewReader(craftedGIF(10, 10, 100, 10, 10)), testMax); !errors.Is(err, context.Canceled) {
		t.Fatalf("100 frames: err = %v, want it to wait for a slot", err)
	}
}

func TestProcessRefusesTruncatedOrCorruptImages(t *testing.T) {
	p := pngOf(t, gradient(64, 64))
	j := jpegOf(t, gradient(64, 64))
	g := gifOf(t, 16, 16, 3)
	badCRC := append([]byte{}, p...)
	badCRC[40] ^= 0xFF // inside the IDAT data
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"png header only", "PNG", pngHeaderOnly(10, 10)},
		{"png cut in half", "PNG", p[:len(p)/2]},
		{"png corrupt data", "PNG", badCRC},
		{"png zero width", "PNG", pngHeaderOnly(0, 10)},
		{"jpeg header only", "JPEG", jpegHeaderOnly(10, 10)},
		{"jpeg cut in half", "JPEG", j[:len(j)/2]},
		{"jpeg soi only", "JPEG", []byte{0xFF, 0xD8, 0xFF}},
		{"gif cut", "GIF", g[:len(g)-20]},
		{"gif screen only", "GIF", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00")},
		{"webp cut", "WebP", webpLossless[:20]},
		{"webp header claims more than there is", "WebP", webpVP8LHeader(100, 100)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(tc.data), testMax)
			want := "is not a readable image (a truncated or corrupt " + tc.want + ")"
			if msg := validationMessage(t, err); msg != want {
				t.Fatalf("message = %q, want %q", msg, want)
			}
		})
	}
}

// --- decoding slots -------------------------------------------------------------------------

func TestProcessWaitsForASlotUntilTheContextEnds(t *testing.T) {
	p := NewProcessor(1)
	p.slots <- struct{}{} // another upload is decoding
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Process(ctx, bytes.NewReader(pngOf(t, gradient(4, 4))), testMax)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	<-p.slots // the other upload ends: the slot is free again
	if _, err := p.Process(t.Context(), bytes.NewReader(pngOf(t, gradient(4, 4))), testMax); err != nil {
		t.Fatal(err)
	}
	if len(p.slots) != 0 {
		t.Fatalf("%d slots still taken after Process returned", len(p.slots))
	}
}

func TestNewProcessorHasAtLeastOneSlot(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 4} {
		if got := cap(NewProcessor(n).slots); got != max(n, 1) {
			t.Fatalf("NewProcessor(%d): %d slots", n, got)
		}
	}
}

// --- output: formats, sizes, content addresses ----------------------------------------------

type size struct{ w, h int }

func TestProcessMakesTheOriginalAndItsVariants(t *testing.T) {
	cases := []struct {
		name                           string
		data                           []byte
		typ, ext, variantTyp, varExt   string
		orig, avatar, cover, thumbSize size
	}{
		{"wide png", pngOf(t, gradient(1700, 340)), "image/png", "png", "image/png", "png", size{1700, 340}, size{256, 256}, size{1600, 320}, size{400, 80}},
		{"tall jpeg", jpegOf(t, gradient(500, 1000)), "image/jpeg", "jpg", "image/jpeg", "jpg", size{500, 1000}, size{256, 256}, size{500, 1000}, size{400, 800}},
		{"small png is never upscaled", pngOf(t, gradient(120, 60)), "image/png", "png", "image/png", "png", size{120, 60}, size{256, 256}, size{120, 60}, size{120, 60}},
		{"gif", gifOf(t, 500, 100, 3), "image/gif", "gif", "image/png", "png", size{500, 100}, size{256, 256}, size{500, 100}, size{400, 80}},
		{"webp lossless", webpLossless, "image/jpeg", "jpg", "image/jpeg", "jpg", size{1, 1}, size{256, 256}, size{1, 1}, size{1, 1}},
		{"webp lossy", webpLossy, "image/jpeg", "jpg", "image/jpeg", "jpg", size{1, 1}, size{256, 256}, size{1, 1}, size{1, 1}},
		{"webp with alpha", webpAlpha, "image/jpeg", "jpg", "image/jpeg", "jpg", size{1, 1}, size{256, 256}, size{1, 1}, size{1, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := NewProcessor(2).Process(t.Context(), bytes.NewReader(tc.data), testMax)
			if err != nil {
				t.Fatal(err)
			}
			check := func(f domain.ImageFile, name, typ, ext string, want size) {
				t.Helper()
				if f.Name != name || f.ContentType != typ || f.Ext != ext || f.Width != want.w || f.Height != want.h {
					t.Fatalf("%q: got %s %s %s %d×%d, want %s %s %d×%d", name, f.Name, f.ContentType, f.Ext, f.Width, f.Height, typ, ext, want.w, want.h)
				}
				sum := sha256.Sum256(f.Data)
				if f.SHA256 != hex.EncodeToString(sum[:]) || f.Key() != f.SHA256+"."+ext {
					t.Fatalf("%q: sha256 %s / key %s do not address its bytes", name, f.SHA256, f.Key())
				}
				cfg, format, err := image.DecodeConfig(bytes.NewReader(f.Data))
				if err != nil || "image/"+format != typ || cfg.Width != want.w || cfg.Height != want.h {
					t.Fatalf("%q: its bytes are %s %d×%d (%v), want %s %d×%d", name, format, cfg.Width, cfg.Height, err, typ, want.w, want.h)
				}
			}
			check(out.Original, "", tc.typ, tc.ext, tc.orig)
			if len(out.Variants) != 3 {
				t.Fatalf("%d variants, want 3", len(out.Variants))
			}
			check(out.Variants[0], domain.VariantAvatar, tc.variantTyp, tc.varExt, tc.avatar)
			check(out.Variants[1], domain.VariantCover, tc.variantTyp, tc.varExt, tc.cover)
			check(out.Variants[2], domain.VariantThumb, tc.variantTyp, tc.varExt, tc.thumbSize)
		})
	}
}

func TestProcessKeepsEveryGIFFrame(t *testing.T) {
	out, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(gifOf(t, 20, 10, 5)), testMax)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gif.DecodeAll(bytes.NewReader(out.Original.Data))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Image) != 5 || g.Delay[4] != 14 || g.LoopCount != 0 {
		t.Fatalf("%d frames, delays %v, loop %d; want 5 frames, delays 10..14, loop forever", len(g.Image), g.Delay, g.LoopCount)
	}
	for i, f := range g.Image {
		if f.ColorIndexAt(3, 2) != uint8((3+2+i)%len(palette.Plan9)) || len(f.Palette) != len(palette.Plan9) {
			t.Fatalf("frame %d: pixels or palette changed", i)
		}
	}
}

func TestProcessIsDeterministic(t *testing.T) {
	in := jpegOf(t, gradient(300, 200))
	a, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(in), testMax)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(in), testMax)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range allFiles(a) {
		if f.Key() != allFiles(b)[i].Key() {
			t.Fatalf("file %d: keys differ between two runs: %s, %s", i, f.Key(), allFiles(b)[i].Key())
		}
	}
}

// --- orientation and metadata ----------------------------------------------------------------

func TestProcessAppliesTheEXIFOrientation(t *testing.T) {
	// 40×20: left half red, right half blue. Orientation 6 means "rotate 90° clockwise to
	// display": the left half ends up on top.
	img := image.NewNRGBA(image.Rect(0, 0, 40, 20))
	for y := range 20 {
		for x := range 40 {
			c := color.NRGBA{255, 0, 0, 255}
			if x >= 20 {
				c = color.NRGBA{0, 0, 255, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	in := withEXIF(jpegOf(t, img), 6, "marker")
	out, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(in), testMax)
	if err != nil {
		t.Fatal(err)
	}
	if out.Original.Width != 20 || out.Original.Height != 40 {
		t.Fatalf("original is %d×%d, want 20×40", out.Original.Width, out.Original.Height)
	}
	dec, err := jpeg.Decode(bytes.NewReader(out.Original.Data))
	if err != nil {
		t.Fatal(err)
	}
	top, bottom := dec.At(10, 5), dec.At(10, 35)
	if r, _, b, _ := top.RGBA(); r < b {
		t.Fatalf("top is %v, want red", top)
	}
	if r, _, b, _ := bottom.RGBA(); r > b {
		t.Fatalf("bottom is %v, want blue", bottom)
	}
}

func TestProcessDropsMetadataAndTrailingBytes(t *testing.T) {
	const secret = "inkwell-secret-52.5200N-13.4050E"
	script := "<script>alert('" + secret + "')</script>"
	zipHTML := "PK\x03\x04\x14\x00\x00\x00" + secret + "<html><body>" + script + "</body></html>"
	p := pngOf(t, gradient(64, 48))
	j := jpegOf(t, gradient(64, 48))
	g := gifOf(t, 32, 16, 2)
	cases := []struct {
		name string
		data []byte
	}{
		{"jpeg with EXIF and GPS", withEXIF(j, 1, secret)},
		{"jpeg with a script comment", withCOM(j, script)},
		{"jpeg with a trailing zip and html", append(append([]byte{}, j...), zipHTML...)},
		{"png with a tEXt chunk", withTEXt(p, "Comment", secret)},
		{"png with a trailing zip and html after IEND", append(append([]byte{}, p...), zipHTML...)},
		{"gif with a comment and trailing html", append(withGIFComment(g, secret), zipHTML...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(tc.data, []byte(secret)) {
				t.Fatal("the crafted input lacks its secret")
			}
			out, err := NewProcessor(1).Process(t.Context(), bytes.NewReader(tc.data), testMax)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range allFiles(out) {
				for _, bad := range []string{secret, "Exif", "MM\x00\x2a", "tEXt", "<script", "<html", "PK\x03\x04"} {
					if bytes.Contains(f.Data, []byte(bad)) {
						t.Fatalf("file %q still holds %q", f.Name, bad)
					}
				}
			}
			// The output ends where its format ends: nothing trails it.
			for _, f := range allFiles(out) {
				switch f.Ext {
				case "png":
					if !bytes.HasSuffix(f.Data, pngChunk("IEND", nil)) {
						t.Fatalf("%q: bytes after IEND", f.Name)
					}
				case "jpg":
					if !bytes.HasSuffix(f.Data, []byte{0xFF, 0xD9}) {
						t.Fatalf("%q: bytes after EOI", f.Name)
					}
				case "gif":
					if !bytes.HasSuffix(f.Data, []byte{0x3B}) {
						t.Fatalf("%q: bytes after the trailer", f.Name)
					}
				}
			}
		})
	}
}

// withGIFComment inserts a comment extension before the first image descriptor of an encoded GIF
// (Go's encoder writes a global table, maybe a loop extension, then a graphic control block).
func withGIFComment(g []byte, comment string) []byte {
	i := bytes.Index(g, []byte{0x21, 0xF9}) // the first graphic control extension
	ext := append([]byte{0x21, 0xFE, byte(len(comment))}, comment...)
	ext = append(ext, 0)
	out := append([]byte{}, g[:i]...)
	out = append(out, ext...)
	return append(out, g[i:]...)
}

func TestSniffNeedsTheWholeWebPSignature(t *testing.T) {
	for _, data := range []string{"RIFF", "RIFF\x00\x00\x00\x00WEB", "RIFF\x00\x00\x00\x00AVI "} {
		if _, err := sniff([]byte(data)); !errors.Is(err, domain.ErrMediaUnsupported) {
			t.Fatalf("%q: err = %v", data, err)
		}
	}
	if f, err := sniff(webpLossy); err != nil || f != formatWebP {
		t.Fatalf("a WebP: %v, %v", f, err)
	}
	if !strings.HasPrefix(string(webpLossy), "RIFF") {
		t.Fatal("fixture")
	}
}

// --- concurrency ----------------------------------------------------------------------------

func TestProcessConcurrentUploads(t *testing.T) {
	p := NewProcessor(2)
	in := jpegOf(t, gradient(160, 120))
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			_, err := p.Process(t.Context(), bytes.NewReader(in), testMax)
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(p.slots) != 0 {
		t.Fatalf("%d slots still taken", len(p.slots))
	}
}

var _ io.Reader = (*endless)(nil)

// gatedReader blocks its first Read until release closes, after saying it started.
type gatedReader struct {
	started chan<- struct{}
	release <-chan struct{}
	data    io.Reader
	once    bool
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if !g.once {
		g.once = true
		g.started <- struct{}{}
		<-g.release
	}
	return g.data.Read(p)
}

// TestProcessReadsAtMostIntakeBodiesAtOnce: with every decoding slot's intake taken by uploads
// whose bodies are still arriving, the others wait before reading a byte (their bodies stay out
// of the heap), and go on when those finish.
func TestProcessReadsAtMostIntakeBodiesAtOnce(t *testing.T) {
	p := NewProcessor(1)
	in := jpegOf(t, gradient(32, 24))
	const uploads = 6
	started, release := make(chan struct{}), make(chan struct{})
	var reading atomic.Int32
	errs := make(chan error, uploads)
	for range uploads {
		go func() {
			r := &gatedReader{started: started, release: release, data: bytes.NewReader(in)}
			_, err := p.Process(t.Context(), r, testMax)
			errs <- err
		}()
	}
	for range cap(p.intake) {
		<-started
		reading.Add(1)
	}
	// Every intake place is held by a reader blocked in its first Read: no other upload can
	// have begun reading.
	if len(p.intake) != cap(p.intake) || reading.Load() != int32(cap(p.intake)) {
		t.Fatalf("%d intake places taken, %d bodies being read; want %d and %d", len(p.intake), reading.Load(), cap(p.intake), cap(p.intake))
	}
	close(release)
	go func() { // the rest start (and pass at once) as places free up
		for range uploads - cap(p.intake) {
			<-started
		}
	}()
	for range uploads {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(p.intake) != 0 || len(p.slots) != 0 {
		t.Fatalf("%d intake places and %d slots still taken", len(p.intake), len(p.slots))
	}
}
