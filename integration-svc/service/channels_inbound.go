package service

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vros/vros/integration-svc/internal/bookingsvc"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inbound"
	"github.com/vros/vros/integration-svc/internal/channels/inbound/bookingclient"
	"github.com/vros/vros/integration-svc/internal/channels/inboundapi"
	"github.com/vros/vros/integration-svc/internal/channels/inboundstore"
)

// inboundWait is how long a pushed message waits for its connection's processor (another
// message of the connection being applied), and a pull asked for by a webhook for another
// replica's pull of the connection to end.
const inboundWait = 10 * time.Second

// wireChannelInbound takes channel reservations in (docs/channels.md, "Reservations in"): the
// inbound route (reached from edge's public /channels/{adapter}/{token} with an empty tenant:
// the token is the capability, as an iCal export's), the processor applying revisions through
// booking-svc's ledger, and the puller of the revisions feeds (every PullPeriod and on the
// feed's webhook: p.pullNow).
func wireChannelInbound(w *wiring, p *channelParts) error {
	if w.hooks == nil {
		return errors.New("channel reservations: the webhook part did not provide its event emitter")
	}
	revs, err := inboundstore.Open(w.ctx, w.base.DB)
	if err != nil {
		return fmt.Errorf("channel revisions store: %w", err)
	}
	host, _ := os.Hostname()
	// booking-svc answers within its request deadline (25 s); the call's timeout is the
	// channel requests'.
	booking := bookingclient.Client{C: bookingsvc.New(w.cfg.BookingURL, w.signer, p.cfg.RequestTimeout)}
	proc := &inbound.Processor{Connections: p.connections, Log: p.log, Conflicts: p.conflicts, Revisions: revs, Leases: revs,
		Booking: booking, Hooks: w.hooks, Adapters: p.adapters, Logger: w.base.Tel.Logger, Lease: p.cfg.Lease, Holder: host,
		Wait: inboundWait}
	puller := &inbound.Puller{P: proc, Adapter: channel.Channex, Period: p.cfg.PullPeriod, Wait: inboundWait}
	p.pullNow = puller.PullNow
	(&inboundapi.API{Connections: p.connections, Log: p.log, Adapters: p.adapters, Processor: proc, PullNow: puller.PullNow,
		Logger: w.base.Tel.Logger}).Register(w.app)
	w.loops = append(w.loops, puller.Run)
	w.onErase = append(w.onErase, revs.Erase)
	return nil
}
