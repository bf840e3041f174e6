package cardpay

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/shopspring/decimal"
)

// The test gateway's refunds. Test's own fields belong to its charges (test.go); its refunds
// are kept beside it, per gateway, so that each file keeps its own state.
var refundBooks sync.Map // *Test → *refundBook

type refundBook struct {
	mu       sync.Mutex
	seq      int
	refunds  []Refund
	byKey    map[string]keyedRefund
	refunded map[string]decimal.Decimal // by charge id
	// fail, when set, answers instead of the gateway (a test's outage); nil: none.
	fail func(RefundRequest) error
}

type keyedRefund struct {
	req    RefundRequest
	refund Refund
	err    error
}

func (g *Test) refundBook() *refundBook {
	b, _ := refundBooks.LoadOrStore(g, &refundBook{byKey: map[string]keyedRefund{}, refunded: map[string]decimal.Decimal{}})
	return b.(*refundBook)
}

// Refund refunds req.Amount of the test charge req.ChargeID, as a real gateway would: the
// charge must be one of its own, in its currency, and no more than what remains of it is
// refunded; the same IdempotencyKey answers the first outcome (another request under it is
// ErrInvalidRequest). A charge id of this gateway's form it does not remember (made before the
// process restarted: its memory is the process's) is refunded on trust, as far as it can
// tell, under the same rules for what it refunded since.
func (g *Test) Refund(ctx context.Context, req RefundRequest) (Refund, error) {
	if err := ctx.Err(); err != nil {
		return Refund{}, err
	}
	cur, err := CheckRefund(req)
	if err != nil {
		return Refund{}, err
	}
	b := g.refundBook()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		if err := b.fail(req); err != nil {
			return Refund{}, err
		}
	}
	if req.IdempotencyKey != "" {
		if prev, ok := b.byKey[req.IdempotencyKey]; ok {
			if prev.req.ChargeID != req.ChargeID || !prev.req.Amount.Equal(req.Amount) || !strings.EqualFold(prev.req.Currency, req.Currency) {
				return Refund{}, fmt.Errorf("%w: idempotency key %q was used for another refund", ErrInvalidRequest, req.IdempotencyKey)
			}
			return prev.refund, prev.err
		}
	}
	var rf Refund
	err = g.refusal(b, req, cur)
	if err == nil {
		b.seq++
		rf = Refund{ID: fmt.Sprintf("re_test_%06d", b.seq), Amount: req.Amount, Currency: cur, At: g.now().UTC()}
		b.refunds = append(b.refunds, rf)
		b.refunded[req.ChargeID] = b.refunded[req.ChargeID].Add(req.Amount)
	}
	if req.IdempotencyKey != "" {
		b.byKey[req.IdempotencyKey] = keyedRefund{req: req, refund: rf, err: err}
	}
	return rf, err
}

// refusal is why the refund of req cannot be made (nil: it can).
func (g *Test) refusal(b *refundBook, req RefundRequest, cur string) error {
	if !strings.HasPrefix(req.ChargeID, "ch_test_") {
		return &RefusedError{Reason: "no such charge: " + req.ChargeID}
	}
	g.mu.Lock()
	var ch *Charge
	for i := range g.charges {
		if g.charges[i].ID == req.ChargeID {
			c := g.charges[i]
			ch = &c
		}
	}
	g.mu.Unlock()
	done := b.refunded[req.ChargeID]
	if ch == nil {
		return nil // made before a restart: on trust
	}
	if !strings.EqualFold(ch.Currency, cur) {
		return &RefusedError{Reason: fmt.Sprintf("charge %s is in %s, not %s", ch.ID, ch.Currency, cur)}
	}
	if left := ch.Amount.Sub(done); req.Amount.GreaterThan(left) {
		if !left.IsPositive() {
			return &RefusedError{Reason: fmt.Sprintf("charge %s has already been refunded", ch.ID)}
		}
		return &RefusedError{Reason: fmt.Sprintf("amount %s is more than the %s left of charge %s", req.Amount, left, ch.ID)}
	}
	return nil
}

// Refunds lists the refunds made, oldest first.
func (g *Test) Refunds() []Refund {
	b := g.refundBook()
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Refund(nil), b.refunds...)
}

// RefundKeys lists the idempotency keys refunds were asked under, each once.
func (g *Test) RefundKeys() []string {
	b := g.refundBook()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.byKey))
	for k := range b.byKey {
		out = append(out, k)
	}
	return out
}

// FailRefunds makes fail decide every refund before the gateway does (a non-nil error is the
// answer, nothing is refunded or remembered): a test's outage or refusal. Nil ends it.
func (g *Test) FailRefunds(fail func(RefundRequest) error) {
	b := g.refundBook()
	b.mu.Lock()
	b.fail = fail
	b.mu.Unlock()
}
