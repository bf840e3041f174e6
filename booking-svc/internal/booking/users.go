package booking

import (
	"context"
	"errors"

	"github.com/vros/vros/booking-svc/internal/guest"
)

// Users manages guest users. Cost is bcrypt's work factor.
type Users struct {
	store UserRepository
	Cost  int
}

// NewUsers returns the guest-user service.
func NewUsers(r UserRepository, cost int) *Users { return &Users{store: r, Cost: cost} }

// Errors of guest users.
var (
	ErrEmailTaken = errors.New("a user with this email already exists")
	ErrNoUser     = errors.New("user does not exist")
	ErrLogin      = errors.New("email or password is wrong")
)

// Add registers a user (adduser).
func (us *Users) Add(ctx context.Context, account string, n guest.NewUser) (guest.User, error) {
	hash, err := guest.HashPassword(n.Password, us.Cost)
	if err != nil {
		return guest.User{}, err
	}
	u, err := us.store.AddUser(ctx, account, n.User(hash), false)
	if errors.Is(err, ErrEmailTaken) {
		return guest.User{}, ErrEmailTaken
	}
	return u, err
}

// Update changes a user (updateuser); the password only when sent.
func (us *Users) Update(ctx context.Context, account string, up guest.Update) (guest.User, error) {
	cur, err := us.store.User(ctx, account, int64(up.UserID))
	if errors.Is(err, ErrNotFound) {
		return guest.User{}, ErrNoUser
	}
	if err != nil {
		return guest.User{}, err
	}
	next := up.Apply(cur)
	if up.Password != nil {
		if next.PasswordHash, err = guest.HashPassword(*up.Password, us.Cost); err != nil {
			return guest.User{}, err
		}
	}
	u, err := us.store.UpdateUser(ctx, account, next)
	if errors.Is(err, ErrEmailTaken) {
		return guest.User{}, ErrEmailTaken
	}
	return u, err
}

// Login checks a user's password. An unknown email costs the same time as a wrong
// password, so that answers do not reveal which emails are registered.
func (us *Users) Login(ctx context.Context, account string, c guest.Credentials) (guest.User, error) {
	u, err := us.store.UserByEmail(ctx, account, c.Email)
	if errors.Is(err, ErrNotFound) {
		guest.DummyCheck(c.Password, us.Cost)
		return guest.User{}, ErrLogin
	}
	if err != nil {
		return guest.User{}, err
	}
	if !guest.CheckPassword(u.PasswordHash, c.Password) {
		return guest.User{}, ErrLogin
	}
	return u, nil
}

// Social returns the user with the email of a social login, registering it on first use.
func (us *Users) Social(ctx context.Context, account string, s guest.Social) (guest.User, error) {
	u, err := us.store.UserByEmail(ctx, account, s.Email)
	if err == nil {
		return u, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return guest.User{}, err
	}
	u, err = us.store.AddUser(ctx, account, s.User(), true)
	if errors.Is(err, ErrEmailTaken) { // registered meanwhile: the existing user
		u, err = us.store.UserByEmail(ctx, account, s.Email)
	}
	return u, err
}
