package domain_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestParseScopes(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []domain.Scope
		refused bool
	}{
		{name: "absent or null is the default, write", in: nil, want: []domain.Scope{domain.ScopeWrite}},
		{name: "an empty list asks for nothing and is refused", in: []string{}, refused: true},
		{name: "duplicates are dropped", in: []string{"read", "write", "read"}, want: []domain.Scope{domain.ScopeRead, domain.ScopeWrite}},
		{name: "an unknown scope is refused", in: []string{"admin"}, refused: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := domain.ParseScopes(tc.in)
			var v *domain.ValidationError
			if tc.refused {
				if !errors.As(err, &v) || len(v.Fields["scopes"]) == 0 {
					t.Fatalf("ParseScopes(%#v) = %v, %v; want a validation error on scopes", tc.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseScopes(%#v) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}
