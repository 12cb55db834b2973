// Package search is the search room of the storage adapters: article search (ranking over the
// window index, snippets, the anonymous hit-list cache), the backfill and reindex of search
// documents, the "did you mean" lexicon and its background pass, and the people and tag search
// boxes. It runs on its own pool (Pool) and reads articles through ArticleReader, so it imports no
// other repository package but repository/pg.
package search
