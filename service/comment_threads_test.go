package service_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestCommentService_Reply(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	s, d := newCommentService(t)
	d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
	d.comments.EXPECT().Get(gomock.Any(), int64(49)).Return(commentOn(49, published.ID, 1, writer.ID), nil)
	stored := commentOn(50, published.ID, 2, reader.ID)
	stored.ParentID, stored.RootID, stored.Depth = 49, 49, 2
	d.comments.EXPECT().Create(gomock.Any(), domain.Comment{ArticleID: published.ID, AuthorID: reader.ID, Body: "re", ParentID: 49}).Return(stored, nil)
	d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
	d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.Any()).Return(map[int64]bool{}, nil).MaxTimes(1)
	v, err := s.Add(context.Background(), reader.ID, published.Slug, "re", 49)
	if err != nil || v.ParentID != 49 || v.Depth != 2 {
		t.Fatalf("reply = %+v, %v", v, err)
	}
}

func TestCommentService_ReplyToAHiddenComment(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	hidden := commentOn(49, published.ID, 1, writer.ID)
	hidden.Moderation = domain.ContentModeration{Hidden: true, Reason: "rude"}
	for name, get := range map[string]func(d commentDeps){
		"hidden from the viewer": func(d commentDeps) { d.comments.EXPECT().Get(gomock.Any(), int64(49)).Return(hidden, nil) },
		"missing": func(d commentDeps) {
			d.comments.EXPECT().Get(gomock.Any(), int64(49)).Return(domain.Comment{}, domain.ErrNotFound)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, d := newCommentService(t)
			d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
			get(d)
			noCommentWrites(d)
			_, err := s.Add(context.Background(), reader.ID, published.Slug, "re", 49)
			requireValidation(t, err, map[string][]string{"parentId": {"does not exist"}})
		})
	}
}

func TestCommentService_Edit(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	other := articleBy(2, writer.ID, domain.StatusPublished)
	own := commentOn(60, published.ID, 1, reader.ID)
	theirs := commentOn(61, published.ID, 2, writer.ID)
	placeholder := domain.Comment{ID: 62, ArticleID: published.ID, Seq: 3, Deleted: true, RepliesCount: 1}
	elsewhere := commentOn(63, other.ID, 1, reader.ID)

	noEdit := func(d commentDeps) { d.comments.EXPECT().Edit(gomock.Any(), gomock.Any(), gomock.Any()).Times(0) }
	tests := []struct {
		name       string
		id         int64
		body       string
		buildStubs func(d commentDeps)
		check      func(t *testing.T, v domain.CommentView, err error)
	}{
		{
			name: "one's own comment is edited and comes back edited",
			id:   own.ID, body: "better",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), own.ID).Return(own, nil)
				edited := own
				edited.Body, edited.Edited = "better", true
				d.comments.EXPECT().Edit(gomock.Any(), own.ID, "better").Return(edited, nil)
				d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.Any()).Return(map[int64]bool{}, nil).MaxTimes(1)
			},
			check: func(t *testing.T, v domain.CommentView, err error) {
				if err != nil || v.Body != "better" || !v.Edited || v.Author.Username != reader.Username {
					t.Errorf("Edit = %+v, %v", v, err)
				}
			},
		},
		{
			name: "someone else's comment is forbidden",
			id:   theirs.ID, body: "mine now",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), theirs.ID).Return(theirs, nil)
				noEdit(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) { requireErrorIs(t, err, domain.ErrForbidden) },
		},
		{
			name: "a placeholder is not found",
			id:   placeholder.ID, body: "back",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), placeholder.ID).Return(placeholder, nil)
				noEdit(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "another article's comment is not found",
			id:   elsewhere.ID, body: "x",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), elsewhere.ID).Return(elsewhere, nil)
				noEdit(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "a blank or oversized body is refused before anything is read",
			id:   own.ID, body: strings.Repeat("c", domain.MaxCommentLen+1),
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
				d.comments.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
				noEdit(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) {
				requireValidation(t, err, map[string][]string{"body": {"is too long (maximum is 10000 characters)"}})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCommentService(t)
			tc.buildStubs(d)
			v, err := s.Edit(context.Background(), reader.ID, published.Slug, tc.id, tc.body)
			tc.check(t, v, err)
		})
	}
}

func TestCommentService_Replies(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	other := articleBy(2, writer.ID, domain.StatusPublished)
	blockedUser := domain.User{ID: 99, Username: "blocked"}

	t.Run("a page of replies: placeholders without an author, blocked authors left out and refilled", func(t *testing.T) {
		t.Parallel()
		s, d := newCommentService(t)
		d.blocks.block(reader.ID, blockedUser.ID)
		parent := commentOn(70, published.ID, 1, writer.ID)
		placeholder := domain.Comment{ID: 71, ArticleID: published.ID, Seq: 2, ParentID: 70, Deleted: true, RepliesCount: 2}
		byBlocked := commentOn(72, published.ID, 3, blockedUser.ID)
		byWriter := commentOn(73, published.ID, 4, writer.ID)
		d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
		d.comments.EXPECT().Get(gomock.Any(), parent.ID).Return(parent, nil)
		gomock.InOrder(
			d.comments.EXPECT().Replies(gomock.Any(), parent.ID, int64(0), 3).Return([]domain.Comment{placeholder, byBlocked, byWriter}, nil),
			// The blocked author's reply left out, the page is refilled after it.
			d.comments.EXPECT().Replies(gomock.Any(), parent.ID, byBlocked.ID, gomock.Any()).Return([]domain.Comment{byWriter}, nil),
		)
		d.users.EXPECT().GetByIDs(gomock.Any(), []int64{writer.ID}).Return(map[int64]domain.User{writer.ID: writer}, nil)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.Any()).Return(map[int64]bool{}, nil)
		l, err := s.Replies(context.Background(), reader.ID, published.Slug, parent.ID, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Comments) != 2 || l.Comments[0].ID != placeholder.ID || l.Comments[0].Author.Username != "" || l.Comments[1].ID != byWriter.ID || l.NextAfter != 0 {
			t.Errorf("page = %+v", l)
		}
	})

	t.Run("a comment of another article is not found", func(t *testing.T) {
		t.Parallel()
		s, d := newCommentService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
		d.comments.EXPECT().Get(gomock.Any(), int64(80)).Return(commentOn(80, other.ID, 1, writer.ID), nil)
		d.comments.EXPECT().Replies(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		_, err := s.Replies(context.Background(), reader.ID, published.Slug, 80, 0, 10)
		requireErrorIs(t, err, domain.ErrNotFound)
	})
}

func TestCommentService_DeletePlaceholderIsNotFound(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	s, d := newCommentService(t)
	d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
	d.comments.EXPECT().Get(gomock.Any(), int64(90)).Return(domain.Comment{ID: 90, ArticleID: published.ID, Deleted: true}, nil)
	d.comments.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
	requireErrorIs(t, s.Delete(context.Background(), reader.ID, published.Slug, 90), domain.ErrNotFound)
}
