package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/together"
)

// TestConcurrentCreatesWithOneCode: twenty creates of one internal code in one account at
// once: exactly one succeeds, the others are told the code is taken, and one property
// document exists afterwards. The creates share one store: the embedded server does not
// make two processes' findAndModify of one document atomic (mongostore.DocLocks), so
// separate stores would race on the id counter rather than on the code.
func TestConcurrentCreatesWithOneCode(t *testing.T) {
	const n = 20
	for round := range 3 {
		acct := newAccount()
		h := newHarness(t)
		pids := make([]int64, n)
		errs := make([]error, n)
		together.Run(n, func(i int) {
			pids[i], errs[i] = h.repo.Create(ctx, acct, villa("RACE"), 0)
		})

		var won []int64
		for i, err := range errs {
			switch {
			case err == nil:
				won = append(won, pids[i])
			case !errors.Is(err, property.ErrCodeTaken):
				t.Errorf("round %d: create %d: %v, want nil or ErrCodeTaken", round, i, err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d creates of one code succeeded (%v), want exactly 1", round, len(won), won)
		}
		if c := count(t, collProperties, bson.D{{Key: "account_id", Value: acct}}); c != 1 {
			t.Errorf("round %d: %d property documents, want 1", round, c)
		}
		st, err := h.repo.Find(ctx, acct, code("RACE"))
		if err != nil || st.ID != won[0] {
			t.Errorf("round %d: RACE is %+v (%v), want property %d", round, st, err, won[0])
		}
	}
}

// TestConcurrentSectionWrites: rates, taxes and policy of one property written at once,
// round after round: every write lands (each round's three values are all there after
// it), and the versions count every write once: 1 + 3 per round.
func TestConcurrentSectionWrites(t *testing.T) {
	const rounds = 8
	h := newHarness(t)
	h.relay(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	for r := 1; r <= rounds; r++ {
		tag := fmt.Sprintf("%d", r)
		writes := []func() error{
			func() error { return h.repo.SetRates(ctx, acct, pid, rates(tag)) },
			func() error { return h.repo.SetTaxes(ctx, acct, pid, taxes("VAT "+tag)) },
			func() error {
				return h.repo.SetPolicy(ctx, acct, pid, property.Policy{PaymentType: property.PayFull,
					FullPayment: &property.Deadline{Due: property.DueXDayPriorArrival, XDay: r}})
			},
		}
		together.Run(len(writes), func(i int) {
			if err := writes[i](); err != nil {
				t.Errorf("round %d: %v", r, err)
			}
		})

		p := h.state(t, acct, pid)
		if p.Rates == nil || p.Rates.Rate.Daily != tag {
			t.Errorf("round %d: rates lost: %+v", r, p.Rates)
		}
		if len(p.Taxes) == 0 || p.Taxes[0].Name != "VAT "+tag {
			t.Errorf("round %d: taxes lost: %+v", r, p.Taxes)
		}
		if p.Policy == nil || p.Policy.PaymentFull == nil || p.Policy.PaymentFull.XDay != r {
			t.Errorf("round %d: policy lost: %+v", r, p.Policy)
		}
		if want := int64(1 + 3*r); p.Version != want {
			t.Fatalf("round %d: version %d, want %d (one per write)", r, p.Version, want)
		}
	}
	// The relay may publish an older snapshot after a newer one (consumers keep the newer,
	// mongostore.KeepNewer); what matters is that the last version is published.
	final := int64(1 + 3*rounds)
	key := events.Key(acct, fmt.Sprint(pid))
	h.pub.awaitVersion(t, key, final)
	for _, p := range h.pub.published(t, key) {
		if p.Version < 1 || p.Version > final {
			t.Errorf("published version %d, written 1 to %d", p.Version, final)
		}
	}
}

// TestClaimOfAStoppedCreate: a claim whose property was never written (its create stopped
// between the two) keeps the code while its create may still be under way, and is taken
// over once older than claimLease.
func TestClaimOfAStoppedCreate(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	for _, c := range []struct {
		code string
		at   time.Time
		want error
	}{
		{"FRESH", time.Now().UTC(), property.ErrCodeTaken},
		{"STALE", time.Now().UTC().Add(-2 * claimLease), nil},
		{"OLDFORM", time.Time{}, nil}, // a claim from before claimed_at
	} {
		_, err := db.Collection(collCodes).InsertOne(ctx, codeDoc{ID: codeID(acct, c.code), PropertyID: 999999, ClaimedAt: c.at})
		must(t, err)
		pid, err := h.repo.Create(ctx, acct, villa(c.code), 0)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: create over the claim: %v, want %v", c.code, err, c.want)
		}
		if err == nil {
			if got, _ := h.repo.Locate(ctx, acct, code(c.code)); got != pid {
				t.Errorf("%s: the code names %d, want %d", c.code, got, pid)
			}
		}
	}
}
