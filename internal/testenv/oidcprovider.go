package testenv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// OIDCProvider is a real OpenID provider (internal/tools/oidcop: zitadel/oidc's op) running as a
// process of its own on a loopback port, with a control API the tests use to register users and
// clients, rotate its signing key and change the next ID token it issues.
type OIDCProvider struct {
	issuer string
}

// OIDCUser is a user of the provider: it signs in with Username and Password; the other fields
// are the claims of its ID token (Subject is sub).
type OIDCUser struct {
	Username          string `json:"username"`
	Password          string `json:"password"`
	Subject           string `json:"subject"`
	Email             string `json:"email"`
	EmailVerified     bool   `json:"email_verified"`
	Name              string `json:"name"`
	PreferredUsername string `json:"preferred_username"`
}

// TokenTweak changes the NEXT ID token the provider issues to a client (each part once): Expired
// puts exp an hour in the past, Nonce replaces the nonce, Audience makes the token another
// client's (aud and azp), AuthorizedParty adds that party to aud and makes it azp.
type TokenTweak struct {
	Expired         bool   `json:"expired"`
	Nonce           string `json:"nonce"`
	Audience        string `json:"audience"`
	AuthorizedParty string `json:"authorized_party"`
}

// StartOIDCProvider runs the provider on a free loopback port and kills it when the test ends.
// Its issuer is http://127.0.0.1:PORT (plain http, allowed for loopback).
func StartOIDCProvider(t testing.TB) *OIDCProvider {
	t.Helper()
	return StartOIDCProviderOn(t, "127.0.0.1:0")
}

// StartOIDCProviderOn runs the provider on addr: a test that needs the issuer before the provider
// is up (an unreachable issuer that comes back) reserves the address first.
func StartOIDCProviderOn(t testing.TB, addr string) *OIDCProvider {
	t.Helper()
	bin, err := oidcOPBinary()
	if err != nil {
		t.Fatalf("build the OpenID provider: %v", err)
	}
	cmd := exec.Command(bin, "-addr", addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the OpenID provider: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// The provider prints its issuer once it listens: no polling.
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the OpenID provider did not say its issuer: %v", err)
	}
	return &OIDCProvider{issuer: strings.TrimSpace(line)}
}

// Issuer is the provider's issuer URL (discovery is at Issuer()+"/.well-known/openid-configuration").
func (p *OIDCProvider) Issuer() string { return p.issuer }

// AddUser registers a user who can sign in.
func (p *OIDCProvider) AddUser(t testing.TB, u OIDCUser) {
	t.Helper()
	p.control(t, "users", u)
}

// AddClient registers a confidential client (client_secret_basic or _post). A redirect URI may
// be a glob in path.Match syntax, e.g. http://127.0.0.1:*/callback.
func (p *OIDCProvider) AddClient(t testing.TB, id, secret string, redirectURIs ...string) {
	t.Helper()
	p.control(t, "clients", map[string]any{"id": id, "secret": secret, "redirect_uris": redirectURIs})
}

// RotateKeys makes a new signing key (new kid) current. The JWKS then holds the new key and the
// previous one; a second rotation drops the oldest.
func (p *OIDCProvider) RotateKeys(t testing.TB) {
	t.Helper()
	p.control(t, "rotate-keys", struct{}{})
}

// NextToken changes the next ID token issued to clientID.
func (p *OIDCProvider) NextToken(t testing.TB, clientID string, tweak TokenTweak) {
	t.Helper()
	p.control(t, "next-token", struct {
		ClientID string `json:"client_id"`
		TokenTweak
	}{clientID, tweak})
}

func (p *OIDCProvider) control(t testing.TB, what string, body any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.issuer+"/control/"+what, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("OpenID provider control %s: %v", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("OpenID provider control %s: %s %s", what, resp.Status, msg)
	}
}

// SignIn is the browser's part of a sign-in: it opens authorizeURL (the relying party's redirect
// to the provider), fills the login form with username and password, follows the provider's own
// redirects and returns the Location of the redirect to the relying party's redirect_uri,
// without following it. client carries the cookies, if the test cares; its redirects are not
// followed.
func (p *OIDCProvider) SignIn(t testing.TB, client *http.Client, authorizeURL, username, password string) (callbackURL string) {
	t.Helper()
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	issuer, err := url.Parse(p.issuer)
	if err != nil {
		t.Fatal(err)
	}
	resp := p.get(t, &c, authorizeURL)
	for range 10 {
		switch {
		case resp.StatusCode == http.StatusOK:
			action, fields := loginForm(t, resp)
			fields.Set("username", username)
			fields.Set("password", password)
			resp = p.post(t, &c, resp.Request.URL.ResolveReference(action).String(), fields)
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			_ = resp.Body.Close()
			next, err := resp.Location()
			if err != nil {
				t.Fatalf("sign-in: redirect without a Location: %v", err)
			}
			if next.Host != issuer.Host {
				return next.String()
			}
			resp = p.get(t, &c, next.String())
		default:
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			t.Fatalf("sign-in at %s: %s\n%s", resp.Request.URL, resp.Status, body)
		}
	}
	t.Fatal("sign-in: too many steps at the provider")
	return ""
}

func (p *OIDCProvider) get(t testing.TB, c *http.Client, u string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("sign-in: GET %s: %v", u, err)
	}
	return resp
}

func (p *OIDCProvider) post(t testing.TB, c *http.Client, u string, form url.Values) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("sign-in: POST %s: %v", u, err)
	}
	return resp
}

// loginForm reads the page's form: its action and its hidden fields.
func loginForm(t testing.TB, resp *http.Response) (*url.URL, url.Values) {
	t.Helper()
	defer resp.Body.Close()
	doc, err := html.Parse(resp.Body)
	if err != nil {
		t.Fatalf("sign-in: the login page is not HTML: %v", err)
	}
	var action *url.URL
	fields := url.Values{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		attrs := map[string]string{}
		for _, a := range n.Attr {
			attrs[a.Key] = a.Val
		}
		switch {
		case n.Data == "form":
			if action, err = url.Parse(attrs["action"]); err != nil {
				t.Fatalf("sign-in: form action: %v", err)
			}
		case n.Data == "input" && attrs["type"] == "hidden":
			fields.Set(attrs["name"], attrs["value"])
		}
	}
	if action == nil {
		t.Fatalf("sign-in: no form on the page at %s", resp.Request.URL)
	}
	return action, fields
}

// oidcOPBinary builds internal/tools/oidcop once per process, like fakeS3Binary.
var oidcOPBinary = sync.OnceValues(func() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "inkwell-oidcop-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, "oidcop")
	cmd := exec.Command("go", "build", "-o", built, "./internal/tools/oidcop")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./internal/tools/oidcop: %w\n%s", err, out)
	}
	bin := filepath.Join(dir, "oidcop")
	if err := os.Rename(built, bin); err != nil {
		return "", err
	}
	return bin, nil
})
