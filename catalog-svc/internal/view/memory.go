package view

import (
	"fmt"
	"strings"

	"github.com/vros/vros/libs/events/contract"
)

// NewMemory returns a view held in memory only, without MongoDB: what the API's handler
// tests serve from.
func NewMemory() *Store { return &Store{accounts: map[string]*account{}} }

// Load applies the data of an event of type typ to memory only, with Apply's version rule.
func (s *Store) Load(typ string, data []byte) error {
	var coll string
	switch {
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
	return s.put(coll, data)
}
