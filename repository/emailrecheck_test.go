package repository_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// legacyRow inserts an account as the rule before migration 00025 stored it (or as an instance of
// an older version still does during a rolling upgrade): canonical is what the old rule computed,
// and the row waits for the recheck.
func legacyRow(t *testing.T, db *testenv.DB, username, email, canonical string) int64 {
	t.Helper()
	var id int64
	if err := db.Pool.QueryRow(context.Background(), `INSERT INTO users (email, email_canonical, username, password_hash)
		VALUES ($1, $2, $3, 'x') RETURNING id`, email, canonical, username).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func canonicalOf(t *testing.T, db *testenv.DB, id int64) (canonical string, checked bool) {
	t.Helper()
	if err := db.Pool.QueryRow(context.Background(), `SELECT email_canonical, email_canonical_checked FROM users WHERE id = $1`, id).
		Scan(&canonical, &checked); err != nil {
		t.Fatal(err)
	}
	return canonical, checked
}

// TestEmailRecheck: a row whose canonical email the old rule computed never answers a lookup for
// another mailbox, even before the recheck; the recheck recomputes it under the mailbox rule, marks
// a row whose mailbox another account holds as duplicate (it keeps its email, nothing is merged),
// leaves rows marked duplicate before alone, and a second run (another instance) finds nothing.
func TestEmailRecheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	emails := repository.NewUserEmails(e.users)

	straße := legacyRow(t, db, "strasse_de", "v@straße.de", "v@strasse.de")             // another domain than strasse.de
	sigma := legacyRow(t, db, "odysseus", "οδυσσευς@example.gr", "οδυσσευσ@example.gr") // final sigma folded
	holder := legacyRow(t, db, "holder", "a@example.com", "a@example.com")
	hyphen := legacyRow(t, db, "hyphen", "a@exam\u00adple.com", "a@exam\u00adple.com") // IDNA ignores the soft hyphen: a@example.com's mailbox
	old := legacyRow(t, db, "oldduplicate", "ＡNN@example.com", "duplicate:1:ann@example.com")

	// Before the recheck: the old forms answer no lookup of the mailboxes they are not.
	for _, email := range []string{"v@strasse.de", "οδυσσευσ@example.gr"} {
		if u, err := e.users.GetByEmail(ctx, email); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("GetByEmail(%q) = %s, %v before the recheck; want not found (it is another mailbox)", email, u.Email, err)
		}
	}

	changed, duplicates, err := emails.RecheckEmails(ctx)
	if err != nil || changed != 3 || duplicates != 1 {
		t.Fatalf("recheck: %d changed, %d duplicates, %v; want 3, 1", changed, duplicates, err)
	}
	for id, want := range map[int64]string{
		straße: "v@xn--strae-oqa.de", sigma: "οδυσσευς@example.gr", holder: "a@example.com",
		hyphen: "duplicate:" + itoa(hyphen) + ":a@example.com", old: "duplicate:1:ann@example.com",
	} {
		if got, checked := canonicalOf(t, db, id); got != want || (id != holder && !checked) {
			t.Fatalf("user %d: canonical %q (checked %v), want %q", id, got, checked, want)
		}
	}
	var email string
	if err := db.Pool.QueryRow(ctx, `SELECT email FROM users WHERE id = $1`, hyphen).Scan(&email); err != nil || email != "a@exam\u00adple.com" {
		t.Fatalf("the duplicate's email is %q (%v): it must keep it", email, err)
	}
	if u, err := e.users.GetByEmail(ctx, "V@STRASSE.de"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("v@strasse.de found %q after the recheck", u.Email)
	}
	if u, err := e.users.GetByEmail(ctx, "v@xn--strae-oqa.de"); err != nil || u.ID != straße {
		t.Fatalf("v@straße.de's own mailbox finds %d, %v", u.ID, err)
	}
	if changed, duplicates, err := emails.RecheckEmails(ctx); err != nil || changed != 0 || duplicates != 0 {
		t.Fatalf("second recheck: %d, %d, %v; want nothing to do", changed, duplicates, err)
	}

	// A new email (written by any version) waits for a recheck again.
	if _, err := db.Pool.Exec(ctx, `UPDATE users SET email = 'w@straße.de', email_canonical = 'w@strasse.de' WHERE id = $1`, straße); err != nil {
		t.Fatal(err)
	}
	if _, checked := canonicalOf(t, db, straße); checked {
		t.Fatal("a changed email is not marked for a recheck")
	}
	if changed, _, err := emails.RecheckEmails(ctx); err != nil || changed != 1 {
		t.Fatalf("recheck of a changed email: %d, %v", changed, err)
	}
}

// TestEmailRecheck_Concurrent: instances rechecking at once change each row once, and two rows
// that are one mailbox end with exactly one holding it.
func TestEmailRecheck_Concurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	emails := repository.NewUserEmails(e.users)
	a := legacyRow(t, db, "twin_a", "b@exam\u00adple.com", "b@exam\u00adple.com")
	b := legacyRow(t, db, "twin_b", "b@ex\u00adample.com", "b@ex\u00adample.com")
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			<-start
			_, _, errs[i] = emails.RecheckEmails(ctx)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	ca, _ := canonicalOf(t, db, a)
	cb, _ := canonicalOf(t, db, b)
	got := []string{ca, cb}
	slices.Sort(got)
	if !slices.Contains(got, "b@example.com") || (ca != "b@example.com") == (cb != "b@example.com") {
		t.Fatalf("canonical forms %q, want one b@example.com and one duplicate", got)
	}
}

// TestFindOrCreateByTarget_RepairsAnOldForm: a code login to a mailbox whose canonical form an
// unrechecked row holds (written by the old rule for another mailbox) gets an account of its own,
// not that row, and not a conflict.
func TestFindOrCreateByTarget_RepairsAnOldForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	stale := legacyRow(t, db, "stale_strasse", "v@straße.de", "v@strasse.de")
	u, err := e.users.FindOrCreateByTarget(ctx, domain.CodeTarget{Channel: "email", Address: "v@strasse.de"}, "hash")
	if err != nil || u.ID == stale || u.Email != "v@strasse.de" {
		t.Fatalf("code login to v@strasse.de got %d %q, %v; want a new account (the old row is v@straße.de's)", u.ID, u.Email, err)
	}
	if got, _ := canonicalOf(t, db, stale); got != "v@xn--strae-oqa.de" {
		t.Fatalf("the old row's canonical is %q after the repair", got)
	}
}

// TestEmailCollisions: the listing groups the accounts the old rule made one address (a twin
// registered after the rule changed, and 00016's duplicates) and the ones one mailbox now (a soft
// hyphen the old rule kept and IDNA ignores), and changes nothing.
func TestEmailCollisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	emails := repository.NewUserEmails(e.users)
	straße := legacyRow(t, db, "vera_idn", "v@straße.de", "v@strasse.de")
	ann := legacyRow(t, db, "ann", "ann@example.com", "ann@example.com")
	annWide := legacyRow(t, db, "ann_wide", "ＡNN@example.com", "duplicate:0:ann@example.com")
	holder := legacyRow(t, db, "holder2", "c@example.com", "c@example.com")
	hyphen := legacyRow(t, db, "hyphen2", "c@exam\u00adple.com", "c@exam\u00adple.com")
	legacyRow(t, db, "loner", "josé@example.com", "josé@example.com")
	if _, _, err := emails.RecheckEmails(ctx); err != nil {
		t.Fatal(err)
	}
	strasse, err := e.users.Create(ctx, domain.User{Email: "v@strasse.de", Username: "vera_ascii", PasswordHash: "x"})
	if err != nil {
		t.Fatalf("registering v@strasse.de beside v@straße.de: %v", err)
	}
	var before string
	snapshot := `SELECT string_agg(id || email || email_canonical || email_canonical_checked || updated_at, ',' ORDER BY id) FROM users`
	if err := db.Pool.QueryRow(ctx, snapshot).Scan(&before); err != nil {
		t.Fatal(err)
	}

	groups, pending, err := emails.EmailCollisions(ctx)
	if err != nil || pending != 0 {
		t.Fatalf("collisions: %v, %d pending", err, pending)
	}
	type group struct {
		rule repository.EmailCollisionRule
		ids  string
	}
	var got []group
	for _, g := range groups {
		ids := ""
		for _, a := range g.Accounts {
			ids += itoa(a.ID) + " "
			if a.ID == annWide && a.SignsInByEmail {
				t.Fatal("an account marked duplicate is listed as signing in by email")
			}
		}
		got = append(got, group{g.Rule, ids})
	}
	want := []group{
		{repository.CollidedBefore, itoa(straße) + " " + itoa(strasse.ID) + " "},
		{repository.CollidedBefore, itoa(ann) + " " + itoa(annWide) + " "},
		{repository.CollidesNow, itoa(holder) + " " + itoa(hyphen) + " "},
	}
	slices.SortFunc(got, func(a, b group) int { return compareGroups(a.rule, a.ids, b.rule, b.ids) })
	slices.SortFunc(want, func(a, b group) int { return compareGroups(a.rule, a.ids, b.rule, b.ids) })
	if !slices.Equal(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
	var after string
	if err := db.Pool.QueryRow(ctx, snapshot).Scan(&after); err != nil || after != before {
		t.Fatalf("the listing changed accounts (%v):\n%s\n%s", err, before, after)
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func compareGroups(ra repository.EmailCollisionRule, a string, rb repository.EmailCollisionRule, b string) int {
	if ra != rb {
		if ra < rb {
			return -1
		}
		return 1
	}
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}
