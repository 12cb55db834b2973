package service

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=search.go -destination=mocks/search_mock.go -package=mocks

// SearchQuery is one page of an article search as the repository runs it.
type SearchQuery struct {
	Terms    domain.SearchTerms
	Tag      string
	AuthorID int64 // resolved; 0: any author
	Limit    int
	After    *domain.SearchCursor // nil: the first page
	// Shared may be served from, and stored in, the short-lived cache of hit lists: the reader is
	// anonymous. A signed-in reader always reads PostgreSQL, so an author finds what they just
	// published at once.
	Shared bool
}

// SearchPage is one page of hits, best first. Total counts the hits up to domain.SearchDepth;
// Next is set when a further page may exist. Counters, when not nil, are the hits' counters as
// the search read them from the store (a page served from a cache leaves them to the views).
type SearchPage struct {
	Hits     []domain.SearchHit
	Total    int64
	Next     *domain.SearchCursor
	Counters map[int64]domain.Counters
}

// SearchRepository finds published articles.
type SearchRepository interface {
	Search(ctx context.Context, q SearchQuery) (SearchPage, error)
}

// Suggester corrects misspelt words: for each of words it knows a closer indexed word for, the
// map holds word → correction. Words it has nothing for are left out.
type Suggester interface {
	Suggest(ctx context.Context, words []string) (map[string]string, error)
}

// SearchService answers article searches.
type SearchService struct {
	repo     SearchRepository
	suggest  Suggester
	articles *ArticleService // views: authors, counters and the viewer's flags, batched as in every list
}

// NewSearchService returns the use case.
func NewSearchService(repo SearchRepository, suggest Suggester, articles *ArticleService) *SearchService {
	return &SearchService{repo: repo, suggest: suggest, articles: articles}
}

// SearchInput is a search request: q in the user syntax (words, "phrases", -excluded, or),
// optional tag and author username, and the page.
type SearchInput struct {
	Q, Tag, Author string
	Limit          int
	After          *domain.SearchCursor
	// NoApply keeps a suggestion as a suggestion: the answer has the original query's (empty)
	// results.
	NoApply bool
}

// SearchResultHit is one found article as the viewer sees it, with its snippet.
type SearchResultHit struct {
	View    domain.ArticleView
	Snippet string // plain text with domain.SnippetStart/SnippetStop marks
}

// SearchResult is one page of an answer. Suggestion is the corrected query when q found nothing
// and some of its words have a closer indexed word; SuggestionApplied says the hits are the
// suggestion's.
type SearchResult struct {
	Hits              []SearchResultHit
	Total             int64
	Next              *domain.SearchCursor
	Suggestion        string
	SuggestionApplied bool
}

// Articles searches published articles. An unknown author finds nothing; a query of stop words
// only finds nothing, without an error. Suggestions are looked for only when a first page is
// empty: a later page of a query that found something never needs one.
func (s *SearchService) Articles(ctx context.Context, viewerID int64, in SearchInput) (SearchResult, error) {
	terms, err := domain.ParseSearchQuery(in.Q)
	if err != nil {
		return SearchResult{}, err
	}
	q := SearchQuery{Terms: terms, Tag: in.Tag, Limit: in.Limit, After: in.After, Shared: viewerID == 0}
	if in.Author != "" {
		u, err := s.articles.users.GetByUsername(ctx, in.Author)
		if errors.Is(err, domain.ErrNotFound) {
			return SearchResult{Hits: []SearchResultHit{}}, nil
		}
		if err != nil {
			return SearchResult{}, err
		}
		q.AuthorID = u.ID
	}
	page, err := s.repo.Search(ctx, q)
	if err != nil {
		return SearchResult{}, err
	}
	var out SearchResult
	if len(page.Hits) == 0 && q.After == nil {
		corrected, ok, err := s.suggestion(ctx, in.Q)
		if err != nil {
			return SearchResult{}, err
		}
		if ok {
			out.Suggestion = corrected
			if !in.NoApply {
				if q.Terms, err = domain.ParseSearchQuery(corrected); err != nil {
					return SearchResult{}, err
				}
				if page, err = s.repo.Search(ctx, q); err != nil {
					return SearchResult{}, err
				}
				out.SuggestionApplied = true
			}
		}
	}
	out.Total, out.Next = page.Total, page.Next
	out.Hits, err = s.hits(ctx, viewerID, page)
	return out, err
}

// hits assembles the views of a page with the batched lookups of any list, less the counters
// when the search read them.
func (s *SearchService) hits(ctx context.Context, viewerID int64, page SearchPage) ([]SearchResultHit, error) {
	arts := make([]domain.Article, len(page.Hits))
	snippets := make(map[int64]string, len(page.Hits))
	for i, h := range page.Hits {
		arts[i] = h.Article
		snippets[h.Article.ID] = h.Snippet
	}
	views, err := s.articles.viewsCounted(ctx, viewerID, arts, page.Counters)
	if err != nil {
		return nil, err
	}
	out := make([]SearchResultHit, len(views))
	for i, v := range views {
		out[i] = SearchResultHit{View: v, Snippet: snippets[v.ID]}
	}
	return out, nil
}

// suggestion is q with each word the suggester corrects replaced by its correction, or false
// when it corrects none. Words are compared in lower case; operators and quotes stay as typed.
func (s *SearchService) suggestion(ctx context.Context, q string) (string, bool, error) {
	seen := map[string]bool{}
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), notWordRune) {
		if w != "or" && !seen[w] && !hasCJK(w) {
			seen[w] = true
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return "", false, nil
	}
	fixes, err := s.suggest.Suggest(ctx, words)
	if err != nil || len(fixes) == 0 {
		return "", false, err
	}
	var b strings.Builder
	changed := false
	rs := []rune(q)
	for i := 0; i < len(rs); {
		if notWordRune(rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && !notWordRune(rs[j]) {
			j++
		}
		w := string(rs[i:j])
		if fix, ok := fixes[strings.ToLower(w)]; ok && fix != "" && !strings.EqualFold(fix, w) {
			w, changed = fix, true
		}
		b.WriteString(w)
		i = j
	}
	return b.String(), changed, nil
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

func hasCJK(w string) bool { return strings.IndexFunc(w, domain.IsCJK) >= 0 }
