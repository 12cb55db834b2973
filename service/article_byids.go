package service

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

// articlesByIDs turns a page of references (history entries, folder items) into article views,
// in the page's order, with the same batched lookups as any list. References to articles the
// viewer can no longer read are skipped. NextCursor, when more references follow (the caller read
// one beyond the page to know), is the position of the page's last reference.
func articlesByIDs[T any](ctx context.Context, s *ArticleService, viewerID int64, refs []T, more bool, key func(T) (int64, domain.Cursor)) (ArticleList, error) {
	out := ArticleList{Articles: []domain.ArticleView{}}
	if len(refs) == 0 {
		return out, nil
	}
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i], _ = key(r)
	}
	arts, err := s.articles.GetByIDs(ctx, ids)
	if err != nil {
		return ArticleList{}, err
	}
	byID := make(map[int64]domain.Article, len(arts))
	for _, a := range arts {
		byID[a.ID] = a
	}
	ordered := make([]domain.Article, 0, len(refs))
	for _, id := range ids {
		if a, ok := byID[id]; ok && a.VisibleTo(viewerID) {
			ordered = append(ordered, a)
		}
	}
	views, err := s.views(ctx, viewerID, ordered)
	if err != nil {
		return ArticleList{}, err
	}
	out.Articles, out.Total = views, int64(len(views))
	if more {
		_, last := key(refs[len(refs)-1])
		out.NextCursor = &last
	}
	return out, nil
}
