package ari

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events/contract"
)

// Event is one message of vros.property.v1 or vros.booking.v1 as the consumer hands it over.
type Event struct {
	Account string
	// Rest is the key after "<account>:": "<propertyId>", "settings", "account",
	// "booking:<id>", "block:<id>".
	Rest      string
	Type      string // the CloudEvents type ("" for a tombstone)
	Data      []byte // the event's data; nil for a tombstone
	Tombstone bool
}

// MalformedError is an event that can never be applied (the consumer parks it).
type MalformedError struct{ Err error }

func (e *MalformedError) Error() string { return "ari: malformed event: " + e.Err.Error() }
func (e *MalformedError) Unwrap() error { return e.Err }

func malformed(format string, args ...any) error {
	return &MalformedError{Err: fmt.Errorf(format, args...)}
}

// Projector keeps the projection from the events and marks the mapped properties each one
// touches. Apply is idempotent: a redelivered event (the offset is committed after the mark,
// so a crash re-reads it) keeps nothing new and marks again.
type Projector struct {
	Store       Projection
	Connections channel.Connections
	// Mark marks a mapped property dirty (Sender.Touch).
	Mark func(ctx context.Context, account string, connection, property int64) error
}

// Apply applies one event.
func (p *Projector) Apply(ctx context.Context, e Event) error {
	if e.Account == "" {
		return malformed("the key names no account")
	}
	if e.Type == contract.AccountErased {
		var er contract.AccountErasure
		if err := json.Unmarshal(e.Data, &er); err != nil || er.AccountID == "" {
			return malformed("account erasure names no account")
		}
		return p.Store.Erase(ctx, er.AccountID)
	}
	if e.Tombstone {
		props, err := p.Store.Forget(ctx, e.Account, e.Rest)
		if err != nil {
			return err
		}
		return p.markAll(ctx, e.Account, props)
	}
	var props []int64
	all := false
	switch kind, _, _ := strings.Cut(e.Rest, ":"); {
	case e.Rest == "settings":
		var s contract.Settings
		if err := json.Unmarshal(e.Data, &s); err != nil {
			return malformed("settings: %v", err)
		}
		s.AccountID = e.Account
		kept, err := p.Store.KeepSettings(ctx, s, e.Data)
		if err != nil || !kept {
			return err
		}
		all = true
	case kind == "booking" || kind == "block":
		h, err := HolderOf(e.Account, kind, e.Data)
		if err != nil {
			return malformed("%s: %v", e.Rest, err)
		}
		if h.Key != e.Rest {
			return malformed("key %s carries %s", e.Rest, h.Key)
		}
		if props, err = p.Store.KeepHolder(ctx, h); err != nil {
			return err
		}
	default:
		id, err := strconv.ParseInt(e.Rest, 10, 64)
		if err != nil {
			return nil // a key this projection does not read
		}
		var s contract.Property
		if err := json.Unmarshal(e.Data, &s); err != nil {
			return malformed("property: %v", err)
		}
		if s.PropertyID != id {
			return malformed("key %s carries property %d", e.Rest, s.PropertyID)
		}
		s.AccountID = e.Account
		kept, err := p.Store.KeepProperty(ctx, s, e.Data)
		if err != nil || !kept {
			return err
		}
		props = []int64{id}
	}
	// The account may have been erased before this (late) event or while it was applied:
	// what was just kept must not outlive the erasure.
	if erased, err := p.Store.Erased(ctx, e.Account); err != nil || erased {
		if err == nil {
			err = p.Store.Erase(ctx, e.Account)
		}
		return err
	}
	if all {
		return p.markMappings(ctx, e.Account, 0)
	}
	return p.markAll(ctx, e.Account, props)
}

func (p *Projector) markAll(ctx context.Context, account string, props []int64) error {
	for _, id := range props {
		if err := p.markMappings(ctx, account, id); err != nil {
			return err
		}
	}
	return nil
}

// markMappings marks every enabled mapping of the property (0: of the account).
func (p *Projector) markMappings(ctx context.Context, account string, property int64) error {
	ms, err := p.Connections.Mappings(ctx, account, 0, property)
	if errors.Is(err, channel.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, m := range ms {
		if !m.Enabled || (property != 0 && m.PropertyID != property) {
			continue
		}
		if err := p.Mark(ctx, account, m.ConnectionID, m.PropertyID); err != nil {
			return err
		}
	}
	return nil
}
