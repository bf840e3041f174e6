package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vros/vros/libs/events/contract"
)

// NewMemory returns a view held in memory only, without MongoDB: what the API's handler
// tests serve from.
func NewMemory() *Catalog {
	return &Catalog{accounts: map[string]*account{}, erased: map[string]struct{}{}}
}

// Load applies the data of an event of type typ to memory only, with Apply's version rule;
// an account's erasure forgets it, and its later events are ignored, as Apply does.
func (s *Catalog) Load(typ string, data []byte) error {
	var coll string
	switch {
	case typ == contract.AccountErased:
		er, err := erasureOf(data)
		if err != nil {
			return fmt.Errorf("view: %w", err)
		}
		s.forgetAccount(er.AccountID)
		return nil
	case typ == contract.SettingsUpdated:
		coll = collSettings
	case strings.HasPrefix(typ, contract.PropertyTypePrefix):
		coll = collProperties
	case strings.HasPrefix(typ, contract.BookingTypePrefix):
		coll = collBookings
	case strings.HasPrefix(typ, contract.BlockTypePrefix):
		coll = collBlocks
	default:
		return fmt.Errorf("view: unknown event type %q", typ)
	}
	if err := s.check(coll, data); err != nil {
		return err
	}
	if err := s.put(coll, data); !errors.As(err, new(erasedError)) {
		return err
	}
	return nil
}
