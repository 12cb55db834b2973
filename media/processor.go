// Package media implements service.ImageProcessor: the image pipeline every upload goes through.
// It is an adapter of its own (like auth): pure Go, no storage, no transport. The service layer may
// not import image codecs, so they live here behind the port.
//
// The order of the checks is the point of the package, cheapest and safest first:
//
//  0. wait for one of a few intake places (twice the decoding slots): the bodies of uploads that
//     wait beyond them stay in the clients' and the kernel's buffers, not in the heap, so sixteen
//     concurrent 10 MB uploads hold at most a few of their files in memory at once;
//  1. read at most max+1 bytes (more is domain.ErrMediaTooLarge; an endless body is never buffered);
//  2. sniff the type from the bytes: PNG, JPEG, GIF or WebP, nothing else (domain.ErrMediaUnsupported);
//  3. read the header only (image.DecodeConfig) and refuse too many pixels, and for a GIF walk its
//     blocks to count the frames and their pixels, all without decoding (*domain.ValidationError);
//  4. only then wait for one of a few decoding slots (ctx bounds the wait), decode, apply the EXIF
//     orientation, and re-encode the original and each variant from the pixels alone, so no
//     metadata and no trailing bytes of the input survive.
package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"github.com/disintegration/imaging"
	"golang.org/x/image/webp"

	"github.com/inkwell-dev/inkwell/domain"
)

// JPEGQuality is the quality JPEG outputs are encoded at.
const JPEGQuality = 85

// Variant sizes (docs/API.md, "Uploads").
const (
	AvatarSize = 256  // the avatar is AvatarSize × AvatarSize, center-cropped
	CoverWidth = 1600 // the cover is at most CoverWidth wide, aspect kept, never upscaled
	ThumbWidth = 400  // the thumb is at most ThumbWidth wide, aspect kept, never upscaled
)

// format is an accepted input type, sniffed from the bytes.
type format int

const (
	formatPNG format = iota + 1
	formatJPEG
	formatGIF
	formatWebP
)

func (f format) String() string {
	switch f {
	case formatPNG:
		return "PNG"
	case formatJPEG:
		return "JPEG"
	case formatGIF:
		return "GIF"
	case formatWebP:
		return "WebP"
	}
	return "unknown"
}

// Processor is the image pipeline. Safe for concurrent use; decoding runs in at most slots
// goroutines at once, and at most intake uploads have their bytes read, whatever the number of
// concurrent uploads.
type Processor struct {
	slots  chan struct{}
	intake chan struct{}
}

// intakePerSlot: uploads read into memory per decoding slot. Two keep a slot busy (the next file
// is read while one decodes) without holding many files that only wait.
const intakePerSlot = 2

// NewProcessor returns a Processor that decodes at most slots images at once (at least one); the
// wiring passes runtime.NumCPU().
func NewProcessor(slots int) *Processor {
	slots = max(slots, 1)
	return &Processor{slots: make(chan struct{}, slots), intake: make(chan struct{}, slots*intakePerSlot)}
}

// Process implements service.ImageProcessor.
func (p *Processor) Process(ctx context.Context, r io.Reader, limit int64) (domain.ProcessedImage, error) {
	// A free place is taken even when ctx has ended: the checks below still run (they are cheap),
	// and only decoding is refused to an ended request.
	select {
	case p.intake <- struct{}{}:
	default:
		if err := wait(ctx, p.intake); err != nil {
			return domain.ProcessedImage{}, err
		}
	}
	defer func() { <-p.intake }()
	data, err := readBounded(r, limit)
	if err != nil {
		return domain.ProcessedImage{}, err
	}
	h, err := inspect(data)
	if err != nil {
		return domain.ProcessedImage{}, err
	}
	// Everything above only read headers; nothing was decoded. From here on pixels are allocated,
	// so it runs in a slot.
	if err := wait(ctx, p.slots); err != nil {
		return domain.ProcessedImage{}, err
	}
	defer func() { <-p.slots }()
	return process(data, h)
}

// wait takes a place in sem, or gives up when ctx ends.
func wait(ctx context.Context, sem chan struct{}) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readBounded reads all of r, but never more than limit+1 bytes: that one byte more tells an
// oversized body, which is refused without reading the rest.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max(limit, 0)+1))
	if err != nil {
		return nil, fmt.Errorf("media: reading the upload: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, domain.ErrMediaTooLarge
	}
	return data, nil
}

// sniff names the type from the first bytes; anything but the four accepted types (SVG, HTML,
// PDF, text, BMP, TIFF, ...) is unsupported.
func sniff(data []byte) (format, error) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return formatPNG, nil
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return formatJPEG, nil
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return formatGIF, nil
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return formatWebP, nil
	}
	return 0, domain.ErrMediaUnsupported
}

// header is what inspect learned without decoding.
type header struct {
	format        format
	width, height int
	frames        int // GIF only
}

func unreadable(f format) error {
	return domain.NewValidationError("file", fmt.Sprintf("is not a readable image (a truncated or corrupt %s)", f))
}

// inspect sniffs the type and reads the header only: the dimensions (and a GIF's frames) are
// checked against the limits before a single pixel is allocated.
func inspect(data []byte) (header, error) {
	if len(data) == 0 {
		return header{}, domain.NewValidationError("file", "is empty")
	}
	f, err := sniff(data)
	if err != nil {
		return header{}, err
	}
	var cfg image.Config
	switch f {
	case formatPNG:
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
	case formatJPEG:
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
	case formatGIF:
		cfg, err = gif.DecodeConfig(bytes.NewReader(data))
	case formatWebP:
		cfg, err = webp.DecodeConfig(bytes.NewReader(data))
	}
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return header{}, unreadable(f)
	}
	h := header{format: f, width: cfg.Width, height: cfg.Height}
	if px := int64(cfg.Width) * int64(cfg.Height); px > domain.MaxImagePixels {
		return header{}, domain.NewValidationError("file", fmt.Sprintf(
			"is %d×%d pixels (%d); at most %d pixels are accepted", cfg.Width, cfg.Height, px, domain.MaxImagePixels))
	}
	if f == formatGIF {
		frames, pixels, err := walkGIF(data)
		if err != nil {
			return header{}, err
		}
		if frames > domain.MaxGIFFrames {
			return header{}, domain.NewValidationError("file", fmt.Sprintf(
				"is an animated GIF of more than %d frames; at most %d are accepted", domain.MaxGIFFrames, domain.MaxGIFFrames))
		}
		if pixels > domain.MaxImagePixels {
			return header{}, domain.NewValidationError("file", fmt.Sprintf(
				"is an animated GIF of %d frames with %d pixels in all; at most %d pixels are accepted", frames, pixels, domain.MaxImagePixels))
		}
		h.frames = frames
	}
	return h, nil
}

// process decodes, orients and re-encodes. It runs in a slot. A decoder that panics on a crafted
// file (none is known to; the codecs are fuzzed) makes the file unreadable, not the server down.
func process(data []byte, h header) (out domain.ProcessedImage, err error) {
	defer func() {
		if recover() != nil {
			out, err = domain.ProcessedImage{}, unreadable(h.format)
		}
	}()
	if h.format == formatGIF {
		return processGIF(data)
	}
	var img image.Image
	switch h.format {
	case formatJPEG:
		// Applies the EXIF orientation; the EXIF block itself is never copied anywhere.
		img, err = imaging.Decode(bytes.NewReader(data), imaging.AutoOrientation(true))
	case formatPNG:
		img, err = png.Decode(bytes.NewReader(data))
	case formatWebP:
		img, err = webp.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return domain.ProcessedImage{}, unreadable(h.format)
	}
	enc := encodePNG
	if h.format != formatPNG {
		// JPEG and WebP come out as JPEG; a WebP's transparency is laid on white, not black.
		enc = encodeJPEG
		img = flatten(img)
	}
	orig, err := enc(img, "")
	if err != nil {
		return domain.ProcessedImage{}, err
	}
	variants, err := makeVariants(img, enc)
	if err != nil {
		return domain.ProcessedImage{}, err
	}
	return domain.ProcessedImage{Original: orig, Variants: variants}, nil
}

// processGIF re-encodes every frame (palettes, delays, disposal and loop count kept; comments and
// application extensions other than the loop count dropped). Its variants are PNGs made from the
// first frame laid on the logical screen: still images, transparency kept.
func processGIF(data []byte) (domain.ProcessedImage, error) {
	g, err := gif.DecodeAll(bytes.NewReader(data))
	if err != nil || len(g.Image) == 0 {
		return domain.ProcessedImage{}, unreadable(formatGIF)
	}
	out := &gif.GIF{
		Image:           g.Image,
		Delay:           g.Delay,
		LoopCount:       g.LoopCount,
		Disposal:        g.Disposal,
		Config:          g.Config,
		BackgroundIndex: g.BackgroundIndex,
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, out); err != nil {
		return domain.ProcessedImage{}, fmt.Errorf("media: encoding a GIF: %w", err)
	}
	orig := newFile("", "image/gif", "gif", g.Config.Width, g.Config.Height, buf.Bytes())

	first := image.NewNRGBA(image.Rect(0, 0, g.Config.Width, g.Config.Height))
	draw.Draw(first, g.Image[0].Bounds(), g.Image[0], g.Image[0].Bounds().Min, draw.Over)
	variants, err := makeVariants(first, encodePNG)
	if err != nil {
		return domain.ProcessedImage{}, err
	}
	return domain.ProcessedImage{Original: orig, Variants: variants}, nil
}

type encoder func(img image.Image, name string) (domain.ImageFile, error)

// makeVariants derives the sizes from the decoded, oriented pixels.
func makeVariants(img image.Image, enc encoder) ([]domain.ImageFile, error) {
	cover := fitWidth(img, CoverWidth)
	// The avatar from the cover too, unless that would make it upscale a panorama's short side:
	// a resampling filter's cost is in the pixels it reads, and a 40-megapixel photo has 16 times
	// the cover's.
	avatarFrom := cover
	if b := cover.Bounds(); min(b.Dx(), b.Dy()) < AvatarSize {
		avatarFrom = img
	}
	sized := []struct {
		name string
		img  image.Image
	}{
		{domain.VariantAvatar, imaging.Fill(avatarFrom, AvatarSize, AvatarSize, imaging.Center, imaging.CatmullRom)},
		{domain.VariantCover, cover},
		{domain.VariantThumb, fitWidth(cover, ThumbWidth)}, // from the cover: fewer pixels to read
	}
	files := make([]domain.ImageFile, 0, len(sized))
	for _, s := range sized {
		f, err := enc(s.img, s.name)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// fitWidth scales img down to w wide, keeping its aspect; a narrower image is kept as it is.
func fitWidth(img image.Image, w int) image.Image {
	if img.Bounds().Dx() <= w {
		return img
	}
	return imaging.Resize(img, w, 0, imaging.CatmullRom)
}

// flatten lays an image that has transparency on white (JPEG has no alpha channel); an opaque one
// is returned as it is.
func flatten(img image.Image) image.Image {
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return img
	}
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Over)
	return dst
}

func encodeJPEG(img image.Image, name string) (domain.ImageFile, error) {
	if n, ok := img.(*image.NRGBA); ok {
		// What reaches here is opaque (flattened before), and an opaque NRGBA has the bytes of an
		// RGBA: the encoder's fast path for *image.RGBA skips a colour allocation per pixel.
		img = &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: JPEGQuality}); err != nil {
		return domain.ImageFile{}, fmt.Errorf("media: encoding a JPEG: %w", err)
	}
	b := img.Bounds()
	return newFile(name, "image/jpeg", "jpg", b.Dx(), b.Dy(), buf.Bytes()), nil
}

func encodePNG(img image.Image, name string) (domain.ImageFile, error) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img); err != nil {
		return domain.ImageFile{}, fmt.Errorf("media: encoding a PNG: %w", err)
	}
	b := img.Bounds()
	return newFile(name, "image/png", "png", b.Dx(), b.Dy(), buf.Bytes()), nil
}

func newFile(name, contentType, ext string, w, h int, data []byte) domain.ImageFile {
	sum := sha256.Sum256(data)
	return domain.ImageFile{
		Name: name, ContentType: contentType, Ext: ext, Width: w, Height: h,
		Data: data, SHA256: hex.EncodeToString(sum[:]),
	}
}
