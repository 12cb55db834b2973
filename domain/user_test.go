package domain_test

import (
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestValidateUsername(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"jake", true}, {"j.doe-2_x", true}, {".hidden", true}, {"a..b", true},
		{".", false}, {"..", false}, {"....", false}, {"", false}, {"with space", false}, {"ünïcode", false},
		{"api", false}, {"Admin", false}, {"USERS", false}, {"profiles", false}, {"articles", false}, {"user", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := &domain.ValidationError{}
			domain.ValidateUsername(v, tc.name)
			if (v.OrNil() == nil) != tc.ok {
				t.Fatalf("ValidateUsername(%q) = %v, want ok=%v", tc.name, v.OrNil(), tc.ok)
			}
		})
	}
}
