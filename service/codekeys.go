package service

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// CodeKeys keep login codes out of storage in plain text. Both keys are derived with HKDF-SHA256
// from one server secret (the JWT secret, see settings.go), under different labels, so a leak of
// Redis, of the jobs table or of a backup shows no code and no key.
type CodeKeys struct {
	seal cipher.AEAD
	key  []byte // HMAC-SHA256 key of the stored code hashes
}

// NewCodeKeys derives the code keys from secret.
func NewCodeKeys(secret []byte) (CodeKeys, error) {
	if len(secret) == 0 {
		return CodeKeys{}, errors.New("code keys: empty server secret")
	}
	hashKey, err := hkdf.Key(sha256.New, secret, nil, "inkwell login code hash v1", 32)
	if err != nil {
		return CodeKeys{}, fmt.Errorf("derive code hash key: %w", err)
	}
	sealKey, err := hkdf.Key(sha256.New, secret, nil, "inkwell login code seal v1", 32)
	if err != nil {
		return CodeKeys{}, fmt.Errorf("derive code seal key: %w", err)
	}
	block, err := aes.NewCipher(sealKey)
	if err != nil {
		return CodeKeys{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return CodeKeys{}, err
	}
	return CodeKeys{seal: aead, key: hashKey}, nil
}

// Hash is what the code store keeps for code sent to target: HMAC-SHA256 under the hash key of
// target and code. Codes have six digits, so an unkeyed hash would fall to a million guesses.
func (k CodeKeys) Hash(target, code string) string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(target))
	m.Write([]byte{0})
	m.Write([]byte(code))
	return hex.EncodeToString(m.Sum(nil))
}

// Seal encrypts code for the send_code job (AES-256-GCM, bound to the address it goes to).
func (k CodeKeys) Seal(address, code string) (string, error) {
	nonce := make([]byte, k.seal.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(k.seal.Seal(nonce, nonce, []byte(code), []byte(address))), nil
}

// Open decrypts what Seal made for address.
func (k CodeKeys) Open(address, sealed string) (string, error) {
	b, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil || len(b) < k.seal.NonceSize() {
		return "", errors.New("open login code: malformed")
	}
	n := k.seal.NonceSize()
	code, err := k.seal.Open(nil, b[:n], b[n:], []byte(address))
	if err != nil {
		return "", errors.New("open login code: not sealed by this server's key")
	}
	return string(code), nil
}
