package service

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=search_people.go -destination=mocks/search_people_mock.go -package=mocks

// UserSearcher finds users for a search box.
type UserSearcher interface {
	// SearchUsers returns the ids of at most limit users matching q, best first: the exact
	// username, usernames starting with q, usernames similar to q, then users whose bio has q's
	// words.
	SearchUsers(ctx context.Context, q string, limit int) ([]int64, error)
}

// PeopleSearchService answers people search with public profiles as the viewer sees them.
type PeopleSearchService struct {
	search  UserSearcher
	users   UserRepository
	follows FollowRepository
}

// NewPeopleSearchService returns the service over its ports.
func NewPeopleSearchService(search UserSearcher, users UserRepository, follows FollowRepository) *PeopleSearchService {
	return &PeopleSearchService{search: search, users: users, follows: follows}
}

// Users returns the profiles matching q in the searcher's order, with following as viewerID (0:
// anonymous) sees it. The users are read through the user cache and the follow flags in one
// batch; a user deleted between the search and the read is left out.
func (s *PeopleSearchService) Users(ctx context.Context, viewerID int64, q string, limit int) ([]domain.Profile, error) {
	ids, err := s.search.SearchUsers(ctx, q, limit)
	if err != nil || len(ids) == 0 {
		return []domain.Profile{}, err
	}
	users, err := s.users.GetByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	following := map[int64]bool{}
	if viewerID != 0 {
		others := make([]int64, 0, len(ids))
		for _, id := range ids {
			if id != viewerID {
				others = append(others, id)
			}
		}
		if following, err = s.follows.FollowingAmong(ctx, viewerID, others); err != nil {
			return nil, err
		}
	}
	out := make([]domain.Profile, 0, len(ids))
	for _, id := range ids {
		if u, ok := users[id]; ok {
			out = append(out, domain.ProfileOf(u, following[id]))
		}
	}
	return out, nil
}
