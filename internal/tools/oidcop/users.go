package main

import (
	"errors"
	"sync"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// user is what the control API registers; the example storage sees it as a storage.User whose
// ID is the subject.
type user struct {
	Username          string `json:"username"`
	Password          string `json:"password"`
	Subject           string `json:"subject"`
	Email             string `json:"email"`
	EmailVerified     bool   `json:"email_verified"`
	Name              string `json:"name"`
	PreferredUsername string `json:"preferred_username"`
}

// users implements storage.UserStore over the users registered at run time.
type users struct {
	mu        sync.Mutex
	bySubject map[string]*user
}

func (u *users) add(usr user) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.bySubject[usr.Subject] = &usr
}

func (u *users) get(subject string) *user {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bySubject[subject]
}

func (u *users) GetUserByID(subject string) *storage.User {
	usr := u.get(subject)
	if usr == nil {
		return nil
	}
	return &storage.User{ID: usr.Subject, Username: usr.Username, Password: usr.Password, Email: usr.Email, EmailVerified: usr.EmailVerified}
}

func (u *users) GetUserByUsername(username string) *storage.User {
	u.mu.Lock()
	var subject string
	for _, usr := range u.bySubject {
		if usr.Username == username {
			subject = usr.Subject
		}
	}
	u.mu.Unlock()
	return u.GetUserByID(subject)
}

func (u *users) ExampleClientID() string { return "" }

// fill sets the standard claims the scopes ask for.
func (u *users) fill(info *oidc.UserInfo, subject string, scopes []string) error {
	usr := u.get(subject)
	if usr == nil {
		return errors.New("user not found")
	}
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeOpenID:
			info.Subject = usr.Subject
		case oidc.ScopeEmail:
			info.Email = usr.Email
			info.EmailVerified = oidc.Bool(usr.EmailVerified)
		case oidc.ScopeProfile:
			info.Name = usr.Name
			info.PreferredUsername = usr.PreferredUsername
		}
	}
	return nil
}
