package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// bindJSON decodes the request body into dst. On failure it answers the request (413 for a body
// over the limit, 422 for anything that is not the expected JSON) and returns false.
func bindJSON(c *gin.Context, dst any) bool {
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	dec := json.NewDecoder(c.Request.Body)
	err := dec.Decode(dst)
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
