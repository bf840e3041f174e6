package booking

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/booking-svc/internal/store"
)

// Users manages guest users. Cost is bcrypt's work factor.
type Users struct {
	store *store.Store
	Cost  int
}

// NewUsers returns the guest-user service.
func NewUsers(s *store.Store, cost int) *Users { return &Users{store: s, Cost: cost} }

// Errors of guest users.
var (
	ErrEmailTaken = errors.New("a user with this email already exists")
	ErrNoUser     = errors.New("user does not exist")
	ErrLogin      = errors.New("email or password is wrong")
)

func userOf(r store.UserRec) guest.User {
	return guest.User{UserID: int(r.UserID), Email: r.Email, Name: r.Name, Company: r.Company, Address: r.Address, Country: r.Country,
		Phone1: r.Phone1, Phone2: r.Phone2, PasswordHash: r.PasswordHash}
}

func recOf(account string, u guest.User, social bool) store.UserRec {
	return store.UserRec{AccountID: account, Email: u.Email, Name: u.Name, Company: u.Company, Address: u.Address, Country: u.Country,
		Phone1: u.Phone1, Phone2: u.Phone2, PasswordHash: u.PasswordHash, Social: social}
}

// Add registers a user (adduser).
func (us *Users) Add(ctx context.Context, account string, n guest.NewUser) (guest.User, error) {
	hash, err := guest.HashPassword(n.Password, us.Cost)
	if err != nil {
		return guest.User{}, err
	}
	r, err := us.store.AddUser(ctx, recOf(account, n.User(hash), false))
	if errors.Is(err, store.ErrEmailTaken) {
		return guest.User{}, ErrEmailTaken
	}
	return userOf(r), err
}

// Update changes a user (updateuser); the password only when sent.
func (us *Users) Update(ctx context.Context, account string, up guest.Update) (guest.User, error) {
	cur, err := us.store.User(ctx, account, int64(up.UserID))
	if errors.Is(err, store.ErrNotFound) {
		return guest.User{}, ErrNoUser
	}
	if err != nil {
		return guest.User{}, err
	}
	next := up.Apply(userOf(cur))
	set := bson.D{{Key: "name", Value: next.Name}, {Key: "company", Value: next.Company}, {Key: "address", Value: next.Address},
		{Key: "country", Value: next.Country}, {Key: "phone1", Value: next.Phone1}, {Key: "phone2", Value: next.Phone2}}
	if up.Password != nil {
		hash, err := guest.HashPassword(*up.Password, us.Cost)
		if err != nil {
			return guest.User{}, err
		}
		set = append(set, bson.E{Key: "password_hash", Value: hash})
	}
	email := ""
	if up.Email != nil {
		email = *up.Email
	}
	r, err := us.store.UpdateUser(ctx, account, cur.UserID, email, set)
	if errors.Is(err, store.ErrEmailTaken) {
		return guest.User{}, ErrEmailTaken
	}
	return userOf(r), err
}

// Login checks a user's password. An unknown email costs the same time as a wrong
// password, so that answers do not reveal which emails are registered.
func (us *Users) Login(ctx context.Context, account string, c guest.Credentials) (guest.User, error) {
	r, err := us.store.UserByEmail(ctx, account, c.Email)
	if errors.Is(err, store.ErrNotFound) {
		guest.DummyCheck(c.Password, us.Cost)
		return guest.User{}, ErrLogin
	}
	if err != nil {
		return guest.User{}, err
	}
	if !guest.CheckPassword(r.PasswordHash, c.Password) {
		return guest.User{}, ErrLogin
	}
	return userOf(r), nil
}

// Social returns the user with the email of a social login, registering it on first use.
func (us *Users) Social(ctx context.Context, account string, s guest.Social) (guest.User, error) {
	r, err := us.store.UserByEmail(ctx, account, s.Email)
	if err == nil {
		return userOf(r), nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return guest.User{}, err
	}
	r, err = us.store.AddUser(ctx, recOf(account, s.User(), true))
	if errors.Is(err, store.ErrEmailTaken) { // registered meanwhile: the existing user
		r, err = us.store.UserByEmail(ctx, account, s.Email)
	}
	return userOf(r), err
}
