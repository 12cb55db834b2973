package delivery

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// MailValidity is how long each kind of code lives, as the mails tell their readers. Zero
// VerifyEmail and ResetPassword are the domain's policy.
type MailValidity struct {
	Login, VerifyEmail, ResetPassword time.Duration
}

// mailTemplates renders each purpose's mail: a subject, a plain-text part and an HTML part. The
// HTML templates escape what they insert (the address is the recipient's own, but still input).
type mailTemplates struct {
	text     *texttemplate.Template
	html     *htmltemplate.Template
	validity MailValidity
}

var mailSubjects = map[Purpose]string{
	PurposeLogin:          "Your inkwell sign-in code",
	PurposeVerifyEmail:    "Confirm your email address for inkwell",
	PurposeResetPassword:  "Reset your inkwell password",
	PurposeStepUp:         "Confirm a change to your inkwell account",
	PurposeIdentityLinked: "A sign-in provider was linked to your inkwell account",
}

func parseMailTemplates(v MailValidity) (*mailTemplates, error) {
	if v.VerifyEmail == 0 {
		v.VerifyEmail = domain.VerifyEmailValidity
	}
	if v.ResetPassword == 0 {
		v.ResetPassword = domain.ResetPasswordValidity
	}
	text, err := texttemplate.New("").Option("missingkey=error").ParseFS(templateFS, "templates/*.txt.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parse text mail templates: %w", err)
	}
	html, err := htmltemplate.New("").Option("missingkey=error").ParseFS(templateFS, "templates/*.html.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parse HTML mail templates: %w", err)
	}
	return &mailTemplates{text: text, html: html, validity: v}, nil
}

// renderedMail is one mail ready to send.
type renderedMail struct {
	Subject, Text, HTML string
}

func (t *mailTemplates) render(m Message) (renderedMail, error) {
	p := m.purpose()
	subject, ok := mailSubjects[p]
	if !ok {
		return renderedMail{}, fmt.Errorf("%w: no mail template for purpose %q", ErrRejected, p)
	}
	valid := map[Purpose]time.Duration{PurposeLogin: t.validity.Login, PurposeStepUp: t.validity.Login,
		PurposeVerifyEmail: t.validity.VerifyEmail, PurposeResetPassword: t.validity.ResetPassword}[p]
	data := map[string]any{"Code": m.Code, "Address": m.Address,
		"Minutes": int(valid.Minutes()), "Hours": int(valid.Hours())}
	var text, html bytes.Buffer
	if err := t.text.ExecuteTemplate(&text, string(p)+".txt.tmpl", data); err != nil {
		return renderedMail{}, fmt.Errorf("%w: render %s mail: %v", ErrRejected, p, err)
	}
	if err := t.html.ExecuteTemplate(&html, string(p)+".html.tmpl", data); err != nil {
		return renderedMail{}, fmt.Errorf("%w: render %s mail: %v", ErrRejected, p, err)
	}
	return renderedMail{Subject: subject, Text: text.String(), HTML: html.String()}, nil
}
