package auth_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"golang.org/x/crypto/argon2"

	"github.com/inkwell-dev/inkwell/auth"
)

// Every Argon2 derivation at the OWASP minimum costs ~19 MiB and tens of milliseconds, so these
// tests share a few hashes instead of making one per assertion.

func newHasher(t *testing.T, p auth.Argon2Params) *auth.Argon2Hasher {
	t.Helper()
	h, err := auth.NewArgon2Hasher(p, 2)
	if err != nil {
		t.Fatalf("NewArgon2Hasher(%+v): %v", p, err)
	}
	return h
}

// encodeArgon2id builds a PHC-encoded Argon2id hash directly with x/crypto, independently of the
// hasher under test.
func encodeArgon2id(password string, memoryKiB, iterations uint32, parallelism uint8) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, iterations, memoryKiB, parallelism, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		memoryKiB, iterations, parallelism, b64.EncodeToString(salt), b64.EncodeToString(key))
}

func TestArgon2Hasher_HashAndVerify(t *testing.T) {
	t.Parallel()
	h := newHasher(t, auth.OWASPMinimum)

	const password = "correct horse battery staple"
	first, err := h.Hash(password)
	if err != nil {
		t.Fatalf("Hash: %v", err)
	}
	second, err := h.Hash(password)
	if err != nil {
		t.Fatalf("Hash: %v", err)
	}

	t.Run("encoding carries the OWASP parameters", func(t *testing.T) {
		t.Parallel()
		// 16-byte salt and 32-byte key in unpadded standard base64: 22 and 43 characters.
		want := regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)
		if !want.MatchString(first) {
			t.Errorf("Hash = %q, want it to match %s", first, want)
		}
	})

	t.Run("random salt makes two hashes of one password differ", func(t *testing.T) {
		t.Parallel()
		if first == second {
			t.Errorf("two hashes of the same password are equal: %q", first)
		}
	})

	t.Run("right password verifies without rehash", func(t *testing.T) {
		t.Parallel()
		match, needsRehash, err := h.Verify(password, second)
		if err != nil || !match || needsRehash {
			t.Errorf("Verify(right) = (%v, %v, %v), want (true, false, nil)", match, needsRehash, err)
		}
	})

	t.Run("wrong password does not verify", func(t *testing.T) {
		t.Parallel()
		match, needsRehash, err := h.Verify(password+"!", first)
		if err != nil || match || needsRehash {
			t.Errorf("Verify(wrong) = (%v, %v, %v), want (false, false, nil)", match, needsRehash, err)
		}
	})
}

func TestArgon2Hasher_NeedsRehash(t *testing.T) {
	t.Parallel()
	const password = "correct horse battery staple"

	t.Run("hash with weaker parameters verifies and asks for a rehash", func(t *testing.T) {
		t.Parallel()
		stronger := auth.OWASPMinimum
		stronger.Iterations = 3
		h := newHasher(t, stronger)

		weak := encodeArgon2id(password, 19456, 2, 1)
		match, needsRehash, err := h.Verify(password, weak)
		if err != nil || !match || !needsRehash {
			t.Errorf("Verify(weaker hash) = (%v, %v, %v), want (true, true, nil)", match, needsRehash, err)
		}
	})

	t.Run("hash with stronger parameters verifies without a downgrade", func(t *testing.T) {
		t.Parallel()
		h := newHasher(t, auth.OWASPMinimum)

		strong := encodeArgon2id(password, 19456, 3, 1)
		match, needsRehash, err := h.Verify(password, strong)
		if err != nil || !match || needsRehash {
			t.Errorf("Verify(stronger hash) = (%v, %v, %v), want (true, false, nil)", match, needsRehash, err)
		}
	})
}

func TestArgon2Hasher_MalformedHash(t *testing.T) {
	t.Parallel()
	h := newHasher(t, auth.OWASPMinimum)

	const salt = "c29tZXNhbHRzb21lc2FsdA"                     // 16 bytes
	const key = "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U" // 32 bytes
	tests := []struct {
		name    string
		encoded string
	}{
		{name: "empty", encoded: ""},
		{name: "not PHC", encoded: "plaintext-password"},
		{name: "bcrypt", encoded: "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"},
		{name: "argon2i variant", encoded: "$argon2i$v=19$m=19456,t=2,p=1$" + salt + "$" + key},
		{name: "missing leading dollar", encoded: "argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key},
		{name: "too few segments", encoded: "$argon2id$v=19$m=19456,t=2,p=1$" + salt},
		{name: "too many segments", encoded: "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key + "$x"},
		{name: "old version", encoded: "$argon2id$v=16$m=19456,t=2,p=1$" + salt + "$" + key},
		{name: "garbled version", encoded: "$argon2id$version$m=19456,t=2,p=1$" + salt + "$" + key},
		{name: "garbled params", encoded: "$argon2id$v=19$m=lots,t=2,p=1$" + salt + "$" + key},
		{name: "zero memory", encoded: "$argon2id$v=19$m=0,t=2,p=1$" + salt + "$" + key},
		{name: "memory over the cap", encoded: "$argon2id$v=19$m=4194304,t=2,p=1$" + salt + "$" + key},
		{name: "zero iterations", encoded: "$argon2id$v=19$m=19456,t=0,p=1$" + salt + "$" + key},
		{name: "absurd iterations", encoded: "$argon2id$v=19$m=19456,t=1000,p=1$" + salt + "$" + key},
		{name: "zero parallelism", encoded: "$argon2id$v=19$m=19456,t=2,p=0$" + salt + "$" + key},
		{name: "parallelism overflows a byte", encoded: "$argon2id$v=19$m=19456,t=2,p=300$" + salt + "$" + key},
		{name: "salt not base64", encoded: "$argon2id$v=19$m=19456,t=2,p=1$!!!!$" + key},
		{name: "empty salt", encoded: "$argon2id$v=19$m=19456,t=2,p=1$$" + key},
		{name: "key not base64", encoded: "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$!!!!"},
		{name: "empty key", encoded: "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			match, needsRehash, err := h.Verify("password", tc.encoded)
			if !errors.Is(err, auth.ErrMalformedHash) {
				t.Errorf("Verify(%q) error = %v, want ErrMalformedHash", tc.encoded, err)
			}
			if match || needsRehash {
				t.Errorf("Verify(%q) = (%v, %v), want (false, false)", tc.encoded, match, needsRehash)
			}
		})
	}
}

func TestNewArgon2Hasher_RefusesWeakParams(t *testing.T) {
	t.Parallel()
	with := func(change func(*auth.Argon2Params)) auth.Argon2Params {
		p := auth.OWASPMinimum
		change(&p)
		return p
	}
	tests := []struct {
		name   string
		params auth.Argon2Params
	}{
		{name: "zero value", params: auth.Argon2Params{}},
		{name: "memory below 19 MiB", params: with(func(p *auth.Argon2Params) { p.MemoryKiB = 19*1024 - 1 })},
		{name: "one iteration", params: with(func(p *auth.Argon2Params) { p.Iterations = 1 })},
		{name: "no parallelism", params: with(func(p *auth.Argon2Params) { p.Parallelism = 0 })},
		{name: "short salt", params: with(func(p *auth.Argon2Params) { p.SaltLen = 8 })},
		{name: "short key", params: with(func(p *auth.Argon2Params) { p.KeyLen = 16 })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := auth.NewArgon2Hasher(tc.params, 1)
			if err == nil || h != nil {
				t.Errorf("NewArgon2Hasher(%+v) = (%v, %v), want (nil, error)", tc.params, h, err)
			}
		})
	}

	t.Run("OWASP minimum accepted", func(t *testing.T) {
		t.Parallel()
		if _, err := auth.NewArgon2Hasher(auth.OWASPMinimum, 0); err != nil {
			t.Errorf("NewArgon2Hasher(OWASPMinimum): %v", err)
		}
	})
}
