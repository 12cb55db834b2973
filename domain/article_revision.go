package domain

import "time"

// MaxRevisionsKept is how many revisions of one article are kept: the newest, older ones pruned
// in the unit of work of the edit that adds one (retention).
const MaxRevisionsKept = 50

// ArticleRevision is a version of an article's content that an accepted edit replaced: its title,
// description, body and tags as they were at Version. Summaries (lists) leave Body empty.
type ArticleRevision struct {
	ArticleID   int64
	Version     int32
	Title       string
	Description string
	Body        string
	Tags        []string
	// CreatedAt is when this version was written (the article's UpdatedAt while it was current).
	CreatedAt time.Time
}

// RevisionOf is the revision that keeps a's current content, as an edit is about to replace it.
func RevisionOf(a Article) ArticleRevision {
	return ArticleRevision{
		ArticleID: a.ID, Version: a.Version, Title: a.Title, Description: a.Description, Body: a.Body,
		Tags: a.Tags, CreatedAt: a.UpdatedAt,
	}
}

// KeepsRevisions reports whether an edit of the article keeps the version it replaces. This is
// the one place that decides by status: a published article does (hidden or not: Status is its
// author's), and so does a scheduled one (its content is already promised to readers); a draft or
// a withdrawn one does not.
func (a Article) KeepsRevisions() bool {
	return a.Status == StatusPublished || a.Status == StatusScheduled
}
