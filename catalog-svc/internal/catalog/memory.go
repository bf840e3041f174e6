package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vros/vros/libs/events/contract"
)

// NewMemory returns a catalog held in memory only, without a SnapshotStore: what the API's
// handler tests serve from.
func NewMemory() *Catalog {
	return &Catalog{accounts: map[string]*account{}, erased: map[string]struct{}{}}
}

// Load applies the data of an event of type typ to memory only, with Apply's version rule;
// an account's erasure forgets it, and its later events are ignored, as Apply does.
func (s *Catalog) Load(typ string, data []byte) error {
	var kind Kind
	switch {
	case typ == contract.AccountErased:
		er, err := erasureOf(data)
		if err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		s.forgetAccount(er.AccountID)
		return nil
	case typ == contract.SettingsUpdated:
		kind = KindSettings
	case strings.HasPrefix(typ, contract.PropertyTypePrefix):
		kind = KindProperty
	case strings.HasPrefix(typ, contract.BookingTypePrefix):
		kind = KindBooking
	case strings.HasPrefix(typ, contract.BlockTypePrefix):
		kind = KindBlock
	default:
		return fmt.Errorf("catalog: unknown event type %q", typ)
	}
	if err := check(kind, data); err != nil {
		return err
	}
	if err := s.put(kind, data); !errors.As(err, new(erasedError)) {
		return err
	}
	return nil
}
