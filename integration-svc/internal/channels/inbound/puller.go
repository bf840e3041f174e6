package inbound

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// Puller pulls the revisions feeds of the adapters that serve one (Channex): every Period
// each enabled connection, and a connection at once when PullNow names it (its webhook
// arrived). A connection is pulled by one processor at a time across replicas (the
// processor's lease); a pull asked for while another replica pulls it waits for its turn.
type Puller struct {
	P       *Processor
	Adapter string // the adapter whose connections are pulled (channel.Channex)
	Period  time.Duration
	// Wait is how long a pull asked for waits for another replica's pull of the
	// connection to end.
	Wait time.Duration

	mu     sync.Mutex
	asked  map[key]bool
	wake   chan struct{}
	wakeMu sync.Once
}

type key struct {
	account string
	id      int64
}

func (u *Puller) init() {
	u.wakeMu.Do(func() {
		u.wake = make(chan struct{}, 1)
		u.mu.Lock()
		if u.asked == nil {
			u.asked = map[key]bool{}
		}
		u.mu.Unlock()
	})
}

// PullNow asks for a pull of a connection as soon as possible; it does not wait for it.
func (u *Puller) PullNow(account string, connection int64) {
	u.init()
	u.mu.Lock()
	u.asked[key{account, connection}] = true
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// Run pulls until ctx ends.
func (u *Puller) Run(ctx context.Context) error {
	u.init()
	tick := time.NewTicker(u.Period)
	defer tick.Stop()
	u.pullAll(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			u.pullAll(ctx)
		case <-u.wake:
		}
		u.pullAsked(ctx)
	}
}

// pullAsked pulls the connections asked for, until none is left.
func (u *Puller) pullAsked(ctx context.Context) {
	for ctx.Err() == nil {
		u.mu.Lock()
		var k key
		found := false
		for k = range u.asked {
			found = true
			break
		}
		delete(u.asked, k)
		u.mu.Unlock()
		if !found {
			return
		}
		c, err := u.P.Connections.Connection(ctx, k.account, k.id)
		if err != nil {
			if !errors.Is(err, channel.ErrNotFound) {
				u.P.logger().Warn("channel: reading a connection to pull", "account", k.account, "connection", k.id, "err", err)
			}
			continue
		}
		u.pull(ctx, c, u.Wait)
	}
}

// pullAll pulls every enabled connection of the adapter.
func (u *Puller) pullAll(ctx context.Context) {
	cs, err := u.P.Connections.EnabledConnections(ctx, u.Adapter)
	if err != nil {
		u.P.logger().Warn("channel: listing connections to pull", "adapter", u.Adapter, "err", err)
		return
	}
	for _, c := range cs {
		if ctx.Err() != nil {
			return
		}
		u.pull(ctx, c, 0) // one held elsewhere is being pulled now
	}
}

// pull pulls c, waiting up to wait for another pull of it to end.
func (u *Puller) pull(ctx context.Context, c channel.Connection, wait time.Duration) {
	if !c.Enabled {
		return
	}
	deadline := time.Now().Add(wait)
	for {
		err := u.P.Pull(ctx, c)
		if errors.Is(err, ErrBusy) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
				continue
			}
		}
		if err != nil && !errors.Is(err, ErrBusy) && ctx.Err() == nil {
			u.P.logger().Warn("channel: pulling revisions", "account", c.Account, "connection", c.ID, "err", err)
		}
		return
	}
}
