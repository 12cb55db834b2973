package webhookdial_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/webhookdial"
)

// loopbackResolver answers every name with 127.0.0.1, from a DNS server of its own: a public-looking
// host name that resolves to loopback (the DNS rebinding case) must be refused on the connected IP.
func loopbackResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		c1, c2 := net.Pipe()
		go serveDNS(c2)
		return c1, nil
	}}
}

func TestSender_RefusesAHostNameThatResolvesToLoopback(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	for _, url := range []string{"http://hooks.example.com:" + port + "/in", "http://localhost:" + port + "/in", srv.URL} {
		s := webhookdial.New(webhookdial.Config{Resolver: loopbackResolver()})
		a := s.Send(t.Context(), url, nil, []byte("{}"))
		if !errors.Is(a.Err, webhookdial.ErrRefusedAddress) {
			t.Errorf("%s: err = %v, want the refused address", url, a.Err)
		}
	}
	if hits != 0 {
		t.Fatalf("the receiver was reached %d times", hits)
	}
	// Allowed: the same name reaches the receiver.
	s := webhookdial.New(webhookdial.Config{Resolver: loopbackResolver(), AllowPrivate: true})
	if a := s.Send(t.Context(), "http://hooks.example.com:"+port+"/in", nil, []byte("{}")); !a.OK() {
		t.Fatalf("allowed private: %+v", a)
	}
}

func TestSender_NoRedirectsAndABoundedAnswer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		if r.URL.Path == "/elsewhere" {
			t.Error("the redirect was followed")
		}
		_, _ = io.WriteString(w, strings.Repeat("x", 200<<10))
	}))
	defer srv.Close()
	s := webhookdial.New(webhookdial.Config{AllowPrivate: true})
	if a := s.Send(t.Context(), srv.URL+"/redirect", nil, nil); a.StatusCode != http.StatusFound || a.OK() {
		t.Fatalf("redirect: %+v", a)
	}
	if a := s.Send(t.Context(), srv.URL+"/big", nil, nil); len(a.Body) != 64<<10 || !a.OK() {
		t.Fatalf("read %d bytes of the answer, want 64 KiB", len(a.Body))
	}
}

// serveDNS answers one DNS query on a stream connection (2-byte length framing): A queries with
// 127.0.0.1, anything else with no answer.
func serveDNS(c net.Conn) {
	defer c.Close()
	var lenBuf [2]byte
	if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
		return
	}
	q := make([]byte, int(lenBuf[0])<<8|int(lenBuf[1]))
	if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
		return
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end++ // the root label
	question := q[12 : end+4]
	qtype := int(q[end])<<8 | int(q[end+1])
	resp := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, question...)
	if qtype == 1 {
		resp[7] = 1
		resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
	}
	_, _ = c.Write(append([]byte{byte(len(resp) >> 8), byte(len(resp))}, resp...))
}
