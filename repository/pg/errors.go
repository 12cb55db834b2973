package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inkwell-dev/inkwell/domain"
)

// constraintErrors maps unique constraints to the domain error a violation means.
var constraintErrors = map[string]error{
	"users_email_key":    domain.ErrEmailTaken,
	"users_username_key": domain.ErrUsernameTaken,
	"articles_slug_key":  domain.ErrSlugTaken,
	"users_phone_key":    domain.ErrConflict,

	"collections_owner_name_key": domain.ErrCollectionNameTaken,

	"user_identities_provider_subject_key": domain.ErrIdentityInUse,
}

// Translate turns a driver error into a domain error, keeping the original text for logs.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			if derr, ok := constraintErrors[pgErr.ConstraintName]; ok {
				return derr
			}
			return fmt.Errorf("%w: %s", domain.ErrConflict, pgErr.ConstraintName)
		case "23503": // foreign_key_violation: a referenced row is gone
			return fmt.Errorf("%w: %s", domain.ErrNotFound, pgErr.ConstraintName)
		case "22021", "22P05": // character_not_in_repertoire (NUL, invalid UTF-8), untranslatable_character
			// The web edge refuses such text; this is the backstop for any path that skips it, so
			// the client hears what is wrong with its input instead of a 500.
			return domain.NewValidationError("body", "must be UTF-8 text without NUL characters")
		case "54000": // program_limit_exceeded: a search document over a tsvector's limits
			// The document function bounds its input so this cannot happen; if it ever does, the
			// text is what is too big, and the client can act on that.
			return domain.NewValidationError("body", "is too large to index for search; shorten it")
		case "57P01", "57P02", "57P03", "53300": // admin shutdown, crash shutdown, cannot connect now, too many connections
			return fmt.Errorf("%w: %v", domain.ErrUnavailable, err)
		case "57014", "25P03": // statement_timeout (a cancelled context arrives as a context error instead), idle_in_transaction_session_timeout
			return fmt.Errorf("%w: %v", domain.ErrUnavailable, err)
		}
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	// A connection that broke mid-query reads EOF; one the driver already closed says so.
	broken := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, pgconn.ErrConnClosed)
	if broken || errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) {
		return fmt.Errorf("%w: %v", domain.ErrUnavailable, err)
	}
	return err
}
