package domain

// MaxCommentDepth is how deep replies nest: a top-level comment is at depth 1, a reply to it at
// depth 2, a reply to that at depth 3. A reply to a depth-3 comment is stored as a reply to that
// comment's parent, a sibling at depth 3 (issue #32).
const MaxCommentDepth = 3

// ReplyPlace is where a reply goes in its thread.
type ReplyPlace struct {
	ParentID int64
	RootID   int64
	Depth    int16
}

// PlaceReply places a reply to parent, of article articleID: under parent, or, when parent is
// already at MaxCommentDepth, under parent's own parent. The parent must be a live comment (not
// a placeholder) of the same article; the errors name the field parentId (422).
func PlaceReply(articleID int64, parent Comment) (ReplyPlace, error) {
	switch {
	case parent.ArticleID != articleID:
		return ReplyPlace{}, NewValidationError("parentId", "is a comment of another article")
	case parent.Deleted:
		return ReplyPlace{}, NewValidationError("parentId", "is a deleted comment")
	case parent.Depth >= MaxCommentDepth:
		return ReplyPlace{ParentID: parent.ParentID, RootID: parent.RootID, Depth: MaxCommentDepth}, nil
	}
	return ReplyPlace{ParentID: parent.ID, RootID: parent.RootID, Depth: parent.Depth + 1}, nil
}

// ParentNotFound answers a reply whose parentId names no comment (422, not 404: the article
// exists, the request names something that does not).
func ParentNotFound() error { return NewValidationError("parentId", "does not exist") }
