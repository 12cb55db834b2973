package repository

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// lockScopeCollections is the scope of UserLockScope that serializes one user's collection
// writes (a cap counts them). The name is the lock's identity, shared with instances of other
// versions during a rolling deploy; the sessions room holds the scopes of sessions and API keys.
const lockScopeCollections = "collections"

// UserRepository stores accounts in PostgreSQL and reads them by id and username through the user
// cache. Reads through the cache come back without PasswordHash; GetByEmail (used by login) and
// Update always read PostgreSQL and carry it. Profiles (by username) and a list's authors fill
// the cache through reads (a read replica that has replayed enough; nil: pool); the signed-in
// user by id and everything sign-in reads stay on the primary.
type UserRepository struct {
	pool   *pgxpool.Pool
	reads  *pg.ReadRouter
	q      dao.Querier
	cache  *cache.UserCache
	emails *UserEmails
	log    *slog.Logger
}

// NewUserRepository returns the repository. q runs single statements outside transactions; it is
// normally NewQuerier(), and tests may wrap it to count queries.
func NewUserRepository(pool *pgxpool.Pool, q dao.Querier, c *cache.UserCache, log *slog.Logger, reads *pg.ReadRouter) *UserRepository {
	return &UserRepository{pool: pool, reads: reads, q: q, cache: c, emails: &UserEmails{pool: pool, q: q, log: log}, log: log}
}

// Create inserts a new user.
func (r *UserRepository) Create(ctx context.Context, u domain.User) (domain.User, error) {
	row, err := r.q.UserInsert(ctx, r.pool, userInsertParams(u))
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "insert user")
	}
	// A lookup of this username just before the insert may have left a null marker behind.
	r.invalidateNow(ctx, row.ID, row.Username)
	return userFromRow(row), nil
}

// CreateIn inserts a new user in the caller's unit of work. The insert runs in a savepoint, so a
// taken email or username (domain.ErrEmailTaken, domain.ErrUsernameTaken) leaves the unit of work
// usable, for storing that answer.
func (r *UserRepository) CreateIn(ctx context.Context, stx service.Tx, u domain.User) (domain.User, error) {
	tx := pg.TxOf(stx)
	var row dao.User
	err := tx.Savepoint(ctx, func(db pgx.Tx) error {
		var err error
		row, err = r.q.UserInsert(ctx, db, userInsertParams(u))
		return err
	})
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "insert user")
	}
	tx.AfterCommit(func(ctx context.Context) { r.invalidateNow(ctx, row.ID, row.Username) })
	return userFromRow(row), nil
}

func userInsertParams(u domain.User) dao.UserInsertParams {
	return dao.UserInsertParams{Email: u.Email, EmailCanonical: service.CanonicalEmail(u.Email), Username: u.Username, PasswordHash: u.PasswordHash, Bio: u.Bio, Image: u.Image}
}

// GetByID returns the user with id, through the cache.
func (r *UserRepository) GetByID(ctx context.Context, id int64) (domain.User, error) {
	return r.cache.ByID(ctx, id, func(ctx context.Context) (domain.User, error) {
		row, err := r.q.UserGetByID(ctx, r.pool, id)
		if err != nil {
			return domain.User{}, pg.Wrapf(err, "get user %d", id)
		}
		return userFromRow(row), nil
	})
}

// GetByUsername returns the user with username (case-insensitive), through the cache.
func (r *UserRepository) GetByUsername(ctx context.Context, username string) (domain.User, error) {
	return r.cache.ByUsername(ctx, username, func(ctx context.Context) (domain.User, error) {
		row, err := r.q.UserGetByUsername(ctx, pg.ReadsOn(ctx, r.reads, r.pool), username)
		if err != nil {
			return domain.User{}, pg.Wrapf(err, "get user %q", username)
		}
		return userFromRow(row), nil
	})
}

// GetByEmail returns the user with email (compared canonically), password hash included. It
// bypasses the cache.
func (r *UserRepository) GetByEmail(ctx context.Context, email string) (domain.User, error) {
	row, err := r.byEmail(ctx, service.CanonicalEmail(email), false)
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "get user by email")
	}
	return userFromRow(row), nil
}

// byEmail reads the account whose canonical email is key. A row whose own email is not that
// mailbox under the current rule (its form was written by the old rule and not rechecked yet,
// see emailrecheck.go) is not it: never returned, so no lookup crosses mailboxes. With repair, such
// a row is rechecked on the spot (it holds key, which another mailbox may need) and the lookup
// runs again.
func (r *UserRepository) byEmail(ctx context.Context, key string, repair bool) (dao.User, error) {
	row, err := r.q.UserGetByEmail(ctx, r.pool, key)
	if err != nil || service.CanonicalEmail(row.Email) == key {
		return row, err
	}
	if !repair {
		return dao.User{}, pgx.ErrNoRows
	}
	if _, _, err := r.emails.recheckEmail(ctx, row.ID, row.Email, row.EmailCanonical); err != nil {
		return dao.User{}, err
	}
	return r.byEmail(ctx, key, false)
}

// Update locks the user's row, applies change and writes the result, all in one transaction; then
// it drops the cache entries under the old and the new username.
func (r *UserRepository) Update(ctx context.Context, id int64, change func(*domain.User) error) (domain.User, error) {
	var after domain.User
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		var err error
		after, err = r.UpdateIn(ctx, tx, id, change)
		return err
	})
	if err != nil {
		return domain.User{}, err
	}
	return after, nil
}

// UpdateIn is Update in the caller's unit of work, so writes it makes commit with the user's; the
// cache entries are dropped once tx has committed.
func (r *UserRepository) UpdateIn(ctx context.Context, stx service.Tx, id int64, change func(*domain.User) error) (domain.User, error) {
	tx := pg.TxOf(stx)
	before, err := r.q.UserGetByIDForUpdate(ctx, tx, id)
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "lock user %d", id)
	}
	u := userFromRow(before)
	if err := change(&u); err != nil {
		return domain.User{}, err
	}
	after, err := r.q.UserUpdate(ctx, tx, dao.UserUpdateParams{
		ID: id, Email: u.Email, EmailCanonical: service.CanonicalEmail(u.Email), Username: u.Username, PasswordHash: u.PasswordHash, Bio: u.Bio, Image: u.Image,
	})
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "update user %d", id)
	}
	tx.AfterCommit(func(ctx context.Context) { r.invalidateNow(ctx, id, before.Username, after.Username) })
	return userFromRow(after), nil
}

// HoldIfPasswordIn holds user id's row in tx (FOR SHARE, until tx ends) if its password hash is
// still hash (UserLockIfPassword); held is false otherwise.
func (r *UserRepository) HoldIfPasswordIn(ctx context.Context, tx service.Tx, id int64, hash string) (bool, error) {
	_, err := r.q.UserLockIfPassword(ctx, pg.TxOf(tx), dao.UserLockIfPasswordParams{ID: id, PasswordHash: hash})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, pg.Wrapf(err, "hold user %d", id)
	}
	return true, nil
}

// ReplacePasswordHash swaps the hash only if it still equals oldHash. Hashes are never cached, so
// no cache entry changes.
func (r *UserRepository) ReplacePasswordHash(ctx context.Context, id int64, oldHash, newHash string) error {
	return pg.Wrapf(r.q.UserUpdatePasswordHash(ctx, r.pool, dao.UserUpdatePasswordHashParams{
		ID: id, OldPasswordHash: oldHash, PasswordHash: newHash,
	}), "replace password hash of user %d", id)
}

// invalidateNow drops cached entries after a committed write. PostgreSQL already has the truth, so
// a failure only leaves a stale entry for at most one TTL: it is logged, not returned.
func (r *UserRepository) invalidateNow(ctx context.Context, id int64, usernames ...string) {
	if err := r.cache.Invalidate(context.WithoutCancel(ctx), id, usernames...); err != nil {
		r.log.WarnContext(ctx, "user cache invalidation failed", "user_id", id, "err", err)
	}
}

func userFromRow(row dao.User) domain.User {
	return domain.User{
		ID: row.ID, Email: row.Email, Username: row.Username, PasswordHash: row.PasswordHash,
		Bio: row.Bio, Image: row.Image, EmailVerified: row.EmailVerifiedAt.Valid, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		Role: roleOf(row.Role), Suspension: domain.Suspension{Until: row.SuspendedUntil.Time, Reason: row.SuspensionReason},
	}
}

// roleOf reads a stored role; "" (a row or cache entry from before roles) is a user.
func roleOf(s string) domain.Role {
	if r, ok := domain.ParseRole(s); ok {
		return r
	}
	return domain.RoleUser
}

// GetByIDs returns the users among ids that exist (the authors of a list's page), through the
// user cache by id: one pipelined lookup, and one query for the misses.
func (r *UserRepository) GetByIDs(ctx context.Context, ids []int64) (map[int64]domain.User, error) {
	if len(ids) == 0 {
		return map[int64]domain.User{}, nil
	}
	return r.cache.ByIDs(ctx, ids, func(ctx context.Context, ids []int64) (map[int64]domain.User, error) {
		rows, err := r.q.UserGetByIDs(ctx, pg.ReadsOn(ctx, r.reads, r.pool), ids)
		if err != nil {
			return nil, pg.Wrapf(err, "get %d users", len(ids))
		}
		out := make(map[int64]domain.User, len(rows))
		for _, row := range rows {
			u := userFromRow(row)
			u.PasswordHash = "" // lists never need it; keep it out of memory that outlives the request
			out[u.ID] = u
		}
		return out, nil
	})
}

// FindOrCreateByTarget returns the user with the code login's email or phone, creating one on first
// login. Two first logins racing both insert; the loser's unique violation sends it to read the
// winner's row, so exactly one account exists. A phone account gets a placeholder email under
// .invalid; should that placeholder be taken by an account without this phone (registered before
// the domain was refused), the account gets a placeholder with a random tail instead, so nobody
// can block a number's code login.
func (r *UserRepository) FindOrCreateByTarget(ctx context.Context, t domain.CodeTarget, passwordHash string) (domain.User, error) {
	find := func() (dao.User, error) {
		if t.Channel == "phone" {
			return r.q.UserGetByPhone(ctx, r.pool, t.Address)
		}
		return r.byEmail(ctx, service.CanonicalEmail(t.Address), true)
	}
	row, err := find()
	if err == nil {
		return userFromRow(row), nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return domain.User{}, pg.Wrapf(err, "find code-login user")
	}
	email, phone := t.Address, pgtype.Text{}
	if t.Channel == "phone" {
		// Accounts need an email; a phone account gets one under the reserved .invalid domain.
		email, phone = strings.TrimPrefix(t.Address, "+")+"@phone.invalid", pgtype.Text{String: t.Address, Valid: true}
	}
	for attempt := 0; ; attempt++ {
		row, err = r.q.UserInsertWithPhone(ctx, r.pool, dao.UserInsertWithPhoneParams{
			Email: email, EmailCanonical: service.CanonicalEmail(email), Username: "user_" + randomHex(5), PasswordHash: passwordHash, Phone: phone,
		})
		if err == nil {
			r.invalidateNow(ctx, row.ID, row.Username)
			return userFromRow(row), nil
		}
		terr := pg.Translate(err)
		if !errors.Is(terr, domain.ErrEmailTaken) && !errors.Is(terr, domain.ErrConflict) && !errors.Is(terr, domain.ErrUsernameTaken) {
			return domain.User{}, pg.Wrapf(err, "create code-login user")
		}
		if row, err = find(); err == nil {
			return userFromRow(row), nil // a concurrent first login made it
		}
		if !errors.Is(err, pgx.ErrNoRows) || attempt == 2 {
			return domain.User{}, pg.Wrapf(err, "create code-login user")
		}
		if t.Channel == "phone" && errors.Is(terr, domain.ErrEmailTaken) {
			email = strings.TrimPrefix(t.Address, "+") + "." + randomHex(4) + "@phone.invalid"
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
