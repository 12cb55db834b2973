package ioc

import (
	"fmt"
	"net/url"
	"strconv"
)

// MailServer is INKWELL_MAIL_URL read: the SMTP server every email goes through.
type MailServer struct {
	Host     string
	Port     int
	Username string // empty: no authentication
	Password string
	TLS      string // starttls, tls or none
}

// The SMTP encryption modes of INKWELL_MAIL_URL's tls parameter.
const (
	MailStartTLS = "starttls"
	MailTLS      = "tls"
	MailNoTLS    = "none"
)

// defaultMailPort is the port of a mail URL that names none: 465 for implicit TLS, else 587 (the
// submission port, the default of the earlier INKWELL_MAIL_PORT).
func defaultMailPort(tls string) int {
	if tls == MailTLS {
		return 465
	}
	return 587
}

// ParseMailURL reads INKWELL_MAIL_URL: smtp://[user[:password]@]host[:port][?tls=starttls|tls|none],
// the user and password percent-encoded. Its errors show the URL with the password redacted.
func ParseMailURL(v string) (MailServer, error) {
	u, err := url.Parse(v)
	if err != nil {
		return MailServer{}, fmt.Errorf("is not a URL: want smtp://user:password@host:port?tls=starttls (user and password percent-encoded)")
	}
	shown := u.Redacted()
	if u.Scheme != "smtp" {
		return MailServer{}, fmt.Errorf("%q: the scheme must be smtp, not %q", shown, u.Scheme)
	}
	if u.Hostname() == "" || u.Opaque != "" {
		return MailServer{}, fmt.Errorf("%q: name the SMTP server, smtp://host:port", shown)
	}
	if (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return MailServer{}, fmt.Errorf("%q: want smtp://host:port?tls=MODE, no path", shown)
	}
	q := u.Query()
	for name := range q {
		if name != "tls" {
			return MailServer{}, fmt.Errorf("%q: unknown parameter %q (only tls)", shown, name)
		}
	}
	s := MailServer{Host: u.Hostname(), TLS: MailStartTLS}
	if q.Has("tls") {
		s.TLS = q.Get("tls")
	}
	if err := oneOf(MailStartTLS, MailTLS, MailNoTLS)(s.TLS); err != nil {
		return MailServer{}, fmt.Errorf("%q: tls %w", shown, err)
	}
	s.Port = defaultMailPort(s.TLS)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return MailServer{}, fmt.Errorf("%q: the port must be 1..65535, not %q", shown, p)
		}
		s.Port = n
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	return s, nil
}

// redactedURL is v with its password replaced, for --help (which shows the values the
// environment set); v as it is when it holds no password.
func redactedURL(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return "(hidden: not a URL)"
	}
	if _, has := u.User.Password(); !has {
		return v
	}
	return u.Redacted()
}
