package web

import (
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// suspendedErrorBody is the 403 a suspended account gets on every request and login: the
// RealWorld error shape, plus the suspension itself for clients that show it.
type suspendedErrorBody struct {
	Errors     map[string][]string `json:"errors"`
	Suspension suspensionJSON      `json:"suspension"`
}

type suspensionJSON struct {
	// Until is null for a suspension without an end.
	Until  *time.Time `json:"until"`
	Reason string     `json:"reason"`
}

func suspensionOf(s domain.Suspension) suspensionJSON {
	out := suspensionJSON{Reason: s.Reason}
	if !s.Forever() {
		until := s.Until.UTC()
		out.Until = &until
	}
	return out
}

func suspendedBody(s domain.Suspension) suspendedErrorBody {
	msg := "is suspended indefinitely: " + s.Reason
	if !s.Forever() {
		msg = "is suspended until " + s.Until.UTC().Format(time.RFC3339) + ": " + s.Reason
	}
	return suspendedErrorBody{Errors: map[string][]string{"account": {msg}}, Suspension: suspensionOf(s)}
}
