package guest

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// ProductionCost is the bcrypt cost the service uses; tests pass
// bcrypt.MinCost (4) to stay fast.
const ProductionCost = 12

// ErrPasswordTooLong is returned for a password longer than MaxPassword
// bytes, which bcrypt would silently shorten.
var ErrPasswordTooLong = fmt.Errorf("password must be at most %d bytes (the limit of bcrypt)", MaxPassword)

// HashPassword hashes pw with bcrypt at cost (4 to 31). It refuses a cost
// outside that range instead of falling back to bcrypt's default.
func HashPassword(pw string, cost int) (string, error) {
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		return "", fmt.Errorf("bcrypt cost %d is outside %d..%d", cost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	if len(pw) > MaxPassword {
		return "", ErrPasswordTooLong
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// CheckPassword reports whether pw matches hash. A user without a usable
// hash (social login, damaged record) costs the same time as a wrong
// password, at ProductionCost, and never matches.
func CheckPassword(hash, pw string) bool {
	if _, err := bcrypt.Cost([]byte(hash)); err != nil {
		DummyCheck(pw, ProductionCost)
		return false
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw))
	return err == nil
}

// DummyCheck spends the time of a CheckPassword at cost and always fails.
// Login calls it when no user has the email, so that the response time does
// not reveal which emails are registered. Use the cost of stored hashes.
func DummyCheck(pw string, cost int) bool {
	h, err := dummyHash(cost)
	if err != nil {
		return false
	}
	_ = bcrypt.CompareHashAndPassword(h, []byte(pw))
	return false
}

var dummies sync.Map // cost → []byte hash of a random-looking constant

func dummyHash(cost int) ([]byte, error) {
	if h, ok := dummies.Load(cost); ok {
		return h.([]byte), nil
	}
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		return nil, errors.New("invalid bcrypt cost")
	}
	h, err := bcrypt.GenerateFromPassword([]byte("vros dummy password, never a real one"), cost)
	if err != nil {
		return nil, err
	}
	actual, _ := dummies.LoadOrStore(cost, h)
	return actual.([]byte), nil
}
