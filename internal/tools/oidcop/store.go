package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// store is zitadel's in-memory example storage (auth requests, codes, tokens) with what the tests
// change at run time laid over it: users and clients registered through the control API, a
// rotating signing key, the tweak of a client's next ID token, and PKCE S256 required.
type store struct {
	*storage.Storage
	users *users

	mu      sync.Mutex
	clients map[string]*client
	keys    []*signingKey // the current signing key first, then the one before it
	tweaks  map[string]*tweak
}

// tweak changes the NEXT ID token issued to a client; each part is used once.
type tweak struct {
	Expired  bool   `json:"expired"`
	Nonce    string `json:"nonce"`
	Audience string `json:"audience"`
	// AuthorizedParty adds this party to aud and makes it azp: a token for several audiences,
	// authorized to another client.
	AuthorizedParty string `json:"authorized_party"`
}

func newStore() (*store, error) {
	u := &users{bySubject: map[string]*user{}}
	s := &store{
		Storage: storage.NewStorageWithClients(u, map[string]*storage.Client{}),
		users:   u,
		clients: map[string]*client{},
		tweaks:  map[string]*tweak{},
	}
	return s, s.rotate()
}

// rotate makes a new signing key current; the JWKS keeps the previous one too, so tokens signed
// just before a rotation still verify (what real providers do).
func (s *store) rotate() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append([]*signingKey{{id: hex.EncodeToString(id[:]), key: key}}, s.keys...)
	if len(s.keys) > 2 {
		s.keys = s.keys[:2]
	}
	return nil
}

func (s *store) addClient(id, secret string, redirectURIs []string) {
	var exact, globs []string
	for _, uri := range redirectURIs {
		if containsGlob(uri) {
			globs = append(globs, uri)
		} else {
			exact = append(exact, uri)
		}
	}
	if len(exact) == 0 {
		exact = []string{} // WebClient would put a default redirect URI in an empty list
	}
	c := &client{Client: storage.WebClient(id, secret, exact...), secret: secret, globs: globs, store: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[id] = c
}

func containsGlob(uri string) bool {
	return slices.ContainsFunc([]rune(uri), func(r rune) bool { return r == '*' || r == '?' || r == '[' })
}

func (s *store) setTweak(clientID string, t tweak) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tweaks[clientID] = &t
}

// takeExpired consumes the "expired" part of a client's pending tweak.
func (s *store) takeExpired(clientID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tweaks[clientID]
	if t == nil || !t.Expired {
		return false
	}
	t.Expired = false
	return true
}

// takeNonce consumes the nonce part of a client's pending tweak.
func (s *store) takeNonce(clientID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tweaks[clientID]
	if t == nil {
		return ""
	}
	nonce := t.Nonce
	t.Nonce = ""
	return nonce
}

// takeAudience consumes the audience and authorized-party parts of a client's pending tweak.
func (s *store) takeAudience(clientID string) (audience, party string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tweaks[clientID]
	if t == nil {
		return "", ""
	}
	audience, party = t.Audience, t.AuthorizedParty
	t.Audience, t.AuthorizedParty = "", ""
	return audience, party
}

// CreateAuthRequest refuses an authorization request without PKCE S256.
func (s *store) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("PKCE with code_challenge_method=S256 is required")
	}
	return s.Storage.CreateAuthRequest(ctx, req, userID)
}

// AuthRequestByCode is read when the code is exchanged: a pending nonce tweak changes the
// nonce of the ID token built from it. (The audience tweak is applied by audienceTweak: op
// always adds the requesting client to aud.)
func (s *store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	req, err := s.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	if nonce := s.takeNonce(req.GetClientID()); nonce != "" {
		return &otherNonce{AuthRequest: req, nonce: nonce}, nil
	}
	return req, nil
}

type otherNonce struct {
	op.AuthRequest
	nonce string
}

func (r *otherNonce) GetNonce() string { return r.nonce }

func (s *store) GetClientByClientID(_ context.Context, clientID string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok {
		return nil, errors.New("client not found")
	}
	return c, nil
}

func (s *store) AuthorizeClientIDSecret(_ context.Context, clientID, clientSecret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok || c.secret != clientSecret {
		return errors.New("invalid client")
	}
	return nil
}

func (s *store) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[0], nil
}

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]op.Key, 0, len(s.keys))
	for _, k := range s.keys {
		keys = append(keys, publicKey{k})
	}
	return keys, nil
}

// SetUserinfoFromRequest fills the ID token's claims.
func (s *store) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	return s.users.fill(info, req.GetSubject(), scopes)
}

// SetUserinfoFromToken answers the userinfo endpoint: the example storage checks the access
// token, then the claims come from the registered user.
func (s *store) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, origin string) error {
	var scratch oidc.UserInfo
	if err := s.Storage.SetUserinfoFromToken(ctx, &scratch, tokenID, subject, origin); err != nil {
		return err
	}
	return s.users.fill(info, subject, []string{oidc.ScopeOpenID, oidc.ScopeEmail, oidc.ScopeProfile})
}

// client is a confidential web client whose redirect URIs may be globs (path.Match, e.g.
// http://127.0.0.1:*/callback) and whose ID tokens carry the userinfo claims.
type client struct {
	*storage.Client
	secret string
	globs  []string
	store  *store
}

func (c *client) RedirectURIGlobs() []string           { return c.globs }
func (c *client) PostLogoutRedirectURIGlobs() []string { return nil }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) LoginURL(id string) string            { return loginPath + "?authRequestID=" + id }

// IDTokenLifetime is asked once per ID token: an "expired" tweak makes exp an hour in the past.
func (c *client) IDTokenLifetime() time.Duration {
	if c.store.takeExpired(c.GetID()) {
		return -2 * time.Hour
	}
	return time.Hour
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ *signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }
