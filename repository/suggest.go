package repository

import "context"

// NoSuggestions is the typo corrector until the lexicon exists (issue #17): it knows no word,
// so a query that finds nothing gets no suggestion.
type NoSuggestions struct{}

// NewNoSuggestions returns it.
func NewNoSuggestions() NoSuggestions { return NoSuggestions{} }

// Suggest corrects nothing.
func (NoSuggestions) Suggest(context.Context, []string) (map[string]string, error) { return nil, nil }
