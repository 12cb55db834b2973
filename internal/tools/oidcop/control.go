package main

import (
	"encoding/json"
	"net"
	"net/http"
)

// newControl is the tests' JSON API: POST /control/users, /control/clients, /control/rotate-keys
// and /control/next-token. It changes what the provider does, never how it speaks OIDC.
func newControl(s *store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /control/users", func(w http.ResponseWriter, r *http.Request) {
		var u user
		if !decode(w, r, &u) {
			return
		}
		if u.Subject == "" || u.Username == "" {
			http.Error(w, "subject and username are required", http.StatusBadRequest)
			return
		}
		s.users.add(u)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /control/clients", func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			ID           string   `json:"id"`
			Secret       string   `json:"secret"`
			RedirectURIs []string `json:"redirect_uris"`
		}
		if !decode(w, r, &c) {
			return
		}
		if c.ID == "" || len(c.RedirectURIs) == 0 {
			http.Error(w, "id and redirect_uris are required", http.StatusBadRequest)
			return
		}
		s.addClient(c.ID, c.Secret, c.RedirectURIs)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /control/rotate-keys", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.rotate(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /control/next-token", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ClientID string `json:"client_id"`
			tweak
		}
		if !decode(w, r, &body) {
			return
		}
		s.setTweak(body.ClientID, body.tweak)
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(v); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// loopbackOnly refuses the control API to anything but the machine itself.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			http.Error(w, "control API is loopback only", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
