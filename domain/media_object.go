package domain

import (
	"io"
	"time"
)

// MediaContentType is the content type of the object key names, from its extension ("" for a
// key that is not valid).
func MediaContentType(key string) string {
	if !ValidMediaKey(key) {
		return ""
	}
	switch key[len(key)-3:] {
	case "png":
		return "image/png"
	case "jpg":
		return "image/jpeg"
	default:
		return "image/gif"
	}
}

// MediaObject is a stored object opened for reading (the local store serves its bytes itself).
type MediaObject struct {
	Content io.ReadSeekCloser
	Size    int64
	ModTime time.Time
	// Data is the whole content when the store holds it in memory (Content reads the same bytes),
	// so a plain GET can be answered with one write.
	Data []byte
}
