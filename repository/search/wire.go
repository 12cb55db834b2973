package search

import "github.com/google/wire"

// ProviderSet builds the search room: article search, the "did you mean" lexicon, and the people
// and tag search boxes. The root binds ArticleReader to the core article repository.
var ProviderSet = wire.NewSet(NewRepository, NewLexicon, NewPeople, NewTags)
