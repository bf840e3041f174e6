package panelauth_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/edge/internal/panelstore"
	"github.com/vros/vros/testkit/testinfra"
)

var users *panelauth.Service

func TestMain(m *testing.M) {
	testinfra.RunWithDatabase(m, "edge_panelauth_test", nil, func(db *mongo.Database) error {
		store, err := panelstore.New(context.Background(), db)
		if err != nil {
			return err
		}
		users = panelauth.New(store, panelauth.Options{Cost: 4})
		return nil
	})
}

var n atomic.Int64

func email() string { return fmt.Sprintf("user%d@example.com", n.Add(1)) }

// TestUserRules: each rule of a new user, by the field it names.
func TestUserRules(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, email, password, role, account, field, msg string
	}{
		{"no email", "", "long enough pw", "owner", "1001", "email", "is required"},
		{"not an email", "owner.example.com", "long enough pw", "owner", "1001", "email", "must be an email address"},
		{"no domain dot", "owner@localhost", "long enough pw", "owner", "1001", "email", "must be an email address"},
		{"display name", "Owner <owner@example.com>", "long enough pw", "owner", "1001", "email", "must be an email address"},
		{"short password", email(), "123456789", "owner", "1001", "password", "at least 10 characters"},
		{"password over 72 bytes", email(), strings.Repeat("é", 37), "owner", "1001", "password", "at most 72 bytes"},
		{"owner without account", email(), "long enough pw", "owner", "", "account_id", "is required for an owner"},
		{"operator with account", email(), "long enough pw", "operator", "1001", "account_id", "must not be set"},
		{"unknown role", email(), "long enough pw", "admin", "", "role", "must be owner or operator"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := users.CreateUser(ctx, c.email, "", c.password, panelauth.Role(c.role), c.account)
			fe, ok := errors.AsType[*panelauth.FieldError](err)
			if !ok || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) {
				t.Fatalf("got %v, want %s: %s", err, c.field, c.msg)
			}
		})
	}
	e := email()
	if _, err := users.CreateUser(ctx, strings.ToUpper(e), "A", "long enough pw", panelauth.Owner, "1001"); err != nil {
		t.Fatal(err)
	}
	if _, err := users.CreateUser(ctx, e, "B", "long enough pw", panelauth.Owner, "1002"); !errors.Is(err, panelauth.ErrEmailTaken) {
		t.Fatalf("same email in another case: %v, want ErrEmailTaken", err)
	}
}

// TestSignIn: a wrong password and an unknown email are the same refusal; a session is
// found by its token only, until it is signed out or expires.
func TestSignIn(t *testing.T) {
	ctx := context.Background()
	e := email()
	if _, err := users.CreateUser(ctx, e, "A", "long enough pw", panelauth.Owner, "1001"); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{e, "wrong password"}, {"nobody@example.com", "long enough pw"}, {e, ""}, {"", ""}} {
		if _, _, err := users.SignIn(ctx, c[0], c[1]); !errors.Is(err, panelauth.ErrBadLogin) {
			t.Errorf("sign in %q/%q: %v, want ErrBadLogin", c[0], c[1], err)
		}
	}
	sess, tok, err := users.SignIn(ctx, " "+strings.ToUpper(e)+" ", "long enough pw")
	if err != nil {
		t.Fatal(err)
	}
	if sess.AccountID != "1001" || sess.Role != panelauth.Owner || sess.CSRF == "" || sess.ID == tok {
		t.Fatalf("session %+v", sess)
	}
	if got, err := users.Session(ctx, tok); err != nil || got.Email != e {
		t.Fatalf("session by token: %+v %v", got, err)
	}
	if _, err := users.Session(ctx, sess.ID); !errors.Is(err, panelauth.ErrNoSession) {
		t.Errorf("the stored id works as a token: %v", err)
	}
	if err := users.SignOut(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if _, err := users.Session(ctx, tok); !errors.Is(err, panelauth.ErrNoSession) {
		t.Errorf("after sign-out: %v", err)
	}
}

// TestSessionExpires: a session past its TTL is refused.
func TestSessionExpires(t *testing.T) {
	ctx := context.Background()
	db, stop, err := testinfra.TestDatabase("edge_panelauth_ttl")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	store, err := panelstore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	short := panelauth.New(store, panelauth.Options{Cost: 4, SessionTTL: 200 * time.Millisecond})
	e := email()
	if _, err := short.CreateUser(ctx, e, "", "long enough pw", panelauth.Operator, ""); err != nil {
		t.Fatal(err)
	}
	_, tok, err := short.SignIn(ctx, e, "long enough pw")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := short.Session(ctx, tok); !errors.Is(err, panelauth.ErrNoSession) {
		t.Fatalf("expired session: %v", err)
	}
}

// TestInvites: who may invite whom, and an invite used once even by concurrent accepts.
func TestInvites(t *testing.T) {
	ctx := context.Background()
	owner := panelauth.Session{Email: "o@example.com", Role: panelauth.Owner, AccountID: "1001"}
	op := panelauth.Session{Email: "op@example.com", Role: panelauth.Operator}
	for _, c := range []struct {
		name    string
		by      panelauth.Session
		role    panelauth.Role
		account string
		ok      bool
	}{
		{"owner to own account", owner, panelauth.Owner, "1001", true},
		{"owner to another account", owner, panelauth.Owner, "1002", false},
		{"owner makes an operator", owner, panelauth.Operator, "", false},
		{"operator to an account", op, panelauth.Owner, "1002", true},
		{"operator makes an operator", op, panelauth.Operator, "", true},
		{"operator: owner without account", op, panelauth.Owner, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := users.Invite(ctx, c.by, email(), c.role, c.account)
			if (err == nil) != c.ok {
				t.Fatalf("err %v, want ok=%v", err, c.ok)
			}
		})
	}
	_, tok, err := users.Invite(ctx, owner, email(), panelauth.Owner, "1001")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := users.Accept(ctx, tok, "X", "short"); err == nil {
		t.Fatal("a short password accepted")
	}
	var wg sync.WaitGroup
	var in atomic.Int64
	for range 8 {
		wg.Go(func() {
			if _, _, err := users.Accept(ctx, tok, "X", "long enough pw"); err == nil {
				in.Add(1)
			} else if !errors.Is(err, panelauth.ErrNoInvite) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if in.Load() != 1 {
		t.Fatalf("%d concurrent accepts succeeded, want 1", in.Load())
	}
}

// TestInviteOfATakenEmail: an invitation for an email that has a user (in another account,
// an operator, in any case) is made as any other; accepting it is refused as a used link
// is, and changes no user.
func TestInviteOfATakenEmail(t *testing.T) {
	ctx := context.Background()
	taken := email()
	if _, err := users.CreateUser(ctx, taken, "Them", "their own password", panelauth.Owner, "2002"); err != nil {
		t.Fatal(err)
	}
	owner := panelauth.Session{Email: email(), Role: panelauth.Owner, AccountID: "1001"}
	for _, e := range []string{taken, strings.ToUpper(taken)} {
		inv, tok, err := users.Invite(ctx, owner, e, panelauth.Owner, "1001")
		if err != nil || tok == "" || inv.Email != taken {
			t.Fatalf("invitation for %s (has a user): %+v %v, want made as any other", e, inv, err)
		}
		if _, _, err := users.Accept(ctx, tok, "Mallory", "mallory's password"); !errors.Is(err, panelauth.ErrNoInvite) {
			t.Fatalf("accepting it: %v, want ErrNoInvite", err)
		}
		if _, err := users.InviteFor(ctx, tok); !errors.Is(err, panelauth.ErrNoInvite) {
			t.Fatalf("the link after a refused accept: %v, want used up", err)
		}
	}
	if _, _, err := users.SignIn(ctx, taken, "their own password"); err != nil {
		t.Fatalf("the user after the invitations: %v", err)
	}
	if _, _, err := users.SignIn(ctx, taken, "mallory's password"); !errors.Is(err, panelauth.ErrBadLogin) {
		t.Fatalf("the inviter's password: %v, want refused", err)
	}
}
