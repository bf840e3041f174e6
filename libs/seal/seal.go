// Package seal encrypts secrets at rest (payment gateway keys, stored card data) with
// AES-256-GCM under a key from the environment.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// Box seals and opens values with one key.
type Box struct{ aead cipher.AEAD }

// New returns a Box for a base64-encoded 32-byte key.
func New(keyB64 string) (*Box, error) {
	key, err := base64.StdEncoding.DecodeString(keyB64)
	if err != nil || len(key) != 32 {
		return nil, errors.New("encryption key must be 32 bytes, base64-encoded")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain; context binds the ciphertext to its owner (an account and a field),
// so a sealed value copied elsewhere does not open.
func (b *Box) Seal(plain, context string) string {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(context))
	return base64.StdEncoding.EncodeToString(out)
}

// Open decrypts a value sealed with the same context.
func (b *Box) Open(sealed, context string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", errors.New("sealed value is malformed")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(context))
	if err != nil {
		return "", fmt.Errorf("sealed value does not open: %w", err)
	}
	return string(plain), nil
}

// NewKey returns a fresh random key in the form New takes.
func NewKey() string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}
