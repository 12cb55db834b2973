package ioc

import (
	"flag"
	"strings"
	"testing"
)

func TestParseMailURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]MailServer{
		"smtp://smtp.example.com":                          {Host: "smtp.example.com", Port: 587, TLS: "starttls"},
		"smtp://smtp.example.com?tls=tls":                  {Host: "smtp.example.com", Port: 465, TLS: "tls"},
		"smtp://smtp.example.com?tls=none":                 {Host: "smtp.example.com", Port: 587, TLS: "none"},
		"smtp://relay:25?tls=none":                         {Host: "relay", Port: 25, TLS: "none"},
		"smtp://me%40example.com:p%40ss%3Aw%2F@[::1]:2525": {Host: "::1", Port: 2525, Username: "me@example.com", Password: "p@ss:w/", TLS: "starttls"},
		"smtp://apikey@smtp.example.com:587/":              {Host: "smtp.example.com", Port: 587, Username: "apikey", TLS: "starttls"},
	} {
		got, err := ParseMailURL(in)
		if err != nil || got != want {
			t.Errorf("ParseMailURL(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseMailURLRejectsWithOneLineWithoutThePassword(t *testing.T) {
	t.Parallel()
	for in, says := range map[string]string{
		"smtps://u:secret@smtp.example.com":        "scheme must be smtp",
		"smtp://u:secret@smtp.example.com?tls=ssl": "tls must be starttls, tls, none",
		"smtp://u:secret@smtp.example.com:0":       "port must be 1..65535",
		"smtp://u:secret@smtp.example.com:99999":   "port must be 1..65535",
		"smtp://u:secret@smtp.example.com?tsl=tls": "unknown parameter",
		"smtp://u:secret@smtp.example.com/inbox":   "no path",
		"smtp://u:secret@":                         "name the SMTP server",
		"smtp.example.com:587":                     "scheme must be smtp",
		"smtp://u:secret@smtp.example.com:x":       "not a URL",
	} {
		_, err := ParseMailURL(in)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseMailURL(%q) = %v, want an error saying %q", in, err, says)
			continue
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseMailURL(%q): %q shows the password or is not one line", in, err)
		}
	}
}

func TestMailURLPasswordIsRedactedInHelp(t *testing.T) {
	t.Setenv("INKWELL_MAIL_URL", "smtp://u:secret@smtp.example.com")
	for _, v := range []string{"smtp://u:secret@smtp.example.com", "smtp://u:secret@smtp.example.com:x"} {
		if got := redactedURL(v); strings.Contains(got, "secret") {
			t.Errorf("redactedURL(%q) = %q", v, got)
		}
	}
	fs := flag.NewFlagSet("help", flag.ContinueOnError)
	cfg := Flags(fs)
	if cfg.Mail.URL != "smtp://u:secret@smtp.example.com" {
		t.Fatalf("the environment was not applied: %q", cfg.Mail.URL)
	}
	if d := fs.Lookup("mail-url").DefValue; strings.Contains(d, "secret") {
		t.Fatalf("--help would show %q", d)
	}
}
