package service

import "context"

//go:generate go tool mockgen -source=search_tags.go -destination=mocks/search_tags_mock.go -package=mocks

// TagSearcher completes tag prefixes.
type TagSearcher interface {
	// SearchTags returns at most limit tags in use that start with prefix (case-insensitively),
	// the most used first.
	SearchTags(ctx context.Context, prefix string, limit int) ([]string, error)
}

// TagSearchService answers tag autocomplete.
type TagSearchService struct{ tags TagSearcher }

// NewTagSearchService returns the service.
func NewTagSearchService(tags TagSearcher) *TagSearchService { return &TagSearchService{tags: tags} }

// Tags returns the tags in use starting with prefix, the most used first.
func (s *TagSearchService) Tags(ctx context.Context, prefix string, limit int) ([]string, error) {
	tags, err := s.tags.SearchTags(ctx, prefix, limit)
	if err != nil {
		return nil, err
	}
	if tags == nil {
		tags = []string{}
	}
	return tags, nil
}
