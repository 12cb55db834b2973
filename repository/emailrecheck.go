package repository

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// The recheck of canonical emails (migration 00025). The rule changed from NFKC plus case
// folding to the mailbox (service.CanonicalEmail); the two agree on every all-ASCII address, and
// IDNA needs Go, so the accounts with a non-ASCII email are recomputed here: the ones that existed
// before the migration, and the ones an instance of an older version writes during a rolling
// upgrade (it stores the old form; the users_email_recheck trigger marks every new email for a
// recheck).

// UserEmails rechecks and lists the accounts' canonical emails: the server's recheck worker
// (RecheckEmails) and `inkwell users collisions` (EmailCollisions). UserRepository uses it to
// repair a row it meets with an old form.
type UserEmails struct {
	pool *pgxpool.Pool
	q    dao.Querier
	log  *slog.Logger
}

// OpenUserEmails returns the rechecks on pool, for a command-line tool.
func OpenUserEmails(pool *pgxpool.Pool, log *slog.Logger) *UserEmails {
	return &UserEmails{pool: pool, q: NewQuerier(), log: log}
}

// NewUserEmails returns the rechecks the user repository uses.
func NewUserEmails(users *UserRepository) *UserEmails { return users.emails }

// emailRecheckBatch is how many accounts one recheck query reads.
const emailRecheckBatch = 500

// duplicateEmailPrefix starts the canonical email of an account whose address another account
// holds (00016 and the recheck): no lookup ever computes it, so the account keeps its row and
// its email but nobody reaches it by email until an operator decides (`inkwell users collisions`).
const duplicateEmailPrefix = "duplicate:"

// RecheckEmails recomputes the canonical email of every account waiting for it, a batch at a
// time, until none is left, and returns how many it changed and how many of those are now marked
// duplicate (their mailbox is another account's). Each account is one guarded statement (its email
// and old form must be unchanged), so instances running it at once, and concurrent writes, change
// nothing twice.
func (r *UserEmails) RecheckEmails(ctx context.Context) (changed, duplicates int, err error) {
	var after int64
	for {
		rows, err := r.q.UserEmailsToRecheck(ctx, r.pool, dao.UserEmailsToRecheckParams{After: after, Lim: emailRecheckBatch})
		if err != nil {
			return changed, duplicates, pg.Wrapf(err, "read accounts to recheck")
		}
		for _, row := range rows {
			c, d, err := r.recheckEmail(ctx, row.ID, row.Email, row.EmailCanonical)
			if err != nil {
				return changed, duplicates, err
			}
			if c {
				changed++
			}
			if d {
				duplicates++
			}
			after = row.ID
		}
		if len(rows) < emailRecheckBatch {
			return changed, duplicates, nil
		}
	}
}

// recheckEmail stores the canonical form of email for account id, whose stored form is old. An
// account marked duplicate stays so (an operator decides). A form another account holds makes
// this one a duplicate, logged and listed, never merged.
func (r *UserEmails) recheckEmail(ctx context.Context, id int64, email, old string) (changed, duplicate bool, err error) {
	canonical := service.CanonicalEmail(email)
	if strings.HasPrefix(old, duplicateEmailPrefix) {
		canonical = old
	}
	n, err := r.q.UserEmailRecheck(ctx, r.pool, dao.UserEmailRecheckParams{ID: id, Email: email, OldCanonical: old, EmailCanonical: canonical})
	if errors.Is(pg.Translate(err), domain.ErrEmailTaken) {
		marked := duplicateEmailPrefix + strconv.FormatInt(id, 10) + ":" + canonical
		n, err = r.q.UserEmailRecheck(ctx, r.pool, dao.UserEmailRecheckParams{ID: id, Email: email, OldCanonical: old, EmailCanonical: marked})
		if err == nil && n > 0 {
			r.log.WarnContext(ctx, "an account's email is another account's mailbox under the email rule of migration 00025: it keeps its email, signs in by email no more, and is listed by `inkwell users collisions`",
				"user_id", id)
			return true, true, nil
		}
	}
	if err != nil {
		return false, false, pg.Wrapf(err, "recheck the email of user %d", id)
	}
	return n > 0 && canonical != old, false, nil
}
