// Package panelauth is who signs in to the management panel: owner users (several per
// account) and operator users (the admin API's powers), their passwords (bcrypt), their
// sessions and the invitations that bring new users in (docs/panel.md).
package panelauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// Role is what a panel user may do.
type Role string

// Roles: an owner works in its account; an operator runs the SaaS (accounts, plans, audit).
const (
	Owner    Role = "owner"
	Operator Role = "operator"
)

// User is one person who signs in.
type User struct {
	// Email is the user's identity, stored lower case.
	Email string
	Name  string
	Role  Role
	// AccountID is an owner's account ("" for an operator).
	AccountID    string
	PasswordHash []byte
	CreatedAt    time.Time
	// InvitedBy is the email of who invited the user ("" when created by the admin API).
	InvitedBy string
}

// Session is a signed-in browser. Its token is known only to the browser (in a cookie);
// the store keeps its hash.
type Session struct {
	ID        string // hex SHA-256 of the token
	Email     string
	Name      string
	Role      Role
	AccountID string
	// CSRF is the token every form of the session carries back.
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Invite lets whoever holds its link become a user of the account with the role given,
// once, before it expires.
type Invite struct {
	ID        string // hex SHA-256 of the token
	Email     string
	Role      Role
	AccountID string
	InvitedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Errors of the panel's sign-in.
var (
	// ErrBadLogin is a wrong email or password, never told apart.
	ErrBadLogin = errors.New("wrong email or password")
	// ErrNoSession is a token that is unknown, signed out or expired.
	ErrNoSession = errors.New("not signed in")
	// ErrEmailTaken is an email that already has a user.
	ErrEmailTaken = errors.New("a user with this email already exists")
	// ErrNoInvite is an invite link that is unknown, used or expired.
	ErrNoInvite = errors.New("this invitation link is not valid: it was used, it expired or it never existed")
	// ErrNotFound is a user that does not exist.
	ErrNotFound = errors.New("no such user")
)

// FieldError is a value a user typed that breaks a rule: the form shows it by its field.
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Repository keeps users, sessions and invites.
type Repository interface {
	// CreateUser stores u; ErrEmailTaken when its email has a user.
	CreateUser(ctx context.Context, u User) error
	// User reads the user of email; ErrNotFound.
	User(ctx context.Context, email string) (User, error)
	// Users lists the users of account ("" : the operators), by email.
	Users(ctx context.Context, account string) ([]User, error)
	// DeleteUser removes a user and its sessions.
	DeleteUser(ctx context.Context, email string) error
	CreateSession(ctx context.Context, s Session) error
	// Session reads a session by id; ErrNoSession.
	Session(ctx context.Context, id string) (Session, error)
	DeleteSession(ctx context.Context, id string) error
	// DeleteSessions removes every session of email and returns how many there were.
	DeleteSessions(ctx context.Context, email string) (int64, error)
	CreateInvite(ctx context.Context, i Invite) error
	// TakeInvite removes the invite id and returns it (ErrNoInvite): an invite is used once,
	// even by two browsers at once.
	TakeInvite(ctx context.Context, id string) (Invite, error)
	// PeekInvite reads the invite id without using it (ErrNoInvite).
	PeekInvite(ctx context.Context, id string) (Invite, error)
}

// Options tune the service; zero values take the defaults.
type Options struct {
	// Cost is bcrypt's work factor (DefaultCost).
	Cost int
	// SessionTTL is how long a session lasts after sign-in (DefaultSessionTTL).
	SessionTTL time.Duration
	// InviteTTL is how long an invite link works (DefaultInviteTTL).
	InviteTTL time.Duration
}

// Defaults of Options.
const (
	DefaultCost       = 12
	DefaultSessionTTL = 12 * time.Hour
	DefaultInviteTTL  = 7 * 24 * time.Hour
	// MinPassword and MaxPassword bound a password (bytes beyond 72 bcrypt would ignore).
	MinPassword = 10
	MaxPassword = 72
)

// Service signs users in and out and brings new ones in.
type Service struct {
	repo  Repository
	cost  int
	ttl   time.Duration
	itl   time.Duration
	now   func() time.Time
	decoy []byte
}

// New returns the service over repo.
func New(repo Repository, o Options) *Service {
	s := &Service{repo: repo, cost: o.Cost, ttl: o.SessionTTL, itl: o.InviteTTL, now: time.Now}
	if s.cost == 0 {
		s.cost = DefaultCost
	}
	if s.ttl == 0 {
		s.ttl = DefaultSessionTTL
	}
	if s.itl == 0 {
		s.itl = DefaultInviteTTL
	}
	// A sign-in with an unknown email checks a password against this hash, so that it takes
	// as long as one with a known email: the answer's time does not tell which emails exist.
	s.decoy, _ = bcrypt.GenerateFromPassword([]byte("no such user, no such password"), s.cost)
	return s
}

// NormalEmail checks an email address and returns it lower case.
func NormalEmail(field, email string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" {
		return "", &FieldError{field, "is required"}
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 || !strings.Contains(email[strings.LastIndexByte(email, '@'):], ".") {
		return "", &FieldError{field, "must be an email address such as owner@example.com"}
	}
	return strings.ToLower(email), nil
}

// checkPassword applies the password rules.
func checkPassword(field, p string) error {
	switch {
	case utf8.RuneCountInString(p) < MinPassword:
		return &FieldError{field, fmt.Sprintf("must be at least %d characters", MinPassword)}
	case len(p) > MaxPassword:
		return &FieldError{field, fmt.Sprintf("must be at most %d bytes", MaxPassword)}
	}
	return nil
}

func checkName(field, n string) (string, error) {
	n = strings.TrimSpace(n)
	if utf8.RuneCountInString(n) > 100 {
		return "", &FieldError{field, "must be at most 100 characters"}
	}
	return n, nil
}

// CreateUser adds a user with a password (the admin API's way in: the first owner of an
// account, an operator).
func (s *Service) CreateUser(ctx context.Context, email, name, password string, role Role, accountID string) (User, error) {
	u, err := s.newUser(email, name, password, role, accountID)
	if err != nil {
		return User{}, err
	}
	return u, s.repo.CreateUser(ctx, u)
}

func (s *Service) newUser(email, name, password string, role Role, accountID string) (User, error) {
	e, err := NormalEmail("email", email)
	if err != nil {
		return User{}, err
	}
	n, err := checkName("name", name)
	if err != nil {
		return User{}, err
	}
	if err := checkPassword("password", password); err != nil {
		return User{}, err
	}
	switch {
	case role == Owner && accountID == "":
		return User{}, &FieldError{"account_id", "is required for an owner"}
	case role == Operator && accountID != "":
		return User{}, &FieldError{"account_id", "must not be set for an operator"}
	case role != Owner && role != Operator:
		return User{}, &FieldError{"role", "must be owner or operator"}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return User{}, err
	}
	return User{Email: e, Name: n, Role: role, AccountID: accountID, PasswordHash: hash, CreatedAt: s.now().UTC()}, nil
}

// SignIn checks email and password and opens a session; the token goes to the browser.
func (s *Service) SignIn(ctx context.Context, email, password string) (Session, string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	u, err := s.repo.User(ctx, e)
	if errors.Is(err, ErrNotFound) || e == "" {
		_ = bcrypt.CompareHashAndPassword(s.decoy, []byte(password))
		return Session{}, "", ErrBadLogin
	}
	if err != nil {
		return Session{}, "", err
	}
	if len(password) > MaxPassword || bcrypt.CompareHashAndPassword(u.PasswordHash, []byte(password)) != nil {
		return Session{}, "", ErrBadLogin
	}
	return s.open(ctx, u)
}

func (s *Service) open(ctx context.Context, u User) (Session, string, error) {
	token := NewToken()
	now := s.now().UTC()
	sess := Session{ID: TokenID(token), Email: u.Email, Name: u.Name, Role: u.Role, AccountID: u.AccountID, CSRF: NewToken(),
		CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
	if err := s.repo.CreateSession(ctx, sess); err != nil {
		return Session{}, "", err
	}
	return sess, token, nil
}

// Session is the session of a browser's token; ErrNoSession when it is unknown, signed out,
// expired, or its user was removed.
func (s *Service) Session(ctx context.Context, token string) (Session, error) {
	if token == "" || len(token) > 128 {
		return Session{}, ErrNoSession
	}
	sess, err := s.repo.Session(ctx, TokenID(token))
	if err != nil {
		return Session{}, err
	}
	if !s.now().Before(sess.ExpiresAt) {
		_ = s.repo.DeleteSession(ctx, sess.ID)
		return Session{}, ErrNoSession
	}
	return sess, nil
}

// SignOut ends one session.
func (s *Service) SignOut(ctx context.Context, sess Session) error {
	return s.repo.DeleteSession(ctx, sess.ID)
}

// SignOutEverywhere ends every session of the session's user, on every browser.
func (s *Service) SignOutEverywhere(ctx context.Context, sess Session) (int64, error) {
	return s.repo.DeleteSessions(ctx, sess.Email)
}

// Invite makes a link for email to join account as a user of role: an owner invites owners
// of its own account; an operator invites operators, or the owners of any account (the first
// of a new account). The token goes into the link shown to the inviter.
//
// Whether email already has a user is not looked at: the answer, and its time, are the
// same for any email, so that an invitation never tells an owner which emails have a user
// in another account or are operators. An invitation for an email that has a user cannot
// be accepted (Accept).
func (s *Service) Invite(ctx context.Context, by Session, email string, role Role, accountID string) (Invite, string, error) {
	if by.Role != Operator && (role != Owner || accountID != by.AccountID) {
		return Invite{}, "", ErrNotFound
	}
	if (role == Owner) == (accountID == "") || role != Owner && role != Operator {
		return Invite{}, "", &FieldError{"role", "an owner joins an account; an operator joins none"}
	}
	e, err := NormalEmail("email", email)
	if err != nil {
		return Invite{}, "", err
	}
	token := NewToken()
	now := s.now().UTC()
	inv := Invite{ID: TokenID(token), Email: e, Role: role, AccountID: accountID, InvitedBy: by.Email, CreatedAt: now, ExpiresAt: now.Add(s.itl)}
	return inv, token, s.repo.CreateInvite(ctx, inv)
}

// InviteFor is the invite of a link's token, still unused (ErrNoInvite).
func (s *Service) InviteFor(ctx context.Context, token string) (Invite, error) {
	if token == "" || len(token) > 128 {
		return Invite{}, ErrNoInvite
	}
	inv, err := s.repo.PeekInvite(ctx, TokenID(token))
	if err == nil && !s.now().Before(inv.ExpiresAt) {
		return Invite{}, ErrNoInvite
	}
	return inv, err
}

// Accept uses an invite: the user is created with name and password and signed in. The
// password is checked before the invite is used, so a refused password leaves it usable.
// An invite whose email has a user by now (made for an existing user, or accepted through
// another invite first) is used up and answered ErrNoInvite, as a used or expired one is:
// the link tells its holder nothing of whom the email belongs to.
func (s *Service) Accept(ctx context.Context, token, name, password string) (Session, string, error) {
	inv, err := s.InviteFor(ctx, token)
	if err != nil {
		return Session{}, "", err
	}
	u, err := s.newUser(inv.Email, name, password, inv.Role, inv.AccountID)
	if err != nil {
		return Session{}, "", err
	}
	inv, err = s.repo.TakeInvite(ctx, inv.ID)
	if err != nil {
		return Session{}, "", err
	}
	u.InvitedBy = inv.InvitedBy
	if err := s.repo.CreateUser(ctx, u); errors.Is(err, ErrEmailTaken) {
		return Session{}, "", ErrNoInvite
	} else if err != nil {
		return Session{}, "", err
	}
	return s.open(ctx, u)
}

// Users lists the users of an account ("": the operators).
func (s *Service) Users(ctx context.Context, account string) ([]User, error) {
	return s.repo.Users(ctx, account)
}

// RemoveUser removes a user of the same account (or an operator, by an operator), and
// every session of it. Nobody removes themselves.
func (s *Service) RemoveUser(ctx context.Context, by Session, email string) error {
	u, err := s.repo.User(ctx, strings.ToLower(email))
	if err != nil {
		return err
	}
	if u.AccountID != by.AccountID || u.Role != by.Role {
		return ErrNotFound
	}
	if u.Email == by.Email {
		return &FieldError{"email", "you cannot remove yourself; another user of the account can"}
	}
	return s.repo.DeleteUser(ctx, u.Email)
}

// NewToken is 32 random bytes, base64url: a session, CSRF or invite token.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TokenID is how a token is stored: its SHA-256, so that the store never holds a token.
func TokenID(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// SameToken compares two tokens in constant time.
func SameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
