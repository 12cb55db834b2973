package main

import (
	"context"
	"html/template"
	"net/http"
)

const loginPath = "/login"

// loginForm is the provider's whole user interface: a username/password form without
// JavaScript. A correct POST marks the auth request as authenticated and sends the browser back
// to the op's callback, which redirects to the relying party with the code.
type loginForm struct {
	store    *store
	callback func(ctx context.Context, authRequestID string) string
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><title>Sign in</title></head><body>
<form method="post" action="/login">
<input type="hidden" name="authRequestID" value="{{.ID}}">
{{if .Failed}}<p>Wrong username or password.</p>{{end}}
<label>Username <input name="username"></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button>
</form></body></html>
`))

func (f *loginForm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id := r.Form.Get("authRequestID")
	switch r.Method {
	case http.MethodGet:
		render(w, http.StatusOK, id, false)
	case http.MethodPost:
		if err := f.store.CheckUsernamePassword(r.PostForm.Get("username"), r.PostForm.Get("password"), id); err != nil {
			render(w, http.StatusUnauthorized, id, true)
			return
		}
		http.Redirect(w, r, f.callback(r.Context(), id), http.StatusFound)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func render(w http.ResponseWriter, status int, id string, failed bool) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, struct {
		ID     string
		Failed bool
	}{id, failed})
}
