package service

import (
	"context"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/integration-svc/internal/channels/ari/consumer"
	"github.com/vros/vros/integration-svc/internal/channels/aristore"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/periodic"
)

// wireChannelARI starts ARI out (docs/channels.md, "ARI out"): the projection's consumer in
// the channels' own group, and the sender's workers; the mapping API marks through
// p.markDirty, and an erased account's projection, marks and sent values go with it.
func wireChannelARI(w *wiring, p *channelParts) error {
	st, err := aristore.Open(w.ctx, w.base.DB)
	if err != nil {
		return err
	}
	tel := w.base.Tel
	snd := ari.NewSender(ari.Config{Workers: p.cfg.Workers, Lease: p.cfg.Lease, RequestTimeout: p.cfg.RequestTimeout,
		ErrorRetry: p.cfg.ErrorRetry, Poll: p.cfg.Poll},
		ari.Deps{Projection: st, Marks: st, Sent: st, Connections: p.connections, Log: p.log, Adapters: p.adapters,
			Logger: tel.Logger, Meter: tel.Meter})
	h := &consumer.Handler{Projector: &ari.Projector{Store: st, Connections: p.connections, Mark: snd.Touch}}
	p.markDirty = snd.MarkDirty
	w.onErase = append(w.onErase, st.Erase)
	w.loops = append(w.loops,
		func(ctx context.Context) error {
			// Offsets are committed after the handler returned, so after the marks; every
			// event is a versioned snapshot, so one read again after a crash keeps nothing
			// new and marks again: committing once a second loses nothing.
			return events.Consume(ctx, events.ConsumerOptions{
				Brokers: w.cfg.KafkaBrokers, GroupID: p.cfg.ConsumerGroup, Topics: []string{events.TopicProperty, events.TopicBooking},
				Park: events.ParkIn(w.base.DB.Collection(events.ParkedCollection)), Log: tel.Logger, Tracer: tel.Tracer,
				Meter: tel.Meter, Propagator: tel.Propagator, CommitEvery: time.Second,
			}, h.Handle)
		},
		snd.Run,
		func(ctx context.Context) error {
			// The horizon moves at each property's midnight without an event.
			periodic.Run(ctx, time.Hour, snd.Refresh,
				func(err error) { tel.Logger.Warn("channel ARI: the hourly refresh failed", "error", err) })
			return nil
		})
	return nil
}
