package service

import (
	"context"
	"errors"

	"github.com/inkwell-dev/inkwell/domain"
)

// Threaded comments (issue #32). A reply is added by Add with a parentID; the repository places it
// (domain.PlaceReply) under the parent's row lock. The article's list stays in comment order
// (seq), which is a threadable order: a parent always precedes its replies. Comments are not
// cached anywhere, so a reply, an edit or a delete shows on every instance at once.

// Edit replaces the body of viewerID's own comment commentID on the article slug and marks it
// edited: the body rules are those of Add (422), a missing comment or a placeholder is
// ErrNotFound, another user's comment ErrForbidden, and an article author who blocks the viewer
// refuses the edit as they refuse a new comment.
func (s *CommentService) Edit(ctx context.Context, viewerID int64, slug string, commentID int64, body string) (domain.CommentView, error) {
	a, err := s.commentable(ctx, viewerID, slug, body)
	if err != nil {
		return domain.CommentView{}, err
	}
	c, err := s.comments.Get(ctx, commentID)
	if err != nil {
		return domain.CommentView{}, err
	}
	if c.ArticleID != a.ID || c.Deleted {
		return domain.CommentView{}, domain.ErrNotFound
	}
	if c.AuthorID != viewerID {
		return domain.CommentView{}, domain.ErrForbidden
	}
	return s.add(ctx, viewerID, c, func(ctx context.Context, c domain.Comment) (domain.Comment, error) {
		return s.comments.Edit(ctx, c.ID, body)
	})
}

// Replies returns one page of comment parentID's direct replies, oldest first, with ids after
// afterID, at most limit; the same viewer rules as List (blocked authors left out and the page
// refilled, hidden comments their author's alone). The parent must be a comment of the article
// (ErrNotFound otherwise); a placeholder's replies are listed like any.
func (s *CommentService) Replies(ctx context.Context, viewerID int64, slug string, parentID, afterID int64, limit int) (CommentList, error) {
	a, err := s.readable(ctx, viewerID, slug)
	if err != nil {
		return CommentList{}, err
	}
	parent, err := s.comments.Get(ctx, parentID)
	if err != nil {
		return CommentList{}, err
	}
	if parent.ArticleID != a.ID {
		return CommentList{}, domain.ErrNotFound
	}
	return s.page(ctx, viewerID, afterID, limit,
		func(ctx context.Context, after int64, n int) ([]domain.Comment, error) {
			return s.comments.Replies(ctx, parentID, after, n)
		},
		func(c domain.Comment) int64 { return c.ID })
}

// answerable refuses a reply to a comment viewerID cannot see: a hidden comment (or one of a
// suspended account) is its author's alone, so to anyone else it does not exist (422 parentId).
// The rest (same article, not a placeholder, the depth) is checked by the repository under the
// parent's row lock. parentID 0 (a top-level comment) needs nothing.
func (s *CommentService) answerable(ctx context.Context, viewerID, parentID int64) error {
	if parentID == 0 {
		return nil
	}
	parent, err := s.comments.Get(ctx, parentID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ParentNotFound()
	}
	if err != nil {
		return err
	}
	if parent.Moderation.Hidden && parent.AuthorID != viewerID {
		return domain.ParentNotFound()
	}
	return nil
}
