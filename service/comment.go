package service

import (
	"context"
	"errors"
	"slices"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=comment.go -destination=mocks/comment_mock.go -package=mocks

// CommentRepository stores comments, numbering each article's comments 1, 2, 3, ...
type CommentRepository interface {
	Create(ctx context.Context, c domain.Comment) (domain.Comment, error)
	// CreateIn is Create in the caller's unit of work.
	CreateIn(ctx context.Context, tx Tx, c domain.Comment) (domain.Comment, error)
	List(ctx context.Context, articleID, afterSeq int64, limit int) ([]domain.Comment, error)
	Get(ctx context.Context, id int64) (domain.Comment, error)
	// Delete removes a comment without replies, and leaves a placeholder of one with replies.
	Delete(ctx context.Context, id int64) error
	// Edit replaces a live comment's body and marks it edited (ErrNotFound for a placeholder).
	Edit(ctx context.Context, id int64, body string) (domain.Comment, error)
	// Replies lists one comment's direct replies with ids after afterID, oldest first.
	Replies(ctx context.Context, parentID, afterID int64, limit int) ([]domain.Comment, error)
}

// CommentService adds, lists and deletes comments on articles.
type CommentService struct {
	articles ArticleRepository
	comments CommentRepository
	users    UserRepository
	follows  FollowRepository
	idem     Idempotency
	blocks   BlockedSets
}

// NewCommentService returns a CommentService over its ports.
func NewCommentService(articles ArticleRepository, comments CommentRepository, users UserRepository, follows FollowRepository, idem Idempotency, blocks BlockedSets) *CommentService {
	return &CommentService{articles: articles, comments: comments, users: users, follows: follows, idem: idem, blocks: blocks}
}

// MaxCommentsPerRequest bounds one list of comments, also when the client asks for "all".
const MaxCommentsPerRequest = 1000

// Add comments on a readable article as viewerID; the comment gets the article's next number.
// parentID, when not 0, names the comment of the same article it answers (comment_threads.go).
func (s *CommentService) Add(ctx context.Context, viewerID int64, slug, body string, parentID int64) (domain.CommentView, error) {
	a, err := s.commentable(ctx, viewerID, slug, body)
	if err == nil {
		err = s.answerable(ctx, viewerID, parentID)
	}
	if err != nil {
		return domain.CommentView{}, err
	}
	return s.add(ctx, viewerID, domain.Comment{ArticleID: a.ID, AuthorID: viewerID, Body: body, ParentID: parentID}, s.comments.Create)
}

// AddIdempotent is Add under an Idempotency-Key: the comment and the rendered answer commit
// together, and a retry gets that answer back.
func (s *CommentService) AddIdempotent(ctx context.Context, viewerID int64, slug, body string, parentID int64, idem Idempotent[domain.CommentView]) (domain.StoredResponse, bool, error) {
	// Everything the answer needs besides the new row is read before the unit of work opens: inside
	// it, a lookup on the pool while the transaction holds a connection could wait for a connection
	// that only the waiting transactions hold.
	type prepared struct {
		c      domain.Comment
		author domain.User
	}
	return runIdempotent(ctx, s.idem, idem,
		func() (prepared, error) {
			a, err := s.commentable(ctx, viewerID, slug, body)
			if err == nil {
				err = s.answerable(ctx, viewerID, parentID)
			}
			if err != nil {
				return prepared{}, err
			}
			author, err := s.users.GetByID(ctx, viewerID)
			if errors.Is(err, domain.ErrNotFound) {
				err = domain.ErrUnauthorized // the account vanished mid-request
			}
			return prepared{c: domain.Comment{ArticleID: a.ID, AuthorID: viewerID, Body: body, ParentID: parentID}, author: author}, err
		},
		func(ctx context.Context, tx Tx, p prepared) (domain.CommentView, error) {
			created, err := s.comments.CreateIn(ctx, tx, p.c)
			if err != nil {
				return domain.CommentView{}, err
			}
			return domain.CommentView{Comment: created, Author: domain.ProfileOf(p.author, false)}, nil // one's own comment
		})
}

// commentable validates a comment's body and returns the article it goes on, if viewerID may
// read it and its author does not block viewerID (403). The block is read from the author's
// cached set, which a block drops on every instance before it answers; a comment already past
// this check when a block commits may still land (it is left out of the blocker's view like any
// comment of theirs).
func (s *CommentService) commentable(ctx context.Context, viewerID int64, slug, body string) (domain.Article, error) {
	v := &domain.ValidationError{}
	domain.ValidateComment(v, body)
	if err := v.OrNil(); err != nil {
		return domain.Article{}, err
	}
	a, err := s.readable(ctx, viewerID, slug)
	if err != nil {
		return domain.Article{}, err
	}
	if a.AuthorID != viewerID {
		blocked, err := blocks(ctx, s.blocks, a.AuthorID, viewerID)
		if err != nil {
			return domain.Article{}, err
		}
		if blocked {
			return domain.Article{}, domain.ErrBlockedByTarget
		}
	}
	return a, nil
}

func (s *CommentService) add(ctx context.Context, viewerID int64, c domain.Comment,
	insert func(ctx context.Context, c domain.Comment) (domain.Comment, error),
) (domain.CommentView, error) {
	created, err := insert(ctx, c)
	if err != nil {
		return domain.CommentView{}, err
	}
	views, err := s.views(ctx, viewerID, []domain.Comment{created})
	if err != nil {
		return domain.CommentView{}, err
	}
	return views[0], nil
}

// CommentList is one page of an article's comments.
type CommentList struct {
	Comments []domain.CommentView
	// NextAfter, when not 0, is the seq to list after for the next page: more comments follow.
	// It is the page's last stored comment, shown or not (one whose author is gone is left out).
	NextAfter int64
}

// List returns an article's comments in order, those numbered after afterSeq, at most limit.
func (s *CommentService) List(ctx context.Context, viewerID int64, slug string, afterSeq int64, limit int) (CommentList, error) {
	a, err := s.readable(ctx, viewerID, slug)
	if err != nil {
		return CommentList{}, err
	}
	return s.page(ctx, viewerID, afterSeq, limit,
		func(ctx context.Context, after int64, n int) ([]domain.Comment, error) {
			return s.comments.List(ctx, a.ID, after, n)
		},
		func(c domain.Comment) int64 { return c.Seq })
}

// page reads one page of comments through read (after the key after, n rows at most), leaving out
// those by users the viewer blocks and refilling the page after them (at most MaxRefillRounds
// reads of the page's size); key is the order the page follows and its cursor.
func (s *CommentService) page(ctx context.Context, viewerID, after int64, limit int,
	read func(ctx context.Context, after int64, n int) ([]domain.Comment, error), key func(domain.Comment) int64) (CommentList, error) {
	if limit <= 0 || limit > MaxCommentsPerRequest {
		limit = MaxCommentsPerRequest
	}
	blocked, err := blockedSet(ctx, s.blocks, viewerID)
	if err != nil {
		return CommentList{}, err
	}
	cs, next, more, err := filterRefill(ctx, limit, after,
		func(ctx context.Context, after int64, n int) ([]domain.Comment, bool, error) {
			cs, err := read(ctx, after, n+1)
			if err != nil {
				return nil, false, err
			}
			cs, more := domain.CutPage(cs, n)
			return cs, more, nil
		},
		func(c domain.Comment) bool { return !blocked.Has(c.AuthorID) },
		key)
	if err != nil {
		return CommentList{}, err
	}
	views, err := s.views(ctx, viewerID, cs)
	if err != nil {
		return CommentList{}, err
	}
	out := CommentList{Comments: views}
	if more {
		out.NextAfter = next
	}
	return out, nil
}

// Delete removes a comment; only the comment's author may.
func (s *CommentService) Delete(ctx context.Context, viewerID int64, slug string, commentID int64) error {
	a, err := s.readable(ctx, viewerID, slug)
	if err != nil {
		return err
	}
	c, err := s.comments.Get(ctx, commentID)
	if err != nil {
		return err
	}
	if c.ArticleID != a.ID || c.Deleted {
		return domain.ErrNotFound
	}
	if c.AuthorID != viewerID {
		return domain.ErrForbidden
	}
	return s.comments.Delete(ctx, commentID)
}

func (s *CommentService) readable(ctx context.Context, viewerID int64, slug string) (domain.Article, error) {
	return loadVisible(ctx, s.articles, viewerID, slug)
}

func (s *CommentService) views(ctx context.Context, viewerID int64, cs []domain.Comment) ([]domain.CommentView, error) {
	out := make([]domain.CommentView, 0, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	authorIDs := uniqueIDs(slices.DeleteFunc(slices.Clone(cs), func(c domain.Comment) bool { return c.Deleted }),
		func(c domain.Comment) int64 { return c.AuthorID })
	authors, err := s.users.GetByIDs(ctx, authorIDs)
	if err != nil {
		return nil, err
	}
	var following map[int64]bool
	if viewerID != 0 {
		if following, err = s.follows.FollowingAmong(ctx, viewerID, authorIDs); err != nil {
			return nil, err
		}
	}
	for _, c := range cs {
		if c.Deleted { // a placeholder: no body, no author (hidden ones stay hidden, below)
			if !c.Moderation.Hidden {
				out = append(out, domain.CommentView{Comment: c})
			}
			continue
		}
		author, ok := authors[c.AuthorID]
		if !ok {
			continue
		}
		// A hidden comment, and every comment of a suspended account, is its author's alone. A
		// page may come out shorter; the cursor still follows the stored comments.
		if (c.Moderation.Hidden || !author.Suspension.Lifted()) && c.AuthorID != viewerID {
			continue
		}
		out = append(out, domain.CommentView{Comment: c, Author: domain.ProfileOf(author, following[c.AuthorID])})
	}
	return out, nil
}
