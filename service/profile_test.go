package service_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type profileDeps struct {
	users   *mocks.MockUserRepository
	follows *mocks.MockFollowRepository
	blocks  *mocks.MockBlockRepository
}

func newProfileService(t *testing.T) (*service.ProfileService, profileDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := profileDeps{users: mocks.NewMockUserRepository(ctrl), follows: mocks.NewMockFollowRepository(ctrl), blocks: mocks.NewMockBlockRepository(ctrl)}
	return service.NewProfileService(d.users, d.follows, d.blocks, txUnitOfWork{noHooksTx{}}), d
}

// noBlocksBetween expects the follow's unit of work to lock the pair and find no block.
func noBlocksBetween(d profileDeps) {
	d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil)
	d.blocks.EXPECT().BetweenIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(false, false, nil)
}

const viewer int64 = 3 // the authenticated caller; jake (id 7) is the profile looked at

var jakeProfile = domain.Profile{Username: jake.Username, Bio: jake.Bio, Image: jake.Image}

func followingJake() domain.Profile {
	p := jakeProfile
	p.Following = true
	return p
}

func wantProfile(want domain.Profile) func(t *testing.T, p domain.Profile, err error) {
	return func(t *testing.T, p domain.Profile, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("profile = %+v, want %+v", p, want)
		}
	}
}

func wantErr(target error) func(t *testing.T, p domain.Profile, err error) {
	return func(t *testing.T, p domain.Profile, err error) {
		t.Helper()
		requireErrorIs(t, err, target)
		if p != (domain.Profile{}) {
			t.Errorf("profile = %+v alongside an error, want the zero profile", p)
		}
	}
}

func unknownUser(d profileDeps) {
	d.users.EXPECT().GetByUsername(gomock.Any(), "nobody").Return(domain.User{}, fmt.Errorf("get: %w", domain.ErrNotFound))
	d.follows.EXPECT().IsFollowing(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.follows.EXPECT().FollowIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.follows.EXPECT().Unfollow(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.blocks.EXPECT().LockPairIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func TestProfileService_Get(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		viewerID   int64
		username   string
		buildStubs func(d profileDeps)
		check      func(t *testing.T, p domain.Profile, err error)
	}{
		{
			name:     "anonymous viewer never asks about follows",
			viewerID: 0,
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().IsFollowing(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantProfile(jakeProfile),
		},
		{
			name:     "viewer who follows",
			viewerID: viewer,
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().IsFollowing(gomock.Any(), viewer, jake.ID).Return(true, nil)
				d.blocks.EXPECT().BlockedBy(gomock.Any(), viewer).Return(nil, nil)
			},
			check: wantProfile(followingJake()),
		},
		{
			name:     "viewer who does not follow",
			viewerID: viewer,
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().IsFollowing(gomock.Any(), viewer, jake.ID).Return(false, nil)
				d.blocks.EXPECT().BlockedBy(gomock.Any(), viewer).Return([]int64{2, 9}, nil)
			},
			check: wantProfile(jakeProfile),
		},
		{
			name:     "viewer who blocks",
			viewerID: viewer,
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().IsFollowing(gomock.Any(), viewer, jake.ID).Return(false, nil)
				d.blocks.EXPECT().BlockedBy(gomock.Any(), viewer).Return([]int64{jake.ID}, nil)
			},
			check: wantProfile(func() domain.Profile { p := jakeProfile; p.Blocking = true; return p }()),
		},
		{
			name:     "own profile is not followed",
			viewerID: jake.ID,
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().IsFollowing(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantProfile(jakeProfile),
		},
		{
			name:       "unknown username",
			viewerID:   viewer,
			username:   "nobody",
			buildStubs: unknownUser,
			check:      wantErr(domain.ErrNotFound),
		},
		{
			name:     "follow lookup failure passes through",
			viewerID: viewer,
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().IsFollowing(gomock.Any(), viewer, jake.ID).Return(false, domain.ErrUnavailable)
			},
			check: wantErr(domain.ErrUnavailable),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newProfileService(t)
			tc.buildStubs(d)
			p, err := svc.Get(context.Background(), tc.viewerID, tc.username)
			tc.check(t, p, err)
		})
	}
}

func TestProfileService_Follow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		username   string
		buildStubs func(d profileDeps)
		check      func(t *testing.T, p domain.Profile, err error)
	}{
		{
			name:     "follows",
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				noBlocksBetween(d)
				d.follows.EXPECT().FollowIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil)
			},
			check: wantProfile(followingJake()),
		},
		{
			name:     "a user who blocks the viewer cannot be followed",
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil)
				d.blocks.EXPECT().BetweenIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(false, true, nil)
				d.follows.EXPECT().FollowIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantErr(domain.ErrBlockedByTarget),
		},
		{
			name:     "a user the viewer blocks cannot be followed",
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil)
				d.blocks.EXPECT().BetweenIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(true, false, nil)
				d.follows.EXPECT().FollowIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantErr(domain.ErrBlockingTarget),
		},
		{
			name:     "cannot follow yourself",
			username: "me",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "me").Return(domain.User{ID: viewer, Username: "me"}, nil)
				d.follows.EXPECT().FollowIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.blocks.EXPECT().LockPairIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Profile, err error) {
				requireValidation(t, err, map[string][]string{"username": {"you cannot follow yourself"}})
			},
		},
		{
			name:       "unknown username",
			username:   "nobody",
			buildStubs: unknownUser,
			check:      wantErr(domain.ErrNotFound),
		},
		{
			name:     "follower deleted mid-request is unauthorized",
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				noBlocksBetween(d)
				d.follows.EXPECT().FollowIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(fmt.Errorf("insert follow: %w", domain.ErrNotFound))
			},
			check: wantErr(domain.ErrUnauthorized),
		},
		{
			name:     "storage failure passes through",
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				noBlocksBetween(d)
				d.follows.EXPECT().FollowIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(domain.ErrUnavailable)
			},
			check: wantErr(domain.ErrUnavailable),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newProfileService(t)
			tc.buildStubs(d)
			p, err := svc.Follow(context.Background(), viewer, tc.username)
			tc.check(t, p, err)
		})
	}
}

func TestProfileService_Unfollow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		username   string
		buildStubs func(d profileDeps)
		check      func(t *testing.T, p domain.Profile, err error)
	}{
		{
			name:     "unfollows",
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().Unfollow(gomock.Any(), viewer, jake.ID).Return(nil)
			},
			check: wantProfile(jakeProfile),
		},
		{
			name:       "unknown username",
			username:   "nobody",
			buildStubs: unknownUser,
			check:      wantErr(domain.ErrNotFound),
		},
		{
			name:     "storage failure passes through",
			username: "jake",
			buildStubs: func(d profileDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.follows.EXPECT().Unfollow(gomock.Any(), viewer, jake.ID).Return(errors.New("connection reset"))
			},
			check: func(t *testing.T, _ domain.Profile, err error) {
				if err == nil {
					t.Fatal("Unfollow succeeded, want the storage error")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newProfileService(t)
			tc.buildStubs(d)
			p, err := svc.Unfollow(context.Background(), viewer, tc.username)
			tc.check(t, p, err)
		})
	}
}

// Following and unfollowing are idempotent: repeating either succeeds with the same answer, and
// the service leaves deduplication to the repository instead of failing the second call.
func TestProfileService_FollowUnfollowAreIdempotent(t *testing.T) {
	t.Parallel()
	svc, d := newProfileService(t)
	d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil).Times(4)
	d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil).Times(2)
	d.blocks.EXPECT().BetweenIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(false, false, nil).Times(2)
	d.follows.EXPECT().FollowIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil).Times(2)
	d.follows.EXPECT().Unfollow(gomock.Any(), viewer, jake.ID).Return(nil).Times(2)

	ctx := context.Background()
	for i := range 2 {
		p, err := svc.Follow(ctx, viewer, "jake")
		if err != nil || !p.Following {
			t.Fatalf("Follow #%d = (%+v, %v), want following", i+1, p, err)
		}
	}
	for i := range 2 {
		p, err := svc.Unfollow(ctx, viewer, "jake")
		if err != nil || p.Following {
			t.Fatalf("Unfollow #%d = (%+v, %v), want not following", i+1, p, err)
		}
	}
}
