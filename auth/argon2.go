package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are the Argon2id cost parameters. The zero value is not usable; see OWASPMinimum.
type Argon2Params struct {
	MemoryKiB   uint32
	Iterations  uint32
	Parallelism uint8
	SaltLen     uint32
	KeyLen      uint32
}

// OWASPMinimum is OWASP's minimum recommended Argon2id configuration (19 MiB, 2 iterations, 1 lane).
var OWASPMinimum = Argon2Params{MemoryKiB: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLen: 16, KeyLen: 32}

// Validate refuses parameters weaker than OWASPMinimum.
func (p Argon2Params) Validate() error {
	m := OWASPMinimum
	if p.MemoryKiB < m.MemoryKiB || p.Iterations < m.Iterations || p.Parallelism < m.Parallelism {
		return fmt.Errorf("argon2id parameters m=%d KiB, t=%d, p=%d are below the OWASP minimum m=%d KiB, t=%d, p=%d",
			p.MemoryKiB, p.Iterations, p.Parallelism, m.MemoryKiB, m.Iterations, m.Parallelism)
	}
	if p.SaltLen < 16 || p.KeyLen < 32 {
		return errors.New("argon2id salt must be at least 16 bytes and key at least 32 bytes")
	}
	return nil
}

// Argon2Hasher hashes passwords with Argon2id, encoding the parameters into each hash so they can
// be raised later without invalidating stored hashes. A semaphore bounds how many hashes run at
// once: each one takes MemoryKiB of memory, and a burst of logins must not exhaust the machine.
type Argon2Hasher struct {
	params Argon2Params
	slots  chan struct{}
}

// NewArgon2Hasher returns a hasher with the given parameters, allowing maxConcurrent hashes at once.
func NewArgon2Hasher(p Argon2Params, maxConcurrent int) (*Argon2Hasher, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if maxConcurrent < 1 {
		maxConcurrent = 1
	}
	return &Argon2Hasher{params: p, slots: make(chan struct{}, maxConcurrent)}, nil
}

var b64 = base64.RawStdEncoding

// Hash returns the PHC-style encoding $argon2id$v=19$m=..,t=..,p=..$salt$key.
func (h *Argon2Hasher) Hash(password string) (string, error) {
	salt := make([]byte, h.params.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("read salt: %w", err)
	}
	key := h.derive(password, salt, h.params)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		h.params.MemoryKiB, h.params.Iterations, h.params.Parallelism, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify compares password with an encoded hash in constant time. needsRehash is true when the
// hash was made with weaker parameters than the hasher's.
func (h *Argon2Hasher) Verify(password, encoded string) (match, needsRehash bool, err error) {
	p, salt, key, err := decodeArgon2(encoded)
	if err != nil {
		return false, false, err
	}
	got := h.derive(password, salt, p)
	if subtle.ConstantTimeCompare(got, key) != 1 {
		return false, false, nil
	}
	cur := h.params
	weaker := p.MemoryKiB < cur.MemoryKiB || p.Iterations < cur.Iterations || p.Parallelism < cur.Parallelism ||
		p.KeyLen < cur.KeyLen || p.SaltLen < cur.SaltLen
	return true, weaker, nil
}

func (h *Argon2Hasher) derive(password string, salt []byte, p Argon2Params) []byte {
	h.slots <- struct{}{}
	defer func() { <-h.slots }()
	return argon2.IDKey([]byte(password), salt, p.Iterations, p.MemoryKiB, p.Parallelism, p.KeyLen)
}

// ErrMalformedHash means a stored hash is not a valid Argon2id encoding.
var ErrMalformedHash = errors.New("malformed argon2id hash")

// maxStoredMemoryKiB caps the memory a stored hash may ask for, so a corrupted row cannot make one
// verification allocate gigabytes.
const maxStoredMemoryKiB = 1 << 20

func decodeArgon2(encoded string) (Argon2Params, []byte, []byte, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return Argon2Params{}, nil, nil, ErrMalformedHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return Argon2Params{}, nil, nil, ErrMalformedHash
	}
	var p Argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Iterations, &p.Parallelism); err != nil {
		return Argon2Params{}, nil, nil, ErrMalformedHash
	}
	if p.MemoryKiB == 0 || p.MemoryKiB > maxStoredMemoryKiB || p.Iterations == 0 || p.Iterations > 100 || p.Parallelism == 0 {
		return Argon2Params{}, nil, nil, ErrMalformedHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) == 0 {
		return Argon2Params{}, nil, nil, ErrMalformedHash
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) == 0 {
		return Argon2Params{}, nil, nil, ErrMalformedHash
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}
