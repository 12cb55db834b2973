package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// bindJSON decodes the request body into dst. On failure it answers the request (413 for a body
// over the limit, 422 for anything that is not the expected JSON, for bytes that are not UTF-8 and
// for a NUL) and returns false.
func bindJSON(c *gin.Context, dst any) bool {
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	raw, err := io.ReadAll(c.Request.Body)
	if err == nil && !utf8.Valid(raw) {
		// encoding/json would quietly turn the bad bytes into U+FFFD and store text the client
		// never sent; refusing says what is wrong. (A lone surrogate escape such as \ud800 is valid
		// JSON text and becomes U+FFFD, as the JSON standard allows: documented in docs/API.md.)
		abortWith(c, http.StatusUnprocessableEntity, "body", "must be UTF-8 text")
		return false
	}
	if err == nil && hasNULEscape(raw) {
		// PostgreSQL text cannot hold NUL: refused here, it would reach the database as a 500.
		abortWith(c, http.StatusUnprocessableEntity, "body", "must not contain NUL characters (\\u0000)")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err == nil {
		err = dec.Decode(dst)
	}
	if err == nil {
		// Trailing garbage after the object means the client sent something else than it meant to.
		// Reading it may also run past the body limit, which stays a 413.
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("unexpected data after the JSON object")
			if errors.As(terr, &tooBig) {
				err = terr
			}
		}
	}
	if err == nil {
		return true
	}
	switch {
	case errors.As(err, &tooBig):
		abortWith(c, http.StatusRequestEntityTooLarge, "body", fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit))
	case errors.Is(err, io.EOF):
		abortWith(c, http.StatusUnprocessableEntity, "body", "request body is empty; send a JSON object")
	case errors.As(err, &typeErr) && typeErr.Field != "":
		field := typeErr.Field[strings.LastIndex(typeErr.Field, ".")+1:]
		abortWith(c, http.StatusUnprocessableEntity, field, "must be a "+jsonTypeName(typeErr.Type.Kind().String()))
	default:
		abortWith(c, http.StatusUnprocessableEntity, "body", "is not valid JSON")
	}
	return false
}

func jsonTypeName(kind string) string {
	switch {
	case kind == "string":
		return "string"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "bool":
		return "boolean"
	case kind == "slice":
		return "list"
	default:
		return "JSON object"
	}
}

// hasNULEscape reports whether raw holds a JSON \u0000 escape, the only way JSON text can carry a
// NUL: "u0000" after an odd number of backslashes (an even number escapes the backslashes
// themselves).
func hasNULEscape(raw []byte) bool {
	for from := 0; ; {
		i := bytes.Index(raw[from:], []byte("u0000"))
		if i < 0 {
			return false
		}
		i += from
		slashes := 0
		for j := i - 1; j >= 0 && raw[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 1 {
			return true
		}
		from = i + 1
	}
}

// plainText stops a request whose path or query parameters hold invalid UTF-8 or a NUL character
// before any service: PostgreSQL text can hold neither, so such a slug, username or tag would
// otherwise reach the database as an error. What the client gets depends on what the value is:
//
//   - a path naming a slug, username or id that cannot exist: 404, as for any other name that
//     names nothing (under /feeds/, in the feed's own content type);
//   - a filter naming a tag, author or user that cannot exist (nameFilters): passed on, and the
//     list handler answers an empty list, as for any other unknown name (unstorableFilter);
//   - any other parameter (limit, cursor, status, q, ...) or a parameter name: 422 naming it.
func plainText() gin.HandlerFunc {
	return func(c *gin.Context) {
		if !isPlainText(c.Request.URL.Path) {
			if f, ok := feedFormatOf(c.Request.URL.Path); ok { // a feed reader shows no JSON
				feedNotFound(c, f)
				return
			}
			abortWith(c, http.StatusNotFound, "path", "not found")
			return
		}
		raw := c.Request.URL.RawQuery
		if isPlainText(raw) && !strings.Contains(raw, "%") {
			c.Next() // nothing escaped: nothing to decode (the common case costs no parse)
			return
		}
		for name, values := range c.Request.URL.Query() {
			for _, v := range values {
				if isPlainText(name) && (isPlainText(v) || nameFilters[name]) {
					continue
				}
				field := name
				if name == "" || !isPlainText(name) { // an error names a field clients can show
					field = "query"
				}
				abortWith(c, http.StatusUnprocessableEntity, field, "must be UTF-8 text without NUL characters")
				return
			}
		}
		c.Next()
	}
}

// nameFilters are the query parameters that filter a list by a name (a tag, an author's or a
// liker's username): a value PostgreSQL cannot store names nothing, and the list is empty.
var nameFilters = map[string]bool{"tag": true, "author": true, "favorited": true}

// unstorableFilter reports whether one of the request's name filters cannot name anything: its
// list is then empty without asking a service.
func unstorableFilter(c *gin.Context) bool {
	for name := range nameFilters {
		if !isPlainText(c.Query(name)) {
			return true
		}
	}
	return false
}

func isPlainText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
