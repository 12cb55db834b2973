package web

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

// encodeCursor makes the opaque keyset cursor a client passes back as ?cursor=.
func encodeCursor(c *domain.Cursor) string {
	if c == nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d:%d", c.CreatedAt.UnixMicro(), c.ID))
}

// seqCursorPrefix marks a cursor of a numbered list (comments), so a list's (time, id) cursor is
// refused there and the other way round.
const seqCursorPrefix = "n:"

// encodeSeqCursor makes the cursor of a numbered list: the last number seen.
func encodeSeqCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s%d", seqCursorPrefix, seq))
}

func decodeSeqCursor(s string) (int64, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, false
	}
	n, ok := strings.CutPrefix(string(raw), seqCursorPrefix)
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq <= 0 || seq > 1<<53 {
		return 0, false
	}
	return seq, true
}

func decodeCursor(s string) (*domain.Cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	at, id, ok := strings.Cut(string(raw), ":")
	if !ok {
		return nil, false
	}
	micros, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || n <= 0 {
		return nil, false
	}
	return &domain.Cursor{CreatedAt: time.UnixMicro(micros).UTC(), ID: n}, true
}

// intParam reads an optional integer query parameter within [lo, hi], adding a message to v when
// it is malformed or out of range.
func intParam(c *gin.Context, v *domain.ValidationError, name string, def, lo, hi int) int {
	s, ok := c.GetQuery(name)
	if !ok || s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		v.Add(name, "must be a whole number")
		return def
	}
	if n < lo || n > hi {
		v.Add(name, fmt.Sprintf("must be between %d and %d", lo, hi))
		return def
	}
	return n
}

// pageParams reads limit, offset and cursor. On bad values it answers 422 and returns false.
func pageParams(c *gin.Context) (domain.Page, bool) {
	v := &domain.ValidationError{}
	p := domain.Page{
		Limit:  intParam(c, v, "limit", domain.DefaultPageLimit, 1, domain.MaxPageLimit),
		Offset: intParam(c, v, "offset", 0, 0, domain.MaxPageOffset),
	}
	if s := c.Query("cursor"); s != "" {
		cur, ok := decodeCursor(s)
		if !ok {
			v.Add("cursor", "is not a cursor this API returned")
		}
		p.Cursor = cur
	}
	if v.OrNil() != nil {
		c.AbortWithStatusJSON(http.StatusUnprocessableEntity, errorBody{Errors: v.Fields})
		return domain.Page{}, false
	}
	return p, true
}
