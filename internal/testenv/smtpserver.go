package testenv

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPOptions configure a test SMTP server.
type SMTPOptions struct {
	TLS      string // "none", "starttls" (offered, with a certificate for 127.0.0.1) or "tls" (implicit)
	Username string // non-empty: AUTH PLAIN is offered and required, with Password
	Password string
	// Reject, when set, answers RCPT TO with this SMTP error (e.g. a 550 or a 451).
	Reject *smtp.SMTPError
}

// SMTPServer is an SMTP server on a loopback port that keeps what it receives.
type SMTPServer struct {
	Host  string
	Port  int
	Roots *x509.CertPool // trusts the server's certificate
	// Mail receives each message the server accepted.
	Mail chan ReceivedMail
}

// ReceivedMail is one accepted message.
type ReceivedMail struct {
	From string
	To   []string
	Data []byte
}

// StartSMTPServer starts a server speaking SMTP (github.com/emersion/go-smtp) on 127.0.0.1:0,
// stopped when the test ends.
func StartSMTPServer(t testing.TB, o SMTPOptions) *SMTPServer {
	t.Helper()
	cert, roots := selfSigned(t)
	s := &SMTPServer{Host: "127.0.0.1", Roots: roots, Mail: make(chan ReceivedMail, 16)}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &smtpSession{srv: s, opts: o}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtp listen: %v", err)
	}
	switch o.TLS {
	case "starttls":
		srv.TLSConfig = tlsConfig
	case "tls":
		l = tls.NewListener(l, tlsConfig)
	case "", "none":
		srv.AllowInsecureAuth = true
	default:
		t.Fatalf("smtp: unknown TLS option %q", o.TLS)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return s
}

// Next returns the next message the server accepted, failing the test after 20 s.
func (s *SMTPServer) Next(t testing.TB) ParsedMail {
	t.Helper()
	select {
	case m := <-s.Mail:
		return ParseMail(t, m)
	case <-time.After(20 * time.Second):
		t.Fatal("no mail arrived within 20 s")
		return ParsedMail{}
	}
}

type smtpSession struct {
	srv    *SMTPServer
	opts   SMTPOptions
	authed bool
	from   string
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string {
	if s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != s.opts.Username || password != s.opts.Password {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.opts.Username != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.opts.Reject != nil {
		return s.opts.Reject
	}
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.srv.Mail <- ReceivedMail{From: s.from, To: s.to, Data: b}
	return nil
}

func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }

// ParsedMail is a received message read back: its envelope, headers and the text of its parts.
type ParsedMail struct {
	Envelope ReceivedMail
	Header   mail.Header
	Text     string // the text/plain part
	HTML     string // the text/html part
}

// ParseMail reads a message with a text/plain body or a multipart/alternative one.
func ParseMail(t testing.TB, m ReceivedMail) ParsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatalf("parse mail: %v\n%s", err, m.Data)
	}
	p := ParsedMail{Envelope: m, Header: msg.Header}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("mail content type: %v", err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		body, _ := io.ReadAll(msg.Body)
		p.Text = string(body)
		return p
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable parts
		if errors.Is(err, io.EOF) {
			return p
		}
		if err != nil {
			t.Fatalf("mail part: %v", err)
		}
		body, _ := io.ReadAll(part)
		switch ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type")); ct {
		case "text/plain":
			p.Text = string(body)
		case "text/html":
			p.HTML = string(body)
		}
	}
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "inkwell test smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots
}
