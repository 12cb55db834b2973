package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// audienceTweak issues, when a client's next token is to carry another audience, an ID token
// whose aud and azp are that other client (or, for an authorized-party tweak, whose aud adds
// the other party and whose azp is it): the token endpoint's answer is rewritten and signed
// again with the provider's current key, so the token is the provider's own, just not for the
// client that asked. op itself always puts the requesting client in aud, hence this layer.
func audienceTweak(s *store, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/oauth/token" {
			next.ServeHTTP(w, r)
			return
		}
		clientID, _, ok := r.BasicAuth()
		if !ok {
			_ = r.ParseForm()
			clientID = r.PostForm.Get("client_id")
		}
		audience, party := s.takeAudience(clientID)
		if audience == "" && party == "" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			if rewritten, err := s.withAudience(body, audience, party); err == nil {
				body = rewritten
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

func (s *store) withAudience(tokenResponse []byte, audience, party string) ([]byte, error) {
	var resp map[string]any
	if err := json.Unmarshal(tokenResponse, &resp); err != nil {
		return nil, err
	}
	raw, _ := resp["id_token"].(string)
	parsed, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if err := json.NewDecoder(bytes.NewReader(parsed.UnsafePayloadWithoutVerification())).Decode(&claims); err != nil {
		return nil, err
	}
	if audience != "" {
		claims["aud"] = []string{audience}
		claims["azp"] = audience
		claims["client_id"] = audience
	}
	if party != "" {
		claims["aud"] = append(audiences(claims["aud"]), party)
		claims["azp"] = party
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	key := s.keys[0]
	s.mu.Unlock()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", key.id))
	if err != nil {
		return nil, err
	}
	signed, err := signer.Sign(payload)
	if err != nil {
		return nil, err
	}
	if resp["id_token"], err = signed.CompactSerialize(); err != nil {
		return nil, err
	}
	var out strings.Builder
	err = json.NewEncoder(&out).Encode(resp)
	return []byte(out.String()), err
}

// audiences reads aud, a string or an array of strings in JSON.
func audiences(aud any) []any {
	switch aud := aud.(type) {
	case []any:
		return aud
	case string:
		return []any{aud}
	}
	return nil
}
