package repository_test

import (
	"errors"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Acceptance: text PostgreSQL cannot store (a NUL, invalid UTF-8) that reaches a repository by a
// path skipping the web checks is a domain validation error naming "body", never a driver error
// that would become a 500, and nothing is written.
func TestTranslate_UnstorableTextIsAValidationError(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	for name, bad := range map[string]string{
		"NUL":           "a\x00b",
		"invalid UTF-8": "a\xffb",
		"overlong":      "a\xc0\xafb",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, db, envOpts{})
			username := uniqueName("bad")
			_, err := e.users.Create(t.Context(), domain.User{
				Email: username + "@example.com", Username: username, PasswordHash: "x", Bio: bad,
			})
			var verr *domain.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Create with bio %q: %v (%T), want *domain.ValidationError", bad, err, err)
			}
			if len(verr.Fields["body"]) == 0 {
				t.Errorf("fields %v, want a message for body", verr.Fields)
			}
			var n int
			if err := e.pool.QueryRow(t.Context(), "SELECT count(*) FROM users WHERE username = $1", username).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d rows written, want 0", n)
			}

			// A read with such a key (a lookup by username) is the same error, not a 500.
			_, err = e.users.GetByEmail(t.Context(), bad+"@example.com")
			if !errors.As(err, &verr) {
				t.Errorf("GetByEmail(%q): %v, want *domain.ValidationError", bad, err)
			}
		})
	}
}
