// Package revisions is the storage room of article revisions (#32): the versions of an article's
// content that accepted edits replaced, the newest domain.MaxRevisionsKept per article. The core
// repository writes them in an edit's unit of work (Store.WriteIn, core → revisions, one way);
// the readers serve the revision use cases. This package imports no core repository.
package revisions
