package domain

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Media limits. The byte limit of one upload is a setting (INKWELL_UPLOAD_MAX_BYTES); these are not.
const (
	// MaxImagePixels bounds width × height, read from the header before anything is decoded: a
	// decompression bomb is refused before it allocates.
	MaxImagePixels = 40_000_000
	// MaxGIFFrames bounds an animated GIF's frames (counted from its blocks before decoding).
	MaxGIFFrames = 100
)

// ErrMediaUnsupported refuses a file that is not a PNG, JPEG, GIF or WebP image (by its bytes,
// never its name or declared type): 415.
var ErrMediaUnsupported = errors.New("unsupported media type: only PNG, JPEG, GIF and WebP images are accepted")

// ErrMediaTooLarge refuses an upload over the byte limit: 413. The limit is read through a
// bounded reader, so an oversized body is never buffered.
var ErrMediaTooLarge = errors.New("the file is larger than the upload limit")

// ProcessedImage is an upload after decoding and re-encoding: the original (metadata dropped,
// orientation applied) and its derived sizes, each ready to store under its content address.
type ProcessedImage struct {
	Original ImageFile
	Variants []ImageFile // named: VariantAvatar, VariantCover, VariantThumb
}

// ImageFile is one encoded image.
type ImageFile struct {
	Name        string // "" for the original; a variant's name otherwise
	ContentType string // image/png, image/jpeg or image/gif
	Ext         string // png, jpg, gif
	Width       int
	Height      int
	Data        []byte
	SHA256      string // hex of Data
}

// Key is the object key of the file: its content address.
func (f ImageFile) Key() string { return f.SHA256 + "." + f.Ext }

// Derived sizes made once at upload (docs/API.md, "Uploads").
const (
	VariantAvatar = "avatar" // a square, for profile images
	VariantCover  = "cover"  // an article cover
	VariantThumb  = "thumb"  // a small preview
)

// Upload is a user's stored image.
type Upload struct {
	ID          int64
	UserID      int64
	Key         string
	ContentType string
	Width       int
	Height      int
	Bytes       int64
	SHA256      string
	Variants    map[string]UploadVariant
	CreatedAt   time.Time
}

// UploadVariant is one stored derived size of an upload.
type UploadVariant struct {
	Key    string `json:"key"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int64  `json:"bytes"`
}

// MediaPathPrefix starts the path of every stored image ("/media/<key>").
const MediaPathPrefix = "/media/"

// mediaKey is an object key: the sha256 of the bytes and the format's extension.
var mediaKey = regexp.MustCompile(`^[0-9a-f]{64}\.(png|jpg|gif)$`)

// mediaPathsIn finds upload paths in text (a Markdown body's images and links).
var mediaPathsIn = regexp.MustCompile(`/media/([0-9a-f]{64}\.(?:png|jpg|gif))`)

// ValidMediaKey reports whether key can name a stored image.
func ValidMediaKey(key string) bool { return mediaKey.MatchString(key) }

// MediaKeyOf returns the object key of an upload's path ("/media/<key>"), or false.
func MediaKeyOf(s string) (string, bool) {
	key, ok := strings.CutPrefix(s, MediaPathPrefix)
	return key, ok && ValidMediaKey(key)
}

// MediaKeysIn returns the object keys of the upload paths in text, each once.
func MediaKeysIn(text string) []string {
	if !strings.Contains(text, MediaPathPrefix) {
		return nil
	}
	seen := map[string]bool{}
	var keys []string
	for _, m := range mediaPathsIn.FindAllStringSubmatch(text, 64) {
		if !seen[m[1]] {
			seen[m[1]] = true
			keys = append(keys, m[1])
		}
	}
	return keys
}

// ValidateImageURL adds a message to v (on field) unless s is empty, an https URL with a host, or
// an upload's path. javascript:, data:, http: and relative paths elsewhere are refused.
func ValidateImageURL(v *ValidationError, field, s string) {
	if s == "" {
		return
	}
	if len(s) > MaxImageLen {
		v.Add(field, "is too long (maximum is 2048 characters)")
		return
	}
	if _, ok := MediaKeyOf(s); ok {
		return
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.ContainsAny(s, " \t\r\n") {
		v.Add(field, "must be an https URL or the url of one of your uploads (/media/...)")
	}
}
