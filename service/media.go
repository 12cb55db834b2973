package service

import (
	"context"
	"io"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=media.go -destination=mocks/media_mock.go -package=mocks

// ImageProcessor turns an uploaded file into the images inkwell stores (the media package).
type ImageProcessor interface {
	// Process reads at most max bytes of r (more is domain.ErrMediaTooLarge, and is never
	// buffered), sniffs the type from the bytes (anything but PNG, JPEG, GIF, WebP is
	// domain.ErrMediaUnsupported), checks the header's dimensions and a GIF's frame count before
	// decoding (too many pixels or frames, a truncated or corrupt file: a *domain.ValidationError
	// on "file"), then decodes, applies the EXIF orientation, drops every metadata and re-encodes
	// the original and each derived size. It waits for one of a few decoding slots (as many as
	// cores); ctx bounds the wait.
	Process(ctx context.Context, r io.Reader, max int64) (domain.ProcessedImage, error)
}

// MediaStore keeps encoded images under their content address (a local directory or S3).
type MediaStore interface {
	// Put stores data under key; storing a key that exists already is harmless (same bytes).
	Put(ctx context.Context, key, contentType string, data []byte) error
	// Delete removes key; a key that is not there is not an error.
	Delete(ctx context.Context, key string) error
}
