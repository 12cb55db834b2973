package service_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type articleDeps struct {
	articles *mocks.MockArticleRepository
	inter    *mocks.MockInteractiveRepository
	users    *mocks.MockUserRepository
	follows  *mocks.MockFollowRepository
	reads    *recordedReads
	idem     *mocks.MockIdempotency
	preload  *mocks.MockArticlePreloader // no call expected unless a test says so
	blocks   *fakeBlocks
	render   *fakeRenderer
}

// newArticleService returns the service over fresh mocks. Its slug suffix function returns
// suffixes in order; asking for more than were prepared fails the test.
func newArticleService(t *testing.T, suffixes ...string) (*service.ArticleService, articleDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := articleDeps{
		articles: mocks.NewMockArticleRepository(ctrl),
		inter:    mocks.NewMockInteractiveRepository(ctrl),
		users:    mocks.NewMockUserRepository(ctrl),
		follows:  mocks.NewMockFollowRepository(ctrl),
		reads:    &recordedReads{},
		idem:     mocks.NewMockIdempotency(ctrl),
		preload:  mocks.NewMockArticlePreloader(ctrl),
		blocks:   &fakeBlocks{},
		render:   &fakeRenderer{},
	}
	var mu sync.Mutex
	next := 0
	suffix := func() string {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(suffixes) {
			t.Errorf("slug suffix asked for a %d. time, only %d prepared", next+1, len(suffixes))
			return "unexpected"
		}
		next++
		return suffixes[next-1]
	}
	return service.NewArticleService(d.articles, d.inter, d.users, d.follows, d.reads, suffix, d.idem, d.preload, d.blocks, noUploads{}, d.render), d
}

// The people in these tests: writer writes most articles, reader reads them, critic is a third
// author.
var (
	writer = domain.User{ID: 11, Username: "writer", Email: "writer@example.com", Bio: "writes", Image: "https://example.com/w.png"}
	reader = domain.User{ID: 12, Username: "reader", Email: "reader@example.com", Bio: "reads"}
	critic = domain.User{ID: 13, Username: "critic", Email: "critic@example.com"}
)

var articleEpoch = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)

// articleBy is article id by authorID in status; a higher id is older.
func articleBy(id, authorID int64, status domain.ArticleStatus) domain.Article {
	created := articleEpoch.Add(-time.Duration(id) * time.Minute)
	return domain.Article{
		ID: id, Slug: fmt.Sprintf("article-%d", id), AuthorID: authorID,
		Title: fmt.Sprintf("Article %d", id), Description: "about it", Body: "the body", Tags: []string{"go", "testing"},
		Status: status, Version: 1, CreatedAt: created, UpdatedAt: created, BodyHTML: fakeHTML("the body"),
	}
}

// flags are what a viewer's lookups report about one article.
type flags struct {
	following bool // the viewer follows the author
	liked     bool
	counters  domain.Counters
	// fromWrite: the view answers a like or unlike, whose own write says what liked is, so the
	// flag is not looked up.
	fromWrite bool
}

// expectView stubs the lookups that assemble a single article for viewerID: its author by id, its
// counters and, for a signed-in viewer, the like flag and (unless the viewer wrote it) the follow
// flag. Nothing is looked up for an anonymous viewer's flags.
func expectView(d articleDeps, viewerID int64, a domain.Article, author domain.User, f flags) {
	d.users.EXPECT().GetByID(gomock.Any(), a.AuthorID).Return(author, nil)
	d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
	d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, []int64{a.ID}).Return(map[int64]domain.Counters{a.ID: f.counters}, nil)
	switch {
	case viewerID == 0:
		d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		d.inter.EXPECT().Collected(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	default:
		if f.fromWrite {
			d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		} else {
			d.inter.EXPECT().Liked(gomock.Any(), viewerID, domain.BizArticle, []int64{a.ID}).Return(map[int64]bool{a.ID: f.liked}, nil)
		}
		d.inter.EXPECT().Collected(gomock.Any(), viewerID, domain.BizArticle, []int64{a.ID}).Return(map[int64]bool{}, nil)
		if viewerID == a.AuthorID {
			d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		} else {
			d.follows.EXPECT().FollowingAmong(gomock.Any(), viewerID, []int64{a.AuthorID}).Return(map[int64]bool{a.AuthorID: f.following}, nil)
		}
	}
}

// noView proves nothing was assembled: no author, counter, like or follow lookup.
func noView(d articleDeps) {
	d.users.EXPECT().GetByID(gomock.Any(), gomock.Any()).Times(0)
	d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
	d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.inter.EXPECT().Collected(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

// noWrites proves the repository was never asked to change anything.
func noWrites(d articleDeps) {
	d.articles.EXPECT().Create(gomock.Any(), gomock.Any()).Times(0)
	d.articles.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.articles.EXPECT().Transition(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.articles.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
	d.inter.EXPECT().Like(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.inter.EXPECT().Unlike(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

// viewOf is a's view, with the HTML of its body.
func viewOf(a domain.Article, author domain.User, f flags) domain.ArticleView {
	a.BodyHTML = fakeHTML(a.Body)
	return domain.ArticleView{Article: a, Author: domain.ProfileOf(author, f.following), Counters: f.counters, Favorited: f.liked}
}

func wantArticleView(want domain.ArticleView) func(t *testing.T, v domain.ArticleView, err error) {
	return func(t *testing.T, v domain.ArticleView, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Errorf("view =\n  %+v\nwant\n  %+v", v, want)
		}
	}
}

func wantArticleErr(target error) func(t *testing.T, v domain.ArticleView, err error) {
	return func(t *testing.T, v domain.ArticleView, err error) {
		t.Helper()
		requireErrorIs(t, err, target)
		if !reflect.DeepEqual(v, domain.ArticleView{}) {
			t.Errorf("view = %+v alongside an error, want the zero view", v)
		}
	}
}

func wantArticleValidation(fields map[string][]string) func(t *testing.T, v domain.ArticleView, err error) {
	return func(t *testing.T, _ domain.ArticleView, err error) {
		t.Helper()
		requireValidation(t, err, fields)
	}
}

var errStorage = errors.New("pq: connection reset")

func TestArticleService_Create(t *testing.T) {
	t.Parallel()
	in := service.CreateArticleInput{
		Title: "  How to Train Your Dragon ", Description: " Ever wonder how? ", Body: "It takes a Jacobian\n",
		Tags: []string{"training", " dragons", "dragons "},
	}
	// insert is the article the service must hand to the repository for in, with slug and status.
	insert := func(slug string, status domain.ArticleStatus) domain.Article {
		return domain.Article{
			AuthorID: writer.ID, Slug: slug, Title: "How to Train Your Dragon", Description: "Ever wonder how?",
			Body: "It takes a Jacobian\n", Tags: []string{"dragons", "training"}, Status: status,
		}
	}
	stored := func(a domain.Article) domain.Article {
		a.ID, a.Version, a.CreatedAt, a.UpdatedAt = 1, 1, articleEpoch, articleEpoch
		return a
	}
	const base = "how-to-train-your-dragon"
	counters := domain.Counters{Reads: 1}
	slugTaken := fmt.Errorf("insert article: %w", domain.ErrSlugTaken)

	tests := []struct {
		name       string
		in         service.CreateArticleInput
		suffixes   []string
		buildStubs func(d articleDeps)
		check      func(t *testing.T, v domain.ArticleView, err error)
	}{
		{
			name: "stores a trimmed, published article with normalized tags and returns the author's view",
			in:   in,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().Create(gomock.Any(), insert(base, domain.StatusPublished)).Return(stored(insert(base, domain.StatusPublished)), nil)
				expectView(d, writer.ID, stored(insert(base, domain.StatusPublished)), writer, flags{counters: counters})
			},
			check: wantArticleView(viewOf(stored(insert(base, domain.StatusPublished)), writer, flags{counters: counters})),
		},
		{
			name: "draft flag stores a draft",
			in:   func() service.CreateArticleInput { i := in; i.Draft = true; return i }(),
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().Create(gomock.Any(), insert(base, domain.StatusDraft)).Return(stored(insert(base, domain.StatusDraft)), nil)
				expectView(d, writer.ID, stored(insert(base, domain.StatusDraft)), writer, flags{})
			},
			check: wantArticleView(viewOf(stored(insert(base, domain.StatusDraft)), writer, flags{})),
		},
		{
			name:     "a taken slug is retried with a suffix",
			in:       in,
			suffixes: []string{"x1y2"},
			buildStubs: func(d articleDeps) {
				gomock.InOrder(
					d.articles.EXPECT().Create(gomock.Any(), insert(base, domain.StatusPublished)).Return(domain.Article{}, slugTaken),
					d.articles.EXPECT().Create(gomock.Any(), insert(base+"-x1y2", domain.StatusPublished)).
						Return(stored(insert(base+"-x1y2", domain.StatusPublished)), nil),
				)
				expectView(d, writer.ID, stored(insert(base+"-x1y2", domain.StatusPublished)), writer, flags{})
			},
			check: wantArticleView(viewOf(stored(insert(base+"-x1y2", domain.StatusPublished)), writer, flags{})),
		},
		{
			name:     "each retry gets a fresh suffix",
			in:       in,
			suffixes: []string{"aaaa", "bbbb"},
			buildStubs: func(d articleDeps) {
				gomock.InOrder(
					d.articles.EXPECT().Create(gomock.Any(), insert(base, domain.StatusPublished)).Return(domain.Article{}, slugTaken),
					d.articles.EXPECT().Create(gomock.Any(), insert(base+"-aaaa", domain.StatusPublished)).Return(domain.Article{}, slugTaken),
					d.articles.EXPECT().Create(gomock.Any(), insert(base+"-bbbb", domain.StatusPublished)).
						Return(stored(insert(base+"-bbbb", domain.StatusPublished)), nil),
				)
				expectView(d, writer.ID, stored(insert(base+"-bbbb", domain.StatusPublished)), writer, flags{})
			},
			check: wantArticleView(viewOf(stored(insert(base+"-bbbb", domain.StatusPublished)), writer, flags{})),
		},
		{
			name:     "gives up after five attempts",
			in:       in,
			suffixes: []string{"s1", "s2", "s3", "s4"},
			buildStubs: func(d articleDeps) {
				gomock.InOrder(
					d.articles.EXPECT().Create(gomock.Any(), insert(base, domain.StatusPublished)).Return(domain.Article{}, slugTaken),
					d.articles.EXPECT().Create(gomock.Any(), insert(base+"-s1", domain.StatusPublished)).Return(domain.Article{}, slugTaken),
					d.articles.EXPECT().Create(gomock.Any(), insert(base+"-s2", domain.StatusPublished)).Return(domain.Article{}, slugTaken),
					d.articles.EXPECT().Create(gomock.Any(), insert(base+"-s3", domain.StatusPublished)).Return(domain.Article{}, slugTaken),
					d.articles.EXPECT().Create(gomock.Any(), insert(base+"-s4", domain.StatusPublished)).Return(domain.Article{}, slugTaken),
				)
				noView(d)
			},
			check: wantArticleValidation(map[string][]string{"title": {"is used by too many articles; choose another title"}}),
		},
		{
			name: "any other storage error is returned at once, without a retry",
			in:   in,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().Create(gomock.Any(), gomock.Any()).Return(domain.Article{}, errStorage).Times(1)
				noView(d)
			},
			check: wantArticleErr(errStorage),
		},
		{
			name: "an author deleted meanwhile is unauthorized",
			in:   in,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().Create(gomock.Any(), gomock.Any()).Return(domain.Article{}, fmt.Errorf("insert: %w", domain.ErrNotFound))
				noView(d)
			},
			check: wantArticleErr(domain.ErrUnauthorized),
		},
		{
			name:       "blank fields are all reported and nothing is stored (blank tags are dropped)",
			in:         service.CreateArticleInput{Title: " ", Description: "", Body: "\n", Tags: []string{"go", " "}},
			buildStubs: func(d articleDeps) { noWrites(d); noView(d) },
			check: wantArticleValidation(map[string][]string{
				"title": {"can't be blank"}, "description": {"can't be blank"}, "body": {"can't be blank"},
			}),
		},
		{
			name:       "a title that cannot make a slug is refused",
			in:         service.CreateArticleInput{Title: "!!! ???", Description: "d", Body: "b"},
			buildStubs: func(d articleDeps) { noWrites(d); noView(d) },
			check:      wantArticleValidation(map[string][]string{"title": {"must contain at least one letter or digit"}}),
		},
		{
			name: "oversized fields and too many tags are refused",
			in: service.CreateArticleInput{
				Title: strings.Repeat("t", domain.MaxTitleLen+1), Description: strings.Repeat("d", domain.MaxDescriptionLen+1),
				Body: strings.Repeat("b", domain.MaxBodyLen+1), Tags: strings.Split("a b c d e f g h i j k", " "),
			},
			buildStubs: func(d articleDeps) { noWrites(d); noView(d) },
			check: wantArticleValidation(map[string][]string{
				"title":       {"is too long (maximum is 200 characters)"},
				"description": {"is too long (maximum is 1000 characters)"},
				"body":        {"is too long (maximum is 200000 characters)"},
				"tagList":     {"has too many tags (maximum is 10)"},
			}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t, tc.suffixes...)
			tc.buildStubs(d)
			v, err := s.Create(context.Background(), writer.ID, tc.in)
			tc.check(t, v, err)
		})
	}
}

func TestArticleService_Get(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	draft := articleBy(2, writer.ID, domain.StatusDraft)
	withdrawn := articleBy(3, writer.ID, domain.StatusWithdrawn)
	seen := flags{following: true, liked: true, counters: domain.Counters{Reads: 10, Likes: 3, Collects: 1}}

	tests := []struct {
		name       string
		viewerID   int64
		slug       string
		buildStubs func(d articleDeps)
		check      func(t *testing.T, v domain.ArticleView, err error)
	}{
		{
			name:     "anonymous reader of a published article gets counters but no flags",
			viewerID: 0,
			slug:     published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				expectView(d, 0, published, writer, flags{counters: seen.counters})
			},
			check: wantArticleView(viewOf(published, writer, flags{counters: seen.counters})),
		},
		{
			name:     "signed-in reader sees whether they follow the author and like the article",
			viewerID: reader.ID,
			slug:     published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				expectView(d, reader.ID, published, writer, seen)
			},
			check: wantArticleView(viewOf(published, writer, seen)),
		},
		{
			name:     "the author sees their own draft",
			viewerID: writer.ID,
			slug:     draft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				expectView(d, writer.ID, draft, writer, flags{})
			},
			check: wantArticleView(viewOf(draft, writer, flags{})),
		},
		{
			name:     "the author sees their own withdrawn article",
			viewerID: writer.ID,
			slug:     withdrawn.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), withdrawn.Slug).Return(withdrawn, nil)
				expectView(d, writer.ID, withdrawn, writer, flags{})
			},
			check: wantArticleView(viewOf(withdrawn, writer, flags{})),
		},
		{
			name:     "someone else's draft is not found",
			viewerID: reader.ID,
			slug:     draft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name:     "someone else's withdrawn article is not found",
			viewerID: reader.ID,
			slug:     withdrawn.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), withdrawn.Slug).Return(withdrawn, nil)
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name:     "an anonymous reader never sees a draft",
			viewerID: 0,
			slug:     draft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name:     "an unknown slug is not found",
			viewerID: reader.ID,
			slug:     "nope",
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "nope").Return(domain.Article{}, fmt.Errorf("get: %w", domain.ErrNotFound))
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name:     "a failing counter lookup fails the request",
			viewerID: 0,
			slug:     published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.users.EXPECT().GetByID(gomock.Any(), writer.ID).Return(writer, nil)
				d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, []int64{published.ID}).Return(nil, errStorage)
			},
			check: wantArticleErr(errStorage),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			tc.buildStubs(d)
			v, err := s.Get(context.Background(), tc.viewerID, tc.slug)
			tc.check(t, v, err)
		})
	}
}

// applyArticleChange makes a repo.Update stub behave like the real one: it applies the service's
// change function to a copy of stored and returns the result.
func applyArticleChange(stored domain.Article) func(context.Context, int64, func(*domain.Article) error) (domain.Article, error) {
	return func(_ context.Context, _ int64, change func(*domain.Article) error) (domain.Article, error) {
		a := stored
		a.Tags = append([]string(nil), stored.Tags...)
		if err := change(&a); err != nil {
			return domain.Article{}, err
		}
		return a, nil
	}
}

func TestArticleService_Update(t *testing.T) {
	t.Parallel()
	mine := articleBy(1, writer.ID, domain.StatusPublished)
	mine.Version = 3
	othersPublished := articleBy(2, critic.ID, domain.StatusPublished)
	othersDraft := articleBy(3, critic.ID, domain.StatusDraft)
	with := func(change func(a *domain.Article)) domain.Article {
		a := mine
		a.Tags = append([]string(nil), mine.Tags...)
		change(&a)
		return a
	}
	// updates expects an update of mine that the repository applies to the stored article, and
	// the view of the result.
	updates := func(want domain.Article) func(d articleDeps) {
		return func(d articleDeps) {
			d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
			d.articles.EXPECT().Update(gomock.Any(), mine.ID, gomock.Any()).DoAndReturn(applyArticleChange(mine))
			expectView(d, writer.ID, want, writer, flags{})
		}
	}

	tests := []struct {
		name       string
		slug       string
		in         service.UpdateArticleInput
		buildStubs func(d articleDeps)
		check      func(t *testing.T, v domain.ArticleView, err error)
	}{
		{
			name:       "a new title is trimmed and keeps the slug",
			slug:       mine.Slug,
			in:         service.UpdateArticleInput{Title: ptr("  A Better Title ")},
			buildStubs: updates(with(func(a *domain.Article) { a.Title = "A Better Title" })),
			check: func(t *testing.T, v domain.ArticleView, err error) {
				wantArticleView(viewOf(with(func(a *domain.Article) { a.Title = "A Better Title" }), writer, flags{}))(t, v, err)
				if v.Slug != mine.Slug {
					t.Errorf("slug = %q, want it kept as %q", v.Slug, mine.Slug)
				}
			},
		},
		{
			name:       "only the body changes",
			slug:       mine.Slug,
			in:         service.UpdateArticleInput{Body: ptr("  new body, kept verbatim\n")},
			buildStubs: updates(with(func(a *domain.Article) { a.Body = "  new body, kept verbatim\n" })),
			check:      wantArticleView(viewOf(with(func(a *domain.Article) { a.Body = "  new body, kept verbatim\n" }), writer, flags{})),
		},
		{
			name:       "description is trimmed and tags normalized",
			slug:       mine.Slug,
			in:         service.UpdateArticleInput{Description: ptr(" new description "), Tags: ptr([]string{"rust", " go", "rust"})},
			buildStubs: updates(with(func(a *domain.Article) { a.Description, a.Tags = "new description", []string{"go", "rust"} })),
			check:      wantArticleView(viewOf(with(func(a *domain.Article) { a.Description, a.Tags = "new description", []string{"go", "rust"} }), writer, flags{})),
		},
		{
			name:       "an empty tag list clears the tags",
			slug:       mine.Slug,
			in:         service.UpdateArticleInput{Tags: ptr([]string{})},
			buildStubs: updates(with(func(a *domain.Article) { a.Tags = []string{} })),
			check:      wantArticleView(viewOf(with(func(a *domain.Article) { a.Tags = []string{} }), writer, flags{})),
		},
		{
			name:       "the current version is accepted",
			slug:       mine.Slug,
			in:         service.UpdateArticleInput{Title: ptr("Versioned"), Version: ptr(int32(3))},
			buildStubs: updates(with(func(a *domain.Article) { a.Title = "Versioned" })),
			check:      wantArticleView(viewOf(with(func(a *domain.Article) { a.Title = "Versioned" }), writer, flags{})),
		},
		{
			name: "a stale version is a conflict",
			slug: mine.Slug,
			in:   service.UpdateArticleInput{Title: ptr("Too late"), Version: ptr(int32(2))},
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
				d.articles.EXPECT().Update(gomock.Any(), mine.ID, gomock.Any()).DoAndReturn(applyArticleChange(mine))
				noView(d)
			},
			check: func(t *testing.T, v domain.ArticleView, err error) {
				wantArticleErr(domain.ErrStaleVersion)(t, v, err)
				requireErrorIs(t, err, domain.ErrConflict)
			},
		},
		{
			name: "someone else's published article is forbidden",
			slug: othersPublished.Slug,
			in:   service.UpdateArticleInput{Title: ptr("Mine now")},
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersPublished.Slug).Return(othersPublished, nil)
				noWrites(d)
				noView(d)
			},
			check: wantArticleErr(domain.ErrForbidden),
		},
		{
			name: "someone else's draft is not found",
			slug: othersDraft.Slug,
			in:   service.UpdateArticleInput{Title: ptr("Mine now")},
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersDraft.Slug).Return(othersDraft, nil)
				noWrites(d)
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name: "invalid fields are refused before anything is read",
			slug: mine.Slug,
			in: service.UpdateArticleInput{
				Title: ptr(" "), Description: ptr(strings.Repeat("d", domain.MaxDescriptionLen+1)), Body: ptr(""),
				Tags: ptr([]string{strings.Repeat("t", domain.MaxTagLen+1)}),
			},
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
				noWrites(d)
				noView(d)
			},
			check: wantArticleValidation(map[string][]string{
				"title":       {"can't be blank"},
				"description": {"is too long (maximum is 1000 characters)"},
				"body":        {"can't be blank"},
				"tagList":     {"has a tag that is too long (maximum is 40 characters)"},
			}),
		},
		{
			name: "a storage failure is returned",
			slug: mine.Slug,
			in:   service.UpdateArticleInput{Title: ptr("x")},
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
				d.articles.EXPECT().Update(gomock.Any(), mine.ID, gomock.Any()).Return(domain.Article{}, errStorage)
				noView(d)
			},
			check: wantArticleErr(errStorage),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			tc.buildStubs(d)
			v, err := s.Update(context.Background(), writer.ID, tc.slug, tc.in)
			tc.check(t, v, err)
		})
	}
}

// TestArticleService_UpdateChangeFunc captures the change function the service gives the
// repository and applies it to articles as the repository might find them under its lock.
func TestArticleService_UpdateChangeFunc(t *testing.T) {
	t.Parallel()
	mine := articleBy(1, writer.ID, domain.StatusPublished)
	s, d := newArticleService(t)
	var change func(*domain.Article) error
	d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
	d.articles.EXPECT().Update(gomock.Any(), mine.ID, gomock.Any()).DoAndReturn(
		func(_ context.Context, _ int64, f func(*domain.Article) error) (domain.Article, error) {
			change = f
			return domain.Article{}, errStorage // the test applies f itself below
		})
	_, err := s.Update(context.Background(), writer.ID, mine.Slug, service.UpdateArticleInput{Title: ptr(" Retitled "), Version: ptr(int32(4))})
	requireErrorIs(t, err, errStorage)
	if change == nil {
		t.Fatal("the change function was not passed to the repository")
	}

	tests := []struct {
		name      string
		current   domain.Article
		wantErr   error // nil: the change applies
		wantTitle string
	}{
		{name: "at the client's version", current: domain.Article{AuthorID: writer.ID, Version: 4, Title: "Old", Slug: "old"}, wantTitle: "Retitled"},
		{name: "moved past the client's version", current: domain.Article{AuthorID: writer.ID, Version: 5, Title: "Old", Slug: "old"}, wantErr: domain.ErrStaleVersion, wantTitle: "Old"},
		{name: "behind the client's version", current: domain.Article{AuthorID: writer.ID, Version: 3, Title: "Old", Slug: "old"}, wantErr: domain.ErrStaleVersion, wantTitle: "Old"},
		{name: "written by someone else", current: domain.Article{AuthorID: critic.ID, Version: 4, Title: "Old", Slug: "old"}, wantErr: domain.ErrForbidden, wantTitle: "Old"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := tc.current
			err := change(&a)
			if tc.wantErr == nil && err != nil {
				t.Fatalf("change: %v", err)
			}
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
			}
			if a.Title != tc.wantTitle || a.Slug != "old" || a.Version != tc.current.Version {
				t.Errorf("after change: title %q slug %q version %d, want title %q, slug and version untouched",
					a.Title, a.Slug, a.Version, tc.wantTitle)
			}
		})
	}
}

func TestArticleService_PublishWithdraw(t *testing.T) {
	t.Parallel()
	draft := articleBy(1, writer.ID, domain.StatusDraft)
	published := articleBy(2, writer.ID, domain.StatusPublished)
	othersPublished := articleBy(3, critic.ID, domain.StatusPublished)
	othersDraft := articleBy(4, critic.ID, domain.StatusDraft)
	moved := func(a domain.Article, to domain.ArticleStatus) domain.Article {
		a.Status, a.Version = to, a.Version+1
		return a
	}
	fromPublish := []domain.ArticleStatus{domain.StatusDraft, domain.StatusWithdrawn, domain.StatusScheduled}
	fromWithdraw := []domain.ArticleStatus{domain.StatusPublished, domain.StatusScheduled}
	publish := func(s *service.ArticleService, slug string) (domain.ArticleView, error) {
		return s.Publish(context.Background(), writer.ID, slug)
	}
	withdraw := func(s *service.ArticleService, slug string) (domain.ArticleView, error) {
		return s.Withdraw(context.Background(), writer.ID, slug)
	}

	tests := []struct {
		name       string
		op         func(s *service.ArticleService, slug string) (domain.ArticleView, error)
		slug       string
		buildStubs func(d articleDeps)
		check      func(t *testing.T, v domain.ArticleView, err error)
	}{
		{
			name: "publish moves a draft or withdrawn article to published",
			op:   publish,
			slug: draft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				d.articles.EXPECT().Transition(gomock.Any(), draft.ID, fromPublish, domain.StatusPublished).
					Return(moved(draft, domain.StatusPublished), nil)
				expectView(d, writer.ID, moved(draft, domain.StatusPublished), writer, flags{})
			},
			check: wantArticleView(viewOf(moved(draft, domain.StatusPublished), writer, flags{})),
		},
		{
			name: "withdraw moves a published article to withdrawn",
			op:   withdraw,
			slug: published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.articles.EXPECT().Transition(gomock.Any(), published.ID, fromWithdraw, domain.StatusWithdrawn).
					Return(moved(published, domain.StatusWithdrawn), nil)
				expectView(d, writer.ID, moved(published, domain.StatusWithdrawn), writer, flags{})
			},
			check: wantArticleView(viewOf(moved(published, domain.StatusWithdrawn), writer, flags{})),
		},
		{
			name: "publishing a published article is an illegal transition",
			op:   publish,
			slug: published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.articles.EXPECT().Transition(gomock.Any(), published.ID, fromPublish, domain.StatusPublished).
					Return(domain.Article{}, fmt.Errorf("%w: article 2", domain.ErrIllegalTransition))
				noView(d)
			},
			check: wantArticleErr(domain.ErrIllegalTransition),
		},
		{
			name: "withdrawing a draft is an illegal transition",
			op:   withdraw,
			slug: draft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				d.articles.EXPECT().Transition(gomock.Any(), draft.ID, fromWithdraw, domain.StatusWithdrawn).
					Return(domain.Article{}, fmt.Errorf("%w: article 1", domain.ErrIllegalTransition))
				noView(d)
			},
			check: wantArticleErr(domain.ErrIllegalTransition),
		},
		{
			name: "someone else's published article cannot be withdrawn",
			op:   withdraw,
			slug: othersPublished.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersPublished.Slug).Return(othersPublished, nil)
				noWrites(d)
				noView(d)
			},
			check: wantArticleErr(domain.ErrForbidden),
		},
		{
			name: "someone else's draft cannot be published and stays hidden",
			op:   publish,
			slug: othersDraft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersDraft.Slug).Return(othersDraft, nil)
				noWrites(d)
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			tc.buildStubs(d)
			v, err := tc.op(s, tc.slug)
			tc.check(t, v, err)
		})
	}
}

func TestArticleService_Delete(t *testing.T) {
	t.Parallel()
	mine := articleBy(1, writer.ID, domain.StatusPublished)
	myDraft := articleBy(2, writer.ID, domain.StatusDraft)
	others := articleBy(3, critic.ID, domain.StatusPublished)
	othersDraft := articleBy(4, critic.ID, domain.StatusDraft)

	tests := []struct {
		name       string
		slug       string
		buildStubs func(d articleDeps)
		wantErr    error
	}{
		{
			name: "the author deletes their article",
			slug: mine.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
				d.articles.EXPECT().Delete(gomock.Any(), mine).Return(nil)
			},
		},
		{
			name: "the author deletes their draft",
			slug: myDraft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), myDraft.Slug).Return(myDraft, nil)
				d.articles.EXPECT().Delete(gomock.Any(), myDraft).Return(nil)
			},
		},
		{
			name: "someone else's article is forbidden",
			slug: others.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), others.Slug).Return(others, nil)
				noWrites(d)
			},
			wantErr: domain.ErrForbidden,
		},
		{
			name: "someone else's draft is not found",
			slug: othersDraft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersDraft.Slug).Return(othersDraft, nil)
				noWrites(d)
			},
			wantErr: domain.ErrNotFound,
		},
		{
			name: "an unknown slug is not found",
			slug: "nope",
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "nope").Return(domain.Article{}, domain.ErrNotFound)
				noWrites(d)
			},
			wantErr: domain.ErrNotFound,
		},
		{
			name: "a storage failure is returned",
			slug: mine.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
				d.articles.EXPECT().Delete(gomock.Any(), mine).Return(errStorage)
			},
			wantErr: errStorage,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			tc.buildStubs(d)
			err := s.Delete(context.Background(), writer.ID, tc.slug)
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

func TestArticleService_FavoriteUnfavorite(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	draft := articleBy(2, writer.ID, domain.StatusDraft)
	ownDraft := articleBy(3, reader.ID, domain.StatusDraft)
	favorite := func(s *service.ArticleService, slug string) (domain.ArticleView, error) {
		return s.Favorite(context.Background(), reader.ID, slug)
	}
	unfavorite := func(s *service.ArticleService, slug string) (domain.ArticleView, error) {
		return s.Unfavorite(context.Background(), reader.ID, slug)
	}
	liked := flags{liked: true, counters: domain.Counters{Likes: 5}, fromWrite: true}
	unliked := flags{following: true, counters: domain.Counters{Likes: 4}, fromWrite: true}

	tests := []struct {
		name       string
		op         func(s *service.ArticleService, slug string) (domain.ArticleView, error)
		slug       string
		buildStubs func(d articleDeps)
		check      func(t *testing.T, v domain.ArticleView, err error)
	}{
		{
			name: "favorite likes the article and returns it favorited with fresh counters",
			op:   favorite,
			slug: published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.inter.EXPECT().Like(gomock.Any(), domain.BizArticle, published.ID, reader.ID).Return(nil)
				d.inter.EXPECT().Unlike(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				expectView(d, reader.ID, published, writer, liked)
			},
			check: wantArticleView(viewOf(published, writer, liked)),
		},
		{
			name: "unfavorite unlikes the article",
			op:   unfavorite,
			slug: published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.inter.EXPECT().Unlike(gomock.Any(), domain.BizArticle, published.ID, reader.ID).Return(nil)
				d.inter.EXPECT().Like(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				expectView(d, reader.ID, published, writer, unliked)
			},
			check: wantArticleView(viewOf(published, writer, unliked)),
		},
		{
			name: "the author may favorite their own draft",
			op:   favorite,
			slug: ownDraft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), ownDraft.Slug).Return(ownDraft, nil)
				d.inter.EXPECT().Like(gomock.Any(), domain.BizArticle, ownDraft.ID, reader.ID).Return(nil)
				expectView(d, reader.ID, ownDraft, reader, flags{liked: true, fromWrite: true})
			},
			check: wantArticleView(viewOf(ownDraft, reader, flags{liked: true})),
		},
		{
			name: "someone else's draft cannot be favorited",
			op:   favorite,
			slug: draft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				noWrites(d)
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name: "someone else's draft cannot be unfavorited",
			op:   unfavorite,
			slug: draft.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				noWrites(d)
				noView(d)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name: "a failing like is returned without a view",
			op:   favorite,
			slug: published.Slug,
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.inter.EXPECT().Like(gomock.Any(), domain.BizArticle, published.ID, reader.ID).Return(errStorage)
				noView(d)
			},
			check: wantArticleErr(errStorage),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			tc.buildStubs(d)
			v, err := tc.op(s, tc.slug)
			tc.check(t, v, err)
		})
	}
}

func wantEmptyList(t *testing.T, l service.ArticleList, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if l.Articles == nil || len(l.Articles) != 0 || l.Total != 0 || l.NextCursor != nil {
		t.Errorf("list = %+v, want an empty, non-nil list without a cursor", l)
	}
}

func TestArticleService_ListFilters(t *testing.T) {
	t.Parallel()
	page := domain.Page{Limit: 10, Offset: 20}
	notFound := fmt.Errorf("get user: %w", domain.ErrNotFound)

	tests := []struct {
		name       string
		in         service.ListInput
		buildStubs func(d articleDeps)
		check      func(t *testing.T, l service.ArticleList, err error)
	}{
		{
			name: "no filter lists everything",
			in:   service.ListInput{Page: page},
			buildStubs: func(d articleDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), gomock.Any()).Times(0)
				d.articles.EXPECT().ListPublished(gomock.Any(), service.ArticleQuery{Page: page}).Return(service.ArticlePage{}, nil)
				noView(d)
			},
			check: wantEmptyList,
		},
		{
			name: "author and favoriting usernames are resolved to ids",
			in:   service.ListInput{Tag: "go", Author: "writer", Favorited: "critic", Page: page},
			buildStubs: func(d articleDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "writer").Return(writer, nil)
				d.users.EXPECT().GetByUsername(gomock.Any(), "critic").Return(critic, nil)
				d.articles.EXPECT().ListPublished(gomock.Any(),
					service.ArticleQuery{Tag: "go", AuthorID: writer.ID, FavoritedBy: critic.ID, Page: page}).
					Return(service.ArticlePage{Articles: []domain.Article{}}, nil)
			},
			check: wantEmptyList,
		},
		{
			name: "an unknown author gives an empty list without asking for articles",
			in:   service.ListInput{Author: "ghost", Page: page},
			buildStubs: func(d articleDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "ghost").Return(domain.User{}, notFound)
				d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Times(0)
				noView(d)
			},
			check: wantEmptyList,
		},
		{
			name: "an unknown favoriting user gives an empty list without asking for articles",
			in:   service.ListInput{Favorited: "ghost", Page: page},
			buildStubs: func(d articleDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "ghost").Return(domain.User{}, notFound)
				d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Times(0)
				noView(d)
			},
			check: wantEmptyList,
		},
		{
			name: "a failing user lookup is an error, not an empty list",
			in:   service.ListInput{Author: "writer", Page: page},
			buildStubs: func(d articleDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "writer").Return(domain.User{}, domain.ErrUnavailable)
				d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Times(0)
				noView(d)
			},
			check: func(t *testing.T, _ service.ArticleList, err error) {
				t.Helper()
				requireErrorIs(t, err, domain.ErrUnavailable)
			},
		},
		{
			name: "a failing list is an error",
			in:   service.ListInput{Page: page},
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Return(service.ArticlePage{}, errStorage)
				noView(d)
			},
			check: func(t *testing.T, _ service.ArticleList, err error) {
				t.Helper()
				requireErrorIs(t, err, errStorage)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			tc.buildStubs(d)
			l, err := s.List(context.Background(), reader.ID, tc.in)
			tc.check(t, l, err)
		})
	}
}

// TestArticleService_ListBatchesLookups proves a page is assembled with one lookup of each kind
// (authors, counters, likes, follows), however many articles and authors it holds.
func TestArticleService_ListBatchesLookups(t *testing.T) {
	t.Parallel()
	users := map[int64]domain.User{writer.ID: writer, reader.ID: reader, critic.ID: critic}
	const limit = 20

	tests := []struct {
		name       string
		n          int
		authors    []domain.User // article i is by authors[i % len(authors)]
		viewerID   int64
		wantCursor bool
	}{
		{name: "one article", n: 1, authors: []domain.User{writer}, viewerID: reader.ID},
		{name: "a short page by three authors, one of them the viewer", n: 7, authors: []domain.User{writer, critic, reader}, viewerID: reader.ID},
		{name: "a full page by three authors", n: limit, authors: []domain.User{writer, critic, reader}, viewerID: reader.ID, wantCursor: true},
		{name: "a full page by the viewer alone asks nobody about follows", n: limit, authors: []domain.User{reader}, viewerID: reader.ID, wantCursor: true},
		{name: "anonymous viewer, full page", n: limit, authors: []domain.User{writer, critic}, viewerID: 0, wantCursor: true},
		{name: "anonymous viewer, short page", n: 3, authors: []domain.User{writer, critic, reader}, viewerID: 0},
		{name: "a full last page: storage found nothing after it, so no cursor", n: limit, authors: []domain.User{writer}, viewerID: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			arts := make([]domain.Article, tc.n)
			ids := make([]int64, tc.n)
			counters := map[int64]domain.Counters{}
			liked := map[int64]bool{}
			for i := range arts {
				arts[i] = articleBy(int64(100+i), tc.authors[i%len(tc.authors)].ID, domain.StatusPublished)
				ids[i] = arts[i].ID
				counters[arts[i].ID] = domain.Counters{Reads: int64(i) * 10, Likes: int64(i)}
				liked[arts[i].ID] = i%2 == 0
			}
			var authorIDs, othersIDs []int64
			found := map[int64]domain.User{}
			for _, a := range tc.authors[:min(tc.n, len(tc.authors))] {
				authorIDs = append(authorIDs, a.ID)
				found[a.ID] = a
				if a.ID != tc.viewerID {
					othersIDs = append(othersIDs, a.ID)
				}
			}
			following := map[int64]bool{writer.ID: true}
			page := domain.Page{Limit: limit}

			d.articles.EXPECT().ListPublished(gomock.Any(), service.ArticleQuery{Page: page}).Return(service.ArticlePage{Articles: arts, Total: 1000, More: tc.wantCursor}, nil)
			d.users.EXPECT().GetByID(gomock.Any(), gomock.Any()).Times(0)
			d.users.EXPECT().GetByIDs(gomock.Any(), gomock.InAnyOrder(authorIDs)).Return(found, nil).Times(1)
			d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, gomock.InAnyOrder(ids)).Return(counters, nil).Times(1)
			switch {
			case tc.viewerID == 0:
				d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.inter.EXPECT().Collected(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			default:
				d.inter.EXPECT().Liked(gomock.Any(), tc.viewerID, domain.BizArticle, gomock.InAnyOrder(ids)).Return(liked, nil).Times(1)
				d.inter.EXPECT().Collected(gomock.Any(), tc.viewerID, domain.BizArticle, gomock.InAnyOrder(ids)).Return(map[int64]bool{}, nil).Times(1)
				if len(othersIDs) == 0 {
					d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				} else {
					d.follows.EXPECT().FollowingAmong(gomock.Any(), tc.viewerID, gomock.InAnyOrder(othersIDs)).Return(following, nil).Times(1)
				}
			}

			l, err := s.List(context.Background(), tc.viewerID, service.ListInput{Page: page})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if l.Total != 1000 || len(l.Articles) != tc.n {
				t.Fatalf("got %d articles of %d, want %d of 1000", len(l.Articles), l.Total, tc.n)
			}
			for i, v := range l.Articles {
				author := users[arts[i].AuthorID]
				want := viewOf(arts[i], author, flags{
					following: tc.viewerID != 0 && following[author.ID] && author.ID != tc.viewerID,
					liked:     tc.viewerID != 0 && liked[arts[i].ID],
					counters:  counters[arts[i].ID],
				})
				if !reflect.DeepEqual(v, want) {
					t.Errorf("article %d =\n  %+v\nwant\n  %+v", i, v, want)
				}
			}
			switch {
			case !tc.wantCursor && l.NextCursor != nil:
				t.Errorf("NextCursor = %+v on the last page, want nil", l.NextCursor)
			case tc.wantCursor:
				last := arts[len(arts)-1]
				if want := (&domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}); !reflect.DeepEqual(l.NextCursor, want) {
					t.Errorf("NextCursor = %+v, want the last article's %+v", l.NextCursor, want)
				}
			}
		})
	}
}

func TestArticleService_ListAssembly(t *testing.T) {
	t.Parallel()
	t.Run("an empty page looks nothing up", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Return(service.ArticlePage{Articles: []domain.Article{}}, nil)
		noView(d)
		l, err := s.List(context.Background(), reader.ID, service.ListInput{Page: domain.Page{Limit: 20}})
		wantEmptyList(t, l, err)
	})
	t.Run("an article whose author vanished is left out, the cursor still follows the page", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		arts := []domain.Article{articleBy(1, writer.ID, domain.StatusPublished), articleBy(2, critic.ID, domain.StatusPublished)}
		d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Return(service.ArticlePage{Articles: arts, Total: 3, More: true}, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), gomock.InAnyOrder([]int64{writer.ID, critic.ID})).
			Return(map[int64]domain.User{writer.ID: writer}, nil)
		d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, gomock.Any()).Return(map[int64]domain.Counters{}, nil)
		d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, gomock.Any()).Return(map[int64]bool{}, nil)
		d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, gomock.Any()).Return(map[int64]bool{}, nil)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.Any()).Return(map[int64]bool{}, nil)

		l, err := s.List(context.Background(), reader.ID, service.ListInput{Page: domain.Page{Limit: 2}})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(l.Articles) != 1 || l.Articles[0].ID != 1 {
			t.Errorf("articles = %+v, want only article 1", l.Articles)
		}
		if want := (&domain.Cursor{CreatedAt: arts[1].CreatedAt, ID: 2}); !reflect.DeepEqual(l.NextCursor, want) {
			t.Errorf("NextCursor = %+v, want %+v", l.NextCursor, want)
		}
	})
	t.Run("a failing author lookup fails the list", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Return(service.ArticlePage{Articles: []domain.Article{articleBy(1, writer.ID, domain.StatusPublished)}, Total: 1}, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(nil, errStorage)
		d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		_, err := s.List(context.Background(), reader.ID, service.ListInput{Page: domain.Page{Limit: 20}})
		requireErrorIs(t, err, errStorage)
	})
}

func TestArticleService_FeedAndMine(t *testing.T) {
	t.Parallel()
	page := domain.Page{Limit: 2, Cursor: &domain.Cursor{CreatedAt: articleEpoch, ID: 50}}

	t.Run("feed lists the viewer's followed authors with one lookup of each kind", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		arts := []domain.Article{articleBy(1, writer.ID, domain.StatusPublished), articleBy(2, critic.ID, domain.StatusPublished)}
		d.articles.EXPECT().Feed(gomock.Any(), reader.ID, page).Return(service.ArticlePage{Articles: arts, Total: 9, More: true}, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), gomock.InAnyOrder([]int64{writer.ID, critic.ID})).
			Return(map[int64]domain.User{writer.ID: writer, critic.ID: critic}, nil)
		d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]domain.Counters{}, nil)
		d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]bool{2: true}, nil)
		d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]bool{}, nil)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.InAnyOrder([]int64{writer.ID, critic.ID})).
			Return(map[int64]bool{writer.ID: true, critic.ID: true}, nil)

		l, err := s.Feed(context.Background(), reader.ID, page)
		if err != nil {
			t.Fatalf("Feed: %v", err)
		}
		want := service.ArticleList{
			Articles: []domain.ArticleView{
				viewOf(arts[0], writer, flags{following: true}),
				viewOf(arts[1], critic, flags{following: true, liked: true}),
			},
			Total:      9,
			NextCursor: &domain.Cursor{CreatedAt: arts[1].CreatedAt, ID: 2},
		}
		if !reflect.DeepEqual(l, want) {
			t.Errorf("feed =\n  %+v\nwant\n  %+v", l, want)
		}
	})
	t.Run("mine lists the viewer's own articles of one status", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		arts := []domain.Article{articleBy(1, reader.ID, domain.StatusDraft)}
		d.articles.EXPECT().ListByAuthor(gomock.Any(), reader.ID, domain.StatusDraft, page).Return(service.ArticlePage{Articles: arts, Total: 1}, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
		d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, []int64{1}).Return(map[int64]domain.Counters{}, nil)
		d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, []int64{1}).Return(map[int64]bool{}, nil)
		d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, []int64{1}).Return(map[int64]bool{}, nil)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)

		l, err := s.Mine(context.Background(), reader.ID, domain.StatusDraft, page)
		if err != nil {
			t.Fatalf("Mine: %v", err)
		}
		want := service.ArticleList{Articles: []domain.ArticleView{viewOf(arts[0], reader, flags{})}, Total: 1}
		if !reflect.DeepEqual(l, want) {
			t.Errorf("mine =\n  %+v\nwant\n  %+v", l, want)
		}
	})
	t.Run("mine offers a cursor at its last article when storage found a next page", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		arts := []domain.Article{articleBy(1, reader.ID, domain.StatusPublished), articleBy(2, reader.ID, domain.StatusDraft)}
		p := domain.Page{Limit: 2, Offset: 4}
		d.articles.EXPECT().ListByAuthor(gomock.Any(), reader.ID, domain.ArticleStatus(""), p).Return(service.ArticlePage{Articles: arts, Total: 10, More: true}, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
		d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]domain.Counters{}, nil)
		d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]bool{}, nil)
		d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]bool{}, nil)

		l, err := s.Mine(context.Background(), reader.ID, "", p)
		if err != nil {
			t.Fatalf("Mine: %v", err)
		}
		want := &domain.Cursor{CreatedAt: arts[1].CreatedAt, ID: 2}
		if len(l.Articles) != 2 || l.Total != 10 || !reflect.DeepEqual(l.NextCursor, want) {
			t.Errorf("mine = %d articles of %d, cursor %+v; want 2 of 10 and cursor %+v", len(l.Articles), l.Total, l.NextCursor, want)
		}
	})
	t.Run("mine's first page preloads the newest article's detail, once", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		arts := []domain.Article{articleBy(1, reader.ID, domain.StatusDraft), articleBy(2, reader.ID, domain.StatusPublished)}
		first := domain.Page{Limit: domain.DefaultPageLimit}
		d.articles.EXPECT().ListByAuthor(gomock.Any(), reader.ID, domain.ArticleStatus(""), first).Return(service.ArticlePage{Articles: arts, Total: 2}, nil)
		d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
		d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]domain.Counters{}, nil)
		d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]bool{}, nil)
		d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder([]int64{1, 2})).Return(map[int64]bool{}, nil)
		d.preload.EXPECT().Preload(arts[0].Slug).Times(1)

		if l, err := s.Mine(context.Background(), reader.ID, "", first); err != nil || len(l.Articles) != 2 {
			t.Fatalf("Mine = %d articles, %v", len(l.Articles), err)
		}
	})
	t.Run("mine preloads nothing for other pages, an empty page or a failed list", func(t *testing.T) {
		t.Parallel()
		for _, p := range []domain.Page{
			{Limit: domain.DefaultPageLimit, Offset: 20},
			{Limit: 5},
			{Limit: domain.DefaultPageLimit, Cursor: &domain.Cursor{CreatedAt: articleEpoch, ID: 9}},
		} {
			s, d := newArticleService(t)
			arts := []domain.Article{articleBy(1, reader.ID, domain.StatusDraft)}
			d.articles.EXPECT().ListByAuthor(gomock.Any(), reader.ID, domain.ArticleStatus(""), p).Return(service.ArticlePage{Articles: arts, Total: 1}, nil)
			d.users.EXPECT().GetByIDs(gomock.Any(), []int64{reader.ID}).Return(map[int64]domain.User{reader.ID: reader}, nil)
			d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, []int64{1}).Return(map[int64]domain.Counters{}, nil)
			d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, []int64{1}).Return(map[int64]bool{}, nil)
			d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, []int64{1}).Return(map[int64]bool{}, nil)
			d.preload.EXPECT().Preload(gomock.Any()).Times(0)
			if _, err := s.Mine(context.Background(), reader.ID, "", p); err != nil {
				t.Fatalf("Mine(%+v): %v", p, err)
			}
		}
		first := domain.Page{Limit: domain.DefaultPageLimit}
		s, d := newArticleService(t)
		d.articles.EXPECT().ListByAuthor(gomock.Any(), reader.ID, domain.ArticleStatus(""), first).Return(service.ArticlePage{Articles: []domain.Article{}}, nil)
		d.preload.EXPECT().Preload(gomock.Any()).Times(0)
		if l, err := s.Mine(context.Background(), reader.ID, "", first); err != nil || len(l.Articles) != 0 {
			t.Fatalf("Mine of no articles = %+v, %v", l, err)
		}
		s, d = newArticleService(t)
		d.articles.EXPECT().ListByAuthor(gomock.Any(), reader.ID, domain.ArticleStatus(""), first).Return(service.ArticlePage{}, errStorage)
		d.preload.EXPECT().Preload(gomock.Any()).Times(0)
		noView(d)
		_, err := s.Mine(context.Background(), reader.ID, "", first)
		requireErrorIs(t, err, errStorage)
	})
	t.Run("a failing feed query is returned", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		d.articles.EXPECT().Feed(gomock.Any(), reader.ID, page).Return(service.ArticlePage{}, errStorage)
		noView(d)
		_, err := s.Feed(context.Background(), reader.ID, page)
		requireErrorIs(t, err, errStorage)
	})
}

func TestArticleService_Tags(t *testing.T) {
	t.Parallel()
	s, d := newArticleService(t)
	d.articles.EXPECT().Tags(gomock.Any()).Return([]string{"go", "rust"}, nil)
	tags, err := s.Tags(context.Background())
	if err != nil || !reflect.DeepEqual(tags, []string{"go", "rust"}) {
		t.Errorf("Tags = (%v, %v), want ([go rust], nil)", tags, err)
	}
}

// fakeTx is a unit of work handle as a use case sees it; the tests check it is passed through.
type fakeTx struct{ id int }

func (*fakeTx) AfterCommit(func(context.Context)) {}

func TestArticleService_CreateIdempotent(t *testing.T) {
	t.Parallel()
	in := service.CreateArticleInput{Title: "Keyed", Description: "d", Body: "b"}
	insert := func(slug string) domain.Article {
		return domain.Article{AuthorID: writer.ID, Slug: slug, Title: "Keyed", Description: "d", Body: "b", Tags: []string{}, Status: domain.StatusPublished}
	}
	stored := func(a domain.Article) domain.Article {
		a.ID, a.Version, a.CreatedAt, a.UpdatedAt = 1, 1, articleEpoch, articleEpoch
		return a
	}
	key := service.IdempotencyKey{Scope: "user:1", Key: "k", RequestHash: "h"}
	replay := domain.StoredResponse{Status: 201, Body: []byte(`{"stored":true}`)}
	tx := &fakeTx{id: 1}
	// runsWrite is a store with nothing under the key: Do runs write in tx and answers with it.
	runsWrite := func(_ context.Context, _ service.IdempotencyKey, write func(context.Context, service.Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
		return write(context.Background(), tx), false, nil
	}

	type rendered struct {
		v   domain.ArticleView
		err error
	}
	tests := []struct {
		name       string
		in         service.CreateArticleInput
		suffixes   []string
		buildStubs func(d articleDeps)
		wantRes    domain.StoredResponse
		wantReplay bool
		wantErr    error
		check      func(t *testing.T, got []rendered)
	}{
		{
			name: "a stored answer is replayed before any validation, write or view",
			in:   in,
			buildStubs: func(d articleDeps) {
				d.idem.EXPECT().Lookup(gomock.Any(), key).Return(replay, true, nil)
				d.idem.EXPECT().Do(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.articles.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				noWrites(d)
				noView(d)
			},
			wantRes: replay, wantReplay: true,
			check: func(t *testing.T, got []rendered) {
				if len(got) != 0 {
					t.Fatalf("rendered %d outcomes for a replay, want none", len(got))
				}
			},
		},
		{
			name: "a key used for another request is refused before anything runs",
			in:   in,
			buildStubs: func(d articleDeps) {
				d.idem.EXPECT().Lookup(gomock.Any(), key).Return(domain.StoredResponse{}, false, domain.ErrIdempotencyMismatch)
				d.idem.EXPECT().Do(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				noWrites(d)
			},
			wantErr: domain.ErrIdempotencyMismatch,
		},
		{
			name:     "a fresh key: slug retries run in the caller's unit of work and the view is what is rendered",
			in:       in,
			suffixes: []string{"x1y2"},
			buildStubs: func(d articleDeps) {
				d.idem.EXPECT().Lookup(gomock.Any(), key).Return(domain.StoredResponse{}, false, nil)
				d.idem.EXPECT().Do(gomock.Any(), key, gomock.Any()).DoAndReturn(runsWrite)
				gomock.InOrder(
					d.articles.EXPECT().CreateIn(gomock.Any(), tx, insert("keyed")).Return(domain.Article{}, domain.ErrSlugTaken),
					d.articles.EXPECT().CreateIn(gomock.Any(), tx, insert("keyed-x1y2")).Return(stored(insert("keyed-x1y2")), nil),
				)
				noWrites(d) // never outside the unit of work
				// The author is read before the unit of work; inside it no lookup runs (a new article
				// has no counts or flags), so the transaction never waits for a second connection.
				d.users.EXPECT().GetByID(gomock.Any(), writer.ID).Return(writer, nil)
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
				d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.inter.EXPECT().Collected(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantRes: domain.StoredResponse{Status: 201},
			check: func(t *testing.T, got []rendered) {
				want := viewOf(stored(insert("keyed-x1y2")), writer, flags{})
				if len(got) != 1 || got[0].err != nil || !reflect.DeepEqual(got[0].v, want) {
					t.Fatalf("rendered %+v, want the one view %+v", got, want)
				}
			},
		},
		{
			name: "invalid input is rendered as the rejection to store, and nothing is written",
			in:   service.CreateArticleInput{Title: " ", Description: "d", Body: "b"},
			buildStubs: func(d articleDeps) {
				d.idem.EXPECT().Lookup(gomock.Any(), key).Return(domain.StoredResponse{}, false, nil)
				d.idem.EXPECT().Do(gomock.Any(), key, gomock.Any()).DoAndReturn(runsWrite)
				d.articles.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				noWrites(d)
				noView(d)
			},
			wantRes: domain.StoredResponse{Status: 422},
			check: func(t *testing.T, got []rendered) {
				if len(got) != 1 {
					t.Fatalf("rendered %d outcomes, want 1", len(got))
				}
				requireValidation(t, got[0].err, map[string][]string{"title": {"can't be blank"}})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t, tc.suffixes...)
			tc.buildStubs(d)
			var got []rendered
			idem := service.Idempotent[domain.ArticleView]{Key: key, Render: func(v domain.ArticleView, err error) domain.StoredResponse {
				got = append(got, rendered{v, err})
				if err != nil {
					return domain.StoredResponse{Status: 422}
				}
				return domain.StoredResponse{Status: 201}
			}}
			res, replayed, err := s.CreateIdempotent(context.Background(), writer.ID, tc.in, idem)
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
				return
			}
			if err != nil || replayed != tc.wantReplay || res.Status != tc.wantRes.Status || string(res.Body) != string(tc.wantRes.Body) {
				t.Fatalf("CreateIdempotent = %d %s replayed=%v err=%v; want %d %s replayed=%v",
					res.Status, res.Body, replayed, err, tc.wantRes.Status, tc.wantRes.Body, tc.wantReplay)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestArticleService_BodyHTMLRenderedOncePerVersion(t *testing.T) {
	t.Parallel()
	mine := articleBy(1, writer.ID, domain.StatusPublished)
	draft := articleBy(2, writer.ID, domain.StatusDraft)
	ctx := context.Background()
	tests := []struct {
		name        string
		buildStubs  func(d articleDeps)
		op          func(s *service.ArticleService) (domain.ArticleView, error)
		renders     int64
		wantHTMLFor string
	}{
		{
			name: "create renders the new body once",
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().Create(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, a domain.Article) (domain.Article, error) {
					a.ID = 9
					return a, nil
				})
				expectView(d, writer.ID, domain.Article{ID: 9, AuthorID: writer.ID}, writer, flags{})
			},
			op: func(s *service.ArticleService) (domain.ArticleView, error) {
				return s.Create(ctx, writer.ID, service.CreateArticleInput{Title: "T", Description: "D", Body: "# new"})
			},
			renders: 1, wantHTMLFor: "# new",
		},
		{
			name: "an edit of the body renders it",
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
				d.articles.EXPECT().Update(gomock.Any(), mine.ID, gomock.Any()).DoAndReturn(applyArticleChange(mine))
				expectView(d, writer.ID, mine, writer, flags{})
			},
			op: func(s *service.ArticleService) (domain.ArticleView, error) {
				return s.Update(ctx, writer.ID, mine.Slug, service.UpdateArticleInput{Body: ptr("edited")})
			},
			renders: 1, wantHTMLFor: "edited",
		},
		{
			name: "an edit of the title keeps the cached HTML",
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), mine.Slug).Return(mine, nil)
				d.articles.EXPECT().Update(gomock.Any(), mine.ID, gomock.Any()).DoAndReturn(applyArticleChange(mine))
				expectView(d, writer.ID, mine, writer, flags{})
			},
			op: func(s *service.ArticleService) (domain.ArticleView, error) {
				return s.Update(ctx, writer.ID, mine.Slug, service.UpdateArticleInput{Title: ptr("Retitled")})
			},
			renders: 0, wantHTMLFor: mine.Body,
		},
		{
			name: "publishing keeps the cached HTML",
			buildStubs: func(d articleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				moved := draft
				moved.Status, moved.BodyHTML = domain.StatusPublished, "" // storage returns no HTML
				d.articles.EXPECT().Transition(gomock.Any(), draft.ID, gomock.Any(), domain.StatusPublished).Return(moved, nil)
				expectView(d, writer.ID, moved, writer, flags{})
			},
			op: func(s *service.ArticleService) (domain.ArticleView, error) {
				return s.Publish(ctx, writer.ID, draft.Slug)
			},
			renders: 0, wantHTMLFor: draft.Body,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			tc.buildStubs(d)
			v, err := tc.op(s)
			if err != nil {
				t.Fatal(err)
			}
			if v.BodyHTML != fakeHTML(tc.wantHTMLFor) {
				t.Errorf("BodyHTML = %q, want %q", v.BodyHTML, fakeHTML(tc.wantHTMLFor))
			}
			if got := d.render.calls.Load(); got != tc.renders {
				t.Errorf("rendered %d times, want %d", got, tc.renders)
			}
		})
	}
}
