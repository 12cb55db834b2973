package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

func TestSitemapService(t *testing.T) {
	t.Parallel()
	links, err := domain.NewPublicLinks("https://blog.example", "{public}/article/{slug}")
	if err != nil {
		t.Fatal(err)
	}
	older := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newer := older.Add(time.Hour)
	tests := []struct {
		name          string
		call          func(s *service.SitemapService) (any, error)
		buildStubs    func(st *mocks.MockSitemapStore)
		checkResponse func(t *testing.T, got any, err error)
	}{
		{
			name: "pages follow the last place: 0 when nothing is published",
			call: func(s *service.SitemapService) (any, error) { return s.Pages(context.Background()) },
			buildStubs: func(st *mocks.MockSitemapStore) {
				st.EXPECT().LastSitemapSeq(gomock.Any()).Return(int64(0), nil)
			},
			checkResponse: func(t *testing.T, got any, err error) {
				if err != nil || got.(int) != 0 {
					t.Errorf("%v %v", got, err)
				}
			},
		},
		{
			name: "place 1000 starts page 2",
			call: func(s *service.SitemapService) (any, error) { return s.Pages(context.Background()) },
			buildStubs: func(st *mocks.MockSitemapStore) {
				st.EXPECT().LastSitemapSeq(gomock.Any()).Return(int64(domain.SitemapPageSize), nil)
			},
			checkResponse: func(t *testing.T, got any, err error) {
				if err != nil || got.(int) != 2 {
					t.Errorf("%v %v", got, err)
				}
			},
		},
		{
			name: "a page reads its range and links each slug",
			call: func(s *service.SitemapService) (any, error) { return s.Page(context.Background(), 2) },
			buildStubs: func(st *mocks.MockSitemapStore) {
				st.EXPECT().LastSitemapSeq(gomock.Any()).Return(int64(2500), nil)
				st.EXPECT().SitemapSlice(gomock.Any(), int64(1000), int64(2000)).Return([]service.SitemapArticle{
					{Slug: "b c", UpdatedAt: newer}, {Slug: "a", UpdatedAt: older},
				}, nil)
			},
			checkResponse: func(t *testing.T, got any, err error) {
				p := got.(domain.SitemapPage)
				if err != nil || len(p.Entries) != 2 || p.Entries[0].Loc != "https://blog.example/article/b%20c" ||
					!p.Entries[1].LastMod.Equal(older) || !p.LastMod.Equal(newer) {
					t.Errorf("%+v %v", p, err)
				}
			},
		},
		{
			name: "a page past the last is not found, its range never read",
			call: func(s *service.SitemapService) (any, error) { return s.Page(context.Background(), 4) },
			buildStubs: func(st *mocks.MockSitemapStore) {
				st.EXPECT().LastSitemapSeq(gomock.Any()).Return(int64(2500), nil)
				st.EXPECT().SitemapSlice(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, _ any, err error) {
				if !errors.Is(err, domain.ErrNotFound) {
					t.Errorf("err %v", err)
				}
			},
		},
		{
			name: "page 0 is not found without a query",
			call: func(s *service.SitemapService) (any, error) { return s.Page(context.Background(), 0) },
			buildStubs: func(st *mocks.MockSitemapStore) {
				st.EXPECT().LastSitemapSeq(gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, _ any, err error) {
				if !errors.Is(err, domain.ErrNotFound) {
					t.Errorf("err %v", err)
				}
			},
		},
		{
			name: "a storage failure is passed on",
			call: func(s *service.SitemapService) (any, error) { return s.Page(context.Background(), 1) },
			buildStubs: func(st *mocks.MockSitemapStore) {
				st.EXPECT().LastSitemapSeq(gomock.Any()).Return(int64(0), errors.New("down"))
			},
			checkResponse: func(t *testing.T, _ any, err error) {
				if err == nil || errors.Is(err, domain.ErrNotFound) {
					t.Errorf("err %v", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := mocks.NewMockSitemapStore(gomock.NewController(t))
			tc.buildStubs(st)
			got, err := tc.call(service.NewSitemapService(st, links))
			tc.checkResponse(t, got, err)
		})
	}
}
