package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/testkit/together"
)

// The contract of booking.UserRepository, on the store the package's TestMain runs.

var accounts atomic.Int64

// fresh is an account no other test (nor an earlier run of the same test, -count) uses.
func fresh(name string) string {
	return fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano()%1e6, accounts.Add(1))
}

// usersWithEmail are the stored users of account whose email is email, in any case.
func usersWithEmail(t *testing.T, account, email string) []UserRec {
	t.Helper()
	ctx := context.Background()
	cur, err := db.Collection(collUsers).Find(ctx, bson.D{{Key: "account_id", Value: account}})
	if err != nil {
		t.Fatal(err)
	}
	var all []UserRec
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	var out []UserRec
	for _, u := range all {
		if strings.EqualFold(u.Email, email) {
			out = append(out, u)
		}
	}
	return out
}

func addUser(t *testing.T, s booking.UserRepository, account, email string) guest.User {
	t.Helper()
	u, err := s.AddUser(context.Background(), account, guest.User{Email: email, Name: "Grace Hopper", Country: "US"}, false)
	if err != nil {
		t.Fatalf("add %s in %s: %v", email, account, err)
	}
	return u
}

// TestUserRoundTrip: a user reads back as written, by id and by email in any case, and an
// update writes every field and moves its email.
func TestUserRoundTrip(t *testing.T) {
	acc := fresh("ur")
	ctx := context.Background()
	var s booking.UserRepository = newStore(t)
	in := guest.User{Email: "Ada@Example.com", Name: "Ada Lovelace", Company: "Analytical", Address: "12 St James's Square",
		Country: "GB", Phone1: "+44 20 1", Phone2: "+44 20 2", PasswordHash: "$2a$10$hash"}
	u, err := s.AddUser(ctx, acc, in, false)
	if err != nil {
		t.Fatal(err)
	}
	if u.UserID == 0 {
		t.Fatal("AddUser returned no id")
	}
	want := in
	want.UserID = u.UserID
	if u != want {
		t.Fatalf("AddUser: %+v, want %+v", u, want)
	}
	for _, email := range []string{"Ada@Example.com", "ada@example.com", "ADA@EXAMPLE.COM"} {
		got, err := s.UserByEmail(ctx, acc, email)
		if err != nil || got != want {
			t.Fatalf("UserByEmail(%s): %+v, %v; want %+v", email, got, err, want)
		}
	}
	if got, err := s.User(ctx, acc, int64(u.UserID)); err != nil || got != want {
		t.Fatalf("User: %+v, %v; want %+v", got, err, want)
	}

	next := guest.User{UserID: u.UserID, Email: "ada@analytical.org", Name: "Ada King", Company: "", Address: "Ockham Park",
		Country: "FR", Phone1: "+33 1", Phone2: "", PasswordHash: "$2a$10$other"}
	got, err := s.UpdateUser(ctx, acc, next)
	if err != nil || got != next {
		t.Fatalf("UpdateUser: %+v, %v; want %+v", got, err, next)
	}
	if got, err := s.User(ctx, acc, int64(u.UserID)); err != nil || got != next {
		t.Fatalf("User after update: %+v, %v; want %+v", got, err, next)
	}
	if got, err := s.UserByEmail(ctx, acc, "ADA@analytical.org"); err != nil || got != next {
		t.Fatalf("UserByEmail of the new email: %+v, %v", got, err)
	}
	if _, err := s.UserByEmail(ctx, acc, "ada@example.com"); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("UserByEmail of the old email: %v, want ErrNotFound", err)
	}
	// The old email is free again.
	addUser(t, s, acc, "ADA@example.com")
	// A change of case only keeps the email.
	next.Email = "Ada@Analytical.ORG"
	if got, err := s.UpdateUser(ctx, acc, next); err != nil || got.Email != next.Email {
		t.Fatalf("UpdateUser, case only: %+v, %v", got, err)
	}
	if got, err := s.UserByEmail(ctx, acc, "ada@analytical.org"); err != nil || got.UserID != u.UserID {
		t.Fatalf("UserByEmail after a change of case: %+v, %v", got, err)
	}
}

// TestUserEmailUnique: an email is unique per account in any case, through AddUser and
// UpdateUser; another account may use it; a refused change leaves the user as it was.
func TestUserEmailUnique(t *testing.T) {
	acc := fresh("ue")
	acc2 := fresh("ue2")
	acc3 := fresh("ue3")
	ctx := context.Background()
	var s booking.UserRepository = newStore(t)
	holder := addUser(t, s, acc, "grace@navy.mil")
	other := addUser(t, s, acc, "hopper@navy.mil")
	for _, tc := range []struct {
		name    string
		account string
		email   string
		want    error
	}{
		{"same email", acc, "grace@navy.mil", booking.ErrEmailTaken},
		{"upper case", acc, "GRACE@NAVY.MIL", booking.ErrEmailTaken},
		{"mixed case", acc, "Grace@Navy.Mil", booking.ErrEmailTaken},
		{"another account", acc2, "grace@navy.mil", nil},
		{"another account, other case", acc3, "Grace@NAVY.mil", nil},
		{"another email", acc, "grace2@navy.mil", nil},
	} {
		t.Run("add/"+tc.name, func(t *testing.T) {
			_, err := s.AddUser(ctx, tc.account, guest.User{Email: tc.email, Name: "G"}, false)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("AddUser(%s, %s): %v, want %v", tc.account, tc.email, err, tc.want)
			}
		})
		if tc.account != acc {
			continue
		}
		t.Run("update/"+tc.name, func(t *testing.T) {
			before, err := s.User(ctx, acc, int64(other.UserID))
			if err != nil {
				t.Fatal(err)
			}
			next := before
			next.Email, next.Name = tc.email, "changed"
			_, err = s.UpdateUser(ctx, acc, next)
			want := booking.ErrEmailTaken // the email is taken now, by the holder or by the add above
			if !errors.Is(err, want) {
				t.Fatalf("UpdateUser onto %s: %v, want %v", tc.email, err, want)
			}
			if after, err := s.User(ctx, acc, int64(other.UserID)); err != nil || after != before {
				t.Fatalf("a refused update changed the user: %+v, %v; was %+v", after, err, before)
			}
		})
	}
	if got, err := s.UserByEmail(ctx, acc, "GRACE@navy.mil"); err != nil || got.UserID != holder.UserID {
		t.Fatalf("the holder lost its email: %+v, %v", got, err)
	}
	if n := len(usersWithEmail(t, acc, "grace@navy.mil")); n != 1 {
		t.Fatalf("%d users hold grace@navy.mil", n)
	}
}

// TestUserOfAnotherAccount: a user is found only in its own account, and an update through
// another account changes nothing.
func TestUserOfAnotherAccount(t *testing.T) {
	acc := fresh("uo")
	other := fresh("uo-other")
	ctx := context.Background()
	var s booking.UserRepository = newStore(t)
	u := addUser(t, s, acc, "katherine@nasa.gov")
	for _, tc := range []struct {
		name string
		call func(account string, id int64) error
	}{
		{"User", func(a string, id int64) error { _, err := s.User(ctx, a, id); return err }},
		{"UserByEmail", func(a string, id int64) error {
			email := "katherine@nasa.gov"
			if id != int64(u.UserID) {
				email = "nobody@nasa.gov"
			}
			_, err := s.UserByEmail(ctx, a, email)
			return err
		}},
		{"UpdateUser", func(a string, id int64) error {
			_, err := s.UpdateUser(ctx, a, guest.User{UserID: int(id), Email: "intruder@example.com", Name: "intruder"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				account string
				id      int64
			}{{other, int64(u.UserID)}, {acc, 987654321}} {
				if err := tc.call(c.account, c.id); !errors.Is(err, booking.ErrNotFound) {
					t.Errorf("%s(%s, %d): %v, want ErrNotFound", tc.name, c.account, c.id, err)
				}
			}
			if got, err := s.User(ctx, acc, int64(u.UserID)); err != nil || got != u {
				t.Fatalf("the user changed: %+v, %v; was %+v", got, err, u)
			}
		})
	}
	if _, err := s.UserByEmail(ctx, other, "intruder@example.com"); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("a refused update left its email claimed: %v", err)
	}
}

// TestUserEmailRace reserves an email: 20 sign-ups with one email (in several cases) in one
// account at once; exactly one succeeds, the others are ErrEmailTaken, and one user exists.
func TestUserEmailRace(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	cases := []string{"race@example.com", "RACE@EXAMPLE.COM", "Race@Example.com", "race@EXAMPLE.com"}
	for round := range 10 {
		account := fresh(fmt.Sprintf("uer%d", round))
		const n = 20
		errs := make([]error, n)
		together.Run(n, func(i int) {
			_, errs[i] = s.AddUser(ctx, account, guest.User{Email: cases[i%len(cases)], Name: fmt.Sprint("racer ", i)}, i%2 == 0)
		})
		ok, taken := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, booking.ErrEmailTaken):
				taken++
			default:
				t.Errorf("round %d: unexpected error %v", round, err)
			}
		}
		users := usersWithEmail(t, account, "race@example.com")
		if ok != 1 || taken != n-1 || len(users) != 1 {
			t.Fatalf("round %d: %d added, %d ErrEmailTaken, %d users hold the email; want 1, %d, 1", round, ok, taken, len(users), n-1)
		}
		if got, err := s.UserByEmail(ctx, account, "RACE@example.com"); err != nil || int64(got.UserID) != users[0].UserID {
			t.Fatalf("round %d: UserByEmail %+v, %v; the holder is %d", round, got, err, users[0].UserID)
		}
	}
}

// TestUserUpdateRacesAdd: users moving onto one email by UpdateUser while others sign up
// with it leave exactly one holder, the one UserByEmail finds.
func TestUserUpdateRacesAdd(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for round := range 10 {
		account := fresh(fmt.Sprintf("uur%d", round))
		email := "Contested@Example.com"
		var movers []guest.User
		for i := range 5 {
			movers = append(movers, addUser(t, s, account, fmt.Sprintf("mover%d@example.com", i)))
		}
		var mu sync.Mutex
		ok := 0
		try := func(err error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, booking.ErrEmailTaken):
				t.Errorf("round %d: unexpected error %v", round, err)
			}
		}
		// Each mover takes the email while a new user registers it: 2 changes per mover.
		together.Run(2*len(movers), func(i int) {
			if m := movers[i/2]; i%2 == 0 {
				m.Email = strings.ToUpper(email)
				_, err := s.UpdateUser(ctx, account, m)
				try(err)
			} else {
				_, err := s.AddUser(ctx, account, guest.User{Email: email, Name: fmt.Sprint("new ", i/2)}, false)
				try(err)
			}
		})
		holders := usersWithEmail(t, account, email)
		if ok != 1 || len(holders) != 1 {
			t.Fatalf("round %d: %d changes succeeded, %d users hold the email; want 1 and 1", round, ok, len(holders))
		}
		if got, err := s.UserByEmail(ctx, account, email); err != nil || int64(got.UserID) != holders[0].UserID {
			t.Fatalf("round %d: UserByEmail %+v, %v; the holder is %d", round, got, err, holders[0].UserID)
		}
		// The movers that lost kept their own email.
		for _, m := range movers {
			if int64(m.UserID) == holders[0].UserID {
				continue
			}
			if got, err := s.UserByEmail(ctx, account, m.Email); err != nil || got.UserID != m.UserID {
				t.Fatalf("round %d: user %d lost its email %s: %+v, %v", round, m.UserID, m.Email, got, err)
			}
		}
	}
}

// TestUserEmailClaimLeftByACrash: a claim whose writer stopped (before writing its user, or
// after moving its user to another email) keeps the email for the claim's lease, then a
// sign-up takes it over.
func TestUserEmailClaimLeftByACrash(t *testing.T) {
	acc := fresh("uc")
	ctx := context.Background()
	s := newStore(t)
	moved := addUser(t, s, acc, "old@example.com")
	// A sign-up that stopped after its claim; a user moved to another email whose writer
	// stopped before releasing the old claim.
	if err := s.claimEmail(ctx, acc, "lost@example.com", 987654321); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection(collUsers).UpdateOne(ctx, bson.D{{Key: "_id", Value: docID(acc, int64(moved.UserID))}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "new@example.com"}}}}); err != nil {
		t.Fatal(err)
	}
	clock := s.now
	for _, email := range []string{"Lost@example.com", "OLD@example.com"} {
		s.now = clock
		if _, err := s.AddUser(ctx, acc, guest.User{Email: email, Name: "early"}, false); !errors.Is(err, booking.ErrEmailTaken) {
			t.Fatalf("AddUser(%s) within the claim's lease: %v, want ErrEmailTaken", email, err)
		}
		later := clock().Add(claimLease + time.Second)
		s.now = func() time.Time { return later }
		u, err := s.AddUser(ctx, acc, guest.User{Email: email, Name: "late"}, false)
		if err != nil {
			t.Fatalf("AddUser(%s) after the claim's lease: %v", email, err)
		}
		if got, err := s.UserByEmail(ctx, acc, email); err != nil || got.UserID != u.UserID {
			t.Fatalf("UserByEmail(%s): %+v, %v; want user %d", email, got, err, u.UserID)
		}
		if n := len(usersWithEmail(t, acc, email)); n != 1 {
			t.Fatalf("%d users hold %s", n, email)
		}
	}
}
