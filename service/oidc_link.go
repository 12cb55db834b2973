package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/inkwell-dev/inkwell/domain"
)

// usernameAttempts bounds the tries at a free username for a new account: the derived name, then
// numeric suffixes.
const usernameAttempts = 20

// resolve is the account an identity signs in (issue #30's rules, in order):
//  1. a known link (provider, subject): that account;
//  2. an email the provider verified that equals an account's verified email: the identity is
//     linked to that account, and the account is told by mail, in one unit of work;
//  3. otherwise a new account, unless the email is missing (email_required) or another account
//     has it unverified (email_in_use: an unverified email never links, and is not taken over).
//
// A suspended account is refused (account_suspended).
func (s *SignInService) resolve(ctx context.Context, p IdentityProvider, ident domain.ExternalIdentity) (int64, error) {
	known, err := s.ids.FindBySubject(ctx, ident.Provider, ident.Subject)
	switch {
	case err == nil:
		u, err := s.users.GetByID(ctx, known.UserID)
		if err != nil {
			return 0, err
		}
		if err := refuseSuspended(u, s.now()); err != nil {
			return 0, err
		}
		if err := s.ids.Touch(ctx, known.ID, s.now()); err != nil {
			s.log.WarnContext(ctx, "recording an identity's use failed", "identity_id", known.ID, "err", err)
		}
		return u.ID, nil
	case !errors.Is(err, domain.ErrNotFound):
		return 0, err
	}
	email := domain.NormalizeEmail(ident.Email)
	if email == "" {
		return 0, signInFailure(domain.SignInNoEmail, errors.New("the provider gave no email"))
	}
	holder, err := s.users.GetByEmail(ctx, email)
	switch {
	case err == nil && ident.EmailVerified && holder.EmailVerified:
		return holder.ID, s.linkByEmail(ctx, p, holder, ident)
	case err == nil:
		// The email is another account's and one side never proved it: no link, no takeover.
		return 0, signInFailure(domain.SignInEmailInUse, fmt.Errorf("user %d has the email (verified %v, by the provider %v)",
			holder.ID, holder.EmailVerified, ident.EmailVerified))
	case !errors.Is(err, domain.ErrNotFound):
		return 0, err
	}
	return s.newAccount(ctx, ident, email)
}

// linkByEmail links ident to holder, whose verified email the provider verified too, and queues
// the notice mail with it.
func (s *SignInService) linkByEmail(ctx context.Context, p IdentityProvider, holder domain.User, ident domain.ExternalIdentity) error {
	if err := refuseSuspended(holder, s.now()); err != nil {
		return err
	}
	notice, err := identityLinkedMail(holder, p.DisplayName())
	if err != nil {
		return err
	}
	return s.uow.InTx(ctx, func(tx Tx) error {
		if _, err := s.ids.LinkIn(ctx, tx, identityOf(holder.ID, ident)); err != nil {
			return err
		}
		_, err := s.mail.EnqueueIn(ctx, tx, notice)
		return err
	})
}

// link links ident to the signed-in account userID (start with link): identity_in_use when
// another account has it; nothing to do when this account has it already.
func (s *SignInService) link(ctx context.Context, userID int64, ident domain.ExternalIdentity) error {
	u, err := s.users.GetByID(ctx, userID)
	if err != nil {
		return err
	}
	if err := refuseSuspended(u, s.now()); err != nil {
		return err
	}
	known, err := s.ids.FindBySubject(ctx, ident.Provider, ident.Subject)
	switch {
	case err == nil && known.UserID == userID:
		return nil
	case err == nil:
		return domain.ErrIdentityInUse
	case !errors.Is(err, domain.ErrNotFound):
		return err
	}
	_, err = s.ids.Link(ctx, identityOf(userID, ident))
	return err
}

// newAccount makes the account of an identity nobody has: a username derived from the profile and
// made unique, a random password nobody knows (recorded, so the last identity is never unlinked
// while it stands), the email verified when the provider verified it, else a verification mail as
// registration sends.
func (s *SignInService) newAccount(ctx context.Context, ident domain.ExternalIdentity, email string) (int64, error) {
	v := &domain.ValidationError{}
	ValidateNewEmail(v, email)
	if v.OrNil() != nil {
		return 0, signInFailure(domain.SignInNoEmail, fmt.Errorf("the provider's email is not acceptable: %v", v.Fields["email"]))
	}
	secret, err := newSecret()
	if err != nil {
		return 0, err
	}
	hash, err := s.hasher.Hash(secret)
	if err != nil {
		return 0, fmt.Errorf("hash password: %w", err)
	}
	base := UsernameFromProfile(ident)
	var created domain.User
	err = s.uow.InTx(ctx, func(tx Tx) error {
		for i := range usernameAttempts {
			created, err = s.users.CreateIn(ctx, tx, domain.User{Email: email, Username: withSuffix(base, i), PasswordHash: hash})
			if !errors.Is(err, domain.ErrUsernameTaken) {
				break
			}
		}
		if err != nil {
			return err
		}
		if err := s.ids.MarkProviderAccountIn(ctx, tx, created.ID, hash, ident.EmailVerified, s.now()); err != nil {
			return err
		}
		if _, err := s.ids.LinkIn(ctx, tx, identityOf(created.ID, ident)); err != nil {
			return err
		}
		if ident.EmailVerified {
			return nil
		}
		return s.verifier.IssueVerificationIn(ctx, tx, created)
	})
	switch {
	case errors.Is(err, domain.ErrEmailTaken):
		return 0, signInFailure(domain.SignInEmailInUse, err) // registered meanwhile
	case err != nil:
		return 0, err
	}
	return created.ID, nil
}

func identityOf(userID int64, ident domain.ExternalIdentity) domain.UserIdentity {
	return domain.UserIdentity{UserID: userID, Provider: ident.Provider, Subject: ident.Subject, Email: ident.Email}
}

// UsernameFromProfile derives a new account's username from what the provider asserted: its
// preferred username, else the name, else the email's local part, kept to the username rules
// (letters, digits, '.', '_', '-'; at most domain.MaxUsernameLen with room for a suffix; not
// reserved; at least two characters). "user" when nothing is left.
func UsernameFromProfile(ident domain.ExternalIdentity) string {
	local, _, _ := strings.Cut(ident.Email, "@")
	for _, candidate := range []string{ident.Username, ident.Name, local} {
		var b strings.Builder
		for _, r := range candidate {
			switch {
			case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'):
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('_')
			}
		}
		name := strings.Trim(b.String(), "._-")
		if len(name) > domain.MaxUsernameLen-6 {
			name = name[:domain.MaxUsernameLen-6]
		}
		if len(name) >= 2 && !domain.UsernameReserved(name) { // a lone letter left of a non-ASCII name: try the next
			return name
		}
	}
	return "user"
}

// withSuffix is the i-th try at a free name: the base, then base2, base3, …
func withSuffix(base string, i int) string {
	if i == 0 {
		return base
	}
	return base + strconv.Itoa(i+1)
}

// VerifyStepUp checks the step-up a credential change asks for (stepUp): the current password,
// or a code sent to the account's own address. Linking a provider is such a change.
func (s *UserService) VerifyStepUp(ctx context.Context, userID int64, password, code string) error {
	u, err := s.users.GetByID(ctx, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ErrUnauthorized
	}
	if err != nil {
		return err
	}
	// An unchanged password field makes stepUp ask for the proof without changing anything.
	in := UpdateUserInput{Password: new(string), CurrentPassword: password, Code: code}
	_, err = s.stepUp(ctx, u.ID, &in)
	return err
}
