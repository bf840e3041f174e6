package cardpay

import (
	"context"
	"fmt"
	"sync"

	"github.com/shopspring/decimal"
)

// The test gateway's authorizations. Test keeps no field for them (test.go is shared by
// charges and refunds): each Test's holds live in holdBooks, keyed by the gateway.

// Hold states of the test gateway.
const (
	HoldHeld     = "held"
	HoldCaptured = "captured"
	HoldReleased = "released"
)

// TestHold is one authorization of the test gateway as it stands.
type TestHold struct {
	Authorization
	State    string
	Captured decimal.Decimal
	// Keys are the idempotency keys of the requests that changed it, in order.
	Keys []string
}

type holdBook struct {
	mu     sync.Mutex
	seq    int
	holds  []*TestHold // by creation
	byID   map[string]*TestHold
	byKey  map[string]holdAnswer
	counts map[string]int // requests that reached the book, by kind
}

type holdAnswer struct {
	kind string // authorize, capture, release
	id   string // the authorization asked about, or made
	amt  decimal.Decimal
	auth Authorization
	cap  Captured
	err  error
}

var holdBooks sync.Map // *Test → *holdBook

func (g *Test) book() *holdBook {
	v, _ := holdBooks.LoadOrStore(g, &holdBook{byID: map[string]*TestHold{}, byKey: map[string]holdAnswer{}, counts: map[string]int{}})
	return v.(*holdBook)
}

// Authorize holds req.Amount on req.Card, or refuses the card as Charge does.
func (g *Test) Authorize(ctx context.Context, req AuthorizeRequest) (Authorization, error) {
	if err := ctx.Err(); err != nil {
		return Authorization{}, err
	}
	cur, err := CheckAmount(req.Amount, req.Currency)
	if err != nil {
		return Authorization{}, err
	}
	b := g.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counts["authorize"]++
	if prev, ok := b.byKey[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		if prev.kind != "authorize" || !prev.amt.Equal(req.Amount) {
			return Authorization{}, fmt.Errorf("%w: idempotency key %q was used for another request", ErrInvalidRequest, req.IdempotencyKey)
		}
		return prev.auth, prev.err
	}
	at := g.now().UTC()
	var a Authorization
	if err = outcome(req.Card, at); err == nil {
		b.seq++
		a = Authorization{ID: fmt.Sprintf("pi_test_hold_%06d", b.seq), Amount: req.Amount, Currency: cur, At: at}
		h := &TestHold{Authorization: a, State: HoldHeld, Keys: []string{req.IdempotencyKey}}
		b.holds = append(b.holds, h)
		b.byID[a.ID] = h
	}
	if req.IdempotencyKey != "" {
		b.byKey[req.IdempotencyKey] = holdAnswer{kind: "authorize", amt: req.Amount, auth: a, err: err}
	}
	return a, err
}

// Capture captures req.Amount of a held authorization and releases the rest.
func (g *Test) Capture(ctx context.Context, req CaptureRequest) (Captured, error) {
	if err := ctx.Err(); err != nil {
		return Captured{}, err
	}
	b := g.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counts["capture"]++
	if prev, ok := b.byKey[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		if prev.kind != "capture" || prev.id != req.ID || !prev.amt.Equal(req.Amount) {
			return Captured{}, fmt.Errorf("%w: idempotency key %q was used for another request", ErrInvalidRequest, req.IdempotencyKey)
		}
		return prev.cap, prev.err
	}
	h, ok := b.byID[req.ID]
	switch {
	case !ok:
		return Captured{}, fmt.Errorf("%w: no authorization %q", ErrInvalidRequest, req.ID)
	case h.State != HoldHeld:
		return Captured{}, fmt.Errorf("%w: authorization %s is %s", ErrInvalidRequest, req.ID, h.State)
	case req.Amount.Sign() <= 0 || req.Amount.GreaterThan(h.Amount):
		return Captured{}, fmt.Errorf("%w: capture %s of a hold of %s", ErrInvalidRequest, req.Amount, h.Amount)
	}
	if _, err := CheckAmount(req.Amount, h.Currency); err != nil {
		return Captured{}, err
	}
	h.State, h.Captured, h.Keys = HoldCaptured, req.Amount, append(h.Keys, req.IdempotencyKey)
	c := Captured{ID: h.ID, Amount: req.Amount, Currency: h.Currency, At: g.now().UTC()}
	if req.IdempotencyKey != "" {
		b.byKey[req.IdempotencyKey] = holdAnswer{kind: "capture", id: req.ID, amt: req.Amount, cap: c}
	}
	return c, nil
}

// Release releases a held authorization whole.
func (g *Test) Release(ctx context.Context, req ReleaseRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := g.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counts["release"]++
	if prev, ok := b.byKey[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		if prev.kind != "release" || prev.id != req.ID {
			return fmt.Errorf("%w: idempotency key %q was used for another request", ErrInvalidRequest, req.IdempotencyKey)
		}
		return prev.err
	}
	h, ok := b.byID[req.ID]
	switch {
	case !ok:
		return fmt.Errorf("%w: no authorization %q", ErrInvalidRequest, req.ID)
	case h.State != HoldHeld:
		return fmt.Errorf("%w: authorization %s is %s", ErrInvalidRequest, req.ID, h.State)
	}
	h.State, h.Keys = HoldReleased, append(h.Keys, req.IdempotencyKey)
	if req.IdempotencyKey != "" {
		b.byKey[req.IdempotencyKey] = holdAnswer{kind: "release", id: req.ID}
	}
	return nil
}

// Holds lists the test gateway's authorizations as they stand, oldest first.
func (g *Test) Holds() []TestHold {
	b := g.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]TestHold, len(b.holds))
	for i, h := range b.holds {
		out[i] = *h
		out[i].Keys = append([]string(nil), h.Keys...)
	}
	return out
}

// HoldRequests counts the authorize, capture and release requests the test gateway was
// asked (repeats under a known key too).
func (g *Test) HoldRequests(kind string) int {
	b := g.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[kind]
}
