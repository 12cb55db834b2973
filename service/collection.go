package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=collection.go -destination=mocks/collection_mock.go -package=mocks

// CollectionRepository stores collection folders and their items.
type CollectionRepository interface {
	// Create returns domain.ErrCollectionLimit when the owner has max folders already, and
	// domain.ErrCollectionNameTaken when the owner has a folder of that name.
	Create(ctx context.Context, c domain.Collection, max int) (domain.Collection, error)
	Get(ctx context.Context, id int64) (domain.Collection, error)
	ListByOwner(ctx context.Context, ownerID int64) ([]domain.Collection, error)
	Update(ctx context.Context, c domain.Collection) (domain.Collection, error)
	// Delete removes the folder and its items, lowering each item's collect counter.
	Delete(ctx context.Context, id int64) error
	// Add and Remove are idempotent; only a real change moves the article's collect counter.
	Add(ctx context.Context, collectionID, articleID int64) (bool, error)
	Remove(ctx context.Context, collectionID, articleID int64) (bool, error)
	Items(ctx context.Context, collectionID int64, after *domain.Cursor, limit int) ([]domain.CollectionItem, error)
}

// CollectionService manages a user's collection folders.
type CollectionService struct {
	cols     CollectionRepository
	articles *ArticleService
}

// NewCollectionService returns a CollectionService.
func NewCollectionService(cols CollectionRepository, articles *ArticleService) *CollectionService {
	return &CollectionService{cols: cols, articles: articles}
}

// CollectionInput carries the fields to set; nil means unchanged (on update) or empty (on create).
type CollectionInput struct {
	Name, Description *string
}

// MaxCollections bounds how many folders one user may have: the list of them is one page.
const MaxCollections = 200

// Create makes a folder for viewerID.
func (s *CollectionService) Create(ctx context.Context, viewerID int64, in CollectionInput) (domain.Collection, error) {
	name, desc := "", ""
	if in.Name != nil {
		name = *in.Name
	}
	if in.Description != nil {
		desc = *in.Description
	}
	v := &domain.ValidationError{}
	domain.ValidateCollection(v, &name, &desc)
	if err := v.OrNil(); err != nil {
		return domain.Collection{}, err
	}
	c, err := s.cols.Create(ctx, domain.Collection{OwnerID: viewerID, Name: strings.TrimSpace(name), Description: desc}, MaxCollections)
	if errors.Is(err, domain.ErrCollectionLimit) {
		return domain.Collection{}, domain.NewValidationError("collection", fmt.Sprintf("you have %d collections already, the most one account may have; delete one first", MaxCollections))
	}
	return c, nameTakenAsValidation(err)
}

// List returns viewerID's folders.
func (s *CollectionService) List(ctx context.Context, viewerID int64) ([]domain.Collection, error) {
	return s.cols.ListByOwner(ctx, viewerID)
}

// Update renames or re-describes one of viewerID's folders.
func (s *CollectionService) Update(ctx context.Context, viewerID, id int64, in CollectionInput) (domain.Collection, error) {
	v := &domain.ValidationError{}
	domain.ValidateCollection(v, in.Name, in.Description)
	if err := v.OrNil(); err != nil {
		return domain.Collection{}, err
	}
	c, err := s.owned(ctx, viewerID, id)
	if err != nil {
		return domain.Collection{}, err
	}
	if in.Name != nil {
		c.Name = strings.TrimSpace(*in.Name)
	}
	if in.Description != nil {
		c.Description = *in.Description
	}
	c, err = s.cols.Update(ctx, c)
	return c, nameTakenAsValidation(err)
}

// Delete removes one of viewerID's folders.
func (s *CollectionService) Delete(ctx context.Context, viewerID, id int64) error {
	if _, err := s.owned(ctx, viewerID, id); err != nil {
		return err
	}
	return s.cols.Delete(ctx, id)
}

// Collect puts a readable article into one of viewerID's folders; doing it twice changes nothing.
func (s *CollectionService) Collect(ctx context.Context, viewerID int64, slug string, collectionID int64) (domain.ArticleView, error) {
	return s.setItem(ctx, viewerID, slug, collectionID, true)
}

// Uncollect takes an article out of one of viewerID's folders.
func (s *CollectionService) Uncollect(ctx context.Context, viewerID int64, slug string, collectionID int64) (domain.ArticleView, error) {
	return s.setItem(ctx, viewerID, slug, collectionID, false)
}

func (s *CollectionService) setItem(ctx context.Context, viewerID int64, slug string, collectionID int64, add bool) (domain.ArticleView, error) {
	if collectionID <= 0 {
		return domain.ArticleView{}, domain.NewValidationError("collectionId", "can't be blank")
	}
	a, err := s.articles.visible(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	if _, err := s.owned(ctx, viewerID, collectionID); err != nil {
		return domain.ArticleView{}, err
	}
	if add {
		_, err = s.cols.Add(ctx, collectionID, a.ID)
	} else {
		_, err = s.cols.Remove(ctx, collectionID, a.ID)
	}
	if err != nil {
		return domain.ArticleView{}, err
	}
	return s.articles.view(ctx, viewerID, a)
}

// Articles lists one of viewerID's folders, most recently added first. Articles that are no
// longer readable (withdrawn by their author) are left out of the page.
func (s *CollectionService) Articles(ctx context.Context, viewerID, id int64, p domain.Page) (ArticleList, error) {
	if _, err := s.owned(ctx, viewerID, id); err != nil {
		return ArticleList{}, err
	}
	items, err := s.cols.Items(ctx, id, p.Cursor, p.Limit+1)
	if err != nil {
		return ArticleList{}, err
	}
	items, more := domain.CutPage(items, p.Limit)
	return articlesByIDs(ctx, s.articles, viewerID, items, more, func(it domain.CollectionItem) (int64, domain.Cursor) {
		return it.ArticleID, domain.Cursor{CreatedAt: it.AddedAt, ID: it.ArticleID}
	})
}

func (s *CollectionService) owned(ctx context.Context, viewerID, id int64) (domain.Collection, error) {
	c, err := s.cols.Get(ctx, id)
	if err != nil {
		return domain.Collection{}, err
	}
	if c.OwnerID != viewerID {
		return domain.Collection{}, domain.ErrForbidden
	}
	return c, nil
}

func nameTakenAsValidation(err error) error {
	if err != nil && errors.Is(err, domain.ErrCollectionNameTaken) {
		return domain.NewValidationError("name", "has already been taken")
	}
	return err
}
