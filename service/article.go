package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=article.go -destination=mocks/article_mock.go -package=mocks

// ArticleQuery filters the public article list. Empty strings mean "no filter"; AuthorID and
// FavoritedBy are resolved user ids.
type ArticleQuery struct {
	Tag         string
	AuthorID    int64
	FavoritedBy int64
	Page        domain.Page
}

// ArticlePage is one page of a list as storage read it: at most the page's limit of articles, the
// filter's total (ignoring paging), and whether a next page exists (storage reads one row more
// than the limit to know).
type ArticlePage struct {
	Articles []domain.Article
	Total    int64
	More     bool
}

// ArticleRepository stores articles. Lists return a page with the total count of the filter;
// ListByAuthor returns summaries (empty Body), the public lists full articles. Shared with the
// comment use case (comment.go), which finds the article commented on.
type ArticleRepository interface {
	// Create inserts the article; domain.ErrSlugTaken when the slug exists.
	Create(ctx context.Context, a domain.Article) (domain.Article, error)
	// CreateIn is Create in the caller's unit of work; a taken slug leaves tx usable.
	CreateIn(ctx context.Context, tx Tx, a domain.Article) (domain.Article, error)
	GetBySlug(ctx context.Context, slug string) (domain.Article, error)
	// GetByIDs returns the articles among ids that exist, in any order, in one query.
	GetByIDs(ctx context.Context, ids []int64) ([]domain.Article, error)
	// Update locks the article with id, applies change and stores title, description, body and
	// tags with the version guard, in one transaction.
	Update(ctx context.Context, id int64, change func(*domain.Article) error) (domain.Article, error)
	// Transition moves the article to status to if its current status is one of from; otherwise
	// domain.ErrConflict.
	Transition(ctx context.Context, id int64, from []domain.ArticleStatus, to domain.ArticleStatus) (domain.Article, error)
	Delete(ctx context.Context, a domain.Article) error
	ListPublished(ctx context.Context, q ArticleQuery) (ArticlePage, error)
	Feed(ctx context.Context, followerID int64, p domain.Page) (ArticlePage, error)
	// ListByAuthor lists an author's own articles, all statuses unless status is set.
	ListByAuthor(ctx context.Context, authorID int64, status domain.ArticleStatus, p domain.Page) (ArticlePage, error)
	Tags(ctx context.Context) ([]string, error)
}

// InteractiveRepository stores likes and interaction counters. Shared with ranking (rank.go),
// which reads the counters.
type InteractiveRepository interface {
	// Like and Unlike are idempotent: only a change of state moves the counter.
	Like(ctx context.Context, biz domain.Biz, id, userID int64) error
	Unlike(ctx context.Context, biz domain.Biz, id, userID int64) error
	// Counters returns counters for every id (zeros for items never interacted with).
	Counters(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, error)
	// Liked returns which of ids userID currently likes.
	Liked(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error)
	// Collected returns which of ids are in any of userID's collections.
	Collected(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error)
}

// ArticlePreloader warms an article's detail in the cache ahead of a read a use case expects, off
// the request path. Preload returns at once: the preload may be dropped, and its failure is never
// the caller's.
type ArticlePreloader interface {
	Preload(slug string)
}

// MarkdownRenderer renders an article's Markdown body as HTML that is safe to show anywhere
// (render.Renderer). The cached article carries the HTML of its body; a write renders the body it
// answers with.
type MarkdownRenderer interface {
	Render(markdown string) string
}

// ArticleService writes, publishes, lists and likes articles.
type ArticleService struct {
	articles ArticleRepository
	inter    InteractiveRepository
	users    UserRepository
	follows  FollowRepository
	reads    ReadRecorder
	suffix   func() string // random slug suffix for colliding titles
	idem     Idempotency
	preload  ArticlePreloader
	blocks   BlockedSets
	uploads  UploadLookup
	render   MarkdownRenderer
	now      func() time.Time
}

// NewArticleService returns an ArticleService over its ports. suffix makes the random tail that
// disambiguates two articles with the same title.
func NewArticleService(articles ArticleRepository, inter InteractiveRepository, users UserRepository, follows FollowRepository, reads ReadRecorder, suffix SlugSuffix, idem Idempotency, preload ArticlePreloader, blocks BlockedSets, uploads UploadLookup, render MarkdownRenderer) *ArticleService {
	return &ArticleService{articles: articles, inter: inter, users: users, follows: follows, reads: reads, suffix: suffix, idem: idem, preload: preload, blocks: blocks, uploads: uploads, render: render, now: time.Now}
}

// SlugSuffix returns a short random string for slug collisions.
type SlugSuffix func() string

// CreateArticleInput is a new article. Draft keeps it unpublished.
type CreateArticleInput struct {
	Title, Description, Body string
	Tags                     []string
	Draft                    bool
	CoverImage               string
}

// UpdateArticleInput carries the fields to change (nil: unchanged) and, optionally, the version
// the client last saw.
type UpdateArticleInput struct {
	Title, Description, Body *string
	Tags                     *[]string
	Version                  *int32
	CoverImage               *string
}

// ArticleList is one page of a list.
type ArticleList struct {
	Articles   []domain.ArticleView
	Total      int64
	NextCursor *domain.Cursor // set when a next page exists
}

// ListInput filters the public list by tag, author username and favoriting username.
type ListInput struct {
	Tag, Author, Favorited string
	Page                   domain.Page
}

const maxSlugAttempts = 5

// Create validates and stores a new article written by viewerID.
func (s *ArticleService) Create(ctx context.Context, viewerID int64, in CreateArticleInput) (domain.ArticleView, error) {
	a, err := newArticle(viewerID, in)
	if err != nil {
		return domain.ArticleView{}, err
	}
	if a.Uploads, err = newArticleUploads(ctx, s.uploads, a); err != nil {
		return domain.ArticleView{}, err
	}
	return s.create(ctx, viewerID, a, s.articles.Create)
}

// CreateIdempotent is Create under an Idempotency-Key: the article and the rendered answer commit
// together, and a retry gets that answer back.
func (s *ArticleService) CreateIdempotent(ctx context.Context, viewerID int64, in CreateArticleInput, idem Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error) {
	// Everything the answer needs besides the new row is read before the unit of work opens: inside
	// it, a lookup on the pool while the transaction holds a connection could wait for a connection
	// that only the waiting transactions hold. A new article has no likes, reads or collections yet.
	type prepared struct {
		a      domain.Article
		author domain.User
	}
	return runIdempotent(ctx, s.idem, idem,
		func() (prepared, error) {
			a, err := newArticle(viewerID, in)
			if err != nil {
				return prepared{}, err
			}
			if a.Uploads, err = newArticleUploads(ctx, s.uploads, a); err != nil {
				return prepared{}, err
			}
			author, err := s.users.GetByID(ctx, viewerID)
			if errors.Is(err, domain.ErrNotFound) {
				err = domain.ErrUnauthorized // the account vanished mid-request
			}
			return prepared{a: a, author: author}, err
		},
		func(ctx context.Context, tx Tx, p prepared) (domain.ArticleView, error) {
			return s.createWith(ctx, p.a,
				func(ctx context.Context, a domain.Article) (domain.Article, error) {
					return s.articles.CreateIn(ctx, tx, a)
				},
				func(_ context.Context, created domain.Article) (domain.ArticleView, error) {
					return domain.ArticleView{Article: created, Author: domain.ProfileOf(p.author, false)}, nil
				})
		})
}

// newArticle validates the input and builds the article viewerID is about to write.
func newArticle(viewerID int64, in CreateArticleInput) (domain.Article, error) {
	in.Tags = domain.NormalizeTags(in.Tags)
	v := &domain.ValidationError{}
	domain.ValidateArticle(v, &in.Title, &in.Description, &in.Body, in.Tags)
	domain.ValidateImageURL(v, "coverImage", in.CoverImage)
	if err := v.OrNil(); err != nil {
		return domain.Article{}, err
	}
	a := domain.Article{
		AuthorID: viewerID, Title: strings.TrimSpace(in.Title), Description: strings.TrimSpace(in.Description),
		Body: in.Body, Tags: in.Tags, Status: domain.StatusPublished, CoverImage: in.CoverImage,
	}
	if in.Draft {
		a.Status = domain.StatusDraft
	}
	return a, nil
}

// create stores a under its title's slug, or with a random suffix when the slug is taken or
// reserved, through insert.
func (s *ArticleService) create(ctx context.Context, viewerID int64, a domain.Article,
	insert func(ctx context.Context, a domain.Article) (domain.Article, error),
) (domain.ArticleView, error) {
	return s.createWith(ctx, a, insert, func(ctx context.Context, created domain.Article) (domain.ArticleView, error) {
		return s.view(ctx, viewerID, created)
	})
}

// createWith is create with the answer built by viewOf.
func (s *ArticleService) createWith(ctx context.Context, a domain.Article,
	insert func(ctx context.Context, a domain.Article) (domain.Article, error),
	viewOf func(ctx context.Context, created domain.Article) (domain.ArticleView, error),
) (domain.ArticleView, error) {
	base := domain.Slugify(a.Title)
	var err error
	for attempt := 0; attempt < maxSlugAttempts; attempt++ {
		a.Slug = base
		if attempt > 0 || domain.IsReservedSlug(base) {
			a.Slug = base + "-" + s.suffix()
		}
		var created domain.Article
		created, err = insert(ctx, a)
		if err == nil {
			created.BodyHTML = s.render.Render(created.Body)
			return viewOf(ctx, created)
		}
		if !errors.Is(err, domain.ErrSlugTaken) {
			break
		}
	}
	switch {
	case errors.Is(err, domain.ErrNotFound): // the author's account vanished mid-request
		return domain.ArticleView{}, domain.ErrUnauthorized
	case errors.Is(err, domain.ErrSlugTaken):
		return domain.ArticleView{}, domain.NewValidationError("title", "is used by too many articles; choose another title")
	}
	return domain.ArticleView{}, err
}

// Get returns one article as viewerID sees it; drafts and withdrawn articles only to their author.
// Reading a published article records a read event; the counting happens off the request path.
func (s *ArticleService) Get(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error) {
	a, err := s.visible(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	if a.Public() {
		s.RecordRead(viewerID, a.ID)
	}
	return s.view(ctx, viewerID, a)
}

// Update changes an article's content. Only its author may; a stale version is a conflict.
func (s *ArticleService) Update(ctx context.Context, viewerID int64, slug string, in UpdateArticleInput) (domain.ArticleView, error) {
	var tags []string
	if in.Tags != nil {
		tags = domain.NormalizeTags(*in.Tags)
		in.Tags = &tags
	}
	v := &domain.ValidationError{}
	domain.ValidateArticle(v, in.Title, in.Description, in.Body, tags)
	if in.CoverImage != nil {
		domain.ValidateImageURL(v, "coverImage", *in.CoverImage)
	}
	if err := v.OrNil(); err != nil {
		return domain.ArticleView{}, err
	}
	a, err := s.owned(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	// The uploads the edited article refers to are looked up before its unit of work opens (a pool
	// lookup inside it could wait for a connection only waiting transactions hold), from the
	// fields sent and the article as read; an edit touching neither cover nor body keeps them.
	var uploads []int64
	if in.Body != nil || in.CoverImage != nil {
		next := a
		if in.Body != nil {
			next.Body = *in.Body
		}
		if in.CoverImage != nil {
			next.CoverImage = *in.CoverImage
		}
		if uploads, err = articleUploads(ctx, s.uploads, next); err != nil {
			return domain.ArticleView{}, err
		}
	}
	updated, err := s.articles.Update(ctx, a.ID, func(cur *domain.Article) error {
		if cur.AuthorID != viewerID {
			return domain.ErrForbidden
		}
		if in.Version != nil && *in.Version != cur.Version {
			return fmt.Errorf("%w: got %d, the article is at version %d", domain.ErrStaleVersion, *in.Version, cur.Version)
		}
		if in.Title != nil {
			cur.Title = strings.TrimSpace(*in.Title) // the slug stays: links must not break
		}
		if in.Description != nil {
			cur.Description = strings.TrimSpace(*in.Description)
		}
		if in.Body != nil {
			cur.Body = *in.Body
		}
		if in.Tags != nil {
			cur.Tags = domain.NormalizeTags(*in.Tags)
		}
		if in.CoverImage != nil {
			cur.CoverImage = *in.CoverImage
		}
		cur.Uploads = uploads
		return nil
	})
	if err != nil {
		return domain.ArticleView{}, err
	}
	updated.Uploads = nil // what to record, not part of the article's view
	updated.BodyHTML = s.bodyHTML(updated, a)
	return s.view(ctx, viewerID, updated)
}

// Publish makes a draft (or a withdrawn or scheduled article) public. Publishing a scheduled
// article cancels its schedule (#32): its job finds it published and does nothing.
func (s *ArticleService) Publish(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error) {
	return s.transition(ctx, viewerID, slug, []domain.ArticleStatus{domain.StatusDraft, domain.StatusWithdrawn, domain.StatusScheduled}, domain.StatusPublished)
}

// Withdraw hides a published article from readers; its author still sees it. Withdrawing a
// scheduled article cancels its schedule (#32) and leaves it withdrawn.
func (s *ArticleService) Withdraw(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error) {
	return s.transition(ctx, viewerID, slug, []domain.ArticleStatus{domain.StatusPublished, domain.StatusScheduled}, domain.StatusWithdrawn)
}

func (s *ArticleService) transition(ctx context.Context, viewerID int64, slug string, from []domain.ArticleStatus, to domain.ArticleStatus) (domain.ArticleView, error) {
	a, err := s.owned(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	moved, err := s.articles.Transition(ctx, a.ID, from, to)
	if err != nil {
		return domain.ArticleView{}, err
	}
	moved.BodyHTML = s.bodyHTML(moved, a)
	return s.view(ctx, viewerID, moved)
}

// Delete removes an article with its comments, likes and counters. Only its author may.
func (s *ArticleService) Delete(ctx context.Context, viewerID int64, slug string) error {
	a, err := s.owned(ctx, viewerID, slug)
	if err != nil {
		return err
	}
	return s.articles.Delete(ctx, a)
}

// Favorite makes viewerID like the article; liking twice counts once.
func (s *ArticleService) Favorite(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error) {
	a, err := s.visible(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	if err := s.inter.Like(ctx, domain.BizArticle, a.ID, viewerID); err != nil {
		return domain.ArticleView{}, err
	}
	return s.viewLiked(ctx, viewerID, a, true)
}

// Unfavorite removes viewerID's like; unliking an article not liked changes nothing.
func (s *ArticleService) Unfavorite(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error) {
	a, err := s.visible(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	if err := s.inter.Unlike(ctx, domain.BizArticle, a.ID, viewerID); err != nil {
		return domain.ArticleView{}, err
	}
	return s.viewLiked(ctx, viewerID, a, false)
}

// List returns published articles, newest first, filtered by tag, author and favoriting user.
// An unknown author or favoriting user gives an empty list, not an error.
func (s *ArticleService) List(ctx context.Context, viewerID int64, in ListInput) (ArticleList, error) {
	q := ArticleQuery{Tag: in.Tag, Page: in.Page}
	for _, f := range []struct {
		username string
		id       *int64
	}{{in.Author, &q.AuthorID}, {in.Favorited, &q.FavoritedBy}} {
		if f.username == "" {
			continue
		}
		u, err := s.users.GetByUsername(ctx, f.username)
		if errors.Is(err, domain.ErrNotFound) {
			return ArticleList{Articles: []domain.ArticleView{}}, nil
		}
		if err != nil {
			return ArticleList{}, err
		}
		*f.id = u.ID
	}
	blocked, err := blockedSet(ctx, s.blocks, viewerID)
	if err != nil {
		return ArticleList{}, err
	}
	if blocked.Has(q.AuthorID) { // the viewer blocks the author: nothing of theirs to show
		return ArticleList{Articles: []domain.ArticleView{}}, nil
	}
	return s.filtered(ctx, viewerID, blocked, in.Page, func(ctx context.Context, p domain.Page) (ArticlePage, error) {
		q.Page = p
		return s.articles.ListPublished(ctx, q)
	})
}

// Feed returns published articles by the authors viewerID follows, newest first.
func (s *ArticleService) Feed(ctx context.Context, viewerID int64, p domain.Page) (ArticleList, error) {
	blocked, err := blockedSet(ctx, s.blocks, viewerID)
	if err != nil {
		return ArticleList{}, err
	}
	return s.filtered(ctx, viewerID, blocked, p, func(ctx context.Context, p domain.Page) (ArticlePage, error) {
		return s.articles.Feed(ctx, viewerID, p)
	})
}

// filtered reads a page of a public list with read and renders it. When the viewer blocks
// anyone, their articles are left out and the page refilled after them (filterRefill, at most
// MaxRefillRounds reads of the page's size). An offset page is then read as a cursor page of
// offset+limit articles from the start (what an offset read costs anyway) and cut, so the offset
// counts the articles the viewer sees. The total stays the filter's (articles of blocked authors
// included): one counts row, whatever the viewer blocks.
func (s *ArticleService) filtered(ctx context.Context, viewerID int64, blocked domain.BlockSet, p domain.Page, read func(context.Context, domain.Page) (ArticlePage, error)) (ArticleList, error) {
	if len(blocked) == 0 {
		page, err := read(ctx, p)
		if err != nil {
			return ArticleList{}, err
		}
		return s.list(ctx, viewerID, page)
	}
	var total int64
	first := true
	need := p.Limit + p.Offset
	kept, next, more, err := filterRefill(ctx, need, p.Cursor,
		func(ctx context.Context, after *domain.Cursor, n int) ([]domain.Article, bool, error) {
			page, err := read(ctx, domain.Page{Limit: n, Cursor: after})
			if first {
				total, first = page.Total, false
			}
			return page.Articles, page.More, err
		},
		func(a domain.Article) bool { return !blocked.Has(a.AuthorID) },
		func(a domain.Article) *domain.Cursor { return &domain.Cursor{CreatedAt: a.CreatedAt, ID: a.ID} })
	if err != nil {
		return ArticleList{}, err
	}
	kept = kept[min(p.Offset, len(kept)):]
	views, err := s.views(ctx, viewerID, kept)
	if err != nil {
		return ArticleList{}, err
	}
	out := ArticleList{Articles: views, Total: total}
	if more && next != nil {
		out.NextCursor = next
	}
	return out, nil
}

// Mine returns viewerID's own articles in every status (or only status, when set), by cursor or
// offset like the public lists. Serving the first page preloads the newest article's detail: an
// author looking at their list is likely to open it next.
func (s *ArticleService) Mine(ctx context.Context, viewerID int64, status domain.ArticleStatus, p domain.Page) (ArticleList, error) {
	page, err := s.articles.ListByAuthor(ctx, viewerID, status, p)
	if err != nil {
		return ArticleList{}, err
	}
	if p.Offset == 0 && p.Cursor == nil && p.Limit == domain.DefaultPageLimit && len(page.Articles) > 0 {
		s.preload.Preload(page.Articles[0].Slug)
	}
	return s.list(ctx, viewerID, page)
}

// Tags returns the tags in use on published articles, most used first.
func (s *ArticleService) Tags(ctx context.Context) ([]string, error) {
	return s.articles.Tags(ctx)
}

// Counters returns the interaction counts of articles: what an article answer shows that changes
// without any cached entry changing (web keeps anonymous answers and checks them).
func (s *ArticleService) Counters(ctx context.Context, ids []int64) (map[int64]domain.Counters, error) {
	return s.inter.Counters(ctx, domain.BizArticle, ids)
}

// RecordRead records viewerID's read (0: anonymous) of a public article that web answered from a
// kept answer; Get records the reads it serves itself, the same way.
func (s *ArticleService) RecordRead(viewerID, articleID int64) {
	ev := domain.ReadEvent{ArticleID: articleID, UserID: viewerID}
	if viewerID != 0 { // an anonymous read only counts, inside a batch that gets its own id
		ev.ID, ev.At = domain.NewEventID(), s.now()
	}
	s.reads.Record(ev)
}

// ViewerFlags are what makes an article answer a signed-in viewer's own.
type ViewerFlags struct {
	Favorited, Collected bool
	Following            bool // the viewer follows the author (never their own articles)
}

// FlagsOf returns viewerID's flags for the article articleID by authorID, as Get shows them (web
// writes them into an anonymous reader's kept answer).
func (s *ArticleService) FlagsOf(ctx context.Context, viewerID, articleID, authorID int64) (ViewerFlags, error) {
	ids := []int64{articleID}
	liked, err := s.inter.Liked(ctx, viewerID, domain.BizArticle, ids)
	if err != nil {
		return ViewerFlags{}, err
	}
	collected, err := s.inter.Collected(ctx, viewerID, domain.BizArticle, ids)
	if err != nil {
		return ViewerFlags{}, err
	}
	f := ViewerFlags{Favorited: liked[articleID], Collected: collected[articleID]}
	if authorID != viewerID {
		following, err := s.follows.FollowingAmong(ctx, viewerID, []int64{authorID})
		if err != nil {
			return ViewerFlags{}, err
		}
		f.Following = following[authorID]
	}
	return f, nil
}

// visible loads an article and hides it (ErrNotFound) from anyone who may not read it.
func (s *ArticleService) visible(ctx context.Context, viewerID int64, slug string) (domain.Article, error) {
	return loadVisible(ctx, s.articles, viewerID, slug)
}

// loadVisible loads the article with slug; drafts and withdrawn articles are ErrNotFound for
// everyone but their author.
func loadVisible(ctx context.Context, articles ArticleRepository, viewerID int64, slug string) (domain.Article, error) {
	a, err := articles.GetBySlug(ctx, slug)
	if err != nil {
		return domain.Article{}, err
	}
	if !a.VisibleTo(viewerID) {
		return domain.Article{}, domain.ErrNotFound
	}
	return a, nil
}

// bodyHTML returns the HTML of written's body: before's (as read before the write) when the write
// left the body as it was, so an edit of the title or a publication renders nothing.
func (s *ArticleService) bodyHTML(written, before domain.Article) string {
	if written.Body == before.Body && before.BodyHTML != "" {
		return before.BodyHTML
	}
	return s.render.Render(written.Body)
}

// owned loads an article the viewer means to change: hidden ones are 404, others' are 403.
func (s *ArticleService) owned(ctx context.Context, viewerID int64, slug string) (domain.Article, error) {
	a, err := s.visible(ctx, viewerID, slug)
	if err != nil {
		return domain.Article{}, err
	}
	if a.AuthorID != viewerID {
		return domain.Article{}, domain.ErrForbidden
	}
	return a, nil
}

// list renders a page; its cursor is the last article's position, offered only when storage
// found a next page.
func (s *ArticleService) list(ctx context.Context, viewerID int64, page ArticlePage) (ArticleList, error) {
	views, err := s.views(ctx, viewerID, page.Articles)
	if err != nil {
		return ArticleList{}, err
	}
	out := ArticleList{Articles: views, Total: page.Total}
	if page.More && len(page.Articles) > 0 {
		last := page.Articles[len(page.Articles)-1]
		out.NextCursor = &domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return out, nil
}

// view assembles one article for a viewer: the author through the user cache, the counters from
// the counter cache, and the viewer's flags.
func (s *ArticleService) view(ctx context.Context, viewerID int64, a domain.Article) (domain.ArticleView, error) {
	return s.viewKnowing(ctx, viewerID, a, nil)
}

// viewLiked is the view of the article the viewer has just liked (or unliked): its `favorited`
// is what that write made it, so the answer does not read back the flag it has just
// invalidated.
func (s *ArticleService) viewLiked(ctx context.Context, viewerID int64, a domain.Article, liked bool) (domain.ArticleView, error) {
	return s.viewKnowing(ctx, viewerID, a, map[int64]bool{a.ID: liked})
}

func (s *ArticleService) viewKnowing(ctx context.Context, viewerID int64, a domain.Article, liked map[int64]bool) (domain.ArticleView, error) {
	author, err := s.users.GetByID(ctx, a.AuthorID)
	if err != nil {
		return domain.ArticleView{}, err
	}
	views, err := s.assemble(ctx, viewerID, []domain.Article{a}, map[int64]domain.User{author.ID: author}, liked, nil)
	if err != nil {
		return domain.ArticleView{}, err
	}
	return views[0], nil
}

// views assembles a page of articles with a fixed number of batched lookups, whatever its size.
func (s *ArticleService) views(ctx context.Context, viewerID int64, arts []domain.Article) ([]domain.ArticleView, error) {
	return s.viewsCounted(ctx, viewerID, arts, nil)
}

// viewsCounted is views with the articles' counters already read (nil: looked up).
func (s *ArticleService) viewsCounted(ctx context.Context, viewerID int64, arts []domain.Article, counters map[int64]domain.Counters) ([]domain.ArticleView, error) {
	if len(arts) == 0 {
		return []domain.ArticleView{}, nil
	}
	authorIDs := uniqueIDs(arts, func(a domain.Article) int64 { return a.AuthorID })
	authors, err := s.users.GetByIDs(ctx, authorIDs)
	if err != nil {
		return nil, err
	}
	return s.assemble(ctx, viewerID, arts, authors, nil, counters)
}

// assemble composes the views; liked, when not nil, is the viewer's `favorited` for every article
// (known from a write), and counters, when not nil, every article's counters (read with the
// articles); else they are looked up.
func (s *ArticleService) assemble(ctx context.Context, viewerID int64, arts []domain.Article, authors map[int64]domain.User, liked map[int64]bool, counters map[int64]domain.Counters) ([]domain.ArticleView, error) {
	ids := uniqueIDs(arts, func(a domain.Article) int64 { return a.ID })
	var err error
	if counters == nil {
		if counters, err = s.inter.Counters(ctx, domain.BizArticle, ids); err != nil {
			return nil, err
		}
	}
	var following, collected map[int64]bool
	if viewerID != 0 {
		authorIDs := make([]int64, 0, len(authors))
		for id := range authors {
			if id != viewerID {
				authorIDs = append(authorIDs, id)
			}
		}
		if len(authorIDs) > 0 {
			if following, err = s.follows.FollowingAmong(ctx, viewerID, authorIDs); err != nil {
				return nil, err
			}
		}
		if liked == nil {
			if liked, err = s.inter.Liked(ctx, viewerID, domain.BizArticle, ids); err != nil {
				return nil, err
			}
		}
		if collected, err = s.inter.Collected(ctx, viewerID, domain.BizArticle, ids); err != nil {
			return nil, err
		}
	}
	out := make([]domain.ArticleView, 0, len(arts))
	for _, a := range arts {
		author, ok := authors[a.AuthorID]
		if !ok { // deleted between the two queries; the cascade will remove the article too
			continue
		}
		out = append(out, domain.ArticleView{
			Article:   a,
			Author:    domain.ProfileOf(author, following[a.AuthorID]),
			Counters:  counters[a.ID],
			Favorited: liked[a.ID],
			Collected: collected[a.ID],
		})
	}
	return out, nil
}

func uniqueIDs[T any](items []T, id func(T) int64) []int64 {
	seen := make(map[int64]bool, len(items))
	out := make([]int64, 0, len(items))
	for _, it := range items {
		if v := id(it); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
