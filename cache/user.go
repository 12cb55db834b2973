package cache

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// UserCache caches users by id and by username. It never stores password hashes: users read
// through it come back with an empty PasswordHash.
type UserCache struct {
	rt *ReadThrough[cachedUser]
	ks Keyspace
}

// NewUserCache returns the user cache.
func NewUserCache(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *UserCache {
	return &UserCache{rt: NewReadThrough[cachedUser](rdb, "user", policy, log), ks: ks}
}

type cachedUser struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Username  string    `json:"username"`
	Bio       string    `json:"bio"`
	Image     string    `json:"image"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Role and the suspension decide what a request may do (authentication reads the user
	// through this cache); moderation drops the entry everywhere before it answers.
	Role             domain.Role `json:"role,omitempty"`
	SuspendedUntil   time.Time   `json:"suspendedUntil,omitzero"`
	SuspensionReason string      `json:"suspensionReason,omitempty"`
}

func toCached(u domain.User) cachedUser {
	return cachedUser{ID: u.ID, Email: u.Email, Username: u.Username, Bio: u.Bio, Image: u.Image, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt,
		Role: u.Role, SuspendedUntil: u.Suspension.Until, SuspensionReason: u.Suspension.Reason}
}

func (c cachedUser) domain() domain.User {
	role := c.Role
	if role == "" {
		role = domain.RoleUser // an entry written before roles
	}
	return domain.User{ID: c.ID, Email: c.Email, Username: c.Username, Bio: c.Bio, Image: c.Image, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		Role: role, Suspension: domain.Suspension{Until: c.SuspendedUntil, Reason: c.SuspensionReason}}
}

// ByID returns the user with id, calling load on a miss.
func (c *UserCache) ByID(ctx context.Context, id int64, load func(context.Context) (domain.User, error)) (domain.User, error) {
	return c.get(ctx, c.idKey(id), load)
}

// ByIDs returns the users among ids that exist, keyed by id, calling load once for the misses.
func (c *UserCache) ByIDs(ctx context.Context, ids []int64, load func(context.Context, []int64) (map[int64]domain.User, error)) (map[int64]domain.User, error) {
	keys := make([]string, len(ids))
	idOf := make(map[string]int64, len(ids))
	for i, id := range ids {
		keys[i] = c.idKey(id)
		idOf[keys[i]] = id
	}
	got, err := c.rt.GetMany(ctx, keys, func(ctx context.Context, missing []string) (map[string]cachedUser, error) {
		want := make([]int64, len(missing))
		for i, k := range missing {
			want[i] = idOf[k]
		}
		users, err := load(ctx, want)
		if err != nil {
			return nil, err
		}
		out := make(map[string]cachedUser, len(users))
		for id, u := range users {
			out[c.idKey(id)] = toCached(u)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]domain.User, len(got))
	for key, cu := range got {
		out[idOf[key]] = cu.domain()
	}
	return out, nil
}

// ByUsername returns the user with username (case-insensitive), calling load on a miss.
func (c *UserCache) ByUsername(ctx context.Context, username string, load func(context.Context) (domain.User, error)) (domain.User, error) {
	return c.get(ctx, c.nameKey(username), load)
}

// Invalidate drops the entries of user id under each of its usernames (old and new on a rename).
func (c *UserCache) Invalidate(ctx context.Context, id int64, usernames ...string) error {
	keys := []string{c.idKey(id)}
	for _, n := range usernames {
		keys = append(keys, c.nameKey(n))
	}
	return c.rt.Delete(ctx, keys...)
}

// InvalidateEverywhere is Invalidate that returns once every instance has dropped its in-process
// copies (a deleted account: its next read anywhere must miss).
func (c *UserCache) InvalidateEverywhere(ctx context.Context, id int64, usernames ...string) error {
	keys := []string{c.idKey(id)}
	for _, n := range usernames {
		keys = append(keys, c.nameKey(n))
	}
	return c.rt.DeleteAcked(ctx, keys...)
}

// Stats exposes the cache's counters.
func (c *UserCache) Stats() *Stats { return &c.rt.Stats }

func (c *UserCache) get(ctx context.Context, key string, load func(context.Context) (domain.User, error)) (domain.User, error) {
	cu, err := c.rt.Get(ctx, key, func(ctx context.Context) (cachedUser, error) {
		u, err := load(ctx)
		return toCached(u), err
	})
	if err != nil {
		return domain.User{}, err
	}
	return cu.domain(), nil
}

func (c *UserCache) idKey(id int64) string { return c.ks.Key("user", "id", strconv.FormatInt(id, 10)) }

func (c *UserCache) nameKey(username string) string {
	return c.ks.Key("user", "name", strings.ToLower(username))
}
