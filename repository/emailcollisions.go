package repository

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// EmailAccount is one account of an EmailCollision.
type EmailAccount struct {
	ID        int64
	Username  string
	Email     string // as stored: where its codes and mails go
	Verified  bool
	CreatedAt time.Time
	// SignsInByEmail is false for an account marked duplicate ('duplicate:…'): no lookup by
	// email reaches it. Its sessions and API keys still work.
	SignsInByEmail bool
	// Pending: its canonical email waits for the recheck (the server runs it at start and every
	// few minutes), so what the listing says of it may change.
	Pending bool
}

// EmailCollisionRule says which rule makes a group's accounts one address.
type EmailCollisionRule string

const (
	// CollidedBefore: one address under the rule before migration 00025 (NFKC and case folding),
	// different mailboxes now. Whoever read one of them could sign in to the others' account
	// then; an operator may want to look at each.
	CollidedBefore EmailCollisionRule = "old rule"
	// CollidesNow: one mailbox under the current rule; all but one are marked duplicate.
	CollidesNow EmailCollisionRule = "new rule"
)

// EmailCollision is a group of accounts whose emails are one address under Rule.
type EmailCollision struct {
	Rule     EmailCollisionRule
	Address  string // the form the rule gives them all
	Accounts []EmailAccount
}

// EmailCollisions lists every group of two or more accounts whose emails the old rule made one
// address, or the current rule makes one mailbox, oldest account first; it changes nothing. Only
// accounts with a non-ASCII email can differ between the rules (both lower-case ASCII), so it
// reads those and the ones marked duplicate (users_email_recheck_idx), then the accounts holding
// any form they map to (users_email_key): the cost follows those accounts, not the table.
// pending is how many accounts still wait for the recheck (RecheckEmails).
func (r *UserEmails) EmailCollisions(ctx context.Context) (groups []EmailCollision, pending int, err error) {
	candidates, err := r.q.UserEmailCollisionCandidates(ctx, r.pool)
	if err != nil {
		return nil, 0, pg.Wrapf(err, "read the accounts with non-ASCII or duplicate emails")
	}
	accounts := map[int64]dao.UserEmailCollisionCandidatesRow{}
	var keys []string
	for _, c := range candidates {
		accounts[c.ID] = c
		keys = append(keys, service.LegacyCanonicalEmail(c.Email), service.CanonicalEmail(c.Email))
		if !c.EmailCanonicalChecked {
			pending++
		}
	}
	slices.Sort(keys)
	for chunk := range slices.Chunk(slices.Compact(keys), 1000) {
		holders, err := r.q.UserEmailsByCanonical(ctx, r.pool, chunk)
		if err != nil {
			return nil, 0, pg.Wrapf(err, "read the accounts holding those addresses")
		}
		for _, h := range holders {
			accounts[h.ID] = dao.UserEmailCollisionCandidatesRow(h)
		}
	}
	groups = append(groupAccounts(accounts, CollidedBefore, service.LegacyCanonicalEmail),
		groupAccounts(accounts, CollidesNow, service.CanonicalEmail)...)
	return groups, pending, nil
}

// groupAccounts groups accounts by the form rule gives their email, keeping groups of two or more.
func groupAccounts(accounts map[int64]dao.UserEmailCollisionCandidatesRow, name EmailCollisionRule, rule func(string) string) []EmailCollision {
	byForm := map[string][]EmailAccount{}
	for _, a := range accounts {
		form := rule(a.Email)
		byForm[form] = append(byForm[form], EmailAccount{
			ID: a.ID, Username: a.Username, Email: a.Email, Verified: a.EmailVerifiedAt.Valid, CreatedAt: a.CreatedAt,
			SignsInByEmail: !strings.HasPrefix(a.EmailCanonical, duplicateEmailPrefix),
			Pending:        !a.EmailCanonicalChecked && (!isASCIIText(a.Email) || strings.HasPrefix(a.EmailCanonical, duplicateEmailPrefix)),
		})
	}
	var out []EmailCollision
	for form, group := range byForm {
		if len(group) < 2 {
			continue
		}
		slices.SortFunc(group, func(a, b EmailAccount) int { return cmp.Compare(a.ID, b.ID) })
		out = append(out, EmailCollision{Rule: name, Address: form, Accounts: group})
	}
	slices.SortFunc(out, func(a, b EmailCollision) int { return cmp.Compare(a.Accounts[0].ID, b.Accounts[0].ID) })
	return out
}

func isASCIIText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
