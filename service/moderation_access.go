package service

import (
	"context"
	"errors"

	"github.com/inkwell-dev/inkwell/domain"
)

// ActorReader loads the account behind a credential, so a use case can check its role. The user
// repository implements it (through its coherent cache: a role change holds on the next request
// on every instance).
type ActorReader interface {
	GetByID(ctx context.Context, id int64) (domain.User, error)
}

// moderatorOf returns the credential's account if it may moderate (a moderator or an admin,
// signed in with a login session); ErrForbidden otherwise. API keys never carry moderation
// powers, whatever their owner's role. Checked before any storage of the use case is touched.
func moderatorOf(ctx context.Context, users ActorReader, cred domain.Credential) (domain.User, error) {
	return actorWith(ctx, users, cred, domain.Role.CanModerate)
}

// adminOf is moderatorOf for admins only.
func adminOf(ctx context.Context, users ActorReader, cred domain.Credential) (domain.User, error) {
	return actorWith(ctx, users, cred, func(r domain.Role) bool { return r == domain.RoleAdmin })
}

func actorWith(ctx context.Context, users ActorReader, cred domain.Credential, may func(domain.Role) bool) (domain.User, error) {
	if cred.UserID == 0 {
		return domain.User{}, domain.ErrUnauthorized
	}
	if cred.IsAPIKey() {
		return domain.User{}, domain.ErrForbidden
	}
	u, err := users.GetByID(ctx, cred.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.User{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.User{}, err
	}
	if !may(u.Role) {
		return domain.User{}, domain.ErrForbidden
	}
	return u, nil
}
