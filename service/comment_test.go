package service_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type commentDeps struct {
	articles *mocks.MockArticleRepository
	comments *mocks.MockCommentRepository
	users    *mocks.MockUserRepository
	follows  *mocks.MockFollowRepository
	idem     *mocks.MockIdempotency
	blocks   *fakeBlocks
}

func newCommentService(t *testing.T) (*service.CommentService, commentDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := commentDeps{
		articles: mocks.NewMockArticleRepository(ctrl),
		comments: mocks.NewMockCommentRepository(ctrl),
		users:    mocks.NewMockUserRepository(ctrl),
		follows:  mocks.NewMockFollowRepository(ctrl),
		idem:     mocks.NewMockIdempotency(ctrl),
		blocks:   &fakeBlocks{},
	}
	return service.NewCommentService(d.articles, d.comments, d.users, d.follows, d.idem, d.blocks), d
}

// commentOn is comment id, number seq on articleID, by authorID.
func commentOn(id, articleID, seq, authorID int64) domain.Comment {
	at := articleEpoch.Add(time.Duration(seq) * time.Second)
	return domain.Comment{ID: id, ArticleID: articleID, Seq: seq, AuthorID: authorID, Body: fmt.Sprintf("comment %d", id), CreatedAt: at, UpdatedAt: at}
}

// noCommentWrites proves nothing was stored or removed, and no author looked up.
func noCommentWrites(d commentDeps) {
	d.comments.EXPECT().Create(gomock.Any(), gomock.Any()).Times(0)
	d.comments.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
	d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
}

func TestCommentService_Add(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	draft := articleBy(2, writer.ID, domain.StatusDraft)
	ownDraft := articleBy(3, reader.ID, domain.StatusDraft)

	tests := []struct {
		name       string
		slug, body string
		buildStubs func(d commentDeps)
		check      func(t *testing.T, v domain.CommentView, err error)
	}{
		{
			name: "stores the comment verbatim as the viewer's and returns it with the viewer's profile",
			slug: published.Slug,
			body: "  Thank you so much!\n",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				stored := domain.Comment{ID: 40, ArticleID: published.ID, Seq: 3, AuthorID: reader.ID, Body: "  Thank you so much!\n", CreatedAt: articleEpoch, UpdatedAt: articleEpoch}
				d.comments.EXPECT().Create(gomock.Any(), domain.Comment{ArticleID: published.ID, AuthorID: reader.ID, Body: "  Thank you so much!\n"}).
					Return(stored, nil)
				d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.Any()).Return(map[int64]bool{}, nil).MaxTimes(1)
			},
			check: func(t *testing.T, v domain.CommentView, err error) {
				if err != nil {
					t.Fatalf("Add: %v", err)
				}
				want := domain.CommentView{
					Comment: domain.Comment{ID: 40, ArticleID: published.ID, Seq: 3, AuthorID: reader.ID, Body: "  Thank you so much!\n", CreatedAt: articleEpoch, UpdatedAt: articleEpoch},
					Author:  domain.ProfileOf(reader, false),
				}
				if !reflect.DeepEqual(v, want) {
					t.Errorf("view = %+v, want %+v", v, want)
				}
			},
		},
		{
			name: "the author may comment on their own draft",
			slug: ownDraft.Slug,
			body: "note to self",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), ownDraft.Slug).Return(ownDraft, nil)
				d.comments.EXPECT().Create(gomock.Any(), domain.Comment{ArticleID: ownDraft.ID, AuthorID: reader.ID, Body: "note to self"}).
					Return(commentOn(41, ownDraft.ID, 1, reader.ID), nil)
				d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.Any()).Return(map[int64]bool{}, nil).MaxTimes(1)
			},
			check: func(t *testing.T, v domain.CommentView, err error) {
				if err != nil || v.ID != 41 || v.Author.Username != reader.Username {
					t.Errorf("Add = (%+v, %v), want comment 41 by reader", v, err)
				}
			},
		},
		{
			name: "a blank body is refused before the article is read",
			slug: published.Slug,
			body: " \n\t",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
				noCommentWrites(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) {
				requireValidation(t, err, map[string][]string{"body": {"can't be blank"}})
			},
		},
		{
			name: "an oversized body is refused before the article is read",
			slug: published.Slug,
			body: strings.Repeat("c", domain.MaxCommentLen+1),
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
				noCommentWrites(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) {
				requireValidation(t, err, map[string][]string{"body": {"is too long (maximum is 10000 characters)"}})
			},
		},
		{
			name: "someone else's draft is not found",
			slug: draft.Slug,
			body: "first!",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				noCommentWrites(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "an unknown article is not found",
			slug: "nope",
			body: "first!",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "nope").Return(domain.Article{}, fmt.Errorf("get: %w", domain.ErrNotFound))
				noCommentWrites(d)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "a failing insert is returned",
			slug: published.Slug,
			body: "first!",
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Create(gomock.Any(), gomock.Any()).Return(domain.Comment{}, errStorage)
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.CommentView, err error) { requireErrorIs(t, err, errStorage) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCommentService(t)
			tc.buildStubs(d)
			v, err := s.Add(context.Background(), reader.ID, tc.slug, tc.body, 0)
			tc.check(t, v, err)
		})
	}
}

func TestCommentService_List(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	draft := articleBy(2, writer.ID, domain.StatusDraft)
	comments := []domain.Comment{
		commentOn(10, published.ID, 6, writer.ID),
		commentOn(11, published.ID, 7, critic.ID),
		commentOn(12, published.ID, 8, writer.ID),
	}
	authors := map[int64]domain.User{writer.ID: writer, critic.ID: critic}

	tests := []struct {
		name          string
		viewerID      int64
		slug          string
		afterSeq      int64
		limit         int
		wantRepoLimit int // 0: the repository is not asked
		buildStubs    func(d commentDeps)
		check         func(t *testing.T, vs []domain.CommentView, err error)
	}{
		{
			name: "signed-in viewer gets comments after a number with follow flags, one lookup of each kind",
			// viewer reader follows critic but not writer
			viewerID: reader.ID, slug: published.Slug, afterSeq: 5, limit: 3, wantRepoLimit: 3,
			buildStubs: func(d commentDeps) {
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.InAnyOrder([]int64{writer.ID, critic.ID})).Return(authors, nil).Times(1)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.InAnyOrder([]int64{writer.ID, critic.ID})).
					Return(map[int64]bool{critic.ID: true}, nil).Times(1)
			},
			check: func(t *testing.T, vs []domain.CommentView, err error) {
				if err != nil {
					t.Fatalf("List: %v", err)
				}
				want := []domain.CommentView{
					{Comment: comments[0], Author: domain.ProfileOf(writer, false)},
					{Comment: comments[1], Author: domain.ProfileOf(critic, true)},
					{Comment: comments[2], Author: domain.ProfileOf(writer, false)},
				}
				if !reflect.DeepEqual(vs, want) {
					t.Errorf("comments =\n  %+v\nwant\n  %+v", vs, want)
				}
			},
		},
		{
			name:     "anonymous viewer is never asked about follows",
			viewerID: 0, slug: published.Slug, wantRepoLimit: service.MaxCommentsPerRequest,
			buildStubs: func(d commentDeps) {
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(authors, nil)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, vs []domain.CommentView, err error) {
				if err != nil || len(vs) != 3 || vs[1].Author.Following {
					t.Errorf("List = (%+v, %v), want 3 comments, none with a follow flag", vs, err)
				}
			},
		},
		{name: "limit 0 means the most allowed", viewerID: 0, slug: published.Slug, limit: 0, wantRepoLimit: service.MaxCommentsPerRequest},
		{name: "a negative limit means the most allowed", viewerID: 0, slug: published.Slug, limit: -5, wantRepoLimit: service.MaxCommentsPerRequest},
		{name: "a limit over the maximum is capped", viewerID: 0, slug: published.Slug, limit: service.MaxCommentsPerRequest + 1, wantRepoLimit: service.MaxCommentsPerRequest},
		{name: "the maximum itself is kept", viewerID: 0, slug: published.Slug, limit: service.MaxCommentsPerRequest, wantRepoLimit: service.MaxCommentsPerRequest},
		{name: "a small limit is kept, after is passed through", viewerID: 0, slug: published.Slug, afterSeq: 41, limit: 1, wantRepoLimit: 1},
		{
			name:     "someone else's draft is not found",
			viewerID: reader.ID, slug: draft.Slug,
			buildStubs: func(d commentDeps) {
				d.comments.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, vs []domain.CommentView, err error) {
				requireErrorIs(t, err, domain.ErrNotFound)
				if vs != nil {
					t.Errorf("comments = %+v alongside an error", vs)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCommentService(t)
			switch tc.slug {
			case published.Slug:
				d.articles.EXPECT().GetBySlug(gomock.Any(), tc.slug).Return(published, nil)
			case draft.Slug:
				d.articles.EXPECT().GetBySlug(gomock.Any(), tc.slug).Return(draft, nil)
			}
			if tc.wantRepoLimit != 0 {
				// one more than the page, to know whether a next page exists
				d.comments.EXPECT().List(gomock.Any(), published.ID, tc.afterSeq, tc.wantRepoLimit+1).Return(comments, nil)
			}
			if tc.buildStubs != nil {
				tc.buildStubs(d)
			} else {
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(authors, nil)
			}
			l, err := s.List(context.Background(), tc.viewerID, tc.slug, tc.afterSeq, tc.limit)
			vs := l.Comments
			if tc.check != nil {
				tc.check(t, vs, err)
			} else if want := min(len(comments), tc.wantRepoLimit); err != nil || len(vs) != want {
				t.Errorf("List = (%d comments, %v), want %d", len(vs), err, want)
			}
		})
	}

	t.Run("no comments means no author lookup and an empty, non-nil list", func(t *testing.T) {
		t.Parallel()
		s, d := newCommentService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
		d.comments.EXPECT().List(gomock.Any(), published.ID, int64(0), service.MaxCommentsPerRequest+1).Return(nil, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		l, err := s.List(context.Background(), reader.ID, published.Slug, 0, 0)
		if err != nil || l.Comments == nil || len(l.Comments) != 0 || l.NextAfter != 0 {
			t.Errorf("List = (%#v, %v), want an empty, non-nil list and no next page", l, err)
		}
	})
	t.Run("a comment whose author vanished is left out", func(t *testing.T) {
		t.Parallel()
		s, d := newCommentService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
		d.comments.EXPECT().List(gomock.Any(), published.ID, int64(0), service.MaxCommentsPerRequest+1).Return(comments, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(map[int64]domain.User{critic.ID: critic}, nil)
		l, err := s.List(context.Background(), 0, published.Slug, 0, 0)
		if err != nil || len(l.Comments) != 1 || l.Comments[0].ID != 11 {
			t.Errorf("List = (%+v, %v), want only comment 11", l, err)
		}
	})
	t.Run("a next page is offered exactly when the one extra comment came", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			limit     int
			wantNext  int64
			wantShown int
		}{
			{limit: 2, wantNext: 7, wantShown: 2}, // 3 stored: the third says the page is not the last
			{limit: 3, wantNext: 0, wantShown: 3}, // a full last page offers no cursor
		} {
			s, d := newCommentService(t)
			d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
			d.comments.EXPECT().List(gomock.Any(), published.ID, int64(0), tc.limit+1).Return(comments, nil)
			d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(authors, nil)
			l, err := s.List(context.Background(), 0, published.Slug, 0, tc.limit)
			if err != nil || len(l.Comments) != tc.wantShown || l.NextAfter != tc.wantNext {
				t.Errorf("limit %d: %d comments, next after %d, %v; want %d, %d", tc.limit, len(l.Comments), l.NextAfter, err, tc.wantShown, tc.wantNext)
			}
		}
	})
}

func TestCommentService_Delete(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	draft := articleBy(2, writer.ID, domain.StatusDraft)
	mine := commentOn(20, published.ID, 1, reader.ID)
	theirs := commentOn(21, published.ID, 2, critic.ID)
	elsewhere := commentOn(22, 99, 1, reader.ID) // the viewer's, but on another article

	tests := []struct {
		name       string
		slug       string
		commentID  int64
		buildStubs func(d commentDeps)
		wantErr    error // nil: deleted
	}{
		{
			name: "the comment's author deletes it", slug: published.Slug, commentID: mine.ID,
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), mine.ID).Return(mine, nil)
				d.comments.EXPECT().Delete(gomock.Any(), mine.ID).Return(nil)
			},
		},
		{
			name: "someone else's comment is forbidden", slug: published.Slug, commentID: theirs.ID,
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), theirs.ID).Return(theirs, nil)
				d.comments.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrForbidden,
		},
		{
			name: "a comment of another article is not found", slug: published.Slug, commentID: elsewhere.ID,
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), elsewhere.ID).Return(elsewhere, nil)
				d.comments.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrNotFound,
		},
		{
			name: "an unknown comment is not found", slug: published.Slug, commentID: 404,
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), int64(404)).Return(domain.Comment{}, fmt.Errorf("get: %w", domain.ErrNotFound))
				d.comments.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrNotFound,
		},
		{
			name: "comments on someone else's draft are not found", slug: draft.Slug, commentID: mine.ID,
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				d.comments.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
				d.comments.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrNotFound,
		},
		{
			name: "a failing delete is returned", slug: published.Slug, commentID: mine.ID,
			buildStubs: func(d commentDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.comments.EXPECT().Get(gomock.Any(), mine.ID).Return(mine, nil)
				d.comments.EXPECT().Delete(gomock.Any(), mine.ID).Return(errStorage)
			},
			wantErr: errStorage,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCommentService(t)
			tc.buildStubs(d)
			err := s.Delete(context.Background(), reader.ID, tc.slug, tc.commentID)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Delete: %v", err)
				}
				return
			}
			requireErrorIs(t, err, tc.wantErr)
		})
	}
}
