package web

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=search.go -destination=mocks/search_mock.go -package=mocks

// SearchService is what the search handlers need.
type SearchService interface {
	Articles(ctx context.Context, viewerID int64, in service.SearchInput) (service.SearchResult, error)
}

// SearchHandler serves /api/search/*.
type SearchHandler struct {
	search SearchService
	log    *slog.Logger
}

// NewSearchHandler returns the handler.
func NewSearchHandler(search SearchService, log *slog.Logger) *SearchHandler {
	return &SearchHandler{search: search, log: log}
}

type searchArticleJSON struct {
	articleJSON
	Snippet string `json:"snippet"`
}

type searchArticlesEnvelope struct {
	Articles          []searchArticleJSON `json:"articles"`
	ArticlesCount     int64               `json:"articlesCount"`
	NextCursor        string              `json:"nextCursor,omitempty"`
	Suggestion        string              `json:"suggestion,omitempty"`
	SuggestionApplied bool                `json:"suggestionApplied"`
}

// Articles handles GET /api/search/articles?q=&tag=&author=&limit=&cursor=&suggest=.
func (h *SearchHandler) Articles(c *gin.Context) {
	v := &domain.ValidationError{}
	q := c.Query("q")
	if _, err := domain.ParseSearchQuery(q); err != nil {
		writeError(c, h.log, err)
		return
	}
	in := service.SearchInput{Q: q, Tag: c.Query("tag"), Author: c.Query("author"),
		Limit: intParam(c, v, "limit", domain.DefaultPageLimit, 1, domain.MaxPageLimit)}
	if s := c.Query("cursor"); s != "" {
		cur, ok := decodeSearchCursor(s)
		if !ok {
			v.Add("cursor", "is not a cursor this API returned")
		}
		in.After = cur
	}
	switch c.Query("suggest") {
	case "", "true":
	case "false":
		in.NoApply = true
	default:
		v.Add("suggest", "must be true or false")
	}
	if err := v.OrNil(); err != nil {
		writeError(c, h.log, err)
		return
	}
	if unstorableFilter(c) {
		renderJSON(c, http.StatusOK, searchArticlesEnvelope{Articles: []searchArticleJSON{}})
		return
	}
	res, err := h.search.Articles(c.Request.Context(), viewerID(c), in)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := searchArticlesEnvelope{Articles: make([]searchArticleJSON, len(res.Hits)), ArticlesCount: res.Total,
		NextCursor: encodeSearchCursor(res.Next), Suggestion: res.Suggestion, SuggestionApplied: res.SuggestionApplied}
	for i, hit := range res.Hits {
		out.Articles[i] = searchArticleJSON{articleJSON: articleOf(hit.View, false), Snippet: snippetHTML(hit.Snippet)}
	}
	renderJSON(c, http.StatusOK, out)
}

// snippetHTML escapes a snippet for HTML and turns its marks into <mark> elements: the text is
// the article's, so nothing in it may become markup.
func snippetHTML(s string) string {
	return strings.NewReplacer(string(domain.SnippetStart), "<mark>", string(domain.SnippetStop), "</mark>").
		Replace(html.EscapeString(s))
}

// searchCursorVersion starts every search cursor, so a list's cursor is refused here (and a
// later format can be told apart: s1 cursors, without the snapshot's place, are refused).
const searchCursorVersion = "s2"

// encodeSearchCursor makes the opaque cursor of a search page: the snapshot (time and place),
// the last hit's exact score and id, and the first page's count.
func encodeSearchCursor(c *domain.SearchCursor) string {
	if c == nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d:%s:%d:%d", searchCursorVersion,
		c.Snapshot.UnixMicro(), c.SnapshotSeq, strconv.FormatFloat(c.Score, 'g', -1, 64), c.ID, c.Total))
}

func decodeSearchCursor(s string) (*domain.SearchCursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 6 || parts[0] != searchCursorVersion {
		return nil, false
	}
	micros, err1 := strconv.ParseInt(parts[1], 10, 64)
	seq, err2 := strconv.ParseInt(parts[2], 10, 64)
	score, err3 := strconv.ParseFloat(parts[3], 64)
	id, err4 := strconv.ParseInt(parts[4], 10, 64)
	total, err5 := strconv.ParseInt(parts[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || seq < 0 || id <= 0 || total < 0 ||
		math.IsNaN(score) || math.IsInf(score, 0) || score < 0 {
		return nil, false
	}
	at := time.UnixMicro(micros).UTC()
	if at.Year() < 2000 || at.Year() > 9999 {
		return nil, false
	}
	return &domain.SearchCursor{Snapshot: at, SnapshotSeq: seq, Score: score, ID: id, Total: total}, true
}
