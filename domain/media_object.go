package domain

import (
	"io"
	"regexp"
	"time"
)

// mediaKey is the shape of every object key: the sha256 of the stored bytes and the extension of
// the type they were encoded in. Nothing else names an object, so a key can never walk out of
// the store's directory or bucket.
var mediaKey = regexp.MustCompile(`^[0-9a-f]{64}\.(png|jpg|gif)$`)

// ValidMediaKey reports whether key is an object key ("<sha256 hex>.<png|jpg|gif>").
func ValidMediaKey(key string) bool { return mediaKey.MatchString(key) }

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
}
