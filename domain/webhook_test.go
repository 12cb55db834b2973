package domain_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// The Standard Webhooks specification's own example (its reference libraries' test vector).
func TestSignWebhook_StandardWebhooksVector(t *testing.T) {
	key, ok := domain.WebhookSecretBytes("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if !ok {
		t.Fatal("secret not read")
	}
	got := domain.SignWebhook(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature = %s, want %s", got, want)
	}
}

func TestNewWebhookSecret(t *testing.T) {
	s := domain.NewWebhookSecret()
	key, ok := domain.WebhookSecretBytes(s)
	if !ok || len(key) != 24 {
		t.Fatalf("secret %q: %d bytes, ok %v", s, len(key), ok)
	}
	if domain.NewWebhookSecret() == s {
		t.Fatal("two secrets alike")
	}
}

func TestWebhookAddrAllowed(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "172.31.255.255": false, "192.168.1.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "224.0.0.1": false, "255.255.255.255": false,
		"::1": false, "fe80::1": false, "fc00::1": false, "fd12::1": false, "ff02::1": false, "::": false, "::ffff:127.0.0.1": false,
		"93.184.216.34": true, "172.32.0.1": true, "2606:4700::1111": true, "100.128.0.1": true,
	} {
		if got := domain.WebhookAddrAllowed(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s allowed = %v, want %v", addr, got, want)
		}
	}
}

func TestCheckWebhookURL(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://hooks.example.com/in": true, "http://hooks.example.com/in": false, "https://127.0.0.1/x": false,
		"https://[::1]/x": false, "https://169.254.169.254/latest": false, "https://10.0.0.1/": false, "https://localhost:8443/": false,
		"https://user:pw@example.com/": false, "ftp://example.com/": false, "/relative": false, "": false, "https://example.com/#f": false,
		"https://93.184.216.34/hook": true,
	} {
		if got := domain.CheckWebhookURL(raw, false) == nil; got != want {
			t.Errorf("%q accepted = %v, want %v", raw, got, want)
		}
	}
	if err := domain.CheckWebhookURL("http://127.0.0.1:9000/hook", true); err != nil {
		t.Errorf("private allowed: %v", err)
	}
}

func TestWebhookRetry_FirstRetrySoonThenAboutADay(t *testing.T) {
	p := domain.WebhookRetry
	if d := p.Delay(1); d > 10*time.Second {
		t.Fatalf("first retry after %v, want ≤ 10s", d)
	}
	var total time.Duration
	for a := 1; a < p.MaxAttempts; a++ {
		total += p.Delay(a)
	}
	if total < 18*time.Hour || total > 30*time.Hour {
		t.Fatalf("retries span %v, want about a day", total)
	}
}
