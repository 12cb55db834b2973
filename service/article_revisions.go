package service

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=article_revisions.go -destination=mocks/article_revisions_mock.go -package=mocks

// RevisionStore reads the revisions kept of an article (repository/revisions). They are written
// by the edits themselves, in the edit's unit of work (ArticleRepository.Update keeps the version
// it replaces when domain.Article.KeepsRevisions holds).
type RevisionStore interface {
	// List reads up to limit revisions of articleID older than version before (0: from the
	// newest), newest first, without bodies.
	List(ctx context.Context, articleID int64, before int32, limit int) ([]domain.ArticleRevision, error)
	// Get reads one version with its body; domain.ErrNotFound when it is not kept.
	Get(ctx context.Context, articleID int64, version int32) (domain.ArticleRevision, error)
}

// ArticleEditor is the edit use case (ArticleService.Update): a restore is an edit, so it is
// checked, stored (and itself revisioned), cached and indexed exactly as one.
type ArticleEditor interface {
	Update(ctx context.Context, viewerID int64, slug string, in UpdateArticleInput) (domain.ArticleView, error)
}

// RevisionList is one page of an article's revisions, newest first. NextBefore, when not 0, is
// the version to page on from (the last one shown).
type RevisionList struct {
	Revisions  []domain.ArticleRevision
	NextBefore int32
}

// RevisionService reads an article's revisions and restores one.
type RevisionService struct {
	articles ArticleRepository
	revs     RevisionStore
	users    UserRepository
	editor   ArticleEditor
}

// NewRevisionService returns the revision use cases over their ports.
func NewRevisionService(articles ArticleRepository, revs RevisionStore, users UserRepository, editor ArticleEditor) *RevisionService {
	return &RevisionService{articles: articles, revs: revs, users: users, editor: editor}
}

// List returns one page of the revisions of slug's article, newest first, after version before
// (0: the first page). Only its author and moderators may read them.
func (s *RevisionService) List(ctx context.Context, cred domain.Credential, slug string, before int32, limit int) (RevisionList, error) {
	a, err := s.readable(ctx, cred, slug)
	if err != nil {
		return RevisionList{}, err
	}
	revs, err := s.revs.List(ctx, a.ID, before, limit+1)
	if err != nil {
		return RevisionList{}, err
	}
	revs, more := domain.CutPage(revs, limit)
	out := RevisionList{Revisions: revs}
	if more && len(revs) > 0 {
		out.NextBefore = revs[len(revs)-1].Version
	}
	return out, nil
}

// Get returns one revision of slug's article with its body; domain.ErrNotFound when that version
// is not kept. Only its author and moderators may read it.
func (s *RevisionService) Get(ctx context.Context, cred domain.Credential, slug string, version int32) (domain.ArticleRevision, error) {
	a, err := s.readable(ctx, cred, slug)
	if err != nil {
		return domain.ArticleRevision{}, err
	}
	return s.revs.Get(ctx, a.ID, version)
}

// Restore makes version's content (title, description, body, tags) the article's current one,
// as a new version, through the edit use case: the same checks, the same version guard
// (expected, when set, must be the current version: else domain.ErrStaleVersion), and the
// version it replaces is kept like any edit's. Only the author may restore, moderators
// included: a moderator hides an article, never rewrites it.
func (s *RevisionService) Restore(ctx context.Context, cred domain.Credential, slug string, version int32, expected *int32) (domain.ArticleView, error) {
	a, err := loadVisible(ctx, s.articles, cred.UserID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	if a.AuthorID != cred.UserID {
		return domain.ArticleView{}, domain.ErrForbidden
	}
	rev, err := s.revs.Get(ctx, a.ID, version)
	if err != nil {
		return domain.ArticleView{}, err
	}
	tags := rev.Tags
	return s.editor.Update(ctx, cred.UserID, slug, UpdateArticleInput{
		Title: &rev.Title, Description: &rev.Description, Body: &rev.Body, Tags: &tags, Version: expected,
	})
}

// readable loads the article whose revisions cred means to read: one the viewer cannot see is
// domain.ErrNotFound; its author may read them, so may a moderator (an API key never carries
// that power); anyone else gets domain.ErrForbidden.
func (s *RevisionService) readable(ctx context.Context, cred domain.Credential, slug string) (domain.Article, error) {
	a, err := loadVisible(ctx, s.articles, cred.UserID, slug)
	if err != nil {
		return domain.Article{}, err
	}
	if a.AuthorID == cred.UserID {
		return a, nil
	}
	if _, err := moderatorOf(ctx, s.users, cred); err != nil {
		return domain.Article{}, err
	}
	return a, nil
}
