package service_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

func TestPeopleSearchService_Users(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	users := map[int64]domain.User{
		1: {ID: 1, Username: "ali", Bio: "b"}, 2: {ID: 2, Username: "alice"}, 3: {ID: 3, Username: "viewer"},
	}
	for _, tc := range []struct {
		name       string
		viewer     int64
		buildStubs func(s *mocks.MockUserSearcher, u *mocks.MockUserRepository, f *mocks.MockFollowRepository)
		want       []domain.Profile
		wantErr    error
	}{
		{
			name: "anonymous: the searcher's order, nobody followed, no follow lookup",
			buildStubs: func(s *mocks.MockUserSearcher, u *mocks.MockUserRepository, f *mocks.MockFollowRepository) {
				s.EXPECT().SearchUsers(a, "ali", 10).Return([]int64{2, 1}, nil)
				u.EXPECT().GetByIDs(a, []int64{2, 1}).Return(map[int64]domain.User{1: users[1], 2: users[2]}, nil)
				f.EXPECT().FollowingAmong(a, a, a).Times(0)
			},
			want: []domain.Profile{{Username: "alice"}, {Username: "ali", Bio: "b"}},
		},
		{
			name:   "signed in: following per profile, the viewer not asked about, a vanished user left out",
			viewer: 3,
			buildStubs: func(s *mocks.MockUserSearcher, u *mocks.MockUserRepository, f *mocks.MockFollowRepository) {
				s.EXPECT().SearchUsers(a, "ali", 10).Return([]int64{1, 3, 9, 2}, nil)
				u.EXPECT().GetByIDs(a, []int64{1, 3, 9, 2}).Return(map[int64]domain.User{1: users[1], 2: users[2], 3: users[3]}, nil)
				f.EXPECT().FollowingAmong(a, int64(3), []int64{1, 9, 2}).Return(map[int64]bool{2: true}, nil)
			},
			want: []domain.Profile{{Username: "ali", Bio: "b"}, {Username: "viewer"}, {Username: "alice", Following: true}},
		},
		{
			name: "nothing found: an empty list, no other lookup",
			buildStubs: func(s *mocks.MockUserSearcher, u *mocks.MockUserRepository, _ *mocks.MockFollowRepository) {
				s.EXPECT().SearchUsers(a, "ali", 10).Return(nil, nil)
				u.EXPECT().GetByIDs(a, a).Times(0)
			},
			want: []domain.Profile{},
		},
		{
			name: "a storage error is the answer",
			buildStubs: func(s *mocks.MockUserSearcher, u *mocks.MockUserRepository, _ *mocks.MockFollowRepository) {
				s.EXPECT().SearchUsers(a, "ali", 10).Return([]int64{1}, nil)
				u.EXPECT().GetByIDs(a, a).Return(nil, domain.ErrUnavailable)
			},
			wantErr: domain.ErrUnavailable,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			s, u, f := mocks.NewMockUserSearcher(ctrl), mocks.NewMockUserRepository(ctrl), mocks.NewMockFollowRepository(ctrl)
			tc.buildStubs(s, u, f)
			got, err := service.NewPeopleSearchService(s, u, f).Users(context.Background(), tc.viewer, "ali", 10)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Users = %+v, want %+v", got, tc.want)
			}
		})
	}
}
